"""``--cluster``: a real Dask scheduler and two workers on 127.0.0.1 (the virtualenv's ``dask
scheduler`` / ``dask worker``), against the devnet history; a worker SIGKILLed while it executes
a segment. The scheduler allows one failure per task (``allowed-failures`` 1): one kill has the
segment re-run on another worker and the audit's lines equal the one-process run's byte for
byte; a segment whose worker is killed twice ends as UNVERIFIABLE lines (``segment-failed``),
and the blocks below it, no longer tied to the pin, are UNVERIFIABLE too; nothing is missing.

Independent expectation: the one-process auditor's stdout of the same range.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from tests import REPO_ROOT
from tests.rpcproxy import RpcProxy
from tests.watch.daskproc import DaskCluster, tls_files
from tests.watch.watchproc import EXAMPLE

FIRST, LAST, SEGMENT = 110, 157, 6


def slowly(method: str, params: list, reply: dict) -> dict:
    if method == "eth_getProof":
        time.sleep(0.02)
    return reply

PREFIX = "recompute-segment-"
EVERY_BLOCK = "8312/reserved-confirmed/key-1"  # the one check active at every block


def audit(node, *extra: str, url: str | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "recompute", "watch", "--rpc", url or node.url, "--config",
         str(EXAMPLE), "--from", str(FIRST), "--to", str(LAST), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT)


@pytest.fixture(scope="module")
def baseline(devnet):
    node, _ = devnet
    process = audit(node)
    out, err = process.communicate(timeout=180)
    assert process.returncode == 1, err
    return node, out


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cluster = DaskCluster(2, tmp_path_factory.mktemp("dask"), allowed_failures=1)
    try:
        yield cluster
    finally:
        cluster.stop()


def test_a_worker_killed_mid_segment_has_it_rerun_and_the_lines_are_unchanged(
        baseline, cluster):
    node, expected = baseline
    process = audit(node, "--cluster", cluster.address, "--segment-blocks", str(SEGMENT))
    try:
        address, key = cluster.wait_executing(PREFIX)
        cluster.kill_worker(address)
        out, err = process.communicate(timeout=180)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 1, err
    assert "not merged" not in err
    assert out == expected
    cluster.client.wait_for_workers(2, timeout=60)  # the nanny restarted the killed one


def test_a_segment_that_keeps_failing_ends_as_unverifiable_lines_never_a_gap(
        baseline, cluster):
    node, expected = baseline
    cluster.client.wait_for_workers(2, timeout=60)
    # a node slow enough that the re-run segment is still executing when its second worker is
    # killed (a warm worker evaluates 6 quiet blocks in a few milliseconds)
    with RpcProxy(node.url, slowly) as proxy:
        process = audit(node, "--cluster", cluster.address, "--segment-blocks", str(SEGMENT),
                        url=proxy.url)
        try:
            address, key = cluster.wait_executing(PREFIX)
            cluster.kill_worker(address)
            again, key_again = cluster.wait_executing(key, other_than=address)
            cluster.kill_worker(again)
            out, err = process.communicate(timeout=180)
        finally:
            if process.poll() is None:
                process.kill()
    failed_lo = int(key.rsplit("-", 1)[1])
    failed_hi = min(failed_lo + SEGMENT - 1, LAST)
    lines = [json.loads(t) for t in out.splitlines()]
    want = [json.loads(t) for t in expected.splitlines()]
    # every (block, check) of the one-process run, exactly once, in block order
    assert [(x["block"], x["check"]) for x in lines] == [(x["block"], x["check"]) for x in want]
    for line, one in zip(lines, want, strict=True):
        if line["block"] > failed_hi:
            assert line == one  # above the failed segment: linked, unchanged
        elif line["block"] >= failed_lo:
            assert (line["verdict"], line["reason"], line["hash"]) == (
                "UNVERIFIABLE", "segment-failed", None)
        else:
            assert (line["verdict"], line["reason"], line["hash"]) == (
                "UNVERIFIABLE", "header-mismatch", None)
            assert "no chain of parent links" in line["detail"]
    # 1 if a linked block above the failed segment is unhealthy (the lying meter), else 2
    assert process.returncode == (1 if any(x["healthy"] is False for x in lines) else 2)
    row = next(t for t in err.splitlines() if t.startswith(EVERY_BLOCK + " "))
    assert int(row.split()[4]) == failed_hi - FIRST + 1  # the summary counts them
    assert f"segment {failed_lo}..{failed_hi} not merged (segment-failed)" in err


# ---- a cluster you can trust: tls://, and no plain tcp:// off this machine without a flag ----


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory):
    """A scheduler and one worker in this process speaking only mutual TLS on 127.0.0.1."""
    from distributed import LocalCluster
    from distributed.security import Security

    files = tls_files(tmp_path_factory.mktemp("tls"))
    security = Security(tls_ca_file=str(files["ca"]), tls_scheduler_cert=str(files["cert"]),
                        tls_scheduler_key=str(files["key"]), tls_worker_cert=str(files["cert"]),
                        tls_worker_key=str(files["key"]), tls_client_cert=str(files["cert"]),
                        tls_client_key=str(files["key"]), require_encryption=True)
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                           protocol="tls", host="127.0.0.1", scheduler_port=0,
                           dashboard_address=None, security=security)
    try:
        yield cluster.scheduler_address, files
    finally:
        cluster.close()


def test_a_tls_cluster_on_loopback_gives_the_one_process_lines(baseline, tls_cluster):
    node, expected = baseline
    address, files = tls_cluster
    assert address.startswith("tls://127.0.0.1:")
    process = audit(node, "--cluster", address, "--cluster-ca", str(files["ca"]),
                    "--cluster-cert", str(files["cert"]), "--cluster-key", str(files["key"]),
                    "--segment-blocks", str(SEGMENT))
    out, err = process.communicate(timeout=180)
    assert process.returncode == 1, err
    assert out == expected


def test_a_client_of_another_ca_is_not_let_in(tls_cluster, tmp_path):
    from recompute.core.errors import UsageError
    from recompute.watch.cluster import DaskExecutor, cluster_target

    address, _ = tls_cluster
    other = tls_files(tmp_path, "stranger")
    target = cluster_target(address, ca=str(other["ca"]), cert=str(other["cert"]),
                            key=str(other["key"]))
    with pytest.raises(UsageError, match="no Dask scheduler answered"):
        DaskExecutor(cluster=target)


def run_watch(capsys, *extra: str) -> tuple[int, str]:
    """The CLI in this process; nothing listens on port 9: the refusals come before any node
    or scheduler is asked."""
    from recompute.cli import main

    with pytest.raises(SystemExit) as done:
        main(["watch", "--rpc", "http://127.0.0.1:9", "--config", str(EXAMPLE), "--from", "1",
              "--to", "2", *extra])
    return done.value.code, capsys.readouterr().err


@pytest.mark.parametrize("extra,needle", [
    (["--cluster", "tcp://10.1.2.3:8786"],
     "--cluster tcp://10.1.2.3:8786: plain tcp is unauthenticated pickle"),
    (["--cluster", "10.1.2.3:8786"], "plain tcp is unauthenticated pickle"),
    (["--cluster", "tls://10.1.2.3:8786"], "--cluster tls://10.1.2.3:8786 needs --cluster-ca"),
    (["--cluster", "tcp://127.0.0.1:8786", "--cluster-ca", "x.pem"],
     "--cluster-ca is for a tls:// cluster"),
    (["--cluster", "ws://10.1.2.3:8786"], "give tls://HOST:PORT"),
    (["--cluster", "tls://10.1.2.3:8786", "--cluster-ca", "no.pem", "--cluster-cert", "no.pem"],
     "--cluster-ca no.pem: no such file"),
    (["--insecure-cluster"], "--insecure-cluster goes with --cluster URL"),
])
def test_an_untrusted_cluster_is_refused_before_any_connection(capsys, extra, needle):
    code, err = run_watch(capsys, *extra)
    assert code == 64 and needle in err and len(err.strip().splitlines()) == 1, err


def test_the_tls_files_may_come_from_dasks_own_configuration(tls_cluster):
    import dask

    from recompute.watch.cluster import DaskExecutor, cluster_target

    address, files = tls_cluster
    with dask.config.set({"distributed.comm.tls.ca-file": str(files["ca"]),
                          "distributed.comm.tls.client.cert": str(files["cert"]),
                          "distributed.comm.tls.client.key": str(files["key"])}):
        executor = DaskExecutor(cluster=cluster_target(address))
        try:
            assert executor.client.scheduler_info()["address"] == address
        finally:
            executor.close()
