"""The beacon client's deadline is ``--rpc-timeout`` (30 s when not given): a beacon node
that accepts the connection and never answers is ``rpc-unreachable`` naming that deadline."""

from __future__ import annotations

import time

import pytest

from tests.lightclient.test_cli_sync import cli
from tests.rpcproxy import silent_endpoint

ROOT = "0x" + "11" * 32


@pytest.fixture
def silent_beacon():
    with silent_endpoint() as url:
        yield url


@pytest.mark.parametrize("command", [
    ["lightclient", "sync"],
    ["proof", "--rpc", "http://127.0.0.1:9", "--address", "0x" + "00" * 20],
])
def test_a_silent_beacon_fails_at_the_rpc_timeout(capsys, silent_beacon, command):
    started = time.monotonic()
    code, out, _ = cli(capsys, *command, "--beacon", silent_beacon, "--trusted-root", ROOT,
                       "--network", "devnet", "--rpc-timeout", "1")
    assert time.monotonic() - started < 20  # a hang guard, not a timing
    assert code == 2
    assert "rpc-unreachable" in out and "no complete answer within 1 s" in out, out


def test_the_rpc_timeout_is_checked_for_the_beacon_too(capsys, silent_beacon):
    code, _, err = cli(capsys, "lightclient", "sync", "--beacon", silent_beacon,
                       "--trusted-root", ROOT, "--rpc-timeout", "0")
    assert code == 64 and "--rpc-timeout 0 must be more than 0" in err
