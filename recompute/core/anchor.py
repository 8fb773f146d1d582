"""Anchoring: from a node's header to a header whose hash is pinned.

The four ways of the trust core (README §Trust model):

``block-hash``  the user's own trusted hash; the node's header must hash to it.
``quorum``      K endpoints must return the same hash for block N; any disagreement is
                UNVERIFIABLE (``anchor-disagreement``) naming who said what.
``checkpoint``  from a trusted hash at or above N, parentHash links are walked down to N,
                every header re-hashed on the way.
``single-rpc``  nothing pinned: the one node is trusted for the header (said plainly).
``light-client`` the beacon chain's sync committee pinned the block (recompute.lightclient
                builds the :class:`PayloadHeader` and calls :func:`by_payload_header`).

Only this module builds an :class:`AnchoredBlock`; everything downstream takes one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from recompute.core.clock import SYSTEM, Clock
from recompute.core.errors import OptionError, Unverifiable, UsageError, literal
from recompute.core.header import Header
from recompute.core.sealed import Sealed
from recompute.core.source import BlockRef, ProofSource

_SEAL = object()

# What each method leaves to trust, in the words the report prints.
TRUSTS = {
    "block-hash": "the block hash you pinned",
    "quorum": "that the agreeing endpoints are not all lying together",
    "checkpoint": "the checkpoint hash you pinned (every header down to the block re-hashed)",
    "single-rpc": "the node itself, for which block this is: nothing was pinned",
    "parent-link": "the anchored block below which it lies: parentHash links re-hashed; a new "
                   "head above it is the node's word unless a quorum confirmed it",
    "light-client": "the trusted beacon block root and 2/3 of each period's sync committee "
                    "(the node is not asked which block this is)",
    "op-stack": "the L1 anchor named in `l1`, the chain's portal address, and the game's "
                "tier: an output root proven in L1 state names this L2 block's hash",
}


@dataclass(frozen=True)
class PayloadHeader:
    """An execution block's fields as a consensus proof authenticates them, without the rest
    of its RLP header (docs/lightclient.md §What a pinned block is): ``hash`` is the block
    hash, and state root, receipts root, logs bloom, number and timestamp are the ones the
    hash commits to. Its attribute names are :class:`Header`'s, so an :class:`AnchoredBlock`
    holds either; only a full ``Header`` can be re-hashed."""

    hash: bytes
    parent_hash: bytes
    state_root: bytes
    receipts_root: bytes
    logs_bloom: bytes
    number: int
    timestamp: int


@dataclass(frozen=True)
class Anchor:
    method: str
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def trusts(self) -> str:
        return TRUSTS[self.method]

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "trusts": self.trusts, **self.detail}


class AnchoredBlock(Sealed):
    """A header whose hash has been tied to a pin by one of the methods above (read-only).
    ``header`` is a full :class:`Header`, or a :class:`PayloadHeader` under ``light-client``
    when the node did not serve the block's header."""

    __slots__ = ("header", "anchor", "chain_id", "source")
    header: Header | PayloadHeader
    anchor: Anchor
    chain_id: int
    source: ProofSource  # the endpoint that agreed and will serve the proofs

    def __init__(self, seal: object, header: Header | PayloadHeader, anchor: Anchor, chain_id: int,
                 source: ProofSource):
        if seal is not _SEAL:
            raise TypeError("AnchoredBlock is built by recompute.core.anchor only")
        self._seal(header=header, anchor=anchor, chain_id=chain_id, source=source)

    @property
    def number(self) -> int:
        return self.header.number

    @property
    def hash(self) -> bytes:
        return self.header.hash

    @property
    def state_root(self) -> bytes:
        return self.header.state_root

    @property
    def timestamp(self) -> int:
        return self.header.timestamp

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "hash": "0x" + self.hash.hex(),
            "state_root": "0x" + self.state_root.hex(),
            "receipts_root": "0x" + self.header.receipts_root.hex(),
            "timestamp": self.timestamp,
        }


# `latest` under a quorum: the highest head K endpoints have reached, refused when the heads
# the endpoints report spread wider than this (one endpoint must not pick an old block).
LATEST_SPREAD = 2


def _fetch_header(source: ProofSource, ref: BlockRef | bytes) -> Header:
    raw = source.block_by_hash(ref) if isinstance(ref, bytes) else source.block_by_number(ref)
    if raw is None:
        shown = "0x" + ref.hex() if isinstance(ref, bytes) else str(ref)
        raise Unverifiable("block-unknown", f"{source.label} does not know block {shown}")
    header = Header.from_rpc(raw)
    if isinstance(ref, int) and header.number != ref:  # another block's header: refused
        raise Unverifiable("rpc-inconsistent", f"{source.label} answered for block {ref} with "
                                               f"a header numbered {header.number}")
    return header


def endpoint(source: ProofSource) -> str:
    """What tells two endpoints apart: a live source's normalised URL, else its label."""
    return getattr(source, "endpoint", source.label)


def distinct_endpoints(sources: Sequence[ProofSource]) -> None:
    """A quorum counts distinct hosts: two endpoints with one normalised URL, or whose hosts
    resolve to one address and port (``localhost`` and ``127.0.0.1``, two names of one
    machine), are one UsageError line naming both. A source without a URL (a recorded one) is
    told apart by its label."""
    names = [endpoint(source) for source in sources]
    if len(set(names)) != len(names):
        twice = next(name for name in names if names.count(name) > 1)
        raise OptionError("{rpc} {twice} is given twice: a quorum counts distinct endpoints",
                          ("rpc",), twice=twice)
    seen: dict[tuple[str, int], str] = {}
    for source in sources:
        resolve = getattr(source, "addresses", None)  # a live source: its host resolved
        if resolve is None:
            continue
        for place in sorted(resolve()):
            other = seen.setdefault(place, source.label)
            if other != source.label:
                raise OptionError("{rpc} {other} and {rpc} {label} are one endpoint "
                                  "({host} port {port}): a quorum counts distinct hosts; "
                                  "give endpoints of other machines", ("rpc",),
                                  other=other, label=source.label, host=place[0],
                                  port=place[1])


def by_block_hash(
    sources: Sequence[ProofSource], pinned: bytes, number: BlockRef | None = None
) -> AnchoredBlock:
    source = sources[0]
    header = _fetch_header(source, pinned)
    if header.hash != pinned:
        raise Unverifiable(
            "header-mismatch",
            f"{source.label} returned a header that hashes to 0x{header.hash.hex()}, "
            f"not the pinned 0x{pinned.hex()}",
        )
    if isinstance(number, int) and header.number != number:
        raise Unverifiable(
            "header-mismatch",
            f"the pinned hash is block {header.number}, not the requested block {number}",
        )
    anchor = Anchor("block-hash", {"pinned_hash": "0x" + pinned.hex()})
    return AnchoredBlock(_SEAL, header, anchor, source.chain_id(), source)


# How a block below an anchored one is reached (recompute.core.hops.reach, its mode bound):
# handed in by the caller, since hops prove through recompute.core.prover, which builds on
# this module.
Reach = Callable[[AnchoredBlock, int], AnchoredBlock]


def by_checkpoint(sources: Sequence[ProofSource], checkpoint: bytes, number: int,
                  reach: Reach | None = None) -> AnchoredBlock:
    """Block ``number`` at or below the block whose hash is ``checkpoint``: by ``reach``
    (hops, or a walk said in its ``history_path``), else by re-hashed parentHash links."""
    source = sources[0]
    top = by_block_hash([source], checkpoint).header
    if number > top.number:
        raise OptionError("{block} {number} is above the checkpoint's block {top}: "
                          "a checkpoint anchors blocks at or below it", ("block",),
                          number=number, top=top.number)
    if reach is not None:
        pinned = Anchor("checkpoint", {"checkpoint_hash": "0x" + checkpoint.hex(),
                                       "checkpoint_number": top.number})
        return reach(AnchoredBlock(_SEAL, top, pinned, source.chain_id(), source), number)
    top_block = AnchoredBlock(_SEAL, top, Anchor("block-hash", {}), source.chain_id(), source)
    header = ancestors(top_block, number)[-1].header  # every parent link re-hashed
    anchor = Anchor(
        "checkpoint",
        {
            "checkpoint_hash": "0x" + checkpoint.hex(),
            "checkpoint_number": top.number,
            "headers_walked": top.number - number,
        },
    )
    return AnchoredBlock(_SEAL, header, anchor, source.chain_id(), source)


def ancestors(block: AnchoredBlock, down_to: int) -> list[AnchoredBlock]:
    """Every block from ``block`` down to number ``down_to`` (inclusive), newest first, each
    tied to ``block`` by re-hashed parentHash links (for events over a block range). Nothing
    kept: :func:`recompute.core.caching.ancestors` is this walk with headers kept by hash."""
    if down_to > block.number:
        raise UsageError(f"block {down_to} is above the pinned block {block.number}")
    out = [block]
    header = block.header
    # a source that can fetch headers by number in batches (the watch's shared source) holds
    # the range first, so the walk below asks no one header at a time; each is still
    # re-hashed and linked here, as one fetched by hash
    prefetch = getattr(block.source, "prefetch_headers", None)
    if prefetch is not None and block.number - 1 > down_to:
        prefetch(list(range(down_to, block.number)))
    while header.number > down_to:
        header = parent_header(block, header)
        out.append(linked(block, header))
    return out


def parent_header(block: AnchoredBlock, child: Header | PayloadHeader) -> Header:
    """The parent of ``child`` (a header at or below ``block``), asked of ``block``'s source by
    the child's parentHash and checked by :func:`linked_parent`."""
    return linked_parent(block, child, _fetch_header(block.source, child.parent_hash))


def linked_parent(block: AnchoredBlock, child: Header | PayloadHeader, parent: Header) -> Header:
    """``parent`` if it is the parent ``child`` names (its hash is the child's parentHash, its
    number one below), else Unverifiable (header-mismatch) naming ``block``'s source."""
    if parent.hash != child.parent_hash or parent.number != child.number - 1:
        raise Unverifiable(
            "header-mismatch",
            f"{block.source.label} returned for the parent of block {child.number} a "
            f"header that hashes to 0x{parent.hash.hex()}, not 0x{child.parent_hash.hex()}",
        )
    return parent


def linked(block: AnchoredBlock, header: Header | PayloadHeader) -> AnchoredBlock:
    """``header``, found below ``block`` by re-hashed parentHash links, as an anchored block
    (anchor ``parent-link``, the pin it was tied to named)."""
    anchor = Anchor("parent-link", {"pinned_hash": "0x" + block.hash.hex(),
                                    "depth": block.number - header.number})
    return AnchoredBlock(_SEAL, header, anchor, block.chain_id, block.source)


def ancestor(block: AnchoredBlock, number: int) -> AnchoredBlock:
    """The ancestor of ``block`` numbered ``number``, tied to it by parentHash links."""
    if number == block.number:
        return block
    return linked(block, ancestors(block, number)[-1].header)


def reached(top: AnchoredBlock, header: Header, path: dict[str, Any]) -> AnchoredBlock:
    """Block ``header`` below ``top``, anchored as ``top`` is (its method and detail), the
    ``path`` that tied it to ``top`` in the detail: called by :mod:`recompute.core.hops` only,
    with a header whose hash it proved from ``top``'s state (history contract) or reached by
    re-hashed parentHash links (the walk)."""
    anchor = Anchor(top.anchor.method, {**top.anchor.detail, "pinned_number": top.number,
                                        "history_path": path})
    return AnchoredBlock(_SEAL, header, anchor, top.chain_id, top.source)


def served_by(block: AnchoredBlock, source: ProofSource) -> AnchoredBlock:
    """The same anchored header (its anchor unchanged: the pin it was tied to), whose proofs
    are asked of ``source``: the reference evaluator's fresh source for every check at every
    block (recompute.evaluator.reference). Sound as any source: every proof is verified against
    the header's own roots."""
    return AnchoredBlock(_SEAL, block.header, block.anchor, block.chain_id, source)


def by_parent_link(parent: AnchoredBlock, child_header_json: dict[str, Any],
                   clock: Clock | None = None) -> AnchoredBlock:
    """The next block up from an anchored ``parent`` (``recompute watch`` following the head):
    its header must re-hash to the hash the node claims, name ``parent`` as its parentHash and
    be numbered ``parent.number + 1``. A link *up* proves continuity (nothing below the child
    was rewritten), not that the child is the chain's canonical block: for that the node is
    trusted, as the detail says."""
    header = Header.from_rpc(child_header_json)
    if header.parent_hash != parent.hash or header.number != parent.number + 1:
        raise Unverifiable(
            "header-mismatch",
            f"{parent.source.label} returned as the child of block {parent.number} "
            f"(0x{parent.hash.hex()}) block {header.number} whose parentHash is "
            f"0x{header.parent_hash.hex()}",
        )
    # Consensus makes a child strictly later (12 s a slot on mainnet); anvil mines several
    # blocks in one second with equal timestamps, so only going back in time is refused,
    # unless the clock says --strict-timestamps (a real chain).
    strict = clock is not None and clock.strict_timestamps
    if header.timestamp < parent.timestamp or (strict and header.timestamp == parent.timestamp):
        raise Unverifiable(
            "header-mismatch",
            literal(f"{parent.source.label} returned as the child of block {parent.number} "
                    f"(timestamp {parent.timestamp}) a block with timestamp {header.timestamp}: ")
            + ("not later than its parent ({strict_timestamps})" if strict
               and header.timestamp == parent.timestamp else "earlier than its parent"),
            ("strict_timestamps",),
        )
    anchor = Anchor("parent-link", {
        "parent_hash": "0x" + parent.hash.hex(),
        "parent_number": parent.number,
        # the first block of the walk and how it was anchored, carried up the chain
        "root_anchor": parent.anchor.detail.get("root_anchor", parent.anchor.method),
        "root_number": parent.anchor.detail.get("root_number", parent.number),
        "direction": "child",
        "endpoint": parent.source.label,
    })
    child = AnchoredBlock(_SEAL, header, anchor, parent.chain_id, parent.source)
    return child if clock is None else aged(child, clock)


def by_payload_header(source: ProofSource, payload: PayloadHeader, detail: dict[str, Any],
                      down_to: int | None = None) -> AnchoredBlock:
    """The block a consensus proof pinned (``light-client``: see
    :mod:`recompute.lightclient.anchored_header`), or the block ``down_to`` below it by re-hashed
    parentHash links. The node is not asked which block this is: proofs are checked against
    ``payload.state_root`` / ``receipts_root`` as authenticated. The node's header is asked
    for once, as a cross-check: when served it must hash to ``payload.hash``
    (``header-mismatch``); a node that does not serve it does not stop a verdict."""
    header: Header | PayloadHeader = payload
    try:
        raw = source.block_by_hash(payload.hash)
    except Unverifiable as exc:
        if exc.reason == "rpc-malformed":
            raise
        raw, served = None, f"not served ({exc.reason})"
    else:
        served = "not served (unknown to the node)"
    if raw is not None:
        fetched = Header.from_rpc(raw)
        if fetched.hash != payload.hash:
            raise Unverifiable(
                "header-mismatch",
                f"{source.label} returned for the light client's block {payload.number} a "
                f"header that hashes to 0x{fetched.hash.hex()}, not 0x{payload.hash.hex()}",
            )
        header, served = fetched, "re-hashed to the block hash"
    detail = {**detail, "execution_header": served}
    top = AnchoredBlock(_SEAL, header, Anchor("light-client", detail), source.chain_id(),
                        source)
    if down_to is None or down_to == payload.number:
        return top
    walked = ancestors(top, down_to)[-1]
    anchor = Anchor("light-client", {**detail, "pinned_number": payload.number,
                                     "headers_walked": payload.number - down_to})
    return AnchoredBlock(_SEAL, walked.header, anchor, top.chain_id, source)


def by_proven_header(source: ProofSource, header: Header, pinned: bytes, method: str,
                     detail: dict[str, Any], down_to: int | None = None) -> AnchoredBlock:
    """A block whose hash a proof outside this module pinned (``op-stack``: an output root
    proven in L1 state names it; recompute.l2.op_stack_anchor): ``header`` must hash to ``pinned``;
    ``down_to`` below it is reached by re-hashed parentHash links, as ``--checkpoint`` does."""
    if header.hash != pinned:
        raise Unverifiable("header-mismatch", f"{source.label} returned a header that hashes "
                                              f"to 0x{header.hash.hex()}, not the pinned "
                                              f"0x{pinned.hex()}")
    top = AnchoredBlock(_SEAL, header, Anchor(method, detail), source.chain_id(), source)
    if down_to is None or down_to == header.number:
        return top
    walked = ancestors(top, down_to)[-1]
    anchor = Anchor(method, {**detail, "pinned_number": header.number,
                             "headers_walked": header.number - down_to})
    return AnchoredBlock(_SEAL, walked.header, anchor, top.chain_id, source)


def confirm_by_quorum(block: AnchoredBlock, others: Sequence[ProofSource],
                      quorum: int) -> AnchoredBlock | None:
    """A new head found by its parent link on one endpoint, confirmed by ``quorum`` distinct
    endpoints (its own included) returning the same hash at its number (follow mode with
    several ``--rpc``: the head is then not one node's word). None while too few have it yet;
    ``anchor-disagreement`` as soon as one names another block at that number."""
    agreeing = [block.source.label]
    said: dict[str, str] = {block.source.label: "0x" + block.hash.hex()}
    for source in others:
        try:
            header = _fetch_header(source, block.number)
        except Unverifiable as exc:
            said[source.label] = f"({exc.reason})"
            continue
        said[source.label] = "0x" + header.hash.hex()
        if header.hash != block.hash:
            who = "; ".join(f"{label} says {value}" for label, value in said.items())
            raise Unverifiable("anchor-disagreement", f"block {block.number}: {who}")
        agreeing.append(source.label)
    if len(agreeing) < quorum:
        return None
    anchor = Anchor(block.anchor.method, {**block.anchor.detail, "quorum": quorum,
                                          "confirmed_by": agreeing})
    return AnchoredBlock(_SEAL, block.header, anchor, block.chain_id, block.source)


def by_quorum(sources: Sequence[ProofSource], number: BlockRef, quorum: int) -> AnchoredBlock:
    """K distinct endpoints must return the same header for block ``number``; any two
    different hashes are ``anchor-disagreement``. ``latest`` is the highest head K endpoints
    have reached, refused when the reported heads spread more than :data:`LATEST_SPREAD`
    blocks, so that no single endpoint picks the block; every endpoint's head is in the
    evidence. A quorum of 1 trusts whichever endpoint answers: it is labelled ``single-rpc``."""
    if not 1 <= quorum <= len(sources):
        raise OptionError("{quorum} {k} needs at least {k} {rpc} endpoints",
                          ("quorum", "rpc"), k=quorum)
    distinct_endpoints(sources)
    detail: dict[str, Any] = {}
    if isinstance(number, str):  # a tag: latest, safe, finalized, earliest
        number, detail["heads"] = _quorum_tag(sources, quorum, number)
    said: dict[str, str] = {}
    headers: dict[bytes, tuple[Header, ProofSource]] = {}
    failures: list[str] = []
    for source in sources:
        try:
            header = _fetch_header(source, number)
        except Unverifiable as exc:
            failures.append(f"{source.label}: {exc.reason}")
            said[source.label] = f"({exc.reason})"
            continue
        said[source.label] = "0x" + header.hash.hex()
        headers.setdefault(header.hash, (header, source))
    if len(headers) > 1:
        who = "; ".join(f"{label} says {value}" for label, value in said.items())
        raise Unverifiable("anchor-disagreement", f"block {number}: {who}")
    agreeing = len(sources) - len(failures)
    if not headers or agreeing < quorum:
        raise Unverifiable(
            "quorum-not-met",
            f"block {number}: {agreeing} of {len(sources)} endpoints answered, quorum is "
            f"{quorum} ({'; '.join(failures)})",
        )
    header, source = next(iter(headers.values()))
    method = "single-rpc" if quorum == 1 else "quorum"
    anchor = Anchor(method, {"quorum": quorum, "endpoints": said, "agreeing": agreeing,
                             **detail})
    return AnchoredBlock(_SEAL, header, anchor, source.chain_id(), source)


def _quorum_tag(sources: Sequence[ProofSource], quorum: int,
                tag: str) -> tuple[int, dict[str, int | str]]:
    """The block a tag means under a quorum: each endpoint resolves the tag, and the highest
    block K endpoints have under it is taken, so no single endpoint picks it (one that lags, or
    lies low, cannot pull the block down; one that runs ahead cannot pull it up)."""
    heads: dict[str, int | str] = {}
    numbers = []
    for source in sources:
        try:
            numbers.append(_fetch_header(source, tag).number)
            heads[source.label] = numbers[-1]
        except Unverifiable as exc:
            heads[source.label] = f"({exc.reason})"
    if len(numbers) < quorum:
        raise Unverifiable("quorum-not-met", f"{tag}: {len(numbers)} of {len(sources)} "
                                             f"endpoints named a block, quorum is {quorum}")
    numbers.sort(reverse=True)
    chosen = numbers[quorum - 1]  # the highest block K endpoints say they have
    if numbers[0] - numbers[-1] > LATEST_SPREAD:
        shown = "; ".join(f"{label} says {head}" for label, head in heads.items())
        raise Unverifiable("anchor-disagreement",
                           literal(f"{tag}: the endpoints' blocks spread more than "
                                   f"{LATEST_SPREAD} blocks ({shown}); give ")
                           + "{block} N or {block_hash} H", ("block", "block_hash"))
    return chosen, heads


def by_single_rpc(source: ProofSource, number: BlockRef) -> AnchoredBlock:
    header = _fetch_header(source, number)
    anchor = Anchor("single-rpc", {"endpoint": source.label})
    return AnchoredBlock(_SEAL, header, anchor, source.chain_id(), source)


def anchor_block(
    sources: Sequence[ProofSource],
    *,
    block: BlockRef | None = None,
    block_hash: bytes | None = None,
    quorum: int | None = None,
    checkpoint: bytes | None = None,
    clock: Clock = SYSTEM,
    reach: Reach | None = None,
) -> AnchoredBlock:
    """Anchor one block by whichever method the options name (see module doc), its age by
    ``clock`` in the anchor's evidence. A block reached by a tag other than ``earliest`` is
    ``stale-anchor`` when older than ``clock.max_anchor_age``: a node that stopped (or a
    quorum of them) must not make an old block "latest". A block pinned by hash, number or
    checkpoint is judged as asked; one below a checkpoint is reached by ``reach`` when given
    (:func:`recompute.core.hops.reach`), else by the header walk."""
    anchored = _anchor_block(sources, block=block, block_hash=block_hash, quorum=quorum,
                             checkpoint=checkpoint, reach=reach)
    if isinstance(block, str) and block != "earliest" and block_hash is None:
        decided = anchored.anchor.detail.get("tag_decided_by", "node")
        what = literal(f"block {anchored.number} (") + "{block}" + literal(
            f" {block}, as the {decided} named it)")
        clock.check_fresh(anchored.timestamp, clock.max_anchor_age, what, "max_anchor_age",
                          ("block",))
        clock.check_not_future(anchored.timestamp, what, options=("block",))
    return aged(anchored, clock)


def aged(block: AnchoredBlock, clock: Clock) -> AnchoredBlock:
    """``block`` with its timestamp, the clock and its age in the anchor's evidence
    (``block_timestamp``, ``clock``, ``as_of``, ``age_s``)."""
    anchor = Anchor(block.anchor.method, {**block.anchor.detail,
                                          **clock.evidence(block.timestamp)})
    return AnchoredBlock(_SEAL, block.header, anchor, block.chain_id, block.source)


def _anchor_block(
    sources: Sequence[ProofSource],
    *,
    block: BlockRef | None = None,
    block_hash: bytes | None = None,
    quorum: int | None = None,
    checkpoint: bytes | None = None,
    reach: Reach | None = None,
) -> AnchoredBlock:
    if not sources:
        raise OptionError("no {rpc} endpoint given", ("rpc",))
    if block_hash is not None and checkpoint is not None:
        raise OptionError("{block_hash} and {checkpoint} are two anchors: give one",
                          ("block_hash", "checkpoint"))
    if block_hash is not None:
        if quorum is not None:
            raise OptionError("{block_hash} pins the block itself; {quorum} does not apply",
                              ("block_hash", "quorum"))
        return by_block_hash(sources, block_hash, block)
    if checkpoint is not None:
        if not isinstance(block, int):
            raise OptionError("{checkpoint} needs {block} N (the number to walk down to)",
                              ("checkpoint", "block"))
        return by_checkpoint(sources, checkpoint, block, reach)
    if block is None:
        raise OptionError("give {block} N|latest or {block_hash} H", ("block", "block_hash"))
    if quorum is not None or len(sources) > 1:
        anchored = by_quorum(sources, block, quorum if quorum is not None else len(sources))
        return _tagged(anchored, block, "quorum")
    return _tagged(by_single_rpc(sources[0], block), block, "node")


def _tagged(block: AnchoredBlock, tag: BlockRef, decided_by: str) -> AnchoredBlock:
    """Say in the anchor who decided which block a tag (``latest``, ``finalized``, …) meant:
    the one ``node``, or the ``quorum`` (the highest block K endpoints have under the tag)."""
    if not isinstance(tag, str):
        return block
    anchor = Anchor(block.anchor.method,
                    {**block.anchor.detail, "tag": tag, "tag_decided_by": decided_by})
    return AnchoredBlock(_SEAL, block.header, anchor, block.chain_id, block.source)
