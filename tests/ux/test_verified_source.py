"""``recompute layout import`` of verified source, through the real CLI: the same contract,
compiled under the two pinned compilers (package.json: ``solc`` and the ``solc-0.8.26`` alias),
from a Sourcify folder and from the three shapes of an Etherscan ``getsourcecode`` answer, all
generated here. Each import must equal solc's own ``storageLayout`` for that version, got by
running that solc-js package directly (node, standard JSON) in the test; malformed inputs are
one line and exit 64. No network: the compilers are the project's pinned ones.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from recompute.core.keccak import keccak256
from tests import REPO_ROOT

NODE_MODULES = REPO_ROOT / "node_modules"
VERSIONS = {"0.8.26": NODE_MODULES / "solc-0.8.26", "0.8.37": NODE_MODULES / "solc"}

SOURCES = {
    "lib/Types.sol": """// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
struct Position { uint128 size; int64 entry; bool open; address owner; }
""",
    "src/Base.sol": """// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
contract Base { uint8 internal small; address public admin; uint256[] internal history; }
""",
    "src/Vault.sol": """// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
import {Base} from "./Base.sol";
import {Position} from "@types/Types.sol";
contract Vault is Base {
    mapping(address => Position) public positions;
    Position[] public book;
    string public name;
    bytes4 public selector;
    bool public paused;
    Position public last;
}
""",
}
REMAPPINGS = ["@types/=lib/"]


def _flat() -> str:
    vault = SOURCES["src/Vault.sol"]
    body = vault[vault.index("contract Vault"):]
    return ("// SPDX-License-Identifier: MIT\npragma solidity ^0.8.20;\n"
            "struct Position { uint128 size; int64 entry; bool open; address owner; }\n"
            "contract Base { uint8 internal small; address public admin; "
            "uint256[] internal history; }\n" + body)


def _settings(version: str) -> dict:
    """Different settings per version (viaIR and an EVM version on the older one)."""
    if version == "0.8.26":
        return {"optimizer": {"enabled": True, "runs": 1000}, "viaIR": True,
                "evmVersion": "paris", "remappings": REMAPPINGS}
    return {"optimizer": {"enabled": False, "runs": 200}, "remappings": REMAPPINGS}


def _solc(version: str, standard: dict) -> dict:
    """solc-js of ``version`` run directly on a standard-JSON input (the test's own oracle)."""
    package = VERSIONS[version]
    script = ("const s=require(process.argv[1]);let d='';process.stdin.on('data',c=>d+=c);"
              "process.stdin.on('end',()=>process.stdout.write(JSON.stringify({v:s.version(),"
              "o:JSON.parse(s.compile(d))})));")
    done = subprocess.run(["node", "-e", script, str(package / "index.js")],
                          input=json.dumps(standard), capture_output=True, text=True,
                          timeout=600, check=True)
    answer = json.loads(done.stdout)
    assert answer["v"].startswith(version + "+commit.")
    errors = [e for e in answer["o"].get("errors", []) if e["severity"] == "error"]
    assert not errors, errors
    return answer


@pytest.fixture(scope="module")
def compiled():
    """Per version: solc's own layout of Vault, its metadata, its full version string."""
    if shutil.which("node") is None or not all(p.is_dir() for p in VERSIONS.values()):
        pytest.fail("node and the pinned solc packages are needed (`make setup`, npm ci)")
    out = {}
    for version in VERSIONS:
        settings = dict(_settings(version))
        settings["outputSelection"] = {"*": {"*": ["storageLayout", "metadata"]}}
        standard = {"language": "Solidity",
                    "sources": {p: {"content": t} for p, t in SOURCES.items()},
                    "settings": settings}
        answer = _solc(version, standard)
        vault = answer["o"]["contracts"]["src/Vault.sol"]["Vault"]
        flat_settings = {k: v for k, v in _settings(version).items() if k != "remappings"}
        flat_settings["outputSelection"] = {"*": {"*": ["storageLayout"]}}
        flat = _solc(version, {"language": "Solidity",
                               "sources": {"Vault.sol": {"content": _flat()}},
                               "settings": flat_settings})
        out[version] = {"layout": vault["storageLayout"], "metadata": vault["metadata"],
                        "full": answer["v"].removesuffix(".Emscripten.clang"),
                        "flat_layout": flat["o"]["contracts"]["Vault.sol"]["Vault"]
                        ["storageLayout"]}
    return out


def _offline_env(tmp_path: Path) -> dict:
    # no install may happen in a test: the pinned compilers must be the ones found
    return dict(os.environ, RECOMPUTE_SOLC_OFFLINE="1", XDG_CACHE_HOME=str(tmp_path / "cache"))


def _import(run_cli, tmp_path, source: Path, *extra):
    out = tmp_path / "out.json"
    result = run_cli("layout", "import", str(source), "-o", str(out), *extra,
                     env=_offline_env(tmp_path), cwd=tmp_path, timeout=600)
    return result, (json.loads(out.read_text()) if result.returncode == 0 else None)


def _sourcify_folder(tmp_path: Path, metadata: str) -> Path:
    folder = tmp_path / "sourcify"
    (folder / "sources").mkdir(parents=True)
    (folder / "metadata.json").write_text(metadata)
    for path, text in SOURCES.items():
        target = folder / "sources" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return folder


def _settings_sha(settings: dict) -> str:
    return hashlib.sha256(json.dumps(settings, sort_keys=True,
                                     separators=(",", ":")).encode()).hexdigest()


def _same_layout(descriptor: dict, solc_layout: dict) -> None:
    assert descriptor["storage"] == solc_layout["storage"]
    assert descriptor["types"] == solc_layout["types"]


@pytest.mark.parametrize("version", list(VERSIONS))
def test_sourcify_folder_equals_solcs_own_layout(compiled, run_cli, tmp_path, version):
    folder = _sourcify_folder(tmp_path, compiled[version]["metadata"])
    result, descriptor = _import(run_cli, tmp_path, folder)
    assert result.returncode == 0, result.stderr
    _same_layout(descriptor, compiled[version]["layout"])
    assert descriptor["contract"] == "src/Vault.sol:Vault"
    assert descriptor["compiler"].startswith(compiled[version]["full"])
    metadata = json.loads(compiled[version]["metadata"])
    kept = {k: metadata["settings"][k] for k in ("optimizer", "viaIR", "evmVersion", "remappings")
            if metadata["settings"].get(k)}
    assert descriptor["provenance"] == {"kind": "sourcify", "compiler": descriptor["compiler"],
                                        "settings_sha256": _settings_sha(kept),
                                        "target": "src/Vault.sol:Vault"}


def test_sourcify_metadata_with_libraries(compiled, run_cli, tmp_path):
    """solc metadata names linked libraries flat, {"path:Name": address}; standard JSON wants
    {path: {Name: address}} (solc: "Library entry is not a JSON object" otherwise). Libraries
    change the bytecode, never the storage layout: the import equals solc's layout."""
    metadata = json.loads(compiled["0.8.37"]["metadata"])
    metadata["settings"]["libraries"] = {
        "src/Base.sol:Maths": "0x" + "ab" * 20, "lib/Types.sol:Codec": "0x" + "cd" * 20}
    folder = _sourcify_folder(tmp_path, json.dumps(metadata))
    result, descriptor = _import(run_cli, tmp_path, folder)
    assert result.returncode == 0, result.stderr
    _same_layout(descriptor, compiled["0.8.37"]["layout"])


def test_sourcify_library_without_an_address_is_one_line(compiled, run_cli, tmp_path):
    metadata = json.loads(compiled["0.8.37"]["metadata"])
    metadata["settings"]["libraries"] = {"src/Base.sol:Maths": {"nested": "object"}}
    folder = _sourcify_folder(tmp_path, json.dumps(metadata))
    result, _ = _import(run_cli, tmp_path, folder)
    assert result.returncode == 64
    assert len(result.stderr.strip().splitlines()) == 1
    assert "library 'src/Base.sol:Maths' has no address" in result.stderr


def _etherscan(tmp_path: Path, source_code: str, version: str, full: str, **fields) -> Path:
    settings = _settings(version)
    entry = {"SourceCode": source_code, "ABI": "[]", "ContractName": "Vault",
             "CompilerVersion": "v" + full,
             "OptimizationUsed": "1" if settings["optimizer"]["enabled"] else "0",
             "Runs": str(settings["optimizer"]["runs"]),
             "EVMVersion": settings.get("evmVersion", "Default"), "Library": "",
             "LicenseType": "MIT", "Proxy": "0", "Implementation": "", "SwarmSource": ""}
    entry.update(fields)
    path = tmp_path / "getsourcecode.json"
    path.write_text(json.dumps({"status": "1", "message": "OK", "result": [entry]}))
    return path


@pytest.mark.parametrize("version", list(VERSIONS))
def test_etherscan_standard_json_form(compiled, run_cli, tmp_path, version):
    standard = {"language": "Solidity", "sources": {p: {"content": t} for p, t in SOURCES.items()},
                "settings": {**_settings(version),
                             "outputSelection": {"*": {"*": ["abi"]}}}}
    answer = _etherscan(tmp_path, "{" + json.dumps(standard) + "}", version,
                        compiled[version]["full"])
    result, descriptor = _import(run_cli, tmp_path, answer)
    assert result.returncode == 0, result.stderr
    _same_layout(descriptor, compiled[version]["layout"])
    assert descriptor["provenance"]["kind"] == "etherscan"
    assert descriptor["provenance"]["settings_sha256"] == _settings_sha(_settings(version))


@pytest.mark.parametrize("version", list(VERSIONS))
def test_etherscan_multi_file_form(compiled, run_cli, tmp_path, version):
    # multi-file answers carry no remappings: the imports are written as plain paths
    sources = dict(SOURCES)
    sources["src/Vault.sol"] = sources["src/Vault.sol"].replace('"@types/Types.sol"',
                                                                '"../lib/Types.sol"')
    files = {p: {"content": t} for p, t in sources.items()}
    answer = _etherscan(tmp_path, json.dumps(files), version, compiled[version]["full"])
    result, descriptor = _import(run_cli, tmp_path, answer)
    assert result.returncode == 0, result.stderr
    _same_layout(descriptor, compiled[version]["layout"])


@pytest.mark.parametrize("version", list(VERSIONS))
def test_etherscan_single_file_form(compiled, run_cli, tmp_path, version):
    answer = _etherscan(tmp_path, _flat(), version, compiled[version]["full"])
    result, descriptor = _import(run_cli, tmp_path, answer)
    assert result.returncode == 0, result.stderr
    _same_layout(descriptor, compiled[version]["flat_layout"])
    assert descriptor["contract"] == "Vault.sol:Vault"


def test_the_layout_is_usable(compiled, run_cli, tmp_path):
    folder = _sourcify_folder(tmp_path, compiled["0.8.37"]["metadata"])
    result, descriptor = _import(run_cli, tmp_path, folder)
    out = tmp_path / "out.json"
    shown = run_cli("layout", "slot", str(out), "positions[0x" + "11" * 20 + "].owner")
    assert shown.returncode == 0, shown.stderr
    # Base: small + admin share slot 0, history is slot 1; positions is slot 2. In a Position,
    # uint128 (16) + int64 (8) + bool (1) fill 25 bytes: the 20-byte owner opens the next slot
    entry = int.from_bytes(keccak256(bytes(12) + bytes.fromhex("11" * 20)
                                     + (2).to_bytes(32, "big")), "big")
    assert f"slot    0x{entry + 1:064x}" in shown.stdout
    assert "offset  0\n" in shown.stdout


# ---- malformed inputs: one line, exit 64 ------------------------------------------------------

def _one_line_64(result, needle: str) -> None:
    assert result.returncode == 64, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_a_tampered_sourcify_source_is_refused(compiled, run_cli, tmp_path):
    folder = _sourcify_folder(tmp_path, compiled["0.8.37"]["metadata"])
    (folder / "sources" / "src" / "Vault.sol").write_text(SOURCES["src/Vault.sol"].replace(
        "bool public paused;", "bool public paused; uint256 public extra;"))
    result, _ = _import(run_cli, tmp_path, folder)
    _one_line_64(result, "sources/src/Vault.sol hashes to 0x")


def test_a_version_that_cannot_be_had_names_the_package(compiled, run_cli, tmp_path):
    metadata = json.loads(compiled["0.8.37"]["metadata"])
    metadata["compiler"]["version"] = "0.8.19+commit.7dd6d404"
    folder = _sourcify_folder(tmp_path, json.dumps(metadata))
    result, _ = _import(run_cli, tmp_path, folder)
    _one_line_64(result, "solc 0.8.19 is not installed")
    assert "RECOMPUTE_SOLC_OFFLINE forbids installing it" in result.stderr
    assert "`npm install --prefix DIR solc@0.8.19` and give DIR/node_modules with --solc" \
        in result.stderr


@pytest.mark.parametrize("source_code,fields,needle", [
    ("{{ not json }}", {}, "SourceCode is not JSON"),
    ("", {}, "the contract is not verified (empty SourceCode)"),
    ('{"../../etc/x.sol": {"content": "x"}}', {}, "leaves its folder"),
    ('{"a.sol": {"nocontent": 1}}', {}, "source 'a.sol' has no 'content' text"),
    ("contract Other {}", {}, "no source declare contract Vault"),
    ("contract Vault {}", {"CompilerVersion": "latest"}, "is not a solc version"),
    ("contract Vault {}", {"Runs": "many"}, "Runs 'many' is not a number"),
    ("contract Vault {}", {"Library": "Lib:0x12"}, "is not Name:address"),
    ("contract Vault {", {}, "could not compile it"),
])
def test_malformed_etherscan_answers(compiled, run_cli, tmp_path, source_code, fields, needle):
    answer = _etherscan(tmp_path, source_code, "0.8.37", compiled["0.8.37"]["full"], **fields)
    result, _ = _import(run_cli, tmp_path, answer)
    _one_line_64(result, needle)


def test_an_answer_that_is_not_json_or_too_deep(run_cli, tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"status": "1", "result": [')
    result, _ = _import(run_cli, tmp_path, broken)
    _one_line_64(result, "not JSON")
    deep = tmp_path / "deep.json"
    deep.write_text('{"status": "1", "result": ' + "[" * 5000 + "]" * 5000 + "}")
    result, _ = _import(run_cli, tmp_path, deep)
    _one_line_64(result, "nested deeper than")


def test_sourcify_metadata_without_one_target(compiled, run_cli, tmp_path):
    metadata = json.loads(compiled["0.8.37"]["metadata"])
    metadata["settings"]["compilationTarget"] = {}
    folder = _sourcify_folder(tmp_path, json.dumps(metadata))
    result, _ = _import(run_cli, tmp_path, folder)
    _one_line_64(result, "compilationTarget must name one contract")


def test_keccak_of_sources_is_what_the_metadata_says(compiled):
    """The check the importer relies on, against solc's own metadata."""
    metadata = json.loads(compiled["0.8.26"]["metadata"])
    for path, text in SOURCES.items():
        assert metadata["sources"][path]["keccak256"] == "0x" + keccak256(text.encode()).hex()


def _shape(descriptor: dict) -> list[tuple]:
    """Each variable's name, slot, offset and type as solc labels it (solc's astIds and the
    type ids made of them differ with the set of sources compiled together)."""
    types = descriptor["types"]
    return [(v["label"], v["slot"], v["offset"], types[v["type"]]["label"],
             types[v["type"]]["numberOfBytes"]) for v in descriptor["storage"]]


@pytest.mark.parametrize("example,bundled", [
    ("sourcify/31337/0x5FbDB2315678afecb367f032d93F642f64180aa3", "amm-registry"),
    ("etherscan/ReservedConfirmedMeter.json", "meter-reserved-confirmed")])
def test_the_shipped_examples_import_to_the_bundled_layouts(run_cli, tmp_path, example, bundled):
    """examples/ holds a Sourcify folder and an Etherscan answer of devnet contracts (made by
    examples/verified/make.py); each imports to the layout the repository bundles for that
    contract (solc's storageLayout from contracts/artifacts)."""
    shipped = REPO_ROOT / "examples" / example
    if shipped.is_dir():  # the copies are the repository's sources (else: make.py again)
        sources = {p.relative_to(shipped / "sources").as_posix(): p.read_text()
                   for p in (shipped / "sources").rglob("*.sol")}
    else:
        code = json.loads(shipped.read_text())["result"][0]["SourceCode"]
        sources = {k: v["content"] for k, v in json.loads(code[1:-1])["sources"].items()}
    assert sources and all(text == (REPO_ROOT / path).read_text()
                           for path, text in sources.items()), "run examples/verified/make.py"
    result, descriptor = _import(run_cli, tmp_path, shipped)
    assert result.returncode == 0, result.stderr
    expected = json.loads((REPO_ROOT / "layouts" / f"{bundled}.json").read_text())
    assert descriptor["contract"] == expected["contract"]
    assert _shape(descriptor) == _shape(expected)


DEEP = "[" * 200_000 + "]" * 200_000


@pytest.mark.parametrize("shape", ["answer", "source-code", "metadata"])
def test_deep_nesting_is_refused_before_it_is_parsed(run_cli, tmp_path, shape):
    """200,000 nested arrays: the depth is counted on the text, so the parser never recurses
    into it (no RecursionError or stack overflow: one line, exit 64)."""
    if shape == "metadata":
        source = _sourcify_folder(tmp_path, '{"sources": ' + DEEP + "}")
    else:
        source = tmp_path / "getsourcecode.json"
        if shape == "answer":
            source.write_text('{"status": "1", "result": ' + DEEP + "}")
        else:
            source.write_text(json.dumps({"status": "1", "result": [{
                "SourceCode": '{{"sources": ' + DEEP + "}}", "ContractName": "Vault",
                "CompilerVersion": "v0.8.26+commit.8a97fa7a"}]}))
    result, _ = _import(run_cli, tmp_path, source)
    _one_line_64(result, "nested deeper than 64")


LIBRARY_DEEP = """
import sys
from pathlib import Path
import web3  # py_ecc, imported by web3, raises the recursion limit to 100,000
assert sys.getrecursionlimit() >= 100_000
from recompute.core.errors import UsageError
from recompute.layout.verified_source import load_etherscan
try:
    load_etherscan(Path(sys.argv[1]))
except UsageError as exc:
    print(exc)
"""


def test_deep_nesting_is_refused_under_webs_recursion_limit(tmp_path):
    """In a program that imported web3, json.loads of 200,000 nested arrays overflows the C
    stack (SIGSEGV) before a depth check on the parsed value could run."""
    answer = tmp_path / "getsourcecode.json"
    answer.write_text('{"status": "1", "result": ' + DEEP + "}")
    done = subprocess.run([sys.executable, "-c", LIBRARY_DEEP, str(answer)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr[-500:])
    assert done.stdout.strip() == f"{answer}: JSON nested deeper than 64 levels"
