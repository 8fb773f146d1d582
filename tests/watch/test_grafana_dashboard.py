"""examples/grafana-dashboard.json queries only what a watch exposes: every panel's and every
variable's PromQL names metrics that a real scrape of ``recompute watch --metrics-port`` shows
(a watch following the shared devnet's head with the example checks), and every documented
family has a panel.

Independent expectations: the scrape itself (the names a running watch exposes) and the metric
table of docs/watch.md §Metrics.
"""

from __future__ import annotations

import json
import re
import urllib.request

import pytest

from recompute.devnet.anvil import free_port
from tests import REPO_ROOT
from tests.cli import as_of_head
from tests.watch.watchproc import EXAMPLE, Watch, head

DASHBOARD = REPO_ROOT / "examples" / "grafana-dashboard.json"
# PromQL's functions, aggregations and keywords: every other name in an expression is a metric.
PROMQL_WORDS = {
    "sum", "min", "max", "avg", "count", "rate", "irate", "increase", "histogram_quantile",
    "time", "by", "without", "on", "ignoring", "group_left", "group_right", "and", "or",
    "unless", "bool", "offset", "label_values", "topk", "bottomk", "delta", "abs", "clamp_min",
}


def exposed(text: str) -> set[str]:
    """The series names a scrape exposes: each sample's name, and each family a TYPE line
    declares that is not a histogram (a labelled family with no series yet, e.g. node failures
    before the first one); a histogram only by its _bucket/_sum/_count samples."""
    names = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            if kind != "histogram":
                names.add(name)
        elif line and not line.startswith("#"):
            names.add(re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0))
    return names


def metric_names(expr: str) -> set[str]:
    """The metric names of a PromQL expression (strings, label matchers, ranges and grouping
    label lists taken out; what remains that is not a PromQL word is a metric)."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', "", expr)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    words = set(re.findall(r"(?<![\w.$])[a-zA-Z_:][a-zA-Z0-9_:]*", text))
    return words - PROMQL_WORDS


def queries(dashboard: dict) -> list[tuple[str, str]]:
    """(where, PromQL) of every panel target and query variable."""
    out = []
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            out.append((f"panel {panel['title']!r}", target["expr"]))
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            out.append((f"variable {variable['name']}", variable["query"]["query"]))
    return out


@pytest.fixture(scope="module")
def scrape(devnet):
    node, _ = devnet
    port = free_port()
    watch = Watch("--rpc", node.url, "--config", str(EXAMPLE), "--poll", "0.5",
                  "--metrics-port", str(port), *as_of_head(node.url))  # the devnet is dated
    try:
        watch.wait_for_block(int(head(node.url)["number"], 16), 7, timeout=60)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
            return reply.read().decode()
    finally:
        watch.stop()


def test_the_name_parser_finds_metrics_and_only_metrics():
    assert metric_names('histogram_quantile(0.95, sum by (le) (rate(a_bucket{x=~"$y"}'
                        "[$__rate_interval])))") == {"a_bucket"}
    assert metric_names('time() - max(b{instance=~"$i"}) * 60 + c') == {"b", "c"}
    assert metric_names("label_values(recompute_watch_up, instance)") == {
        "recompute_watch_up", "instance"}


def test_every_panel_queries_a_metric_a_running_watch_exposes(scrape):
    dashboard = json.loads(DASHBOARD.read_text())
    names = exposed(scrape)
    assert "recompute_watch_check_healthy" in names and "recompute_watch_up" in names
    found = queries(dashboard)
    assert len(found) >= 15
    used: set[str] = set()
    for where, expr in found:
        metrics = metric_names(expr)
        if expr.startswith("label_values("):  # label_values(metric, label)
            metrics -= {expr.rstrip(")").rsplit(",", 1)[1].strip()}
        assert metrics, f"{where}: no metric in {expr}"
        if metrics == {"ALERTS"}:  # Prometheus' own series of the example alert rules
            continue
        assert metrics <= names, f"{where}: {sorted(metrics - names)} not in the scrape"
        used |= metrics

    documented = set(re.findall(r"^\| `(recompute_watch_\w+)(?:\{[^`]*\})?` \|",
                                (REPO_ROOT / "docs" / "watch.md").read_text(), re.M))
    assert len(documented) == 20
    families = {re.sub(r"_(bucket|sum|count)$", "", name) for name in used}
    assert documented <= families, sorted(documented - families)


def test_the_dashboard_shows_the_example_alert_rules():
    """Its 'Firing alerts' panel selects every alert of examples/prometheus/ by name."""
    dashboard = json.loads(DASHBOARD.read_text())
    rules = (REPO_ROOT / "examples" / "prometheus" / "recompute-alerts.yml").read_text()
    alerts = re.findall(r"- alert: (\w+)", rules)
    assert len(alerts) == 4
    (panel,) = [p for p in dashboard["panels"] if p["title"] == "Firing alerts"]
    (target,) = panel["targets"]
    selector = re.search(r'alertname=~"([^"]+)"', target["expr"]).group(1)
    assert target["expr"].startswith("ALERTS{")
    assert all(re.fullmatch(selector, name) for name in alerts)
    assert all(name in panel["description"] for name in alerts)
