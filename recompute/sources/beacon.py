"""Beacon node REST client for the light-client endpoints, and the sync loop that drives the
pure light client (:mod:`recompute.lightclient`) with its answers.

Every answer is untrusted: it is read with a whole-request deadline and a byte cap, its JSON
nesting is bounded before it is parsed, and it is decoded by the light client's strict
decoders and then verified by the store. The node can make recompute answer UNVERIFIABLE
(it can always refuse to help), never make it accept a header the sync committee did not
sign.

Endpoints (beacon-APIs, ``/eth/v1/beacon/``): ``genesis``, ``light_client/bootstrap/{root}``,
``light_client/updates?start_period=&count=``, ``light_client/finality_update``,
``light_client/optimistic_update``.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn
from urllib.parse import urlparse

import requests

from recompute.core.boundedjson import loads as bounded_loads
from recompute.lightclient import (
    LightClientBootstrap,
    LightClientStore,
    LightClientUpdate,
    Network,
    StaleUpdate,
    bootstrap,
    decode_bootstrap,
    decode_finality_update,
    decode_optimistic_update,
    decode_updates,
)
from recompute.lightclient.failures import (
    OptionError,
    Unverifiable,
    UsageError,
    invalid,
    malformed,
    one_line,
)
from recompute.sources.deadline import SocketDeadline, deadline_adapter

MAX_BODY_BYTES = 16 << 20  # a mainnet period's update is ~50 KiB; 128 of them fit
MAX_JSON_DEPTH = 32
# consensus-specs altair light-client p2p-interface §Configuration
MAX_REQUEST_LIGHT_CLIENT_UPDATES = 128
_CHUNK = 1 << 16


def check_beacon_url(url: str) -> str:
    """An http(s) URL with a host, or a one-line UsageError."""
    parsed = urlparse(url) if isinstance(url, str) else None
    if (parsed is None or parsed.scheme not in ("http", "https") or not parsed.hostname
            or any(ch.isspace() or ord(ch) < 32 for ch in url)):
        raise OptionError("{beacon} {url} is not an http(s) URL (e.g. http://127.0.0.1:5052)",
                          ("beacon",), url=one_line(repr(url), 80))
    try:
        parsed.port  # noqa: B018 -- raises ValueError on a bad port
    except ValueError:
        raise OptionError("{beacon} {url} has an invalid port", ("beacon",),
                          url=one_line(repr(url), 80)) from None
    return url.rstrip("/")


@dataclass(frozen=True)
class Genesis:
    """GET /eth/v1/beacon/genesis, as the node claims it (untrusted)."""

    genesis_time: int
    genesis_validators_root: bytes
    genesis_fork_version: bytes


class BeaconClient:
    """One beacon node. Each method returns decoded (not yet verified) data or raises
    ``Unverifiable`` (``rpc-unreachable``, ``rpc-error``, ``block-unknown``, ``rpc-malformed``).

    ``timeout`` bounds each whole request (connect, headers and body: at the deadline the
    socket is shut down); ``max_bytes`` bounds each answer body. Connections are kept alive
    between requests. Not thread-safe: one client per thread."""

    def __init__(self, url: str, *, timeout: float = 30.0, max_bytes: int = MAX_BODY_BYTES):
        self.url = check_beacon_url(url)
        if not 0 < timeout <= 3600:
            raise UsageError("beacon timeout must be in (0, 3600] seconds")
        self.timeout = timeout
        self.max_bytes = max_bytes
        self._watch = SocketDeadline()
        self._session = requests.Session()
        adapter = deadline_adapter(self._watch)
        self._session.mount("http://", adapter)
        self._session.mount("https://", adapter)
        self.requests = 0

    def close(self) -> None:
        self._session.close()

    def __enter__(self) -> BeaconClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- endpoints ---------------------------------------------------------------------

    def genesis(self) -> Genesis:
        answer = self.get_json("/eth/v1/beacon/genesis")
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, dict):
            raise malformed("genesis: expected an object with 'data'")
        time_text = data.get("genesis_time")
        if (not isinstance(time_text, str) or not time_text.isascii() or not time_text.isdigit()
                or len(time_text) > 19):
            raise malformed("genesis.data.genesis_time: expected a decimal string")
        return Genesis(
            genesis_time=int(time_text),
            genesis_validators_root=_hex(data.get("genesis_validators_root"),
                                         "genesis.data.genesis_validators_root", 32),
            genesis_fork_version=_hex(data.get("genesis_fork_version"),
                                      "genesis.data.genesis_fork_version", 4),
        )

    def bootstrap(self, block_root: bytes, network: Network) -> LightClientBootstrap:
        path = f"/eth/v1/beacon/light_client/bootstrap/0x{bytes(block_root).hex()}"
        return decode_bootstrap(self.get_json(path, unknown="block-unknown"), network)

    def updates(self, start_period: int, count: int, network: Network) -> list[LightClientUpdate]:
        count = max(1, min(count, MAX_REQUEST_LIGHT_CLIENT_UPDATES))
        answer = self.get_json("/eth/v1/beacon/light_client/updates",
                               {"start_period": str(start_period), "count": str(count)})
        return decode_updates(answer, network, count)

    def finality_update(self, network: Network) -> LightClientUpdate:
        answer = self.get_json("/eth/v1/beacon/light_client/finality_update")
        return decode_finality_update(answer, network)

    def optimistic_update(self, network: Network) -> LightClientUpdate:
        answer = self.get_json("/eth/v1/beacon/light_client/optimistic_update")
        return decode_optimistic_update(answer, network)

    # -- transport -----------------------------------------------------------------------

    def get_json(self, path: str, params: dict[str, Any] | None = None,
                 unknown: str = "rpc-error") -> Any:
        """GET ``path`` and parse the body as bounded JSON. ``unknown`` is the reason for a
        404 (``block-unknown`` where the path names a block)."""
        where = f"{self.url}{path}"
        return parse_bounded_json(self._get(path, params, unknown, where), where)

    def _get(self, path: str, params: dict[str, Any] | None, unknown: str, where: str) -> bytes:
        self.requests += 1
        with self._watch.running(self.timeout) as watch:
            try:
                body = self._exchange(path, params, unknown, where)
                if watch.expired:  # the shutdown may read as a short, complete answer
                    raise self._late(where)
                return body
            except Unverifiable:
                if watch.expired:
                    raise self._late(where) from None
                raise
            except Exception as error:  # requests' and urllib3's transport errors, OSError
                if watch.expired or isinstance(error, requests.Timeout | socket.timeout):
                    raise self._late(where) from None
                raise Unverifiable("rpc-unreachable", one_line(
                    f"{where} did not answer: {type(error).__name__}; check the URL and that "
                    "the beacon node runs")) from None

    def _late(self, where: str) -> Unverifiable:
        return Unverifiable("rpc-unreachable", f"{where}: no complete answer within "
                            f"{self.timeout:g} s")

    def _exchange(self, path: str, params: dict[str, Any] | None, unknown: str,
                  where: str) -> bytes:
        response = self._session.get(
            self.url + path, params=params, stream=True, allow_redirects=False,
            headers={"Accept": "application/json", "Accept-Encoding": "identity"},
            timeout=(self.timeout, self.timeout),
        )
        try:
            if response.status_code != 200:
                raise _status_error(response, where, unknown)
            encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
            if encoding not in ("", "identity"):
                raise malformed(f"{where}: compressed answer ({one_line(encoding, 20)}) not "
                                "asked for")
            declared = response.headers.get("Content-Length", "").strip()
            if declared.isdigit() and int(declared) > self.max_bytes:
                raise malformed(f"{where}: answer of {declared} bytes is over the "
                                f"{self.max_bytes}-byte cap")
            body = bytearray()
            while chunk := response.raw.read1(_CHUNK, decode_content=False):
                body += chunk
                if len(body) > self.max_bytes:
                    raise malformed(f"{where}: answer over the {self.max_bytes}-byte cap")
            return bytes(body)
        finally:
            response.close()


def _status_error(response: requests.Response, where: str, unknown: str) -> Unverifiable:
    message = ""
    try:
        text = response.raw.read1(4096, decode_content=False)
        document = json.loads(text) if text else None
        if isinstance(document, dict) and isinstance(document.get("message"), str):
            message = ": " + one_line(document["message"], 120)
    except Exception:  # the error body is a courtesy; its absence changes nothing
        pass
    if 300 <= response.status_code < 400:
        message = " (redirects are not followed)"
    reason = unknown if response.status_code == 404 else "rpc-error"
    return Unverifiable(reason, one_line(f"{where}: HTTP {response.status_code}{message}"))


def parse_bounded_json(raw: bytes, where: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse untrusted JSON after checking its nesting depth (so the parser's recursion is
    bounded: :mod:`recompute.core.boundedjson`); no NaN/Infinity, no duplicate keys."""
    return bounded_loads(raw, where, malformed, max_depth=max_depth,
                         object_pairs_hook=_no_duplicates, parse_constant=_no_constant)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = {}
    for key, value in pairs:
        if key in result:
            raise malformed(f"duplicate JSON key {one_line(key, 40)!r}")
        result[key] = value
    return result


def _no_constant(name: str) -> NoReturn:
    raise malformed(f"JSON constant {name} is not allowed")


def _hex(value: object, where: str, size: int) -> bytes:
    if (not isinstance(value, str) or len(value) != 2 + 2 * size or not value.startswith("0x")
            or not all(ch in "0123456789abcdefABCDEF" for ch in value[2:])):
        raise malformed(f"{where}: expected 0x and {size} bytes of hex")
    return bytes.fromhex(value[2:])


# the current slot: a number, or the local clock giving it when asked (see catch_up)
Slot = int | Callable[[], int]


# ---------------------------------------------------------------------------------------
# The sync loop (altair light-client.md: bootstrap, then updates by period, then the
# latest finality and optimistic updates).


def sync_light_client(client: BeaconClient, network: Network, trusted_block_root: bytes, *,
                      current_slot: Slot, check_genesis: bool = True,
                      resume: LightClientStore | None = None,
                      check_start: Callable[[LightClientStore], None] | None = None,
                      ) -> LightClientStore:
    """Bootstrap from ``trusted_block_root`` (or go on from ``resume``, a store synced from
    it earlier: recompute.lightclient.persist) and follow the sync committee up to
    ``current_slot``'s period, then apply the node's latest finality and optimistic updates.

    ``check_start`` is called with the store it starts from, before any update is asked for
    (the weak-subjectivity check of recompute.lightclient.anchored_header.check_checkpoint).

    Returns the store; ``store.finalized_execution()`` is the pinned execution block.
    Raises ``Unverifiable`` when the node's data does not verify (``invalid-consensus-
    proof``), is malformed, or the node cannot be reached."""
    if check_genesis:
        genesis = client.genesis()
        if genesis.genesis_validators_root != network.genesis_validators_root:
            raise invalid(f"the beacon node's genesis_validators_root "
                          f"0x{genesis.genesis_validators_root.hex()} is not {network.name}'s")
    if resume is not None:
        store = resume
    else:
        store = bootstrap(trusted_block_root, client.bootstrap(trusted_block_root, network),
                          network)
    if check_start is not None:
        check_start(store)
    return catch_up(client, store, current_slot=current_slot)


def catch_up(client: BeaconClient, store: LightClientStore, *,
             current_slot: Slot) -> LightClientStore:
    """Period updates up to ``current_slot``'s period, then the latest finality and
    optimistic updates (the part of a sync that is repeated to follow the chain).

    ``current_slot`` may be the local clock itself (a function giving the current slot): each
    update is then checked against the slot of the moment it is applied (altair
    light-client sync-protocol §validate_light_client_update takes the store's current slot),
    not of the moment the sync began: on a fast devnet (1 s slots) a slow sync otherwise finds
    the node's latest update signed in a slot later than the one it read at its start, and
    refuses it at every retry."""
    network = store.network
    target = network.period_at_slot(_slot_now(current_slot))
    for _ in range(max(0, target - store.sync_period) + 1):
        if store.sync_period > target:
            break
        start = store.sync_period
        before = (start, store.next_sync_committee_known)
        for update in client.updates(start, target - start + 1, network):
            store = _apply_unless_stale(store, update, current_slot)
        if (store.sync_period, store.next_sync_committee_known) == before \
                or store.sync_period >= target:
            break
    store = _apply_unless_stale(store, client.finality_update(network), current_slot)
    return _apply_unless_stale(store, client.optimistic_update(network), current_slot)


def _slot_now(current_slot: Slot) -> int:
    return current_slot() if callable(current_slot) else current_slot


def _apply_unless_stale(store: LightClientStore, update: LightClientUpdate,
                        current_slot: Slot) -> LightClientStore:
    try:
        return store.apply_update(update, current_slot=_slot_now(current_slot))
    except StaleUpdate:
        return store
