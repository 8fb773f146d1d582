"""Block headers: the field sets from Frontier to Prague, RLP encoding and the block hash.

block hash = keccak256(rlp(header)) (Yellow Paper §4.3). Later forks append fields:
London baseFeePerGas (EIP-1559), Shanghai withdrawalsRoot (EIP-4895), Cancun blobGasUsed,
excessBlobGas (EIP-4844) and parentBeaconBlockRoot (EIP-4788), Prague requestsHash
(EIP-7685). A header carries a prefix of that sequence: 15, 16, 17, 20 or 21 fields.

A :class:`Header` is *raw*: decoded from untrusted bytes or JSON. Only
:mod:`recompute.core.anchor` turns one into an :class:`~recompute.core.anchor.AnchoredBlock`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cached_property
from typing import Any

from recompute.core import rlpcodec
from recompute.core.errors import Unverifiable, malformed
from recompute.core.hexdata import parse_data, parse_quantity
from recompute.core.keccak import keccak256

# (attribute, JSON-RPC key, kind); kinds: h32 = 32-byte hash, addr, bloom, nonce8, int, bytes
_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("parent_hash", "parentHash", "h32"),
    ("ommers_hash", "sha3Uncles", "h32"),
    ("coinbase", "miner", "addr"),
    ("state_root", "stateRoot", "h32"),
    ("transactions_root", "transactionsRoot", "h32"),
    ("receipts_root", "receiptsRoot", "h32"),
    ("logs_bloom", "logsBloom", "bloom"),
    ("difficulty", "difficulty", "int"),
    ("number", "number", "int"),
    ("gas_limit", "gasLimit", "int"),
    ("gas_used", "gasUsed", "int"),
    ("timestamp", "timestamp", "int"),
    ("extra_data", "extraData", "bytes"),
    ("mix_hash", "mixHash", "h32"),
    ("nonce", "nonce", "nonce8"),
    ("base_fee_per_gas", "baseFeePerGas", "int"),  # London
    ("withdrawals_root", "withdrawalsRoot", "h32"),  # Shanghai
    ("blob_gas_used", "blobGasUsed", "int"),  # Cancun
    ("excess_blob_gas", "excessBlobGas", "int"),
    ("parent_beacon_block_root", "parentBeaconBlockRoot", "h32"),
    ("requests_hash", "requestsHash", "h32"),  # Prague
)
_SIZES = {"h32": 32, "addr": 20, "bloom": 256, "nonce8": 8}
# Which field counts are real headers, and the fork that introduced each shape.
FIELD_SETS = {15: "frontier", 16: "london", 17: "shanghai", 20: "cancun", 21: "prague"}
_MAX_HEADER_BYTES = 1 << 16




@dataclass(frozen=True)
class Header:
    parent_hash: bytes
    ommers_hash: bytes
    coinbase: bytes
    state_root: bytes
    transactions_root: bytes
    receipts_root: bytes
    logs_bloom: bytes
    difficulty: int
    number: int
    gas_limit: int
    gas_used: int
    timestamp: int
    extra_data: bytes
    mix_hash: bytes
    nonce: bytes
    base_fee_per_gas: int | None = None
    withdrawals_root: bytes | None = None
    blob_gas_used: int | None = None
    excess_blob_gas: int | None = None
    parent_beacon_block_root: bytes | None = None
    requests_hash: bytes | None = None

    def __post_init__(self) -> None:
        present = [getattr(self, name) is not None for name, _, _ in _FIELDS]
        count = sum(present)
        if present[:count] != [True] * count or count not in FIELD_SETS:
            missing = [key for (_, key, _), p in zip(_FIELDS, present, strict=True) if not p]
            raise malformed(
                f"header fields are not a known fork's field set ({count} present; "
                f"missing {', '.join(missing[:3])})"
            )
        for (name, _, kind), is_set in zip(_FIELDS, present, strict=True):
            value = getattr(self, name)
            if not is_set:
                continue
            if kind == "int":
                if not isinstance(value, int) or value < 0 or value.bit_length() > 256:
                    raise malformed(f"header field {name} is not a 256-bit unsigned integer")
            elif kind in _SIZES:
                if not isinstance(value, bytes) or len(value) != _SIZES[kind]:
                    raise malformed(f"header field {name} must be {_SIZES[kind]} bytes")
            elif not isinstance(value, bytes):
                raise malformed(f"header field {name} must be bytes")

    @property
    def fork(self) -> str:
        return FIELD_SETS[len(self.rlp_items())]

    def rlp_items(self) -> list[rlpcodec.Encodable]:
        return [
            getattr(self, name)
            for name, _, _ in _FIELDS
            if getattr(self, name) is not None
        ]

    @cached_property
    def encoded(self) -> bytes:
        return rlpcodec.encode(self.rlp_items())

    @cached_property
    def hash(self) -> bytes:
        """keccak256(rlp(header))."""
        return keccak256(self.encoded)

    def replace(self, **changes: Any) -> Header:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(changes)
        return Header(**values)

    # ---- decoding untrusted input -------------------------------------------------------

    @classmethod
    def from_rlp(cls, data: bytes) -> Header:
        """Decode a header from its RLP bytes (strict: canonical RLP only)."""
        if not isinstance(data, bytes | bytearray) or len(data) > _MAX_HEADER_BYTES:
            raise malformed("header RLP is not bytes or is too large")
        try:
            items = rlpcodec.decode(bytes(data))
        except rlpcodec.RlpError as exc:
            raise malformed(f"header RLP does not decode: {_first_line(exc)}") from None
        return cls.from_rlp_items(items)

    @classmethod
    def from_rlp_items(cls, items: object) -> Header:
        if not isinstance(items, list) or len(items) not in FIELD_SETS:
            raise malformed("header RLP is not a list of 15, 16, 17, 20 or 21 fields")
        values: dict[str, Any] = {}  # field by name: __post_init__ checks each
        for (name, _, kind), item in zip(_FIELDS, items, strict=False):
            if not isinstance(item, bytes):
                raise malformed(f"header field {name} is a list, not a string")
            if kind == "int":
                if item[:1] == b"\x00":
                    raise malformed(f"header field {name} has leading zero bytes")
                values[name] = int.from_bytes(item, "big")
            else:
                values[name] = item
        return cls(**values)

    @classmethod
    def from_rpc(cls, block: object) -> Header:
        """Decode a header from an ``eth_getBlockBy*`` JSON object.

        The object's own ``hash`` must equal keccak256(rlp(header)); a node whose JSON says
        otherwise is ``rpc-inconsistent`` (docs/design.md §Trust flow: every recomputable field
        must match).
        """
        if not isinstance(block, dict):
            raise malformed("block is not a JSON object")
        values: dict[str, Any] = {}  # field by name: __post_init__ checks each
        for index, (name, key, kind) in enumerate(_FIELDS):
            if key not in block or block[key] is None:
                if index < min(FIELD_SETS):
                    raise malformed(f"block.{key} is missing")
                continue
            text = block[key]
            what = f"block.{key}"
            if kind == "int":
                values[name] = parse_quantity(text, what, malformed)
            else:
                values[name] = parse_data(text, what, malformed, _SIZES.get(kind))
        header = cls(**values)
        if "hash" in block:
            claimed = parse_data(block["hash"], "block.hash", malformed, 32)
            if claimed != header.hash:
                raise Unverifiable(
                    "rpc-inconsistent",
                    f"block {header.number}: the node says hash 0x{claimed.hex()} but its header "
                    f"fields hash to 0x{header.hash.hex()}",
                )
        return header

    def to_rpc(self) -> dict[str, str]:
        """The JSON-RPC form of this header (with ``hash``), as a node would return it."""
        out: dict[str, str] = {}
        for name, key, kind in _FIELDS:
            value = getattr(self, name)
            if value is None:
                continue
            out[key] = hex(value) if kind == "int" else "0x" + value.hex()
        out["hash"] = "0x" + self.hash.hex()
        return out


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
