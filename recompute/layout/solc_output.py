"""solc's outputs as ``layout import`` reads them: one validator for every shape.

Four shapes carry a ``storageLayout`` (docs/design.md §Layouts):

- a solc **standard-JSON output** ``{"contracts": {SOURCE: {NAME: {"storageLayout": …}}}}``,
  bare or wrapped in a Hardhat **build-info** (``{"output": …, "solcVersion": …}``), or the
  ``solc --combined-json storage-layout`` form ``{"contracts": {"SOURCE:NAME":
  {"storage-layout": …}}, "version": …}``;
- a **build artifact** with a ``storageLayout`` key (``contracts/build.mjs``, Hardhat, Foundry:
  ``sourceName``, ``contractName``, ``compiler.version``, ``metadata``);
- a **bare** ``storageLayout`` ``{"storage": [...], "types": {...} | null}``.

Every field read here has its type checked before it is used, and a wrong one is one
:class:`UsageError` line naming the field (``contracts["a.sol"]["A"].storageLayout.storage``)
— never a Python error. What a storage entry or a type *means* is checked afterwards, by the
descriptor's own validator (:func:`recompute.layout.descriptor.parse_descriptor`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from recompute.core.boundedjson import loads
from recompute.core.errors import OptionError, UsageError
from recompute.core.jsontext import json_line


@dataclass(frozen=True)
class Found:
    """One contract's storage layout as an input states it."""

    contract: str | None  # SOURCE:NAME, when the input says
    storage: list[Any]  # a list of objects (their fields are checked by the descriptor)
    types: dict[str, Any]
    compiler: str | None  # the compiler version the input states


def _key(path: str, key: str) -> str:
    return f"{path}[{json_line(key)[:80]}]"


def _field(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _object(value: Any, where: str, origin: str, what: str = "an object") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise UsageError(f"{origin}: {where} must be {what}, not {_kind(value)}")
    return value


def _optional_str(doc: dict[str, Any], name: str, path: str, origin: str) -> str | None:
    value = doc.get(name)
    if value is not None and not isinstance(value, str):
        raise UsageError(f"{origin}: {_field(path, name)} must be a string, not {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false",
            type(None): "null"}.get(type(value), "a number")


# ---- a storageLayout ------------------------------------------------------------------------

def storage_layout(value: Any, where: str, origin: str) -> tuple[list[Any], dict[str, Any]]:
    """``storage`` (a list of objects whose ``contract``, when present, is a string) and
    ``types`` (an object; solc writes null when a contract has no state variables)."""
    layout = _object(value, where, origin, "an object with 'storage' and 'types'")
    storage = layout.get("storage")
    if not isinstance(storage, list):
        raise UsageError(f"{origin}: {_field(where, 'storage')} must be a list, not "
                         f"{_kind(storage)}")
    for i, entry in enumerate(storage):
        at = f"{_field(where, 'storage')}[{i}]"
        _optional_str(_object(entry, at, origin), "contract", at, origin)
    types = layout.get("types")
    if types is not None and not isinstance(types, dict):
        raise UsageError(f"{origin}: {_field(where, 'types')} must be an object or null, not "
                         f"{_kind(types)}")
    return storage, types or {}


def _declared_contract(storage: list[Any]) -> str | None:
    """solc stamps every storage entry with the contract being compiled (the most derived)."""
    names: set[str | None] = {entry.get("contract") for entry in storage}
    return names.pop() if len(names) == 1 else None


# ---- the four shapes ------------------------------------------------------------------------

def read(doc: Any, contract: str | None, origin: str) -> Found:
    """The storage layout of ``contract`` (SOURCE:NAME or a unique NAME; the only one when
    None) in a parsed input of any shape above."""
    doc = _object(doc, "the input", origin, "a JSON object")
    compiler = None
    if "output" in doc and not {"contracts", "storageLayout", "storage"} & set(doc):
        compiler = _optional_str(doc, "solcVersion", "", origin)  # a Hardhat build-info
        doc = _object(doc["output"], "output", origin, "a solc standard-JSON output object")
    if "contracts" in doc:
        layouts = standard_json_layouts(doc, origin)
        name, (storage, types) = _choose(layouts, contract, origin)
        return Found(name, storage, types, compiler or _optional_str(doc, "version", "", origin))
    if "storageLayout" in doc:
        return _artifact(doc, contract, origin)
    if "storage" in doc:
        storage, types = storage_layout(doc, "", origin)
        declared = _declared_contract(storage)
        if contract is not None and declared is not None and contract != declared:
            raise UsageError(f"{origin}: the variables are declared by {declared:.120}, not "
                             f"{contract}")
        return Found(contract or declared, storage, types, None)
    raise UsageError(f"{origin}: not a storage layout, a build artifact with storageLayout, or "
                     "a solc standard-JSON output")


def standard_json_layouts(doc: dict[str, Any],
                          origin: str) -> dict[str, tuple[list[Any], dict[str, Any]]]:
    """Every storageLayout of a standard-JSON or ``--combined-json`` output, by SOURCE:NAME."""
    sources = _object(doc["contracts"], "contracts", origin, "an object of source files")
    found = {}
    for source, contracts in sources.items():
        at = _key("contracts", source)
        _object(contracts, at, origin, "an object of contracts")
        if ":" in source and ("storage-layout" in contracts
                              or not all(isinstance(c, dict) for c in contracts.values())):
            combined = contracts.get("storage-layout")  # solc --combined-json storage-layout
            if combined is None:
                continue
            where = _key(at, "storage-layout")
            if isinstance(combined, str):
                combined = loads(combined, f"{origin}: {where}", UsageError)
            found[source] = storage_layout(combined, where, origin)
            continue
        for name, entry in contracts.items():
            here = _key(at, name)
            layout = _object(entry, here, origin).get("storageLayout")
            if layout is not None:
                found[f"{source}:{name}"] = storage_layout(layout, _field(here, "storageLayout"),
                                                           origin)
    if not found:
        raise UsageError(f"{origin}: no contract in this solc output has a storageLayout "
                         "(compile with outputSelection storageLayout)")
    return found


def _choose(found: dict[str, Any], contract: str | None, origin: str) -> tuple[str, Any]:
    """The one layout ``--contract`` names (SOURCE:NAME or a unique NAME), or the only one."""
    if contract is None:
        if len(found) == 1:
            return next(iter(found.items()))
        raise OptionError("{origin}: several contracts have a storage layout; choose one with "
                          "{contract} ({found})", ("contract",), origin=origin,
                          found=", ".join(sorted(found))[:500])
    if contract in found:
        return contract, found[contract]
    matches = [k for k in found if k.split(":")[-1] == contract]
    if len(matches) == 1:
        return matches[0], found[matches[0]]
    raise UsageError(f"{origin}: no contract {contract!r} with a storage layout "
                     f"(choices: {', '.join(sorted(found))})"[:600])


def _artifact(doc: dict[str, Any], contract: str | None, origin: str) -> Found:
    """A build artifact: the contract it names (``sourceName``/``contractName``, else its
    metadata's compilation target, else the contract its variables are declared by), its
    layout, the compiler it states (``compiler.version``, else the metadata's)."""
    if doc["storageLayout"] is None:
        raise UsageError(f"{origin}: the artifact's storageLayout is empty")
    storage, types = storage_layout(doc["storageLayout"], "storageLayout", origin)
    source = _optional_str(doc, "sourceName", "", origin)
    contract_name = _optional_str(doc, "contractName", "", origin)
    name = f"{source}:{contract_name}" if source is not None and contract_name is not None \
        else None
    target, compiler = artifact_metadata(doc.get("metadata"), origin)
    comp = doc.get("compiler")
    if comp is not None:
        stated = _optional_str(_object(comp, "compiler", origin), "version", "compiler", origin)
        compiler = stated or compiler
    name = name or target or _declared_contract(storage)
    if contract is not None and name is not None and contract not in (name,
                                                                      name.split(":")[-1]):
        raise UsageError(f"{origin}: this artifact is {name}, not {contract}")
    return Found(name, storage, types, compiler)


def artifact_metadata(meta: Any, origin: str) -> tuple[str | None, str | None]:
    """solc's metadata carried by an artifact (a JSON string or an object; Foundry): its
    compilation target as SOURCE:NAME and its compiler version, each when stated."""
    if meta is None:
        return None, None
    if isinstance(meta, str):
        meta = loads(meta, f"{origin}: metadata", UsageError)
    meta = _object(meta, "metadata", origin, "solc metadata (an object or its JSON text)")
    name = None
    settings = meta.get("settings")
    if settings is not None:
        target = _object(settings, "metadata.settings", origin).get("compilationTarget")
        if target is not None:
            source, target_name = compilation_target(target, "metadata.settings", origin)
            name = f"{source}:{target_name}"
    compiler = meta.get("compiler")
    version = None
    if compiler is not None:
        version = _optional_str(_object(compiler, "metadata.compiler", origin), "version",
                                "metadata.compiler", origin)
    return name, version


def compilation_target(target: Any, where: str, origin: str) -> tuple[str, str]:
    """``settings.compilationTarget`` of solc metadata: exactly one ``{SOURCE: NAME}``."""
    at = _field(where, "compilationTarget")
    _object(target, at, origin)
    if len(target) != 1:
        raise UsageError(f"{origin}: {at} must name one contract, it names {len(target)}")
    (source, name), = target.items()
    if not isinstance(name, str):
        raise UsageError(f"{origin}: {_key(at, source)} must be a contract name (a string), "
                         f"not {_kind(name)}")
    return source, name
