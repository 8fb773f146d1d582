"""The ``light-client`` anchor's options and the sync behind them (docs/lightclient.md).

``--beacon URL --trusted-root 0x… [--network mainnet|sepolia|holesky|devnet|FILE]
[--lc-store PATH]`` on every command that anchors. The options are kept in the click context
(``ctx.meta``), not passed as parameters, so a command's signature does not change; the shared
options hand them to the command inside its ``Chain`` (:class:`LightClientOptions`, read once
by :func:`given_light_client_options`), and the anchoring reads them from there
(:meth:`recompute.cli.options.Chain.light_client`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from recompute.core.boundedjson import load_file
from recompute.core.clock import SYSTEM, Clock
from recompute.core.errors import UsageError
from recompute.core.hexdata import parse_block, parse_hash
from recompute.core.jsontext import json_line

if TYPE_CHECKING:
    from recompute.core.anchor import AnchoredBlock
    from recompute.core.source import ProofSource
    from recompute.lightclient import LightClientStore, Network

_META = "recompute.light_client"

F = TypeVar("F", bound=Callable[..., Any])


DEFAULT_TIMEOUT = 30.0  # seconds for one answer, node or beacon, unless --rpc-timeout says


@dataclass(frozen=True)
class LightClientRequest:
    beacon: str
    trusted_root: bytes
    network: Network
    store_path: Path | None = None
    timeout: float = DEFAULT_TIMEOUT  # --rpc-timeout: the beacon client's deadline too


def parse_timeout(value: float | None, default: float = DEFAULT_TIMEOUT) -> float:
    """``--rpc-timeout``: more than 0 and at most an hour; ``default`` when not given."""
    if value is None:
        return default
    if not 0 < value <= 3600:
        raise UsageError(f"--rpc-timeout {value:g} must be more than 0 and at most 3600 "
                         "seconds")
    return value


def _keep(ctx: click.Context, param: click.Parameter, value: object) -> object:
    ctx.meta.setdefault(_META, {})[param.name] = value
    return value


def beacon_options(command: F) -> F:
    """--beacon, --trusted-root, --network, --lc-store (kept in the click context)."""
    decorators = [
        click.option("--beacon", metavar="URL", expose_value=False, callback=_keep,
                     help="Beacon node REST API: pin the block by the light client "
                          "(the light-client anchor; needs --trusted-root)."),
        click.option("--trusted-root", metavar="0x…", expose_value=False, callback=_keep,
                     help="The beacon block root you trust (weak-subjectivity checkpoint)."),
        click.option("--network", "lc_network", metavar="NAME|FILE", expose_value=False,
                     callback=_keep,
                     help="mainnet (default), sepolia, holesky, devnet, or a network file."),
        click.option("--lc-store", metavar="PATH", expose_value=False, callback=_keep,
                     help="Keep the light client's sync state here between runs."),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


@dataclass(frozen=True)
class LightClientOptions:
    """--beacon, --trusted-root, --network, --lc-store as given (text; :meth:`request`
    parses them)."""

    beacon: str | None = None
    trusted_root: str | None = None
    network: str | None = None
    store: str | None = None

    def request(self, rpc_timeout: float | None = None) -> LightClientRequest | None:
        """The options parsed (``rpc_timeout``: --rpc-timeout as given); None without
        --beacon."""
        others = [option for value, option in ((self.trusted_root, "--trusted-root"),
                                               (self.network, "--network"),
                                               (self.store, "--lc-store"))
                  if value is not None]
        if self.beacon is None:
            if others:
                raise UsageError(f"{others[0]} goes with --beacon URL (the light-client anchor)")
            return None
        from recompute.sources.beacon import check_beacon_url

        check_beacon_url(self.beacon)
        if self.trusted_root is None:
            raise UsageError("--beacon needs --trusted-root 0x… (the beacon block root you "
                             "trust)")
        root = parse_hash(self.trusted_root, "--trusted-root")
        return LightClientRequest(self.beacon, root, parse_network(self.network),
                                  Path(self.store) if self.store else None,
                                  parse_timeout(rpc_timeout))


def given_light_client_options() -> LightClientOptions:
    """What the running command was given (:func:`beacon_options` kept it in the click
    context): read where the command's ``Chain`` is made."""
    ctx = click.get_current_context(silent=True)
    given = ctx.meta.get(_META, {}) if ctx is not None else {}
    return LightClientOptions(given.get("beacon"), given.get("trusted_root"),
                              given.get("lc_network"), given.get("lc_store"))


def light_client_request() -> LightClientRequest | None:
    """The light-client options of a running command that has no ``Chain`` (``light-client
    sync``), parsed; None without --beacon."""
    ctx = click.get_current_context(silent=True)
    return given_light_client_options().request(
        ctx.params.get("rpc_timeout") if ctx is not None else None)


def parse_network(text: str | None) -> Network:
    from recompute.lightclient import NETWORKS, load_network, network_by_name

    if text is None:
        return network_by_name("mainnet")
    if text in NETWORKS:  # a built-in name wins over a file of that name
        return NETWORKS[text]
    if "/" in text or text.endswith(".json") or Path(text).is_file():
        return load_network(text)
    return network_by_name(text)


def parse_lc_block(text: str | None) -> int | str | None:
    """--block under the light client: N, finalized (the default), safe or latest."""
    from recompute.lightclient.anchored_header import TAGS

    if text is None or text in TAGS:
        return text
    if text == "earliest":
        raise UsageError("--block earliest: the light client pins blocks from its checkpoint "
                         "on; give N, finalized, safe or latest")
    return parse_block(text)


# ---- the sync, with the store kept on disk ------------------------------------------------


def load_store(request: LightClientRequest) -> LightClientStore | None:
    """The store kept at --lc-store, if there is one (bounded; refused in one line when it
    is for another trusted root or network)."""
    from recompute.lightclient.persist import MAX_STORE_BYTES, store_from_json

    path = request.store_path
    if path is None or not path.exists():
        return None
    document = load_file(path, f"--lc-store {path}", UsageError, max_bytes=MAX_STORE_BYTES)
    return store_from_json(document, request.network, request.trusted_root,
                           f"--lc-store {path}")


def save_store(request: LightClientRequest, store: LightClientStore) -> None:
    from recompute.disk.whole_file import write_whole  # not on a verdict's cold path
    from recompute.lightclient.persist import store_to_json

    path = request.store_path
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    # a reader sees the old store or the new one, whole; --lc-store names the path (a link
    # given there is written through, docs/watch.md §Files recompute writes)
    write_whole(path, json_line(store_to_json(store, request.trusted_root)), named=True)


class LightClientSession:
    """One beacon client and the store synced through it; ``refresh()`` follows the chain
    (the next finality and optimistic updates), saving the store to --lc-store each time."""

    def __init__(self, request: LightClientRequest, clock: Clock = SYSTEM):
        from recompute.sources.beacon import BeaconClient

        self.request = request
        self.clock = clock
        self.client = BeaconClient(request.beacon, timeout=request.timeout)
        self.store: LightClientStore | None = None

    def current_slot(self) -> int:
        """phase0 fork-choice §get_current_slot: from the network's genesis time and the
        clock (no update signed after it is accepted)."""
        return self.request.network.slot_at_time(self.clock.now())

    def sync(self) -> LightClientStore:
        from recompute.lightclient.anchored_header import check_checkpoint
        from recompute.sources.beacon import catch_up, sync_light_client

        if self.store is None:
            resume = load_store(self.request)

            def check_start(store: LightClientStore) -> None:
                check_checkpoint(store, self.clock, "trusted root" if resume is None
                                 else f"store at --lc-store {self.request.store_path}")

            self.store = sync_light_client(self.client, self.request.network,
                                           self.request.trusted_root,
                                           current_slot=self.current_slot,
                                           resume=resume, check_start=check_start)
        else:  # each update is checked against the clock of its own moment
            self.store = catch_up(self.client, self.store, current_slot=self.current_slot)
        save_store(self.request, self.store)
        return self.store

    def close(self) -> None:
        self.client.close()


def light_client_anchor(source: ProofSource, request: LightClientRequest,
                        block_text: str | None, clock: Clock = SYSTEM,
                        history: str = "auto") -> AnchoredBlock:
    """Sync, then anchor ``--block`` (finalized by default) by the light client, judged
    current by ``clock`` (stale-anchor otherwise)."""
    from recompute.lightclient.anchored_header import by_light_client

    block = parse_lc_block(block_text)
    session = LightClientSession(request, clock)
    try:
        store = session.sync()
    finally:
        session.close()
    return by_light_client(source, store, request.trusted_root, block, clock, history)
