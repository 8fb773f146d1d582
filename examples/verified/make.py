"""Rebuild the worked `recompute layout import` inputs of examples/ from the repository's own
contracts (contracts/src), compiled by the pinned solc-js with the settings of their artifacts
(contracts/artifacts), as a block explorer would serve them for the devnet's deployments:

- examples/sourcify/31337/0x5FbDB…0aa3/: a Sourcify folder (solc's own metadata.json and
  sources/) of AgentMeditationRegistry;
- examples/etherscan/ReservedConfirmedMeter.json: an Etherscan ``getsourcecode`` answer (its
  standard-JSON ``{{…}}`` form) of ReservedConfirmedMeter.

    .venv/bin/python examples/verified/make.py      (needs node and `make setup`'s node_modules)
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
DEVNET_CHAIN_ID = 31337
# the devnet's deterministic deployments (recompute devnet up; recompute/devnet/build.py)
SOURCIFY = ("AgentMeditationRegistry", "0x5FbDB2315678afecb367f032d93F642f64180aa3",
            ["contracts/src/amm/AgentMeditationRegistry.sol",
             "contracts/src/amm/IAgentMeditation.sol"])
ETHERSCAN = ("ReservedConfirmedMeter", "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0",
             ["contracts/src/meters/ReservedConfirmedMeter.sol"])

COMPILE = ("const s=require(process.argv[1]);let d='';process.stdin.on('data',c=>d+=c);"
           "process.stdin.on('end',()=>process.stdout.write(JSON.stringify({v:s.version(),"
           "o:JSON.parse(s.compile(d))})));")


def _artifact(name: str) -> dict:
    return json.loads((ROOT / "contracts" / "artifacts" / f"{name}.json").read_text())


def _standard_input(name: str, paths: list[str]) -> dict:
    settings = dict(_artifact(name)["compiler"]["settings"])
    settings["outputSelection"] = {"*": {"*": ["metadata", "storageLayout"]}}
    return {"language": "Solidity",
            "sources": {p: {"content": (ROOT / p).read_text()} for p in paths},
            "settings": settings}


def _compile(standard: dict) -> tuple[str, dict]:
    done = subprocess.run(["node", "-e", COMPILE, str(ROOT / "node_modules" / "solc" / "index.js")],
                          input=json.dumps(standard), capture_output=True, text=True, check=True)
    answer = json.loads(done.stdout)
    errors = [e for e in answer["o"].get("errors", []) if e["severity"] == "error"]
    if errors:
        raise SystemExit(f"solc: {errors[0]['formattedMessage']}")
    return answer["v"], answer["o"]


def sourcify() -> Path:
    name, address, paths = SOURCIFY
    _, output = _compile(_standard_input(name, paths))
    metadata = output["contracts"][paths[0]][name]["metadata"]
    folder = EXAMPLES / "sourcify" / str(DEVNET_CHAIN_ID) / address
    (folder / "metadata.json").parent.mkdir(parents=True, exist_ok=True)
    (folder / "metadata.json").write_text(metadata + "\n")
    for path in paths:
        target = folder / "sources" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text((ROOT / path).read_text())
    return folder


def etherscan() -> Path:
    name, _, paths = ETHERSCAN
    standard = _standard_input(name, paths)
    version, _ = _compile(standard)
    settings = standard["settings"]
    entry = {"SourceCode": "{" + json.dumps(standard, indent=1) + "}", "ABI": json.dumps(
        _artifact(name)["abi"]), "ContractName": name,
        "CompilerVersion": "v" + version.removesuffix(".Emscripten.clang"),
        "OptimizationUsed": "1" if settings["optimizer"]["enabled"] else "0",
        "Runs": str(settings["optimizer"]["runs"]), "ConstructorArguments": "",
        "EVMVersion": settings["evmVersion"], "Library": "", "LicenseType": "MIT",
        "Proxy": "0", "Implementation": "", "SwarmSource": ""}
    out = EXAMPLES / "etherscan" / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"status": "1", "message": "OK", "result": [entry]}, indent=1)
                   + "\n")
    return out


if __name__ == "__main__":
    print(sourcify())
    print(etherscan())
