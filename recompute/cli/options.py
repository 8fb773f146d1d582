"""Options every chain-reading command shares, spelled once, and parsers for user-given values.

The spelling follows Foundry's ``cast`` (README §Connection and block options): ``-r/--rpc-url``
(alias ``--rpc``), ``$ETH_RPC_URL`` when no endpoint is given, ``-b/--block`` with a number
(decimal or 0x-hex) or a tag (``latest``, ``safe``, ``finalized``, ``earliest``) and
``--rpc-timeout``. A malformed value is a UsageError naming the option: one line, exit 64.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from recompute.cli.beacon_options import (
    DEFAULT_TIMEOUT,
    LightClientOptions,
    LightClientRequest,
    beacon_options,
    given_light_client_options,
    light_client_anchor,
    parse_timeout,
)
from recompute.cli.clock_options import clock_options, current_clock
from recompute.cli.l2_options import L2Options, given_l2_options, l2_options, portal_of
from recompute.core.anchor import AnchoredBlock, Reach, anchor_block, distinct_endpoints
from recompute.core.errors import UsageError
from recompute.core.hexdata import BLOCK_TAGS, parse_address, parse_block, parse_hash
from recompute.core.hops import MODES, reach
from recompute.sources.live import LiveSource

if TYPE_CHECKING:
    from recompute.l2.op_stack_anchor import OpStackRequest

ENV_RPC = "ETH_RPC_URL"

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Chain:
    """What the shared options said: where to ask, which block, how to pin it."""

    rpcs: tuple[str, ...] = ()
    block: str | None = None
    block_hash: str | None = None
    quorum: int | None = None
    checkpoint: str | None = None
    rpc_timeout: float | None = None
    history: str | None = None  # how a block below the pinned one is reached (core.hops)
    light_client_options: LightClientOptions = LightClientOptions()  # --beacon and its kin
    l2_options: L2Options = L2Options()  # --l2-portal and the L1 anchor's --l1-* options

    def with_(self, **changes: Any) -> Chain:
        return replace(self, **changes)

    def urls(self) -> tuple[str, ...]:
        """The --rpc endpoints, else $ETH_RPC_URL, else a usage error."""
        if self.rpcs:
            return self.rpcs
        from_env = os.environ.get(ENV_RPC, "").strip()
        if from_env:
            return (from_env,)
        raise UsageError(f"give --rpc URL (-r/--rpc-url) or set ${ENV_RPC} (a JSON-RPC endpoint, "
                         "e.g. http://127.0.0.1:8545)")

    def timeout(self, default: float = DEFAULT_TIMEOUT) -> float:
        return parse_timeout(self.rpc_timeout, default)

    def sources(self, default_timeout: float = DEFAULT_TIMEOUT) -> list[LiveSource]:
        timeout = self.timeout(default_timeout)
        sources = [LiveSource(url, timeout=timeout) for url in self.urls()]
        if len(sources) > 1:  # several endpoints count as several only on distinct hosts
            distinct_endpoints(sources)
        return sources

    def light_client(self) -> LightClientRequest | None:
        """The light-client anchor's options, parsed; None without --beacon."""
        return self.light_client_options.request(self.rpc_timeout)

    def reach(self) -> Reach:
        """How a block below the pinned one is reached: :func:`recompute.core.hops.reach` in
        the ``--history`` mode (auto by default)."""
        return functools.partial(reach, mode=self.history or "auto")

    def anchor(self) -> AnchoredBlock:
        """Parse the options (usage errors first), then anchor (may be UNVERIFIABLE)."""
        return anchored_block(self)


def _rpc_options(multiple_help: str) -> list[Callable[[F], F]]:
    return [
        click.option("-r", "--rpc-url", "--rpc", "rpcs", multiple=True, metavar="URL",
                     help=f"JSON-RPC endpoint{multiple_help} (default: ${ENV_RPC})."),
        click.option("--rpc-timeout", type=float, metavar="SECONDS",
                     help="How long to wait for one answer of the node."),
    ]


def _anchor_options() -> list[Callable[[F], F]]:
    return [
        click.option("--block-hash", metavar="H", help="Pin the block by your own trusted hash."),
        click.option("--quorum", type=int, metavar="K",
                     help="K of the endpoints must agree on the block hash."),
        click.option("--checkpoint", metavar="H",
                     help="Trusted hash at or above the block; the block below it reached "
                          "by --history."),
        click.option("--history", type=click.Choice(MODES), metavar="auto|hops|walk",
                     help="How a block below the pinned one is proven: hops through the "
                          "history storage contract (EIP-2935), the header walk, or auto "
                          "(hops, else the walk, said in the evidence). Default: auto."),
    ]


def _bundle(command: F, decorators: Sequence[Callable[[F], F]], names: tuple[str, ...]) -> F:
    """Apply ``decorators`` and hand the command one ``chain`` (a :class:`Chain`) instead of
    the separate values, so every command reads the options the same way."""
    callback = command

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        kwargs["chain"] = Chain(**{name: kwargs.pop(name, None) for name in names},
                                light_client_options=given_light_client_options(),
                                l2_options=given_l2_options())
        return callback(*args, **kwargs)

    functools.update_wrapper(wrapped, callback)
    # the options already applied below this decorator stay with the command
    wrapped.__dict__["__click_params__"] = list(getattr(callback, "__click_params__", []))
    del wrapped.__dict__["__wrapped__"]
    bundled = cast(F, wrapped)
    for decorator in reversed(decorators):
        bundled = decorator(bundled)
    return bundled


def chain_options(command: F) -> F:
    """-r/--rpc-url (repeatable), --rpc-timeout, -b/--block, --block-hash, --quorum,
    --checkpoint, --json, and the light-client anchor's --beacon, --trusted-root, --network,
    --lc-store. The command receives ``chain`` (a :class:`Chain`, the light-client options
    included: :meth:`Chain.light_client`) and ``as_json``."""
    decorators = [
        *_rpc_options(" (repeat for a quorum)"),
        click.option("-b", "--block", metavar="N|TAG",
                     help=f"Block number (decimal or 0x-hex) or tag: {', '.join(BLOCK_TAGS)} "
                          "(with --beacon, finalized is the default)."),
        *_anchor_options(),
        click.option("--json", "as_json", is_flag=True, help="Print one JSON object."),
    ]
    names = ("rpcs", "rpc_timeout", "block", "block_hash", "quorum", "checkpoint", "history")
    return clock_options(beacon_options(l2_options(_bundle(command, decorators, names))))


def connection_options(command: F) -> F:
    """-r/--rpc-url (repeatable), --rpc-timeout, --block-hash, --quorum, --checkpoint: for
    commands that name their blocks their own way (``watch --from/--to``)."""
    names = ("rpcs", "rpc_timeout", "block_hash", "quorum", "checkpoint", "history")
    return clock_options(_bundle(command, [*_rpc_options(" (repeat for a quorum)"),
                                           *_anchor_options()], names), follow=True)


def single_rpc_options(command: F) -> F:
    """-r/--rpc-url (one), --rpc-timeout, -b/--block, --block-hash: ``vectors capture``."""
    decorators = [
        click.option("-r", "--rpc-url", "--rpc", "rpcs", multiple=True, metavar="URL",
                     help=f"JSON-RPC endpoint (default: ${ENV_RPC})."),
        click.option("--rpc-timeout", type=float, metavar="SECONDS",
                     help="How long to wait for one answer of the node."),
        click.option("-b", "--block", metavar="N|TAG",
                     help="The block, resolved to its hash by the node (or give --block-hash)."),
        click.option("--block-hash", metavar="H", help="Pin the block by your own hash."),
    ]
    return clock_options(_bundle(command, decorators,
                                 ("rpcs", "rpc_timeout", "block", "block_hash")))


def sources_from(rpcs: tuple[str, ...], timeout: float = DEFAULT_TIMEOUT) -> list[LiveSource]:
    return Chain(rpcs=rpcs).sources(timeout)


def anchored_block(chain: Chain) -> AnchoredBlock:
    """Parse the shared options (usage errors first), then anchor (may be UNVERIFIABLE)."""
    if chain.l2_options.given:  # an OP-stack L2 block, pinned through L1 (docs/l2.md)
        return l2_anchor(chain, anchored_block)
    if (stray := chain.l2_options.stray()) is not None:
        raise UsageError(f"{stray} goes with --l2-portal ADDR (an L2 block pinned through L1)")
    light_client = chain.light_client()
    if light_client is not None:
        if chain.block_hash or chain.checkpoint or chain.quorum is not None \
                or len(chain.urls()) > 1:
            raise UsageError("--beacon is an anchor of its own: give one --rpc (for the "
                             "proofs) and no --block-hash, --checkpoint or --quorum")
        return light_client_anchor(chain.sources()[0], light_client, chain.block,
                                   current_clock(), chain.history or "auto")
    number = parse_block(chain.block)
    pinned = parse_hash(chain.block_hash, "--block-hash") if chain.block_hash else None
    check = parse_hash(chain.checkpoint, "--checkpoint") if chain.checkpoint else None
    if chain.quorum is not None and chain.quorum < 1:
        raise UsageError("--quorum must be at least 1")
    sources = chain.sources()
    return anchor_block(sources, block=number, block_hash=pinned, quorum=chain.quorum,
                        checkpoint=check, clock=current_clock(), reach=chain.reach())


def unique_pairs(values: tuple[str, ...], option: str) -> dict[str, str]:
    """KEY=VALUE options (``--param``, ``--expect``); a key given twice is a usage error, not
    "the last one wins"."""
    out: dict[str, str] = {}
    for text in values:
        key, sep, value = text.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UsageError(f"{option} {text!r} is not KEY=VALUE")
        if key in out:
            raise UsageError(f"{option} {key} is given twice ({out[key]!r} and "
                             f"{value.strip()!r}): give it once")
        out[key] = value.strip()
    return out


# ---- the L2 anchor's options (docs/l2.md) ------------------------------------------------


def l1_chain_of(chain: Chain) -> Chain:
    """The L1 anchor's options as a :class:`Chain` of their own (its --rpc the --l1-rpc)."""
    options = chain.l2_options
    if chain.block_hash or chain.checkpoint or chain.quorum is not None:
        raise UsageError("--l2-portal pins the L2 block through L1: give the L1 anchor as "
                         "--l1-block-hash, --l1-checkpoint or --l1-quorum, not --block-hash, "
                         "--checkpoint or --quorum")
    if len(chain.urls()) > 1:
        raise UsageError("--l2-portal: give one --rpc (the L2 node that serves the proofs)")
    if not options.l1_rpcs:
        raise UsageError("--l2-portal needs --l1-rpc URL (an L1 node: the dispute games live "
                         "there)")
    l1_block = options.l1_block
    if l1_block is None:
        l1_block = "finalized" if chain.light_client_options.beacon is not None else "latest"
    return chain.with_(rpcs=options.l1_rpcs, block=l1_block, block_hash=options.l1_block_hash,
                       quorum=options.l1_quorum, checkpoint=options.l1_checkpoint,
                       l2_options=L2Options())


def l2_request(chain: Chain, block_text: str | None) -> OpStackRequest:
    """What to anchor on the L2: the portal, the block (``block_text``: N or latest), the
    game, the tier."""
    from recompute.l2.op_stack_anchor import OpStackRequest
    from recompute.l2.presets import load_presets

    options = chain.l2_options
    portal, preset = portal_of(options)
    game = parse_address(options.game, "--l2-game") if options.game else None
    block = parse_block(block_text)
    if isinstance(block, str) and block != "latest":
        raise UsageError(f"--block {block} with --l2-portal: give an L2 block number or latest "
                         "(the newest usable game's block)")
    chosen = load_presets()[options.chain] if options.chain is not None else None
    if chosen is not None and options.registry is not None:
        raise UsageError("--chain and --l2-registry both name the AnchorStateRegistry: give "
                         "one")
    registry = parse_address(options.registry, "--l2-registry") if options.registry else \
        chosen.anchor_state_registry if chosen else None
    return OpStackRequest(portal=portal, block=block if isinstance(block, int) else None,
                          game=game, accept=options.finality or "final", preset=preset,
                          l1_network=chosen.l1 if chosen else None,
                          anchor_state_registry=registry)


def l2_anchor(chain: Chain, anchor_l1: Callable[[Chain], AnchoredBlock]) -> AnchoredBlock:
    """Anchor the L1 block (``anchor_l1`` with the L1 options), then the L2 block through it."""
    from recompute.l2.op_stack_anchor import by_output_root

    l1_chain = l1_chain_of(chain)
    request = l2_request(chain, chain.block)
    l1 = anchor_l1(l1_chain)
    return by_output_root(l1, chain.sources()[0], request, current_clock(), reach=chain.reach())
