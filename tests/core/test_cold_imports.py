"""What a cold verdict imports (README §Performance): the modules, never the milliseconds.

A fresh process runs one verdict through ``recompute.cli.main`` and reports ``sys.modules``;
each library or module named here was measured on the cold path before it was cut
(benchmarks/bench_cli.py), so its return is a regression a timing test could only catch by
being flaky. The expected verdicts come from what the test itself put on the chain (the ERC-8312
thread's envelope: cap 8000, nothing reserved) and from geth's recorded chain.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import pytest

from recompute import data
from recompute.devnet.contracts import connect, deploy
from recompute.recipes.registry import BUNDLED_AREAS, load_recipes
from recompute.sources.fixture_node import FixtureNode
from tests.core.fixturedata import CONTRACT, FIXTURES

ENVELOPE = "0x48e972a25a6ecc83b0dd9c2943b63155ec899b53e10c1f1eb34ebc1d57bcb041"

# Never on the path of a verdict anchored by the node or a pinned hash: the devnet's and the
# reference implementations' libraries, the light client and its beacon transport (only with
# --beacon), the other areas' recipes, importlib's resource and metadata machinery.
NOT_ON_THE_VERDICT_PATH = {
    "web3", "eth_abi", "eth_account", "py_ecc", "rlp", "trie",
    "requests", "urllib3", "remerkleable", "py_arkworks_bls12381", "rfc8785",
    "importlib.resources", "importlib.metadata", "pkgutil", "zipfile", "tempfile",
    "recompute.lightclient", "recompute.sources.beacon", "recompute.api",
    "recompute.recipes.amm", "recompute.recipes.amm_commitments", "recompute.recipes.amm_registry",
    "recompute.recipes.amm_restore", "recompute.recipes.amm_status",
    "recompute.recipes.sai", "recompute.recipes.sai_charter", "recompute.recipes.sai_membership",
    "recompute.recipes.sai_registry", "recompute.recipes.sai_revision",
    "recompute.recipes.erc8447_interfaces",
    "recompute.devnet", "recompute.watch", "recompute.vectors",
}

_PROBE = """
import json, sys
from recompute.cli import main
try:
    main(sys.argv[1:])
except SystemExit as done:
    code = done.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def _cold(*args: str, env: dict | None = None) -> tuple[int, str, set[str]]:
    done = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True,
                          text=True, timeout=120, env=env)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["code"], done.stdout, set(report["modules"])


def _forbidden(modules: set[str]) -> list[str]:
    return sorted(m for m in modules
                  if m in NOT_ON_THE_VERDICT_PATH or m.split(".")[0] in NOT_ON_THE_VERDICT_PATH
                  or any(m.startswith(name + ".") for name in NOT_ON_THE_VERDICT_PATH))


def test_the_threads_verdict_imports_only_its_path(anvil):
    w3 = connect(anvil.url)
    meter = deploy(w3, "HeadroomMeter")
    tx = meter.functions.openEnvelope(bytes.fromhex(ENVELOPE[2:]), w3.eth.accounts[3], 10_000,
                                      8000).transact({"from": w3.eth.accounts[1]})
    w3.eth.wait_for_transaction_receipt(tx)
    code, out, modules = _cold("step", "8312/cap-conservation", anvil.url, meter.address,
                               ENVELOPE, "struct:2:2:1")
    assert code == 0 and out.startswith("VERIFIED-GOOD"), out
    assert "    cap        = 8000" in out.splitlines()
    assert _forbidden(modules) == []
    assert "recompute.recipes.erc8312" in modules  # the probe did run the recipe


def test_a_proof_against_the_recorded_chain_imports_only_its_path():
    with FixtureNode(FIXTURES) as node:
        code, out, modules = _cold(
            "proof", "--rpc", node.url, "--block-hash",
            "0xd226371d0b1551adb03fb52b71f08e3e11247fe9b1af994768af8cdaa8e7dcd7",
            "--address", CONTRACT, "--slot", "0")
    assert code == 0 and out.startswith("VERIFIED-GOOD"), out
    assert _forbidden(modules) == []


def test_the_light_client_options_still_load_the_light_client_when_given():
    # --beacon without --trusted-root: the one-line usage error comes from the (lazily
    # imported) beacon URL check and the light-client options, as before
    code, _, modules = _cold("step", "8312/cap-conservation", "http://127.0.0.1:9",
                             "0x" + "11" * 20, ENVELOPE, "struct:2:2:1",
                             "--beacon", "http://127.0.0.1:9")
    assert code == 64
    assert "recompute.sources.beacon" in modules
    code, _, _ = _cold("step", "8312/cap-conservation", "http://127.0.0.1:9",
                       "0x" + "11" * 20, ENVELOPE, "struct:2:2:1", "--beacon", "ftp://x",
                       "--trusted-root", "0x" + "00" * 32)
    assert code == 64


def test_bundled_areas_table_names_each_recipes_module():
    # an area's module is its face: the recipe classes are its own or imported from the
    # area's concept modules (amm_status, sai_charter, erc8312_cap…), so importing the face
    # alone registers every recipe of the area
    recipes = load_recipes()
    bundled = {name: type(r) for name, r in recipes.items()
               if type(r).__module__.startswith("recompute.recipes.")}
    assert bundled  # the bundled recipes were found
    for name, cls in bundled.items():
        face = importlib.import_module(f"recompute.recipes.{BUNDLED_AREAS[name.partition('/')[0]]}")
        assert getattr(face, cls.__name__, None) is cls, name
    assert {name.partition("/")[0] for name in bundled} == set(BUNDLED_AREAS)


def test_get_recipe_imports_only_the_named_area():
    code = ("import sys; from recompute.recipes.registry import get_recipe; "
            "get_recipe('8312/cap-conservation'); "
            "print(sorted(m for m in sys.modules if m.startswith('recompute.recipes.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    assert eval(done.stdout) == ["recompute.recipes.base", "recompute.recipes.erc8312",
                                 "recompute.recipes.erc8312_budget",
                                 "recompute.recipes.erc8312_cap",
                                 "recompute.recipes.erc8312_meters",
                                 "recompute.recipes.outputs", "recompute.recipes.params",
                                 "recompute.recipes.plan", "recompute.recipes.registry"]


def test_a_user_recipe_shadowing_a_bundled_name_is_still_refused(tmp_path, run_cli):
    # the short path (one area's module) is taken only without user recipes: with them,
    # every recipe loads and a second 8312/cap-conservation is refused, never silently used
    (tmp_path / "shadow.py").write_text(
        "from recompute.recipe import Recipe, register\n"
        "@register\n"
        "class Shadow(Recipe):\n"
        "    name = '8312/cap-conservation'\n")
    args = ["step", "8312/cap-conservation", "http://127.0.0.1:9", "0x" + "11" * 20, ENVELOPE,
            "struct:2:2:1"]
    for extra in (["--recipes", str(tmp_path)], []):
        env = None if extra else {**os.environ, "RECOMPUTE_RECIPES": str(tmp_path)}
        done = run_cli(*args, *extra, env=env)
        assert done.returncode == 64, done.stderr
        assert "two recipes are named 8312/cap-conservation" in done.stderr


@pytest.mark.parametrize("name, parts", [
    ("LAYOUTS", ("layouts",)), ("VECTORS", ("vectors",)),
    ("FIXTURE_CHAIN", ("fixtures", "execution-apis")), ("PACKS", ("fixtures",)),
    ("ARTIFACTS", ("artifacts",)),
])
def test_data_folders_are_the_ones_importlib_resources_names(name, parts):
    expected = Path(str(files("recompute.data").joinpath(*parts)))
    assert getattr(data, name) == expected and expected.is_dir()
