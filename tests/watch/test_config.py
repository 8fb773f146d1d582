"""checks.toml errors: each one line naming the file and the check, exit 64, no node asked."""

from __future__ import annotations

import subprocess
import sys

import pytest

from recompute.cli.flags import cli_message
from recompute.core.errors import UsageError
from recompute.core.verdict import Verdict
from recompute.devnet.anvil import free_port
from recompute.layout import load_layout
from recompute.watch.config import load_config
from tests import REPO_ROOT

REGISTRY = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
SUBJECT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
GOOD_CHECK = f"""
[[check]]
name = "a"
recipe = "amm/layer-status"
address = "{REGISTRY}"
params = {{ subject = "{SUBJECT}", layer = 2 }}
"""


def write(tmp_path, text: str):
    path = tmp_path / "checks.toml"
    path.write_text(text)
    return path


def test_a_valid_check_parses(tmp_path):
    (check,) = load_config(write(tmp_path, GOOD_CHECK + 'healthy = "BAD"\nsince = 7\n'))
    assert (check.name, check.recipe.name, check.address.hex(), check.layout.name) == (
        "a", "amm/layer-status", REGISTRY[2:].lower(), load_layout("amm-registry").name)
    assert check.params == {"subject": SUBJECT.lower(), "layer": 2}
    assert (check.healthy, check.since) == (Verdict.BAD, 7)
    assert check.is_healthy(Verdict.BAD) and not check.is_healthy(Verdict.GOOD)
    assert check.is_healthy(Verdict.UNVERIFIABLE) is None


@pytest.mark.parametrize("text,message", [
    ("[[check]\nname = 1", "not valid TOML"),
    ("", "no [[check]] tables"),
    (GOOD_CHECK.replace("amm/layer-status", "amm/nope"), "check 'a': unknown recipe 'amm/nope'"),
    (GOOD_CHECK.replace("layer = 2", "layer = 2, colour = 1"),
     "check 'a': amm/layer-status has no parameter 'colour'"),
    (GOOD_CHECK.replace("layer = 2", 'layer = "two"'), "check 'a': --param layer='two'"),
    (GOOD_CHECK.replace(f'address = "{REGISTRY}"\n', ""), "check 'a': address is missing"),
    (GOOD_CHECK.replace(REGISTRY, "0x1234"), "check 'a': address '0x1234' is not an address"),
    (GOOD_CHECK + 'healthy = "FINE"\n', "check 'a': healthy = 'FINE'"),
    (GOOD_CHECK + "since = -1\n", "check 'a': since = -1"),
    (GOOD_CHECK + "colour = 1\n", "check 'a': unknown key 'colour'"),
    (GOOD_CHECK + GOOD_CHECK, "two checks are named 'a'"),
    (GOOD_CHECK.replace('name = "a"', 'name = "a b"'), "name must be"),
    (GOOD_CHECK.replace('name = "a"\n', 'name = "a"\nlayout = "no-such-layout"\n'),
     "check 'a': "),
])
def test_every_config_error_is_one_usage_line(tmp_path, text, message):
    with pytest.raises(UsageError) as caught:
        load_config(write(tmp_path, text))
    shown = cli_message(caught.value)  # as the command line says it
    assert message in shown and "\n" not in shown and str(tmp_path) in shown


def test_the_command_exits_64_with_one_line_before_asking_a_node(tmp_path):
    config = write(tmp_path, GOOD_CHECK.replace("amm/layer-status", "amm/nope"))
    dead = f"http://127.0.0.1:{free_port()}"  # nobody listens: a node asked would be UNVERIFIABLE
    done = subprocess.run([sys.executable, "-m", "recompute", "watch", "--rpc", dead,
                           "--config", str(config)], capture_output=True, text=True, timeout=60,
                          cwd=REPO_ROOT)
    assert done.returncode == 64 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1
    assert "unknown recipe 'amm/nope'" in done.stderr
    done = subprocess.run([sys.executable, "-m", "recompute", "watch", "--rpc", dead,
                           "--config", str(write(tmp_path, GOOD_CHECK)), "--to", "5"],
                          capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    assert done.returncode == 64 and "--to M needs --from N" in done.stderr
