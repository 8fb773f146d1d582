"""An OP-stack L2 block pinned through L1 (docs/l2.md), trust-critical: the output root a
dispute game proposes, proven in L1 state under any L1 anchor, names the L2 block's hash.

Pure checkers, each in a module of its own and keeping nothing: ``output_root`` (the
commitment), ``clone`` (a game clone's code and its immutable arguments), ``versions`` (which
deployed implementation a code is, by its bytes), ``game`` (the slots read and what they say),
``finality`` (the tier of a game, or the reason it is refused). ``anchor`` is the one module
that asks sources: it proves the L1 side and hands back the L2 block anchored.
"""
