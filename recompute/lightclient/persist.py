"""A light-client store as JSON, so a bot resumes where it stopped instead of replaying from
the checkpoint on every start (``--lc-store``; docs/lightclient.md §Sync state on disk).

What is kept is what the sync protocol needs to go on (altair sync-protocol
§LightClientStore): the finalized header, the current sync committee and the next one (all
zero when not known yet), with the trusted root and the network the store was synced from.
Pure: the CLI reads and writes the file (bounded); this module checks the document.

The file is the user's own state, not outside data: it is trusted as a cache of work already
verified, like the checkpoint itself. Still, a document whose trusted root or network is not
the one asked for is refused in one line (``UsageError``), and the finalized header's
execution branch is checked again on load.
"""

from __future__ import annotations

from typing import Any, cast

from recompute.core.schema import Record, Text, check
from recompute.lightclient.failures import OptionError, UsageError
from recompute.lightclient.networks import LC_FORKS, Network
from recompute.lightclient.proofs import is_valid_light_client_header
from recompute.lightclient.ssz import (
    CAPELLA_EXECUTION_FIELDS,
    EXECUTION_FIELDS,
    LightClientHeader,
    SyncCommittee,
    _committee,
    _header,
)
from recompute.lightclient.sync import LightClientStore

FORMAT = "recompute-lc-store.v1"
MAX_STORE_BYTES = 1 << 20  # a mainnet store (two 512-key committees) is ~110 KiB
_ROOT = Text(r"0x[0-9a-fA-F]{64}", "a 0x root of 32 bytes")
_SHAPE = Record({"format": Text(choices=(FORMAT,)),
                 "network": Text(r"[a-z0-9][a-z0-9_-]{0,39}", "a network name"),
                 "genesis_validators_root": _ROOT, "trusted_root": _ROOT,
                 "version": Text(choices=LC_FORKS),
                 # decoded field by field by the beacon API decoders (ssz._header, _committee)
                 "finalized_header": Record(open=True),
                 "current_sync_committee": Record(open=True),
                 "next_sync_committee": Record(open=True)})


def _hex(data: bytes) -> str:
    return "0x" + bytes(data).hex()


def header_json(header: LightClientHeader, version: str) -> dict[str, Any]:
    """A LightClientHeader in the beacon API's JSON form (the decoders' inverse)."""
    execution = header.execution
    names = CAPELLA_EXECUTION_FIELDS if version == "capella" else EXECUTION_FIELDS
    out: dict[str, str] = {}
    for name in names:
        value = getattr(execution, name)
        out[name] = str(int(value)) if isinstance(value, int) else _hex(bytes(value))
    beacon = header.beacon
    return {
        "beacon": {
            "slot": str(int(beacon.slot)),
            "proposer_index": str(int(beacon.proposer_index)),
            "parent_root": _hex(beacon.parent_root),
            "state_root": _hex(beacon.state_root),
            "body_root": _hex(beacon.body_root),
        },
        "execution": out,
        "execution_branch": [_hex(node) for node in header.execution_branch],
    }


def committee_json(committee: SyncCommittee) -> dict[str, Any]:
    return {"pubkeys": [_hex(key) for key in committee.pubkeys],
            "aggregate_pubkey": _hex(committee.aggregate_pubkey)}


def store_to_json(store: LightClientStore, trusted_root: bytes) -> dict[str, Any]:
    network = store.network
    version = network.fork_at_slot(store.finalized_header.slot).name
    return {
        "format": FORMAT,
        "network": network.name,
        "genesis_validators_root": _hex(network.genesis_validators_root),
        "trusted_root": _hex(trusted_root),
        "version": version,
        "finalized_header": header_json(store.finalized_header, version),
        "current_sync_committee": committee_json(store.current_sync_committee),
        "next_sync_committee": committee_json(store.next_sync_committee),
    }


def store_from_json(document: object, network: Network, trusted_root: bytes,
                    where: str = "the light-client store") -> LightClientStore:
    """The store a :func:`store_to_json` document holds, for ``network`` and ``trusted_root``
    only. Every problem is one line (``UsageError``: the file is the user's)."""
    check(document, _SHAPE, where)
    document = cast(dict[str, Any], document)  # check() has walked it against _SHAPE
    if document["trusted_root"] != _hex(trusted_root):
        raise OptionError('{where}: field "trusted_root": the store was synced from trusted '
                          "root {stored}, not {given}: give its root, or another {lc_store}",
                          ("lc_store",), where=where, stored=document["trusted_root"],
                          given=_hex(trusted_root))
    if document["network"] != network.name:
        raise UsageError(f'{where}: field "network": the store is for network '
                         f"{document['network']}, not {network.name}")
    if document["genesis_validators_root"] != _hex(network.genesis_validators_root):
        raise UsageError(f'{where}: field "genesis_validators_root": not the one of network '
                         f"{network.name}")
    version = document["version"]
    try:
        header = _header(document["finalized_header"], f"{where}.finalized_header", version)
        if network.fork_at_slot(header.slot).name != version:
            raise UsageError(f'{where}: field "version": the finalized header\'s fork is not '
                             f"{version!r}")
        current = _committee(document["current_sync_committee"],
                             f"{where}.current_sync_committee", network)
        following = _committee(document["next_sync_committee"],
                               f"{where}.next_sync_committee", network)
    except UsageError:
        raise
    except Exception as error:  # the decoders' rpc-malformed: here a bad file
        raise UsageError(f"{where}: {getattr(error, 'detail', error)}") from None
    if not is_valid_light_client_header(network, header):
        raise UsageError(f'{where}: field "finalized_header": its execution branch does not '
                         "verify")
    return LightClientStore(network=network, finalized_header=header,
                            current_sync_committee=current, next_sync_committee=following,
                            optimistic_header=header)
