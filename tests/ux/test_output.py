"""Human output a person reads, through the real CLI: ``read --all`` (every variable, structs
and arrays expanded, in the rounds ``read`` needs), EIP-55 addresses, ``layout show --depth``,
BAD details that say what was found and which condition failed, ``--compare-views`` counts,
``recipes FILTER --json`` with each short form, shell completion of names.

Expected values: the LayoutZoo's own getters and solc's storageLayout (tests/layout), web3's
EIP-55 implementation, the devnet's hand-computed moments (tests/recipes/test_amm_devnet.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from web3 import Web3

from recompute.devnet.contracts import connect, deploy
from tests.cli import as_of_head

TESTS = Path(__file__).resolve().parents[1]
ZOO = TESTS / "layout" / "artifacts"
PRE_ROOT = "0x090e63d66e6cdb08331fece350bd0320551287d53d6644d5af158b04d94d149f"


@pytest.fixture(scope="module")
def deployed(module_anvil, tmp_path_factory, run_cli_module):
    w3 = connect(module_anvil.url)
    zoo = deploy(w3, "LayoutZoo", directory=str(ZOO))
    w3.eth.wait_for_transaction_receipt(zoo.functions.setup().transact())
    layout = tmp_path_factory.mktemp("layouts") / "zoo.json"
    imported = run_cli_module("layout", "import", str(ZOO / "LayoutZoo.json"), "-o", str(layout))
    assert imported.returncode == 0, imported.stderr
    return module_anvil, w3, zoo, layout, w3.eth.get_block("latest")


@pytest.fixture(scope="module")
def run_cli_module():
    import subprocess
    import sys

    def run(*args, **kwargs):
        return subprocess.run([sys.executable, "-m", "recompute", *map(str, args)],
                              capture_output=True, text=True, timeout=120, **kwargs)
    return run


def _solc_storage():
    return json.loads((ZOO / "LayoutZoo.json").read_text())["storageLayout"]


def _rows(stdout: str) -> dict[str, tuple[str, str]]:
    """path -> (type, value) from the table under the `path  type  value` header."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:3] == ["path", "type", "value"])
    header = lines[start]
    type_at, value_at = header.index("type"), header.index("value")
    out = {}
    for line in lines[start + 1:]:
        if not line.startswith("  "):
            break
        out[line[:type_at].strip()] = (line[type_at:value_at].strip(), line[value_at:])
    return out


def test_read_all_shows_every_variable_with_getter_values(deployed, run_cli):
    node, w3, zoo, layout, block = deployed
    result = run_cli("read", "-r", node.url, "--block-hash", block["hash"].to_0x_hex(),
                     "--layout", layout, "--address", zoo.address, "--all")
    assert result.returncode == 0, result.stderr
    rows = _rows(result.stdout)
    at = block["number"]
    g = zoo.functions
    assert rows["neg8"] == ("int8", str(g.neg8().call(block_identifier=at)))
    assert rows["flag"] == ("bool", "true")
    owner = g.owner().call(block_identifier=at)
    assert rows["owner"] == ("address", Web3.to_checksum_address(owner))  # EIP-55
    assert rows["longStr"][1] == json.dumps(g.longStr().call(block_identifier=at),
                                            ensure_ascii=False)
    # structs expanded member by member, arrays element by element
    assert rows["outer.inner.x"] == ("uint32", "4294967295")
    assert rows["packedPair[1].d"][1] == Web3.to_checksum_address(
        "0xb0b0000000000000000000000000000000000b0b")
    for i, value in enumerate(g.getNums().call(block_identifier=at)):
        assert rows[f"nums[{i}]"][1] == str(value)
    # every non-mapping variable of solc's layout is shown; mappings are named as not read
    storage = _solc_storage()
    mappings = [v["label"] for v in storage["storage"]
                if storage["types"][v["type"]]["encoding"] == "mapping"]
    for variable in storage["storage"]:
        if variable["label"] not in mappings:
            assert any(p == variable["label"] or p.startswith((variable["label"] + ".",
                                                               variable["label"] + "["))
                       for p in rows), variable["label"]
    assert ", ".join(mappings) in result.stdout
    assert "<" not in result.stdout.split("path")[1]  # no Python reprs (<...>, b'...')
    assert "b'" not in result.stdout


def test_read_all_takes_the_rounds_read_takes(deployed, run_cli):
    node, w3, zoo, layout, block = deployed
    storage = _solc_storage()
    names = [v["label"] for v in storage["storage"]
             if storage["types"][v["type"]]["encoding"] != "mapping"]
    common = ["-r", node.url, "--block-hash", block["hash"].to_0x_hex(), "--layout", layout,
              "--address", zoo.address, "--json", "--max-elements", "64"]
    every = run_cli("read", *common, "--all")
    explicit = run_cli("read", *common, *names)
    assert every.returncode == 0 and explicit.returncode == 0, every.stderr + explicit.stderr
    every, explicit = json.loads(every.stdout), json.loads(explicit.stdout)
    assert every["evidence"]["proof_requests"] == explicit["evidence"]["proof_requests"]
    assert every["evidence"]["values"] == explicit["evidence"]["values"]


def test_max_elements_truncates_whole_arrays_and_says_so(deployed, run_cli):
    node, w3, zoo, layout, block = deployed
    common = ["-r", node.url, "--block-hash", block["hash"].to_0x_hex(), "--layout", layout,
              "--address", zoo.address]
    out = json.loads(run_cli("read", *common, "--json", "--max-elements", "2", "nums").stdout)
    value = out["evidence"]["values"][0]
    assert value["value"] == [str(n) for n in zoo.functions.getNums().call()[:2]]
    assert value["truncated"] == {"nums": "3"}
    human = run_cli("read", *common, "--max-elements", "2", "nums")
    assert "note: nums has 3 elements; the first 2 are shown (--max-elements)" in human.stdout


def test_read_json_of_one_path_is_unchanged(deployed, run_cli):
    node, w3, zoo, layout, block = deployed
    out = json.loads(run_cli("read", "-r", node.url, "-b", str(block["number"]), "--layout",
                             layout, "--address", zoo.address, "--json", "owner").stdout)
    value = out["evidence"]["values"][0]
    assert set(value) == {"path", "type", "value", "slots", "slot_paths"}
    assert value["value"] == zoo.functions.owner().call().lower()  # JSON keeps lower case


def test_read_without_a_path_or_all_is_a_usage_error(run_cli):
    result = run_cli("read", "-r", "http://127.0.0.1:1", "-b", "1", "--layout", "amm-registry",
                     "--address", "0x" + "11" * 20)
    assert result.returncode == 64
    assert "give a PATH to read" in result.stderr and "--all" in result.stderr


def test_layout_show_depth_of_an_imported_zoo(deployed, run_cli):
    layout = deployed[3]
    storage = _solc_storage()
    outer = next(v for v in storage["storage"] if v["label"] == "outer")
    outer_type = storage["types"][outer["type"]]
    inner = next(m for m in outer_type["members"] if m["label"] == "inner")
    inner_type = storage["types"][inner["type"]]
    shallow = run_cli("layout", "show", layout).stdout
    assert ".inner" not in shallow  # the old output by default
    deep = run_cli("layout", "show", layout, "--depth", "2").stdout
    lines = [line.split() for line in deep.splitlines()]
    found = {row[3]: row for row in lines if len(row) >= 5}
    base = int(outer["slot"])
    assert found[".inner"][:3] == [str(base + int(inner["slot"])), str(inner["offset"]),
                                   inner_type["numberOfBytes"]]
    for member in inner_type["members"]:
        row = found["." + member["label"]]
        assert row[0] == str(base + int(inner["slot"]) + int(member["slot"]))
        assert row[1] == str(member["offset"])
    as_json = json.loads(run_cli("layout", "show", layout, "--depth", "1", "--json").stdout)
    outer_row = next(v for v in as_json["variables"] if v["name"] == "outer")
    assert [m["name"] for m in outer_row["members"]] == [m["label"] for m in
                                                         outer_type["members"]]


def test_layout_show_depth_through_a_mapping_is_relative(run_cli):
    out = run_cli("layout", "show", "amm-registry", "--depth", "1").stdout
    assert any(line.split()[:4] == ["+1", "0", "8", "[key].stateVersion"]
               for line in out.splitlines()), out


def test_recipes_filter_json_and_short_forms(run_cli):
    out = json.loads(run_cli("recipes", "8312/cap", "--json").stdout)
    assert [r["name"] for r in out["recipes"]] == ["8312/cap-conservation"]
    recipe = out["recipes"][0]
    # the ERC-8312 thread's command line: recompute-step 8312/cap-conservation RPC ADDRESS KEY
    # SHAPE (tests/recipes/test_erc8312_thread_command.py)
    assert recipe["short_form"] == "recompute step 8312/cap-conservation RPC ADDRESS KEY SHAPE"
    assert recipe["positional"] == ["key", "shape"]
    listing = run_cli("recipes", "amm/").stdout
    assert "short form: recompute step amm/layer-status RPC ADDRESS --param subject=<address> " \
           "--param layer=<uint>" in listing
    assert "8312/" not in listing
    missing = run_cli("recipes", "nosuch")
    assert missing.returncode == 64 and "no recipe name contains 'nosuch'" in missing.stderr


def test_shell_completion_of_recipe_and_layout_names(run_cli):
    env = dict(os.environ, _RECOMPUTE_COMPLETE="bash_complete", COMP_WORDS="recompute step amm/l",
               COMP_CWORD="2")
    recipes = run_cli(env=env).stdout.split()
    assert recipes == ["plain,amm/layer-status"]
    env.update(COMP_WORDS="recompute read --layout meter-h", COMP_CWORD="3")
    assert run_cli(env=env).stdout.split() == ["plain,meter-headroom"]
    env.update(COMP_WORDS="recompute layout show swarm", COMP_CWORD="3")
    assert run_cli(env=env).stdout.split() == ["plain,swarm-registry", "plain,swarm-registry-lying"]
    script = run_cli(env=dict(os.environ, _RECOMPUTE_COMPLETE="bash_source")).stdout
    assert "_recompute_completion" in script and "complete " in script


# ---- BAD details and view counts on the devnet ---------------------------------------------

def _step(devnet, run_cli, recipe, moment, subject, *extra, registry="AgentMeditationRegistry"):
    node, manifest = devnet
    args = ["step", recipe, "-r", node.url, "--block-hash", manifest["moments"][moment]["hash"],
            "--address", manifest["contracts"][registry],
            "--param", f"subject={manifest['amm']['subjects'][subject]['address']}", *extra]
    if registry.startswith("Lying"):
        args += ["--layout", "amm-registry-lying"]
    return run_cli(*args)


def test_overdue_says_what_was_found_and_what_healthy_means(devnet, run_cli):
    result = _step(devnet, run_cli, "amm/layer-status", "amm.overdue", "pulser", "--param",
                   "layer=0")
    assert result.returncode == 1
    assert result.stdout.splitlines()[0] == (
        "VERIFIED-BAD (predicate-failed): status is OVERDUE; healthy means not OVERDUE")


def test_a_false_restore_claim_names_the_condition_that_failed(devnet, run_cli):
    block = str(devnet[1]["moments"]["amm.false-restore"]["number"])
    result = _step(devnet, run_cli, "amm/restore-claim", "amm.false-restore", "lying-example",
                   "--param", f"block={block}", registry="LyingMeditationRegistry")
    assert result.returncode == 1
    head = result.stdout.splitlines()[0]
    assert f"rootAt(1) is {PRE_ROOT}, not the post root 0x" in head
    assert "restoresVersion 1 is not between" not in head  # 1 < base: that condition held


def test_compare_views_always_counts(devnet, run_cli):
    # layerStatus(address,uint8) returns (status, deadline, neverCompleted): three values
    result = _step(devnet, run_cli, "amm/layer-status", "amm.due", "pulser", "--param",
                   "layer=0", "--compare-views")
    assert result.returncode == 0, result.stderr
    assert "views: 3 value(s) compared, 0 disagreed" in result.stdout
    liar = _step(devnet, run_cli, "amm/signal-status", "amm.overdue", "lying-example",
                 "--compare-views", registry="LyingMeditationRegistry")
    line = next(x for x in liar.stdout.splitlines() if x.startswith("views: "))
    assert line.startswith("views: 3 value(s) compared, ") and not line.endswith(" 0 disagreed")


def test_read_all_on_a_layout_of_only_mappings_lists_them(devnet, run_cli):
    """amm-registry's variables are all mappings: --all has nothing to read but must name
    them (the expected names: solc's storageLayout in the registry's artifact)."""
    from recompute.devnet.contracts import load_artifact

    node, manifest = devnet
    storage = load_artifact("AgentMeditationRegistry")["storageLayout"]
    labels = [v["label"] for v in storage["storage"]]
    assert all(storage["types"][v["type"]]["encoding"] == "mapping" for v in storage["storage"])
    result = run_cli("read", "-r", node.url, "-b", "latest", *as_of_head(node.url),
                     "--layout", "amm-registry",
                     "--address", manifest["contracts"]["AgentMeditationRegistry"], "--all")
    assert result.returncode == 0, result.stderr
    assert ("note: not read, mappings (read an entry by key, e.g. heads[KEY]): "
            + ", ".join(labels)) in result.stdout


def test_step_on_raw_slots_names_no_layout(devnet, run_cli):
    """A struct:S:A:C key reads raw slots: the output must not name the recipe's default
    layout, which was not used; a shape read through a layout names it."""
    node, manifest = devnet
    meter = manifest["contracts"]["ReservedConfirmedMeter"]
    key = "0x" + "11" * 32
    at = as_of_head(node.url)  # the devnet is dated: its latest is judged as of its own time
    raw = run_cli("step", "8312/cap-conservation", node.url, meter, key, "struct:2:2:1", *at)
    assert raw.returncode == 0, raw.stderr
    assert f"on {meter} (raw slots, no layout):" in raw.stdout
    assert "(layout" not in raw.stdout
    laid = run_cli("step", "8312/cap-conservation", node.url, meter, key, "reserved-confirmed",
                   *at)
    assert laid.returncode in (0, 1), laid.stderr
    assert (f"on {meter} (layout contracts/src/meters/ReservedConfirmedMeter.sol:"
            "ReservedConfirmedMeter):") in laid.stdout
