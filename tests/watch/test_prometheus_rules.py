"""examples/prometheus/: the scrape config and alert rules load in Prometheus' own checker, their
unit tests pass (``promtool test rules``: each alert fires when it should and not before), and
every metric a rule names is one the watch documents (docs/watch.md §Metrics) or Prometheus'
own ``up``.

promtool is Debian's ``prometheus`` package. Absent it, the tests skip with the reason, except
under CI (``CI=true``), where they fail: ``.ci/run`` installs it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from tests import REPO_ROOT
from tests.chromium import installed
from tests.watch.test_grafana_dashboard import metric_names

FOLDER = REPO_ROOT / "examples" / "prometheus"
RULES = FOLDER / "recompute-alerts.yml"
ALERTS = {"RecomputeCheckUnhealthy", "RecomputeAnchorStale", "RecomputeNodeTrouble",
          "RecomputeWatchDown"}


def promtool() -> str:
    return installed("promtool", "prometheus")


def run(*args: str, cwd: Path = FOLDER) -> subprocess.CompletedProcess:
    return subprocess.run([promtool(), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_the_config_and_the_rules_load():
    config = run("check", "config", "prometheus.yml")
    assert config.returncode == 0, config.stdout + config.stderr
    rules = run("check", "rules", "recompute-alerts.yml")
    assert rules.returncode == 0, rules.stdout + rules.stderr
    assert "4 rules found" in rules.stdout


def test_each_alert_fires_when_it_should():
    done = run("test", "rules", "recompute-alerts.test.yml")
    assert done.returncode == 0, done.stdout + done.stderr
    tested = set(re.findall(r"alertname: (\w+)",
                            (FOLDER / "recompute-alerts.test.yml").read_text()))
    assert tested == ALERTS


def test_the_rule_tests_can_fail(tmp_path):
    """A rule that fires on the healthy value fails the unit tests: they are not vacuous."""
    for name in ("recompute-alerts.yml", "recompute-alerts.test.yml"):
        shutil.copy(FOLDER / name, tmp_path / name)
    rules = tmp_path / "recompute-alerts.yml"
    rules.write_text(rules.read_text().replace("recompute_watch_check_healthy == 0",
                                               "recompute_watch_check_healthy == 1"))
    done = run("test", "rules", "recompute-alerts.test.yml", cwd=tmp_path)
    assert done.returncode != 0
    assert "RecomputeCheckUnhealthy" in done.stdout + done.stderr


def test_every_rule_names_a_documented_metric():
    documented = set(re.findall(r"^\| `(recompute_watch_\w+)(?:\{[^`]*\})?` \|",
                                (REPO_ROOT / "docs" / "watch.md").read_text(), re.M))
    text = RULES.read_text()
    assert set(re.findall(r"- alert: (\w+)", text)) == ALERTS
    for expr in re.findall(r"expr: (.+)", text):
        names = metric_names(expr) - {"absent", "job"}
        assert names and names <= documented | {"up"}, expr
