"""The ERC-8447 reference registry as the SAI recipes address it (the ERC-8447 specification).

Storage names are the reference registry's (``layouts/swarm-registry.json``,
contracts/src/swarm/README.md §Storage): per swarm everything lives in ``swarmData[swarmId]`` —
``record`` (the lifecycle record: state, phase, rosterPhase, versions, revision, hashes),
``objective``, ``spec`` (the full §3.1 spec), ``members[account]``, ``rosterCounts[generation]``
and ``roleCounts[generation][roleId]``. Here: the §5.1 and §6.1 enums in specification order, the
swarm parameter, the paths of the record's fields, and the ``getSwarm`` tuple the views answer with.
"""

from __future__ import annotations

from typing import Any

from recompute.core.errors import OptionError
from recompute.core.keccak import keccak256
from recompute.recipes.params import Param
from recompute.recipes.plan import BlockClock, Params

# ---- §5.1, §6.1 enums (ERC-8447 order) ---------------------------------------------------

LIFECYCLE = ("NONE", "FORMING", "ACTIVE", "SUSPENDED", "CONCLUDING", "DISSOLVED")
MEMBER_STATUS = ("NONE", "CANDIDATE", "ACTIVE", "SUSPENDED", "EXITED")
SUSPENSION_CAUSE = ("NONE", "AUTHORITY", "INELIGIBLE")
EXIT_REASON = ("NONE", "LEFT", "REMOVED", "INELIGIBLE", "NOT_CARRIED", "REPLACED",
               "SWARM_DISSOLVED")

# §3.2 reserved role identifiers keccak256("sai.role.<name>")
RESERVED_ROLES = {keccak256(f"sai.role.{n}".encode()): n
                  for n in ("initiator", "coordinator", "worker", "verifier", "observer",
                            "bidder")}
# the same, keyed by the role id as derived values write it (0x-hex), for what people read
ROLE_NAMES = {"0x" + role.hex(): name for role, name in RESERVED_ROLES.items()}


def enum_name(names: tuple[str, ...], value: int) -> str:
    """A stored enum word by its specification name; a word outside the enum is shown, not
    hidden."""
    return names[value] if 0 <= value < len(names) else f"UNKNOWN({value})"


def hex_word(value: bytes) -> str:
    """A stored bytes32 as 0x-hex."""
    return "0x" + bytes(value).hex()


# ---- the swarm and its record ---------------------------------------------------------------

SWARM = Param("swarm", "bytes32", "the swarm id")
LAYOUT = "swarm-registry"

# the fields of the §5 record each recipe needs (read field by field: fewer slots)
LAZY_FIELDS = ("state", "rosterPhase")
CHARTER_FIELDS = ("charterHash", "commitmentHash", "specHash", "charterVersion")


def swarm_base(p: Params) -> str:
    """The layout path of the swarm's data: ``swarmData[swarmId]``."""
    return f"swarmData[{p['swarm']}]"


def swarm_topic(p: Params) -> bytes:
    """The swarm id as the indexed topic (and view argument) it is."""
    return bytes.fromhex(p["swarm"][2:])


def record_paths(base: str, fields: tuple[str, ...]) -> list[str]:
    return [f"{base}.record.{name}" for name in fields]


def record_fields(got: dict[str, Any], base: str, fields: tuple[str, ...]) -> dict[str, Any]:
    """The record's ``fields`` out of a Reads answer for :func:`record_paths`."""
    return {name: got[f"{base}.record.{name}"] for name in fields}


def from_block(p: Params, clock: BlockClock) -> int:
    """The ``from_block`` parameter, refused above the pinned block."""
    start: int = p["from_block"]
    if start > clock.number:
        raise OptionError("{param} from_block={first} is above the pinned block {number}",
                          ("param",), first=start, number=clock.number)
    return start


# getSwarm(bytes32) returns the §5 record (SAITypes.Swarm, contracts/src/swarm/SAITypes.sol)
SWARM_TUPLE = ("(uint8,uint8,uint8,uint8,uint32,uint32,uint32,uint32," + "uint64," * 11
               + "address,address," + "bytes32," * 9 + "string)")
REVISION_AT, CHARTER_AT = 8, 22  # positions of revision and charterHash in the tuple
