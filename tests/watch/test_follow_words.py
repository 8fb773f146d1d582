"""Follow mode's stale-anchor names what watch follows (the head), not an option it does not
have: the dated devnet's head, judged by the system clock, is a year old."""

from tests.watch.watchproc import EXAMPLE, head


def test_a_stale_head_is_named_as_the_head(devnet, run_cli):
    node, _ = devnet
    done = run_cli("watch", "--rpc", node.url, "--config", EXAMPLE, "--max-blocks", "1",
                   "--start-timeout", "1")
    assert done.returncode == 2, done.stderr
    number = int(head(node.url)["number"], 16)
    assert (f"UNVERIFIABLE (stale-anchor): block {number} (the head, latest, as the node named "
            "it) is ") in done.stderr
    assert "--block" not in done.stderr and "--max-anchor-age 40 min" in done.stderr
