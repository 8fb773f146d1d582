"""Beacon networks a light client can follow: fork schedule, genesis and preset sizes.

A :class:`Network` is everything the sync protocol needs to know about a chain besides the
one trusted block root: the ``genesis_validators_root`` and the fork versions (both enter
every signing domain), the fork epochs (they choose the light-client data shape and the
generalized indices), the preset sizes (slots per epoch, epochs per sync-committee period,
committee size) and the genesis time (only to turn a wall clock into a current slot).

Built in: ``mainnet``, ``sepolia``, ``holesky`` and ``devnet`` (recompute's own, see
:data:`DEVNET`); :func:`minimal_network` builds the consensus-spec-tests' minimal preset from
a case's ``config.json``, :func:`load_network` reads ``--network FILE``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recompute.core.boundedjson import loads as bounded_loads
from recompute.core.boundedjson import read_limited
from recompute.lightclient.failures import UsageError, one_line

# Every fork the beacon chain has named, in activation order (consensus-specs `specs/`).
FORK_ORDER = ("phase0", "altair", "bellatrix", "capella", "deneb", "electra", "fulu", "gloas")
# The forks whose light-client data this package reads. Earlier forks carry no execution
# header; gloas changes the light-client header (consensus-specs specs/gloas/light-client/).
LC_FORKS = ("capella", "deneb", "electra", "fulu")

FAR_FUTURE_EPOCH = 2**64 - 1
MAX_NETWORK_FILE_BYTES = 1 << 20


@dataclass(frozen=True)
class Fork:
    name: str
    version: bytes  # 4 bytes
    epoch: int


@dataclass(frozen=True)
class Network:
    """One beacon chain's parameters (consensus-specs ``configs/`` and ``presets/``)."""

    name: str
    genesis_validators_root: bytes
    forks: tuple[Fork, ...]  # activation order, epochs non-decreasing
    slots_per_epoch: int = 32
    epochs_per_sync_committee_period: int = 256
    sync_committee_size: int = 512
    seconds_per_slot: int = 12
    genesis_time: int | None = None

    @property
    def slots_per_period(self) -> int:
        return self.slots_per_epoch * self.epochs_per_sync_committee_period

    @property
    def update_timeout(self) -> int:
        """Altair sync-protocol §Preset ``UPDATE_TIMEOUT``: one period's worth of slots."""
        return self.slots_per_period

    def epoch_at_slot(self, slot: int) -> int:
        return slot // self.slots_per_epoch

    def period_at_slot(self, slot: int) -> int:
        """Altair sync-protocol §compute_sync_committee_period_at_slot."""
        return self.epoch_at_slot(slot) // self.epochs_per_sync_committee_period

    def fork_at_epoch(self, epoch: int) -> Fork:
        """The last fork activated at or before ``epoch`` (phase0 §compute_fork_version)."""
        current = self.forks[0]
        for fork in self.forks:
            if fork.epoch <= epoch:
                current = fork
        return current

    def fork_at_slot(self, slot: int) -> Fork:
        return self.fork_at_epoch(self.epoch_at_slot(slot))

    def is_active(self, fork_name: str, slot: int) -> bool:
        """Whether ``fork_name`` (or a later fork) is active at ``slot``."""
        at = FORK_ORDER.index(self.fork_at_slot(slot).name)
        return at >= FORK_ORDER.index(fork_name)

    def slot_at_time(self, unix_time: float) -> int:
        """The current slot by a local clock (0 before genesis); needs ``genesis_time``."""
        if self.genesis_time is None:
            raise UsageError(f"network {self.name} has no genesis_time: cannot tell the slot")
        return max(0, int(unix_time - self.genesis_time) // self.seconds_per_slot)


def _forks(*rows: tuple[str, str, int]) -> tuple[Fork, ...]:
    return tuple(Fork(name, bytes.fromhex(version), epoch) for name, version, epoch in rows)


# Mainnet: tests/fixtures/light-client/networks.json (= consensus-specs configs/mainnet.yaml,
# *_FORK_VERSION / *_FORK_EPOCH; gloas is not scheduled there). genesis_time is the chain's
# genesis (2020-12-01 12:00:23 UTC), what /eth/v1/beacon/genesis answers on mainnet.
MAINNET = Network(
    name="mainnet",
    genesis_validators_root=bytes.fromhex(
        "4b363db94e286120d76eb905340fdd4e54bfe9f06bf33ff6cf5ad27f511bfe95"
    ),
    forks=_forks(
        ("phase0", "00000000", 0),
        ("altair", "01000000", 74240),
        ("bellatrix", "02000000", 144896),
        ("capella", "03000000", 194048),
        ("deneb", "04000000", 269568),
        ("electra", "05000000", 364032),
        ("fulu", "06000000", 411392),
    ),
    genesis_time=1606824023,
)

# Sepolia: forks from eth-clients/sepolia metadata/config.yaml @00d17b4337cc (gloas is listed
# there at epoch 353024; its light-client data is not read here, so it is refused), genesis
# time MIN_GENESIS_TIME + GENESIS_DELAY of that file; genesis_validators_root from
# ethstaker-deposit-cli staking_deposit/settings.py @2853868faf0e (SepoliaSetting).
SEPOLIA = Network(
    name="sepolia",
    genesis_validators_root=bytes.fromhex(
        "d8ea171f3c94aea21ebc42a1ed61052acf3f9209c00e4efbaaddac09ed9b8078"
    ),
    forks=_forks(
        ("phase0", "90000069", 0),
        ("altair", "90000070", 50),
        ("bellatrix", "90000071", 100),
        ("capella", "90000072", 56832),
        ("deneb", "90000073", 132608),
        ("electra", "90000074", 222464),
        ("fulu", "90000075", 272640),
        ("gloas", "90000076", 353024),
    ),
    genesis_time=1655647200 + 86400,
)

# Holesky: forks from eth-clients/holesky metadata/config.yaml @32a72e21c6e5 (up to electra;
# that file schedules no later fork, so use --network FILE for one), genesis time
# MIN_GENESIS_TIME + GENESIS_DELAY of that file; genesis_validators_root from
# ethstaker-deposit-cli staking_deposit/settings.py @2853868faf0e (HoleskySetting).
HOLESKY = Network(
    name="holesky",
    genesis_validators_root=bytes.fromhex(
        "9143aa7c615a7f7115e2b6aac319c03529df8242ae705fba9df39b79c59fa8b1"
    ),
    forks=_forks(
        ("phase0", "01017000", 0),
        ("altair", "02017000", 0),
        ("bellatrix", "03017000", 0),
        ("capella", "04017000", 256),
        ("deneb", "05017000", 29696),
        ("electra", "06017000", 115968),
    ),
    genesis_time=1695902100 + 300,
)

# recompute's devnet beacon chain (recompute/devnet/beacon_server.py): the minimal preset's sizes
# (8 slots per epoch, 8 epochs per period, 32 committee members), every fork up to electra
# active from genesis so its data has electra's shape, fork versions 0xdec0de0N (N = the
# fork's place in FORK_ORDER) and a genesis_validators_root that is sha256 of a fixed label.
# None of it is any real chain's; nothing about it is trusted beyond the devnet.
DEVNET = Network(
    name="devnet",
    genesis_validators_root=hashlib.sha256(b"recompute devnet genesis_validators_root").digest(),
    forks=tuple(
        Fork(name, bytes.fromhex(f"dec0de0{index}"), 0)
        for index, name in enumerate(FORK_ORDER[: FORK_ORDER.index("electra") + 1])
    ),
    slots_per_epoch=8,
    epochs_per_sync_committee_period=8,
    sync_committee_size=32,
    seconds_per_slot=12,
    genesis_time=0,
)

NETWORKS = {network.name: network for network in (MAINNET, SEPOLIA, HOLESKY, DEVNET)}

# The consensus-specs `minimal` preset (presets/minimal/phase0.yaml, altair.yaml).
MINIMAL_PRESET = {"slots_per_epoch": 8, "epochs_per_sync_committee_period": 8,
                  "sync_committee_size": 32}


def minimal_network(config: Mapping[str, object], genesis_validators_root: bytes,
                    name: str = "minimal") -> Network:
    """A consensus-spec-tests case's network: the minimal preset plus the fork versions and
    epochs of its ``config.json`` (``GENESIS_FORK_VERSION``, ``<FORK>_FORK_VERSION/EPOCH``)."""
    rows = [{"name": "phase0", "version": config.get("GENESIS_FORK_VERSION"), "epoch": 0}]
    for fork in FORK_ORDER[1:]:
        version = config.get(f"{fork.upper()}_FORK_VERSION")
        if version is not None:
            rows.append({"name": fork, "version": version,
                         "epoch": config.get(f"{fork.upper()}_FORK_EPOCH")})
    seconds = config.get("SECONDS_PER_SLOT", 6)
    return network_from_json(
        {"name": name, "genesis_validators_root": "0x" + genesis_validators_root.hex(),
         "forks": rows, "seconds_per_slot": seconds, **MINIMAL_PRESET},
        name,
    )


def network_by_name(name: str) -> Network:
    try:
        return NETWORKS[name]
    except KeyError:
        known = ", ".join(sorted(NETWORKS))
        raise UsageError(f"unknown network {one_line(name, 40)!r} (known: {known})") from None


def load_network(path: str | Path) -> Network:
    """``--network FILE``: a JSON object shaped like one entry of networks.json."""
    file = Path(path)
    raw = read_limited(file, f"cannot read network file {file}", UsageError,
                       MAX_NETWORK_FILE_BYTES)  # a FIFO or a device: one line, no hang
    if len(raw) > MAX_NETWORK_FILE_BYTES:
        raise UsageError(f"network file {file} is larger than {MAX_NETWORK_FILE_BYTES} bytes")
    document = bounded_loads(raw, f"network file {file}", UsageError,
                             max_bytes=MAX_NETWORK_FILE_BYTES)  # depth bounded before parsing
    return network_from_json(document, file.stem)


_TOP_KEYS = {"name", "genesis_validators_root", "genesis_time", "seconds_per_slot", "forks",
             "slots_per_epoch", "epochs_per_sync_committee_period", "sync_committee_size"}
_FORK_KEYS = {"name", "version", "epoch", "fork_digest_pre_fulu_formula"}
_HEX = re.compile(r"0x[0-9a-fA-F]*\Z")
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}\Z")


def network_from_json(document: object, default_name: str = "custom") -> Network:
    """Validate a network object; every problem is one UsageError line naming the field."""
    if not isinstance(document, dict):
        raise UsageError("network: expected a JSON object")
    unknown = sorted(set(document) - _TOP_KEYS)
    if unknown:
        raise UsageError(f"network: unknown key {one_line(unknown[0], 40)!r}")
    name = document.get("name", default_name)
    if not isinstance(name, str) or not _NAME.match(name):
        raise UsageError("network.name: expected 1-40 characters of [a-z0-9_-]")
    forks_doc = document.get("forks")
    if not isinstance(forks_doc, list) or not 1 <= len(forks_doc) <= len(FORK_ORDER):
        raise UsageError(f"network.forks: expected a list of 1 to {len(FORK_ORDER)} forks")
    forks = tuple(_fork(entry, index) for index, entry in enumerate(forks_doc))
    _check_schedule(forks)
    sizes = {
        key: _int(document, key, low, high, default)
        for key, low, high, default in (
            ("slots_per_epoch", 1, 64, 32),
            ("epochs_per_sync_committee_period", 1, 8192, 256),
            ("sync_committee_size", 8, 1024, 512),
            ("seconds_per_slot", 1, 3600, 12),
        )
    }
    if sizes["sync_committee_size"] % 8:
        raise UsageError("network.sync_committee_size: expected a multiple of 8")
    genesis_time = document.get("genesis_time")
    if genesis_time is not None:
        genesis_time = _int(document, "genesis_time", 0, 2**63 - 1, None)
    return Network(
        name=name,
        genesis_validators_root=_hex(document.get("genesis_validators_root"),
                                     "network.genesis_validators_root", 32),
        forks=forks,
        genesis_time=genesis_time,
        **sizes,
    )


def _fork(entry: object, index: int) -> Fork:
    where = f"network.forks[{index}]"
    if not isinstance(entry, dict):
        raise UsageError(f"{where}: expected an object with name, version, epoch")
    unknown = sorted(set(entry) - _FORK_KEYS)
    if unknown:
        raise UsageError(f"{where}: unknown key {one_line(unknown[0], 40)!r}")
    name = entry.get("name")
    if name not in FORK_ORDER:
        raise UsageError(f"{where}.name: expected one of {', '.join(FORK_ORDER)}")
    return Fork(
        name=name,
        version=_hex(entry.get("version"), f"{where}.version", 4),
        epoch=_int(entry, "epoch", 0, FAR_FUTURE_EPOCH, None, where),
    )


def _check_schedule(forks: tuple[Fork, ...]) -> None:
    places = [FORK_ORDER.index(fork.name) for fork in forks]
    if places != sorted(set(places)):
        raise UsageError("network.forks: expected each fork once, in activation order")
    if forks[0].epoch != 0:
        raise UsageError("network.forks: the first fork must activate at epoch 0")
    if any(later.epoch < earlier.epoch for earlier, later in zip(forks, forks[1:], strict=False)):
        raise UsageError("network.forks: epochs must not decrease")
    if len({fork.version for fork in forks}) != len(forks):
        raise UsageError("network.forks: fork versions must differ")
    if not any(fork.name in LC_FORKS for fork in forks):
        raise UsageError(f"network.forks: no fork with light-client data ({', '.join(LC_FORKS)})")


def _int(doc: dict[str, Any], key: str, low: int, high: int, default: int | None,
         where: str = "network") -> int:
    value = doc.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise UsageError(f"{where}.{key}: expected an integer in [{low}, {high}]")
    return value


def _hex(value: object, where: str, size: int) -> bytes:
    if not isinstance(value, str) or len(value) != 2 + 2 * size or not _HEX.match(value):
        raise UsageError(f"{where}: expected 0x and {2 * size} hex digits")
    return bytes.fromhex(value[2:])
