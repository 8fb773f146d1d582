"""The ``op-stack`` anchor's options: an L2 block pinned through L1 (docs/l2.md).

``--l2-portal ADDR`` (the chain's ``OptimismPortal2`` proxy on L1) turns the anchor to L1:
``--rpc`` is then the L2 node (it serves the L2 proofs), ``-b/--block`` the L2 block (the
newest usable game's by default), and the L1 block is anchored by ``--l1-rpc`` (repeatable)
with ``--l1-block``, ``--l1-block-hash``, ``--l1-checkpoint``, ``--l1-quorum`` or by the
light client (``--beacon``/``--trusted-root``, which reach L1 only). ``--l2-game`` names the
game to use; ``--l2-finality`` the weakest tier accepted (``final`` by default). The options
are kept in the click context, as the light client's are (recompute.cli.beacon_options).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from recompute.core.errors import UsageError
from recompute.core.hexdata import parse_address

_META = "recompute.l2"
F = TypeVar("F", bound=Callable[..., Any])


def _keep(ctx: click.Context, param: click.Parameter, value: object) -> object:
    ctx.meta.setdefault(_META, {})[param.name] = value
    return value


def l2_options(command: F) -> F:
    """--l2-portal, --l2-registry, --l2-game, --l2-finality and the L1 anchor's --l1-*
    options."""
    decorators = [
        click.option("--l2-portal", metavar="ADDR", expose_value=False, callback=_keep,
                     help="OP-stack L2: the chain's OptimismPortal2 proxy on L1; --rpc is the "
                          "L2 node and the block is pinned through L1's dispute games."),
        click.option("--chain", "l2_chain", metavar="NAME", expose_value=False, callback=_keep,
                     help="OP-stack L2 by name (base, base-sepolia, op-mainnet, op-sepolia): "
                          "its portal address, as --l2-portal."),
        click.option("--l2-registry", metavar="ADDR", expose_value=False, callback=_keep,
                     help="With --l2-portal: the chain's AnchorStateRegistry proxy, for a chain "
                          "on a standard op-contracts release (--chain names it)."),
        click.option("--l2-game", metavar="ADDR", expose_value=False, callback=_keep,
                     help="With --l2-portal: the dispute game to use (default: the newest "
                          "usable game covering the block)."),
        click.option("--l2-finality", type=click.Choice(["final", "resolved", "proposed"]),
                     expose_value=False, callback=_keep,
                     help="With --l2-portal: the weakest game tier accepted (default final)."),
        click.option("--l1-rpc", "l1_rpcs", multiple=True, metavar="URL", expose_value=False,
                     callback=_keep, help="With --l2-portal: L1 JSON-RPC endpoint "
                                          "(repeat for a quorum)."),
        click.option("--l1-block", metavar="N|TAG", expose_value=False, callback=_keep,
                     help="With --l2-portal: the L1 block (default latest; finalized with "
                          "--beacon)."),
        click.option("--l1-block-hash", metavar="H", expose_value=False, callback=_keep,
                     help="With --l2-portal: pin the L1 block by your own hash."),
        click.option("--l1-checkpoint", metavar="H", expose_value=False, callback=_keep,
                     help="With --l2-portal: trusted L1 hash at or above --l1-block."),
        click.option("--l1-quorum", type=int, metavar="K", expose_value=False, callback=_keep,
                     help="With --l2-portal: K of the --l1-rpc endpoints must agree."),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


@dataclass(frozen=True)
class L2Options:
    """The options as given (text; :func:`l2_anchor` parses them)."""

    portal: str | None = None
    chain: str | None = None
    game: str | None = None
    finality: str | None = None
    l1_rpcs: tuple[str, ...] = ()
    l1_block: str | None = None
    l1_block_hash: str | None = None
    l1_checkpoint: str | None = None
    l1_quorum: int | None = None
    registry: str | None = None

    @property
    def given(self) -> bool:
        return self.portal is not None or self.chain is not None

    def stray(self) -> str | None:
        """An L2 or L1 option given without --l2-portal (the first one), else None."""
        named = [("--l2-game", self.game), ("--l2-finality", self.finality),
                 ("--l2-registry", self.registry),
                 ("--l1-rpc", self.l1_rpcs or None), ("--l1-block", self.l1_block),
                 ("--l1-block-hash", self.l1_block_hash),
                 ("--l1-checkpoint", self.l1_checkpoint), ("--l1-quorum", self.l1_quorum)]
        return next((flag for flag, value in named if value is not None), None)


def given_l2_options() -> L2Options:
    ctx = click.get_current_context(silent=True)
    given = ctx.meta.get(_META, {}) if ctx is not None else {}
    return L2Options(given.get("l2_portal"), given.get("l2_chain"), given.get("l2_game"),
                     given.get("l2_finality"),
                     tuple(given.get("l1_rpcs") or ()), given.get("l1_block"),
                     given.get("l1_block_hash"), given.get("l1_checkpoint"),
                     given.get("l1_quorum"), given.get("l2_registry"))


def portal_of(options: L2Options) -> tuple[bytes, str | None]:
    """The portal address: --l2-portal, or the --chain preset's (both: a usage error)."""
    from recompute.l2.presets import load_presets

    if options.chain is None:
        assert options.portal is not None
        return parse_address(options.portal, "--l2-portal"), None
    if options.portal is not None:
        raise UsageError("--chain and --l2-portal both name the portal: give one")
    presets = load_presets()
    if options.chain not in presets:
        raise UsageError(f"--chain {options.chain!r} is not a known chain: give one of "
                         f"{', '.join(sorted(presets))}, or --l2-portal ADDR")
    preset = presets[options.chain]
    return preset.portal, f"{preset.key} ({preset.name}; from {preset.source})"
