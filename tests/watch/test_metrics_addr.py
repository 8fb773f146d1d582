"""``--metrics-addr``: the metrics server binds the address named (default 127.0.0.1), and a
value that is not an IP address is a usage error before any node is asked."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from recompute.core.errors import OptionError
from recompute.watch.metrics import Metrics, metrics_address, metrics_url, serve
from tests.cli import run_cli
from tests.watch.watchproc import EXAMPLE


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as reply:
        return reply.read().decode()


def test_the_server_binds_the_address_named():
    server = serve(Metrics(), 0, "127.0.0.2")  # another loopback address than the default
    try:
        port = server.server_address[1]
        assert metrics_url(server) == f"http://127.0.0.2:{port}/metrics"
        assert "recompute_watch_up" in _get(f"http://127.0.0.2:{port}/metrics")
        with pytest.raises(urllib.error.URLError):  # not on 127.0.0.1: bound where named
            _get(f"http://127.0.0.1:{port}/metrics")
    finally:
        server.shutdown()
        server.server_close()


def test_the_default_is_loopback_only():
    server = serve(Metrics(), 0)
    try:
        assert server.server_address[0] == "127.0.0.1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("given", ["example.org", "127.0.0.1:9100", "", "0.0.0.0/0"])
def test_a_value_that_is_no_address_is_refused(given):
    with pytest.raises(OptionError, match="is not an IP address"):
        metrics_address(given)


def test_the_command_refuses_it_before_asking_a_node():
    done = run_cli("watch", "--rpc", "http://127.0.0.1:9", "--config", EXAMPLE,
                   "--metrics-port", "0", "--metrics-addr", "example.org")
    assert done.returncode == 64, done.stderr
    assert done.stderr.strip() == ("error: --metrics-addr 'example.org' is not an IP address "
                                   "(127.0.0.1, 0.0.0.0, ::1, …)")
    assert metrics_address("::") == "::" and metrics_address("[::1]") == "::1"
