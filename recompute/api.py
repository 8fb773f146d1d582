"""The public library API, for bots and notebooks (docs/design.md §Public API).

Import from ``recompute`` (``from recompute import anchor_block, step``); these names are kept
stable across releases, everything else is internal and may move. Each function is a thin,
typed entry to the trust flow: anchor a block, then prove, read, step or replay at it.

>>> from recompute import LiveSource, anchor_block, read, step, load_layout, get_recipe
>>> block = anchor_block([LiveSource(url)], block="latest", quorum=None)   # doctest: +SKIP
>>> read(block, address, load_layout("amm-registry"), ["heads[0x…].lastCheckpoint"])  # +SKIP
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from recompute.core import anchor as _anchor
from recompute.core import clock as _clock
from recompute.core import hops as _hops
from recompute.core import prover as _prover
from recompute.core.anchor import Anchor, AnchoredBlock
from recompute.core.clock import Clock
from recompute.core.errors import ArgumentError, RecomputeError, Unverifiable, UsageError
from recompute.core.hexdata import BLOCK_TAGS, as_data, as_uint256
from recompute.core.outcome import Outcome
from recompute.core.prover import ProofStats, ProvenAccount
from recompute.core.source import ProofSource
from recompute.core.verdict import REASONS, Reason, Verdict
from recompute.evaluator import job as _job
from recompute.evaluator.job import Job
from recompute.evaluator.runner import prove_paths
from recompute.layout import Layout, ReadResult, load_layout
from recompute.recipes.base import Recipe
from recompute.recipes.params import Param
from recompute.recipes.plan import Params
from recompute.recipes.registry import get_recipe, load_recipes
from recompute.sources.live import LiveSource
from recompute.vectors import Result as VectorResult
from recompute.vectors import verify_file

__all__ = [
    "REASONS", "Anchor", "AnchoredBlock", "ArgumentError", "Clock", "Job", "Layout",
    "LiveSource", "Outcome", "ProvenAccount", "ReadResult", "Reason", "Recipe",
    "RecomputeError", "Unverifiable", "UsageError",
    "Verdict", "VectorResult", "anchor_block", "anchor_l2_block", "get_recipe", "load_layout",
    "load_recipes",
    "prove_account", "read", "step", "step_many", "verify_vector",
]

# Addresses, hashes, keys and slots are taken as 0x strings (either case) or bytes, numbers as
# ints or decimal/0x text; a malformed one is an ArgumentError (a ValueError and a UsageError)
# whose message starts with the argument's name (docs/library.md).


def _address(value: object, name: str = "address") -> bytes:
    return as_data(value, name, 20, "an address")


def _hash(value: object, name: str) -> bytes:
    return as_data(value, name, 32, "a 32-byte hash")


def anchor_block(sources: Sequence[ProofSource], *, block: int | str | None = None,
                 block_hash: bytes | str | None = None, quorum: int | None = None,
                 checkpoint: bytes | str | None = None, clock: Clock | None = None,
                 history: str = "auto") -> AnchoredBlock:
    """Anchor one block (docs/design.md §Anchors): ``block`` a number (int, decimal or 0x text)
    or a tag (``latest``, ``safe``, ``finalized``, ``earliest``); pinned by ``block_hash``, a
    ``checkpoint`` above it, or a ``quorum`` of the sources agreeing. ``clock`` (the system
    clock unless given) dates the block: a tag's block older than its ``max_anchor_age`` is
    ``stale-anchor``. ``history`` is how a block below a ``checkpoint`` is proven: ``auto``
    (hops through the history storage contract, else the header walk), ``hops`` or ``walk``
    (:func:`recompute.core.hops.reach`)."""
    if isinstance(block, bool) or (block is not None and not isinstance(block, (int, str))):
        raise ArgumentError(f"block: {block!r} is not a block number or tag")
    if isinstance(block, str) and block not in BLOCK_TAGS:
        try:
            block = as_uint256(block, "block")
        except ArgumentError:
            raise ArgumentError(f"block: {block!r} is not a block number (decimal or 0x-hex) "
                                f"nor a tag ({', '.join(BLOCK_TAGS)})") from None
    return _anchor.anchor_block(
        sources, block=block,
        block_hash=None if block_hash is None else _hash(block_hash, "block_hash"),
        quorum=quorum,
        checkpoint=None if checkpoint is None else _hash(checkpoint, "checkpoint"),
        clock=_clock.SYSTEM if clock is None else clock,
        reach=functools.partial(_hops.reach, mode=history))


def anchor_l2_block(l1_block: AnchoredBlock, l2_source: ProofSource, *,
                    portal: bytes | str | None = None, block: int | str | None = None,
                    game: bytes | str | None = None, finality: str = "final",
                    clock: Clock | None = None, history: str = "auto",
                    chain: str | None = None) -> AnchoredBlock:
    """An OP-stack L2 block pinned through L1 (docs/l2.md): ``l1_block`` anchored by any
    method (it must be younger than ``clock``'s ``max_anchor_age``), ``portal`` the chain's
    ``OptimismPortal2`` proxy or ``chain`` a preset's name (``op-mainnet``, …: its portal,
    L1 network and AnchorStateRegistry, for a chain on a standard release:
    docs/l2.md §Current releases), ``block`` the L2 block (None: the game's), ``game`` the dispute
    game to use (None: the closest usable one at or above ``block``), ``finality`` the weakest
    tier accepted (``final``, ``resolved``, ``proposed``), ``history`` how a block below the
    game's is reached (``auto``, ``hops``, ``walk``: :func:`anchor_block`'s). Proofs at the
    block returned are
    asked of ``l2_source``; a refused game is :class:`Unverifiable` with its reason."""
    from recompute.l2.finality import TIERS
    from recompute.l2.op_stack_anchor import OpStackRequest, by_output_root

    if block is not None:
        if isinstance(block, bool) or not isinstance(block, (int, str)):
            raise ArgumentError(f"block: {block!r} is not a block number")
        block = as_uint256(block, "block")
    if finality not in TIERS:
        raise ArgumentError(f"finality: {finality!r} is not one of {', '.join(TIERS)}")
    if history not in _hops.MODES:
        raise ArgumentError(f"history: {history!r} is not one of {', '.join(_hops.MODES)}")
    from recompute.l2.presets import load_presets

    if (portal is None) == (chain is None):
        raise ArgumentError("portal, chain: give one of them (the chain's portal, or a "
                            "preset's name)")
    presets = load_presets()
    if chain is not None and chain not in presets:
        raise ArgumentError(f"chain: {chain!r} is not one of {', '.join(sorted(presets))}")
    preset = presets[chain] if chain is not None else None
    request = OpStackRequest(portal=preset.portal if preset else _address(portal, "portal"),
                             block=block, game=None if game is None else _address(game, "game"),
                             accept=finality, preset=chain,
                             l1_network=preset.l1 if preset else None,
                             anchor_state_registry=preset.anchor_state_registry
                             if preset else None)
    return by_output_root(l1_block, l2_source, request, clock or Clock(),
                          reach=functools.partial(_hops.reach, mode=history))


def prove_account(block: AnchoredBlock, address: bytes | str,
                  slots: Iterable[int | str | bytes] = (), source: ProofSource | None = None,
                  stats: ProofStats | None = None) -> ProvenAccount:
    """Prove the account at ``address`` and its ``slots`` (ints, 0x text or 32 bytes) at
    ``block``; ``.storage`` maps each slot number to its proven value."""
    return _prover.prove_account(block, _address(address),
                                 [as_uint256(s, f"slots[{i}]") for i, s in enumerate(slots)],
                                 source, stats)


def read(block: AnchoredBlock, address: bytes | str, layout: Layout | str,
         paths: Sequence[str]) -> list[ReadResult]:
    """Prove and decode ``paths`` of the contract at ``address`` through ``layout`` (a
    :class:`Layout`, a bundled name or a descriptor file): one ``eth_getProof`` per round
    (``recompute read``). Raises :class:`Unverifiable` when the node cannot prove them and
    :class:`UsageError` for a path the layout does not have."""
    if isinstance(paths, str):
        raise ArgumentError(f"paths: give a list of paths, not the string {paths!r}")
    return prove_paths(block, _address(address), _layout(layout), list(paths)).results


def step(recipe: Recipe | str, params: Mapping[str, Any], block: AnchoredBlock,
         address: bytes | str, layout: Layout | str | None = None,
         expect: dict[str, str] | None = None, compare_views: bool = False) -> Outcome:
    """Run one recipe (or its name) at one anchored block; ``params`` typed from the recipe's
    declaration (see :func:`typed_params`); ``layout`` by default the recipe's reference one.
    UNVERIFIABLE comes back as the exception :class:`Unverifiable`."""
    recipe = _recipe(recipe)
    return _job.step(recipe, typed_params(recipe, params), block, _address(address),
                        _layout(layout if layout is not None else recipe.layout), expect,
                        compare_views)


def step_many(block: AnchoredBlock, jobs: Sequence[Job]) -> list[Outcome | Exception]:
    """Run many :class:`Job` s at one block in shared rounds (one ``eth_getProof`` per contract
    per round); each job's address and parameters are taken as :func:`step` takes them. A job
    that fails gets its exception in its place."""
    ready = []
    for i, job in enumerate(jobs):
        address = _address(job.address, f"jobs[{i}].address")
        params = typed_params(job.recipe, job.params, f"jobs[{i}].params")
        if address != job.address or params != job.params:
            job = replace(job, address=address, params=params)
        ready.append(job)
    return _job.step_many(block, ready)


def typed_params(recipe: Recipe, params: Mapping[str, Any], name: str = "params") -> Params:
    """The parameters as the recipe's declaration types them (what ``--param`` gives it): an
    ``address`` or ``bytes32`` as bytes or 0x text, a ``uint``/``int`` as an int or decimal/0x
    text, a ``bool`` as a bool or true/false, a ``file`` as a path; a value ``None`` is not
    given (its default applies)."""
    if not isinstance(params, Mapping):
        raise ArgumentError(f"{name}: give a dict of {recipe.name}'s parameters, not "
                            f"{type(params).__name__}")
    declared = {p.name: p for p in recipe.params}
    texts = {}
    for key, value in params.items():
        if value is None:
            continue
        param = declared.get(key)
        if param is None:
            raise ArgumentError(f"{name}: {recipe.name} has no parameter {key!r} (parameters: "
                                f"{', '.join(declared) or 'none'})")
        texts[key] = _param_text(param, value, f"{name}[{key!r}]")
        try:
            param.parse(texts[key])
        except UsageError as exc:
            said = str(exc).removeprefix(f"param {key}=")  # OptionError: the library's words
            raise ArgumentError(f"{name}[{key!r}]: {said}") from None
    try:
        return recipe.parse_params(texts)
    except UsageError as exc:
        raise ArgumentError(f"{name}: {exc}") from None


def _param_text(param: Param, value: object, name: str) -> str:
    """The value as ``--param`` text, for the recipe's own parser."""
    kind = param.kind
    if isinstance(value, (bytes, bytearray, memoryview)) and kind in ("address", "bytes32"):
        return "0x" + bytes(value).hex()
    if isinstance(value, bool):
        if kind == "bool":
            return "true" if value else "false"
    elif isinstance(value, int) and kind in ("uint", "int", "bool"):
        return str(value)
    elif isinstance(value, Path) and kind == "file":
        return str(value)
    elif isinstance(value, str):
        return value
    raise ArgumentError(f"{name}: {value!r} is not a {kind} (give {_KINDS.get(kind, 'text')})")


_KINDS = {"address": "0x + 40 hex digits or 20 bytes", "bytes32": "0x + 64 hex digits or 32 bytes",
          "uint": "an int or decimal/0x text", "int": "an int or decimal/0x text",
          "bool": "True/False", "file": "a path"}


def _recipe(recipe: Recipe | str) -> Recipe:
    if isinstance(recipe, str):
        return get_recipe(recipe)
    if not isinstance(recipe, Recipe):
        raise ArgumentError(f"recipe: {recipe!r} is not a recipe nor a recipe's name")
    return recipe


def _layout(layout: Layout | str | Path) -> Layout:
    if isinstance(layout, (str, Path)):
        return load_layout(layout)
    if not isinstance(layout, Layout):
        raise ArgumentError(f"layout: {layout!r} is not a layout nor a layout's name or file")
    return layout


def verify_vector(path: str | Path) -> VectorResult:
    """Replay one conformance vector file offline; ``.passed`` and ``.detail`` say how it went."""
    return verify_file(Path(path))
