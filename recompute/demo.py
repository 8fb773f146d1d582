"""``recompute demo`` on the bundled real go-ethereum chain (offline).

Serves the recorded execution-apis fixtures from a replay node on 127.0.0.1 and proves the
fixtures' contract account and its slot 0 four ways, then shows what a lying node gets:
UNVERIFIABLE, never a verdict. (Once the devnet lands this becomes the devnet demo.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from recompute.anchor import anchor_block
from recompute.errors import Unverifiable
from recompute.fixture_node import FixtureNode
from recompute.prover import prove_account
from recompute.source import LiveSource

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "execution-apis"
CONTRACT = bytes.fromhex("7dcd17433742f4c0ca53122ab541d0ba67fc27df")


class _LyingSource(LiveSource):
    """The same node, but it reports slot 0 as 0x39 next to its (honest) proof."""

    def get_proof(self, address, slots, block_hash):
        answer = super().get_proof(address, slots, block_hash)
        answer["storageProof"][0]["value"] = "0x39"
        return answer


def run(echo: Callable[[str], None] = print) -> int:
    if not FIXTURES.is_dir():
        echo(f"error: the bundled fixtures are missing ({FIXTURES})")
        return 64
    with FixtureNode(FIXTURES) as node:
        honest = LiveSource(node.url)
        head = anchor_block([honest], block="latest")
        echo("recompute demo: real go-ethereum data (execution-apis fixtures, CC0), replayed "
             f"offline at {node.url}")
        echo(f"chain {head.chain_id}, head block {head.number} 0x{head.hash.hex()}\n")
        cases = [
            ("single-rpc (the node is trusted for the header)",
             lambda: anchor_block([honest], block="latest")),
            ("pinned by block hash", lambda: anchor_block([honest], block_hash=head.hash)),
        ]
        failures = 0
        for title, anchor in cases:
            block = anchor()
            account = prove_account(block, CONTRACT, [0])
            echo(f"VERIFIED-GOOD  {title}")
            echo(f"    block {block.number} state root 0x{block.state_root.hex()[:16]}…; "
                 f"account 0x{CONTRACT.hex()}: balance {account.balance}, "
                 f"slot 0 = {account.storage[0]:#x}"
                 + ("  (no account at this block)" if not account.exists else ""))
        walked = anchor_block([honest], checkpoint=head.hash, block=1)
        echo(f"VERIFIED-GOOD  checkpoint walk: from the pinned head down to block 1, "
             f"{walked.anchor.detail['headers_walked']} parentHash links re-hashed")
        echo(f"    block 1 is 0x{walked.hash.hex()} (only its header: the fixtures record "
             "proofs at the head)")
        try:
            block = anchor_block([_LyingSource(node.url)], block_hash=head.hash)
            prove_account(block, CONTRACT, [0])
            echo("VERIFIED-GOOD  a lying node  <- this must never happen")
            failures += 1
        except Unverifiable as exc:
            echo(f"UNVERIFIABLE   a node that lies about slot 0 ({exc.reason})")
            echo(f"    {exc.detail}")
    echo("\nEvery value above was proven by Merkle-Patricia proofs against the stateRoot of a "
         "header whose hash was recomputed; see README §Trust model.")
    return 1 if failures else 0
