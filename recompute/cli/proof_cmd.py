"""``recompute proof``: prove an account and some of its slots at an anchored block."""

from __future__ import annotations

import sys
from typing import Any

import click

from recompute.cli import cli
from recompute.cli.flags import cli_outcome
from recompute.cli.human_format import checksum
from recompute.cli.options import Chain, chain_options
from recompute.cli.report import anchor_lines, emit
from recompute.core.errors import Unverifiable, UsageError
from recompute.core.hexdata import parse_address, parse_uint256
from recompute.core.outcome import Outcome, block_evidence
from recompute.core.prover import prove_account
from recompute.core.verdict import Verdict


def _parse_expect(text: str) -> tuple[int, int]:
    slot, sep, value = text.partition("=")
    if not sep:
        raise UsageError(f"--expect {text!r} is not SLOT=VALUE")
    return parse_uint256(slot, "--expect slot"), parse_uint256(value, "--expect value")


@cli.command("proof")
@chain_options
@click.option("--address", required=True, metavar="A", help="Account to prove.")
@click.option("--slot", "slots", multiple=True, metavar="S", help="Storage slot (repeatable).")
@click.option("--expect", "expects", multiple=True, metavar="S=V",
              help="Expected value of a slot; the verdict is BAD when the proven value differs.")
def proof_command(chain: Chain, as_json: bool, address: str, slots: tuple[str, ...],
                  expects: tuple[str, ...]) -> None:
    """Prove an account and storage slots against a pinned header (EIP-1186)."""
    account_address = parse_address(address, "--address")
    wanted = [parse_uint256(s, "--slot") for s in slots]
    expected = dict(_parse_expect(e) for e in expects)
    wanted += [s for s in expected if s not in wanted]
    evidence: dict[str, Any] = {}
    try:
        anchored = chain.anchor()
        evidence.update(block_evidence(anchored))
        account = prove_account(anchored, account_address, wanted)
    except Unverifiable as exc:
        sys.exit(emit(cli_outcome(exc, evidence), as_json))

    evidence["account"] = account.to_json()
    evidence["slots"] = [
        {"slot": f"0x{slot:064x}", "value": f"0x{account.storage[slot]:064x}"} for slot in wanted
    ]
    mismatches = []
    if expected:
        evidence["expectations"] = []
        for slot, value in expected.items():
            ok = account.storage[slot] == value
            evidence["expectations"].append(
                {"slot": f"0x{slot:064x}", "expected": f"0x{value:064x}", "holds": ok}
            )
            if not ok:
                mismatches.append(slot)
    if mismatches:
        outcome = Outcome(Verdict.BAD, "predicate-failed", evidence,
                          f"{len(mismatches)} slot(s) differ from --expect")
    else:
        outcome = Outcome(Verdict.GOOD, "ok", evidence)

    lines = anchor_lines(anchored)
    state = "exists" if account.exists else "proven absent (no account)"
    lines.append(
        f"account {checksum(account.address)}: {state}, nonce {account.nonce}, "
        f"balance {account.balance}, storage root 0x{account.storage_root.hex()}, "
        f"code hash 0x{account.code_hash.hex()}"
    )
    for slot in wanted:
        mark = ""
        if slot in expected:
            mark = "  ok" if slot not in mismatches else f"  EXPECTED 0x{expected[slot]:x}"
        lines.append(f"slot 0x{slot:x} = 0x{account.storage[slot]:064x}{mark}")
    sys.exit(emit(outcome, as_json, lines))
