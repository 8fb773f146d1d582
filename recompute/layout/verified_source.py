"""Layouts from what auditors have: verified source (docs/layouts.md §Importing a layout).

Two inputs, both outside data (bounded: file sizes, file count, JSON nesting), both turned into
one solc standard-JSON input compiled with exactly the compiler version and settings the source
names (optimizer, viaIR, evmVersion, remappings, libraries), asking only for
``storageLayout``:

- a **Sourcify** verified-contract folder: ``metadata.json`` (solc's metadata: compiler
  version, settings, ``compilationTarget``, each source's keccak256) and ``sources/`` (each
  source at its own path; each must hash to the metadata's keccak256, or the import stops);
- an **Etherscan** ``getsourcecode`` answer saved to a file (``{"status", "result": [{…}]}``):
  ``SourceCode`` as a single file, a multi-file JSON object (``{"A.sol": {"content"}}``) or a
  standard-JSON input wrapped in double braces (``{{…}}``), with ``CompilerVersion``,
  ``OptimizationUsed``, ``Runs``, ``EVMVersion`` and ``Library`` (``Name:0xaddr;…``).

The descriptor records where it came from: ``provenance`` = source kind, compiler version and
the sha256 of the settings (canonical JSON) it was compiled with.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from recompute.core import boundedjson
from recompute.core.errors import OptionError, UsageError
from recompute.core.jsontext import compact_json
from recompute.core.keccak import keccak256
from recompute.layout.solc import SolcVersion, compile_standard_json, find_solc, parse_version
from recompute.layout.solc_output import compilation_target, standard_json_layouts

MAX_FILE = 32 << 20  # one input file (an Etherscan answer, the metadata, one source)
MAX_SOURCES = 4096
MAX_TOTAL = 128 << 20  # all sources together
MAX_DEPTH = 64  # JSON nesting of any input
# Settings that decide the storage layout or the compilation itself; the rest of the
# metadata's settings (metadata.bytecodeHash, outputSelection) do not enter the input.
KEPT_SETTINGS = ("optimizer", "viaIR", "evmVersion", "remappings", "libraries")


@dataclass
class VerifiedSource:
    kind: str  # "sourcify" | "etherscan"
    solc: SolcVersion  # 0.8.26+commit.8a97fa7a, exactly as the source names it
    sources: dict[str, str]
    settings: dict[str, Any]
    target: tuple[str, str] | None  # (source path, contract name)
    origin: str

    @property
    def version(self) -> str:
        """The release: 0.8.26."""
        return self.solc.release

    @property
    def compiler(self) -> str:
        """The compiler as named: 0.8.26+commit.8a97fa7a (a pre-release tag included)."""
        return self.solc.full

    def settings_sha256(self) -> str:
        return hashlib.sha256(compact_json(self.settings).encode()).hexdigest()

    def standard_input(self) -> dict[str, Any]:
        settings = dict(self.settings)
        settings["outputSelection"] = {"*": {"*": ["storageLayout"]}}
        return {"language": "Solidity",
                "sources": {path: {"content": text} for path, text in self.sources.items()},
                "settings": settings}


# ---- bounded reading ------------------------------------------------------------------------

def _read_text(path: Path, origin: str) -> str:
    """A file of the folder or the answer, bounded: a FIFO or a link to ``/dev/zero`` in the
    place of a source is one line, never a hang or endless bytes."""
    data = boundedjson.read_limited(path, f"{origin}: {path}", UsageError, MAX_FILE)
    if len(data) > MAX_FILE:
        raise UsageError(f"{origin}: {path.name} is more than {MAX_FILE} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{origin}: {path.name} is not UTF-8 text") from None


def _json(text: str, what: str) -> Any:
    """Outside JSON, its size and nesting bounded on the text before it is parsed (a parser
    that recursed into 200,000 nested arrays would overflow the stack under web3's raised
    recursion limit): :func:`recompute.core.boundedjson.loads`."""
    return boundedjson.loads(text, what, UsageError, max_bytes=MAX_FILE, max_depth=MAX_DEPTH)


def _source_path(path: object, origin: str) -> str:
    """A source unit name that stays inside its folder (no absolute path, no '..'), free of
    control characters (a line break in it would be a second line of any message naming it)."""
    if not isinstance(path, str) or not path or len(path) > 1024 \
            or re.search(r"[\x00-\x1f\x7f-\x9f]", path):  # no NUL, no line break or control
        raise UsageError(f"{origin}: a source path is not a usable name: {str(path)[:80]!r}")
    parts = PurePosixPath(path).parts
    if PurePosixPath(path).is_absolute() or ".." in parts:
        raise UsageError(f"{origin}: source path {path[:80]!r} leaves its folder")
    return path


def _check_sources(sources: dict[str, str], origin: str) -> dict[str, str]:
    if not sources:
        raise UsageError(f"{origin}: no source files")
    if len(sources) > MAX_SOURCES:
        raise UsageError(f"{origin}: {len(sources)} source files, more than {MAX_SOURCES}")
    total = sum(len(text) for text in sources.values())
    if total > MAX_TOTAL:
        raise UsageError(f"{origin}: the sources hold {total} bytes, more than {MAX_TOTAL}")
    return sources


def _settings(raw: Any, origin: str) -> dict[str, Any]:
    """The layout-relevant settings, each checked for its shape."""
    if not isinstance(raw, dict):
        raise UsageError(f"{origin}: settings is not a JSON object")
    out: dict[str, Any] = {}
    optimizer = raw.get("optimizer")
    if optimizer is not None:
        if not isinstance(optimizer, dict):
            raise UsageError(f"{origin}: settings.optimizer is not an object")
        out["optimizer"] = optimizer
    if "viaIR" in raw:
        if not isinstance(raw["viaIR"], bool):
            raise UsageError(f"{origin}: settings.viaIR is not true/false")
        out["viaIR"] = raw["viaIR"]
    if raw.get("evmVersion") is not None:
        if not isinstance(raw["evmVersion"], str) or not re.fullmatch(r"[a-z]{1,24}",
                                                                      raw["evmVersion"]):
            raise UsageError(f"{origin}: settings.evmVersion {raw['evmVersion']!r} is not an "
                             "EVM version name")
        out["evmVersion"] = raw["evmVersion"]
    remappings = raw.get("remappings")
    if remappings:
        if not isinstance(remappings, list) or not all(isinstance(r, str) for r in remappings):
            raise UsageError(f"{origin}: settings.remappings is not a list of strings")
        out["remappings"] = remappings
    libraries = raw.get("libraries")
    if libraries:
        if not isinstance(libraries, dict):
            raise UsageError(f"{origin}: settings.libraries is not an object")
        out["libraries"] = libraries
    return out


# ---- Sourcify -------------------------------------------------------------------------------

def load_sourcify(folder: Path) -> VerifiedSource:
    """The metadata's fields read here (each type-checked before use): ``language`` (a string,
    Solidity), ``compiler.version``, ``settings`` (an object: the kept settings and
    ``compilationTarget``), ``sources`` (an object of objects, each with a ``keccak256`` string
    and perhaps its ``content`` string)."""
    origin = str(folder)
    where = f"{origin}/metadata.json"
    meta = _json(_read_text(folder / "metadata.json", origin), where)
    if not isinstance(meta, dict) or not isinstance(meta.get("sources"), dict):
        raise UsageError(f"{where}: not solc metadata (no 'sources' object)")
    if meta.get("language", "Solidity") != "Solidity":
        raise UsageError(f"{origin}: only Solidity sources are compiled, not "
                         f"{str(meta.get('language'))[:20]}")
    compiler = meta.get("compiler")
    if not isinstance(compiler, dict):
        raise UsageError(f"{where}: compiler must be an object with the compiler's version")
    solc = parse_version(compiler.get("version"), where)
    raw_settings = meta.get("settings")
    if not isinstance(raw_settings, dict):
        raise UsageError(f"{where}: settings must be an object")
    settings = _settings(_with_input_libraries(raw_settings, origin), origin)
    target_path, target_name = compilation_target(
        raw_settings.get("compilationTarget"), "settings", where)
    if len(meta["sources"]) > MAX_SOURCES:
        raise UsageError(f"{origin}: {len(meta['sources'])} sources, more than {MAX_SOURCES}")
    sources = {}
    for path, entry in meta["sources"].items():
        path = _source_path(path, origin)
        if not isinstance(entry, dict):
            raise UsageError(f"{where}: sources[{path[:80]!r}] must be an object")
        content = entry.get("content")
        if content is not None and not isinstance(content, str):
            raise UsageError(f"{where}: sources[{path[:80]!r}].content must be a string")
        text = content if content is not None else _read_text(folder / "sources" / path, origin)
        expected = entry.get("keccak256")
        if not isinstance(expected, str):
            raise UsageError(f"{where}: source {path!r} has no keccak256")
        got = "0x" + keccak256(text.encode("utf-8")).hex()
        if got != expected.lower():
            raise UsageError(f"{origin}: sources/{path} hashes to {got}, not the metadata's "
                             f"{expected[:66]}: not the verified source")
        sources[path] = text
    if target_path not in sources:
        raise UsageError(f"{origin}: the compilation target {target_path!r} is not among the "
                         "sources")
    return VerifiedSource("sourcify", solc, _check_sources(sources, origin), settings,
                          (target_path, target_name), origin)


def _with_input_libraries(settings: dict[str, Any], origin: str) -> dict[str, Any]:
    """The metadata's settings with its ``libraries`` in standard-JSON input's shape."""
    if not settings.get("libraries"):
        return settings
    return {**settings, "libraries": _metadata_libraries(settings["libraries"], origin)}


def _metadata_libraries(flat: Any, origin: str) -> dict[str, dict[str, str]]:
    """solc metadata's ``settings.libraries`` is flat, ``{"path:Name": address}`` (or
    ``{"Name": address}`` from old compilers); standard-JSON input wants ``{path: {Name:
    address}}``."""
    if not isinstance(flat, dict):
        raise UsageError(f"{origin}/metadata.json: settings.libraries is not an object")
    out: dict[str, dict[str, str]] = {}
    for key, address in flat.items():
        if not isinstance(address, str) or not re.fullmatch(r"0x[0-9a-fA-F]{40}", address):
            raise UsageError(f"{origin}/metadata.json: library {str(key)[:60]!r} has no address "
                             f"(0x and 40 hex digits), got {str(address)[:50]!r}")
        path, _, name = str(key).rpartition(":")
        out.setdefault(path, {})[name] = address
    return out


# ---- Etherscan ------------------------------------------------------------------------------

def load_etherscan(path: Path, contract: str | None = None) -> VerifiedSource:
    origin = str(path)
    answer = _json(_read_text(path, origin), origin)
    result = answer.get("result") if isinstance(answer, dict) else None
    if not isinstance(result, list) or not result or not isinstance(result[0], dict):
        raise UsageError(f"{origin}: not an Etherscan getsourcecode answer (no result list)")
    entry = result[0]
    code = entry.get("SourceCode")
    name = entry.get("ContractName")
    if not isinstance(code, str) or not code.strip():
        raise UsageError(f"{origin}: the contract is not verified (empty SourceCode)")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$]{0,127}", name):
        raise UsageError(f"{origin}: ContractName {str(name)[:40]!r} is not a contract name")
    solc = parse_version(entry.get("CompilerVersion"), origin)
    if str(entry.get("CompilerVersion", "")).startswith("vyper"):
        raise UsageError(f"{origin}: a Vyper contract; only Solidity is compiled")
    stripped = code.strip()
    if stripped.startswith("{{") and stripped.endswith("}}"):  # standard-JSON input
        standard = _json(stripped[1:-1], f"{origin}: SourceCode")
        if not isinstance(standard, dict) or not isinstance(standard.get("sources"), dict):
            raise UsageError(f"{origin}: SourceCode {{{{…}}}} is not a standard-JSON input")
        sources = _contents(standard["sources"], origin)
        settings = _settings(standard.get("settings") or {}, origin)
    else:
        if stripped.startswith("{"):  # multi-file: {"A.sol": {"content": …}}
            files = _json(stripped, f"{origin}: SourceCode")
            if not isinstance(files, dict):
                raise UsageError(f"{origin}: SourceCode is not a multi-file JSON object")
            sources = _contents(files.get("sources", files), origin)
        else:  # one flattened file
            sources = {f"{name}.sol": code}
        settings = _etherscan_settings(entry, sources, origin)
    _check_sources(sources, origin)
    return VerifiedSource("etherscan", solc, sources, settings,
                          _find_target(sources, contract or name, origin), origin)


def _contents(files: object, origin: str) -> dict[str, str]:
    if not isinstance(files, dict):
        raise UsageError(f"{origin}: the sources are not a JSON object")
    if len(files) > MAX_SOURCES:
        raise UsageError(f"{origin}: {len(files)} sources, more than {MAX_SOURCES}")
    out = {}
    for path, entry in files.items():
        path = _source_path(path, origin)
        if not isinstance(entry, dict) or not isinstance(entry.get("content"), str):
            raise UsageError(f"{origin}: source {path!r} has no 'content' text")
        out[path] = entry["content"]
    return out


def _etherscan_settings(entry: dict[str, Any], sources: dict[str, str],
                        origin: str) -> dict[str, Any]:
    optimized = str(entry.get("OptimizationUsed", "0")).strip()
    if optimized not in ("0", "1"):
        raise UsageError(f"{origin}: OptimizationUsed {optimized[:10]!r} is not 0 or 1")
    runs_text = str(entry.get("Runs", "200")).strip()
    if not runs_text.isascii() or not runs_text.isdigit() or len(runs_text) > 10:
        raise UsageError(f"{origin}: Runs {runs_text[:12]!r} is not a number")
    settings: dict[str, Any] = {"optimizer": {"enabled": optimized == "1", "runs": int(runs_text)}}
    evm = str(entry.get("EVMVersion", "") or "").strip()
    if evm and evm.lower() != "default":
        settings["evmVersion"] = evm.lower()
    libraries = str(entry.get("Library", "") or "").strip()
    if libraries:
        found = {}
        for item in libraries.split(";"):
            lib, sep, address = item.strip().partition(":")
            if not sep or not re.fullmatch(r"(0x)?[0-9a-fA-F]{40}", address.strip()):
                raise UsageError(f"{origin}: Library {item[:60]!r} is not Name:address")
            found[lib.strip()] = "0x" + address.strip().removeprefix("0x").lower()
        settings["libraries"] = {path: found for path in sources}  # Etherscan names no unit
    return _settings(settings, origin)


_CONTRACT = r"(?:abstract\s+)?contract\s+{name}\b"


def _find_target(sources: dict[str, str], name: str, origin: str) -> tuple[str, str]:
    """The source unit that declares ``name`` (SOURCE:NAME selects one explicitly)."""
    if ":" in name:
        path, _, contract = name.rpartition(":")
        if path not in sources:
            raise UsageError(f"{origin}: no source {path!r}")
        return path, contract
    pattern = re.compile(_CONTRACT.format(name=re.escape(name)))
    found = [path for path, text in sources.items() if pattern.search(text)]
    if len(found) != 1:
        where = "no source" if not found else f"{len(found)} sources"
        raise OptionError("{origin}: {where} declare contract {name}; name it with "
                          "{contract} SOURCE:NAME", ("contract",), origin=origin, where=where,
                          name=name)
    return found[0], name


# ---- both -----------------------------------------------------------------------------------

def detect(path: Path) -> str | None:
    """"sourcify" for a folder with metadata.json, "etherscan" for a getsourcecode answer,
    None for anything else (left to the solc-output importer)."""
    if path.is_dir():
        return "sourcify" if (path / "metadata.json").is_file() else None
    try:  # a FIFO or a device is no answer (and is left to the importer to refuse)
        head = boundedjson.read_limited(path, str(path), OSError, 4096)
    except OSError:
        return None
    if b'"SourceCode"' in head or (b'"result"' in head and b'"status"' in head):
        return "etherscan"
    return None


def compile_storage_layout(source: VerifiedSource,
                           solc: str | None = None) -> tuple[dict[str, Any], str]:
    """solc's storageLayout (``storage``, ``types``) of the target contract, read from the
    compiler's output by the same validator as any solc output, and the exact compiler that
    made it. ``solc``: the ``--solc`` places (recompute/layout/solc.py)."""
    if source.target is None:
        raise UsageError(f"{source.origin}: no contract to compile was named")
    package = find_solc(source.solc, source.origin, solc)
    output, ran = compile_standard_json(package, source.standard_input(), source.solc,
                                        source.origin)
    path, name = source.target
    what = f"{source.origin}: solc {source.version}'s output"
    if "contracts" not in output:
        raise UsageError(f"{source.origin}: solc produced no storage layout for {path}:{name}")
    found = standard_json_layouts(output, what).get(f"{path}:{name}")
    if found is None:
        raise UsageError(f"{source.origin}: solc produced no storage layout for {path}:{name}")
    storage, types = found
    return {"storage": storage, "types": types}, ran
