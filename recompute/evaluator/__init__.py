"""The evaluator: trust-critical. It runs recipes (``recompute/recipes/``) at anchored blocks
and turns what the checkers proved into outcomes: the fast path (``job``, ``check_state``,
``runner``, ``carry``, ``kept_plans``, ``copies``, ``values``, ``evidence``, ``digest``; the
rules by which a kept value stands in for a proof are all in ``carry``) and the reference
evaluator (``reference``), which shares nothing with the fast path but the checkers and the
recipes (docs/design.md §Soundness)."""
