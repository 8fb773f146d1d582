"""The anchor-state path end to end (docs/l2.md §Current releases): ``recompute proof
--chain op-mainnet`` on the release pair of tests/l2/release_pair.py (L1 chain id 1, the
preset's portal and AnchorStateRegistry proxies naming v7's listed implementation addresses).
Its verdicts equal those of the same L2 block pinned by its hash; every attack is UNVERIFIABLE
with its own reason, never a verdict."""

from __future__ import annotations

import json

import pytest

from recompute.devnet.anvil import Anvil, rpc_call
from tests.cli import run_cli
from tests.l2.op_stack_pair import FACTORY, hx
from tests.l2.op_stack_pair import REGISTRY as L2_REGISTRY
from tests.l2.release_pair import (
    PORTAL,
    PORTAL_SEPOLIA_ONLY,
    REGISTRY,
    REGISTRY_V2,
    build_release_pair,
)
from tests.rpcproxy import RpcProxy

pytestmark = pytest.mark.anvil


@pytest.fixture(scope="module")
def release():
    l1, l2 = Anvil(chain_id=1).start(), Anvil().start()
    try:
        yield build_release_pair(l1, l2)
    finally:
        l1.stop()
        l2.stop()


def proof(args, *more):
    done = run_cli("proof", *args, "--address", hx(L2_REGISTRY), "--slot", "0", "--json",
                   *more)
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def by_hash(release, number, *more):
    block = rpc_call(release.l2.url, "eth_getBlockByNumber", [hex(number), False])
    return proof(["--rpc", release.l2.url, "--block-hash", block["hash"]], *more)


@pytest.mark.parametrize(("block", "expect"), [(11, "0=11"), (11, "0=10"), (7, "0=7"),
                                               (7, "0=8")])
def test_verdicts_through_the_registry_equal_those_pinned_by_the_l2_block_hash(release, block,
                                                                                expect):
    release.anchor("final")
    code, out = proof(release.args("-b", block), "--expect", expect)
    pinned_code, pinned = by_hash(release, block, "--expect", expect)
    assert (code, out["verdict"], out["reason"]) == \
        (pinned_code, pinned["verdict"], pinned["reason"]), out
    assert code == (0 if expect == f"0={block}" else 1)
    assert out["evidence"]["block"] == pinned["evidence"]["block"]
    anchor = out["evidence"]["anchor"]
    assert (anchor["method"], anchor["tier"], anchor["basis"]) == \
        ("op-stack", "final", "anchor-state-registry")
    assert anchor["game"]["address"] == hx(release.pair.games["final"])
    assert anchor["game"]["l2_block_number"] == 11
    assert anchor["anchor_state_registry"]["implementation"] == "AnchorStateRegistry 3.9.0"
    assert anchor["factory"]["implementation"] == "DisputeGameFactory 1.6.1"
    assert anchor["portal"]["implementation"] == "OptimismPortal2 5.6.1"
    assert "op-contracts/v7.0.0-rc.4" in anchor["anchor_state_registry"]["identified_by"]
    assert anchor["l1_network"] == "mainnet"


def test_the_starting_anchor_root_when_no_game_is_anchored(release):
    root = release.pair.output_root_of(11)
    release.anchor(None, start=(root, 11))
    code, out = proof(release.args("-b", 9), "--expect", "0=9")
    assert (code, out["verdict"]) == (0, "VERIFIED-GOOD"), out
    assert out["evidence"]["anchor"]["game"] == {
        "address": None, "anchor": "startingAnchorRoot", "root_claim": hx(root),
        "l2_block_number": 11}
    release.anchor(None, start=(bytes.fromhex("ab" * 32), 11))  # a root not of block 11
    code, out = proof(release.args("-b", 9), "--expect", "0=9")
    assert (code, out["reason"]) == (2, "output-root-mismatch"), out


def test_the_text_output_names_the_registry(release):
    release.anchor("final")
    done = run_cli("proof", *release.args(), "--address", hx(L2_REGISTRY), "--slot", "0")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (f"L2 TIER FINAL: the AnchorStateRegistry {hx(REGISTRY)} (AnchorStateRegistry "
            f"3.9.0, by its listed implementation address on mainnet) holds the anchor game "
            f"{hx(release.pair.games['final'])} (type 0)") in done.stdout


@pytest.mark.parametrize(("setup", "reason"), [
    ({"blacklisted": True}, "game-blacklisted"),
    ({"retirement": "created"}, "game-retired"),
    ({"registry_impl": bytes.fromhex("77" * 20)}, "unknown-contract-version"),
    ({"registry_impl": REGISTRY_V2}, "unknown-contract-version"),
    ({"portal_impl": PORTAL_SEPOLIA_ONLY}, "l1-network-mismatch"),
])
def test_an_attack_on_the_registry_path_is_refused_with_its_reason(release, setup, reason):
    if setup.get("retirement") == "created":
        setup = {"retirement": release.created("final")}  # games at or before it: retired
    release.anchor("final", **setup)
    code, out = proof(release.args(), "--expect", "0=11")
    assert (code, out["verdict"], out["reason"]) == (2, "UNVERIFIABLE", reason), out


def test_a_game_after_the_retirement_time_is_kept(release):
    release.anchor("final", retirement=release.created("final") - 1)
    code, out = proof(release.args(), "--expect", "0=11")
    assert code == 0, out


def test_an_anchor_game_with_a_false_root_gives_no_verdict(release):
    release.anchor("wrong")
    code, out = proof(release.args(), "--expect", "0=13")
    assert (code, out["reason"]) == (2, "output-root-mismatch"), out


def test_an_l2_header_that_does_not_hash_to_the_root_s_block_hash(release):
    release.anchor("final")

    def lie(method, params, reply):
        if method == "eth_getBlockByNumber" and params[0] == hex(11):
            reply["result"]["extraData"] = "0x01"  # its claimed hash kept
        return reply

    with RpcProxy(release.l2.url, lie) as proxy:
        args = release.args()
        args[args.index("--rpc") + 1] = proxy.url
        code, out = proof(args, "--expect", "0=11")
    assert (code, out["reason"]) == (2, "l2-header-mismatch"), out


def test_a_forged_factory_record_is_unrecorded(release):
    slot = release.record_slot("final")
    kept = int(rpc_call(release.l1.url, "eth_getStorageAt", [hx(FACTORY), hex(slot), "latest"]),
               16)
    forged = kept & ~((1 << 160) - 1) | int.from_bytes(bytes.fromhex("99" * 20), "big")
    release.slot(FACTORY, slot, forged)  # the record under the game's UUID names another game
    release.anchor("final")
    try:
        code, out = proof(release.args(), "--expect", "0=11")
        assert (code, out["reason"]) == (2, "game-unrecorded"), out
    finally:
        release.slot(FACTORY, slot, kept)
        release.pair.mine(release.l1)


def test_a_copy_of_the_anchor_game_the_factory_did_not_make_is_unrecorded(release):
    copy = bytes.fromhex("98" * 20)
    code_of_final = rpc_call(release.l1.url, "eth_getCode",
                             [hx(release.pair.games["final"]), "latest"])
    release.pair.set_code(release.l1, copy, bytes.fromhex(code_of_final[2:]))
    release.pair.games["copy"] = copy
    try:
        release.anchor("copy")
        code, out = proof(release.args(), "--expect", "0=11")
        assert (code, out["reason"]) == (2, "game-unrecorded"), out
    finally:
        del release.pair.games["copy"]


def test_the_preset_s_l1_network_must_be_the_anchored_block_s(release):
    # OP Sepolia's portal, as a standard release's, on this chain-id-1 L1
    from recompute.l2.presets import load_presets

    sepolia = load_presets()["op-sepolia"]
    release.proxy(sepolia.portal, bytes.fromhex("e89f13c5ee4033b2d3cd76c9d6958efbfe26d3c2"))
    release.anchor("final")
    code, out = proof(release.args(chain="op-sepolia"), "--expect", "0=11")
    assert (code, out["reason"]) == (2, "l1-network-mismatch"), out


def test_a_block_above_the_anchor_and_a_named_game_are_refused(release):
    release.anchor("final")
    code, out = proof(release.args("-b", 12), "--expect", "0=12")
    assert (code, out["reason"]) == (2, "l2-block-unproposed"), out
    code, out = proof(release.args("--l2-game", hx(release.pair.games["final"])),
                      "--expect", "0=11")
    assert (code, out["reason"]) == (2, "unknown-contract-version"), out


def test_the_portal_without_a_preset_needs_the_registry_address(release):
    release.anchor("final")
    args = release.args()
    at = args.index("--chain")
    args[at:at + 2] = ["--l2-portal", hx(PORTAL)]
    code, out = proof(args, "--expect", "0=11")
    assert (code, out["reason"]) == (2, "unknown-contract-version"), out
    assert "--chain NAME or --l2-registry ADDR" in out["detail"], out
    code, out = proof(args + ["--l2-registry", hx(REGISTRY)], "--expect", "0=11")
    assert (code, out["verdict"]) == (0, "VERIFIED-GOOD"), out
    assert out["evidence"]["anchor"]["l1_network"] == "mainnet"  # the L1 block's chain id's
    assert out["evidence"]["anchor"]["chain"] is None


def test_the_registry_option_goes_with_the_portal_and_not_with_a_preset(release):
    done = run_cli("proof", "--rpc", release.l2.url, "--l2-registry", hx(REGISTRY),
                   "--address", hx(L2_REGISTRY), "--slot", "0")
    assert done.returncode == 64 and "--l2-registry goes with --l2-portal" in done.stderr
    done = run_cli("proof", *release.args("--l2-registry", hx(REGISTRY)), "--address",
                   hx(L2_REGISTRY), "--slot", "0")
    assert done.returncode == 64 and "give one" in done.stderr, done.stderr


def test_the_code_identified_path_is_unchanged_beside_it(release):
    # the pair's own 0.17.3 portal on the same L1: still read by its code
    from tests.l2.op_stack_pair import PORTAL as PORTAL_0173

    release.anchor("final")
    args = release.args("--l2-game", hx(release.pair.games["final"]))
    at = args.index("--chain")
    args[at:at + 2] = ["--l2-portal", hx(PORTAL_0173)]
    code, out = proof(args, "--expect", "0=11")
    assert code == 0, out
    assert "basis" not in out["evidence"]["anchor"]
    assert out["evidence"]["anchor"]["portal"]["implementation"] == "OptimismPortal2 3.10.0"


def test_follow_mode_rests_on_the_registry_root_and_retracts_a_blacklisted_anchor(tmp_path):
    import subprocess
    import sys
    import time

    from recompute.l2.game import mapping_slot
    from tests.l2.op_stack_pair import add_final_game
    from tests.l2.release_pair import ANCHOR_GAME, BLACKLIST

    def lines_of(path):
        text = path.read_text() if path.exists() else ""
        return [json.loads(x) for x in text.splitlines() if x.startswith("{")]

    def wait_for(path, predicate, what):
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if predicate(lines := lines_of(path)):
                return lines
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}: {path.read_text()[-2000:]}\n"
                             f"{(tmp_path / 'err.txt').read_text()[-3000:]}")

    l1, l2 = Anvil(chain_id=1).start(), Anvil().start()
    try:
        release = build_release_pair(l1, l2)
        checks = tmp_path / "checks.toml"
        checks.write_text(f'[[check]]\nname = "slot"\nrecipe = "probe/slot-at-most"\n'
                          f'address = "{hx(L2_REGISTRY)}"\nparams = {{ cap = 100 }}\n')
        out, err = tmp_path / "out.jsonl", tmp_path / "err.txt"
        with open(out, "w") as stdout, open(err, "w") as stderr:
            watch = subprocess.Popen(
                [sys.executable, "-m", "recompute", "watch", "--rpc", l2.url, "--chain",
                 "op-mainnet", "--l1-rpc", l1.url, "--config", str(checks), "--recipes",
                 "tests/l2/slot_recipes.py", "--from", "9", "--poll", "0.2", "--max-blocks",
                 "8"], stdout=stdout, stderr=stderr)
            try:
                first = wait_for(out, lambda ls: len(ls) >= 3, "the anchor's blocks")
                final = release.pair.games["final"]
                assert [(x["block"], x["verdict"], x["final"]) for x in first[:3]] == [
                    (9, "VERIFIED-GOOD", True), (10, "VERIFIED-GOOD", True),
                    (11, "VERIFIED-GOOD", True)]
                assert {(x["anchor"]["game"], x["anchor"]["basis"]) for x in first[:3]} == {
                    (hx(final), "anchor-state-registry")}
                release.slot(REGISTRY, mapping_slot(final, BLACKLIST), 1)
                release.pair.mine(l1)
                lines = wait_for(out, lambda ls: any(x.get("event") == "retraction"
                                                     for x in ls), "the retraction")
                event = next(x for x in lines if x.get("event") == "retraction")
                assert (event["game"], event["reason"], event["blocks"]) == \
                    (hx(final), "game-blacklisted", [9, 10, 11])
                newer = add_final_game(release.pair, "newer", 13)
                release.slot(REGISTRY, ANCHOR_GAME, int.from_bytes(newer, "big"))
                release.pair.mine(l1)
                wait_for(out, lambda ls: any(x.get("anchor", {}).get("game") == hx(newer)
                                             for x in ls), "the newer anchor")
                assert watch.wait(120) == 0, err.read_text()
            finally:
                if watch.poll() is None:
                    watch.kill()
        lines = [x for x in lines_of(out) if x.get("event") or x["hash"] is not None]
        retracted = [(x["block"], x["verdict"], x["healthy"]) for x in lines
                     if "check" in x and x["reason"] == "game-blacklisted"]
        assert retracted == [(n, "UNVERIFIABLE", False) for n in (9, 10, 11)]
        again = [(x["block"], x["verdict"]) for x in lines
                 if x.get("anchor", {}).get("game") == hx(newer)]
        assert again == [(n, "VERIFIED-GOOD") for n in range(9, 14)]
    finally:
        l1.stop()
        l2.stop()


def test_a_range_audit_rests_on_the_registry_root(release, tmp_path):
    release.anchor("final")
    checks = tmp_path / "checks.toml"
    checks.write_text(f'[[check]]\nname = "slot"\nrecipe = "probe/slot-at-most"\n'
                      f'address = "{hx(L2_REGISTRY)}"\nparams = {{ cap = 9 }}\n')
    page = tmp_path / "audit.html"
    done = run_cli("watch", *release.args(), "--config", checks, "--recipes",
                   "tests/l2/slot_recipes.py", "--from", "8", "--to", "11", "--html", page)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 1, done.stderr  # slot 0 > 9 at blocks 10 and 11
    assert [(line["block"], line["verdict"]) for line in lines] == [
        (8, "VERIFIED-GOOD"), (9, "VERIFIED-GOOD"), (10, "VERIFIED-BAD"), (11, "VERIFIED-BAD")]
    assert "L2 TIER FINAL: pinned through L1 by the root the chain" in page.read_text()
    assert "AnchorStateRegistry accepted, which is final." in page.read_text()
    assert lines[-1]["anchor"]["basis"] == "anchor-state-registry"


def view(url, to, signature, args=b""):
    from recompute.core.keccak import keccak256

    data = keccak256(signature.encode())[:4] + args
    return bytes.fromhex(rpc_call(url, "eth_call", [{"to": hx(to), "data": hx(data)},
                                                    "latest"])[2:])


def test_the_registry_s_and_factory_s_own_getters_read_what_recompute_decoded(release):
    final = release.pair.games["final"]
    created = release.created("final")
    release.anchor("final", retirement=created - 5)
    code, out = proof(release.args(), "--expect", "0=11")
    assert code == 0, out
    seen = out["evidence"]["anchor"]
    registry = seen["anchor_state_registry"]

    def word(signature, args=b""):
        return int.from_bytes(view(release.l1.url, REGISTRY, signature, args)[:32], "big")

    assert word("respectedGameType()") == registry["respected_game_type"] == 0
    assert word("retirementTimestamp()") == registry["retirement_timestamp"] == created - 5
    assert hx(word("anchorGame()").to_bytes(20, "big")) == registry["anchor_game"] == hx(final)
    assert hx(word("disputeGameFactory()").to_bytes(20, "big")) == seen["factory"]["address"]
    assert word("disputeGameBlacklist(address)", bytes(12) + final) == 0
    # the factory's games(gameType, rootClaim, extraData) -> (proxy, timestamp)
    game = seen["game"]
    extra = bytes.fromhex(game["extra_data"][2:])
    args = (bytes(32) + bytes.fromhex(game["root_claim"][2:]) + (0x60).to_bytes(32, "big")
            + len(extra).to_bytes(32, "big") + extra)
    answer = view(release.l1.url, FACTORY, "games(uint32,bytes32,bytes)", args)
    assert answer[12:32] == final
    assert int.from_bytes(answer[32:64], "big") == game["created_at"] == created


def test_the_library_takes_a_preset_name(release):
    from recompute import ArgumentError, LiveSource, anchor_block, anchor_l2_block, prove_account

    release.anchor("final")
    head = rpc_call(release.l1.url, "eth_getBlockByNumber", ["latest", False])["hash"]
    l1 = anchor_block([LiveSource(release.l1.url)], block_hash=head)
    block = anchor_l2_block(l1, LiveSource(release.l2.url), chain="op-mainnet", block=9)
    assert block.number == 9 and block.anchor.detail["basis"] == "anchor-state-registry"
    assert prove_account(block, L2_REGISTRY, [0]).storage[0] == 9
    with pytest.raises(ArgumentError, match="give one of them"):
        anchor_l2_block(l1, LiveSource(release.l2.url), chain="op-mainnet", portal=hx(PORTAL))
    with pytest.raises(ArgumentError, match="chain: 'nope'"):
        anchor_l2_block(l1, LiveSource(release.l2.url), chain="nope")


@pytest.mark.parametrize("which", ["portal", "registry", "factory"])
def test_a_proxy_that_is_not_the_op_proxy_is_refused_by_name(release, which):
    # the EIP-1967 slot names a listed implementation, but the code in front of it is other
    # code (here the message passer's): what its slot means is not known
    from tests.l2.op_stack_pair import runtime

    address = {"portal": PORTAL, "registry": REGISTRY, "factory": FACTORY}[which]
    release.pair.set_code(release.l1, address, runtime("L2ToL1MessagePasser"))
    try:
        release.anchor("final")
        code, out = proof(release.args(), "--expect", "0=11")
        assert (code, out["reason"]) == (2, "unknown-contract-version"), out
        assert f"{which} proxy" in out["detail"], out
    finally:
        release.pair.set_code(release.l1, address, runtime("Proxy"))
        release.pair.mine(release.l1)


def test_follow_mode_on_the_registry_s_starting_root(release, tmp_path):
    import subprocess
    import sys

    release.anchor(None, start=(release.pair.output_root_of(11), 11))
    checks = tmp_path / "checks.toml"
    checks.write_text(f'[[check]]\nname = "slot"\nrecipe = "probe/slot-at-most"\n'
                      f'address = "{hx(L2_REGISTRY)}"\nparams = {{ cap = 100 }}\n')
    done = subprocess.run(
        [sys.executable, "-m", "recompute", "watch", "--rpc", release.l2.url, "--chain",
         "op-mainnet", "--l1-rpc", release.l1.url, "--config", str(checks), "--recipes",
         "tests/l2/slot_recipes.py", "--from", "10", "--poll", "0.2", "--max-blocks", "2"],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    assert [(x["block"], x["verdict"], x["final"], x["anchor"]["game"]) for x in lines] == [
        (10, "VERIFIED-GOOD", True, None), (11, "VERIFIED-GOOD", True, None)]


def test_follow_mode_judges_again_the_roots_its_lines_rest_on(release):
    from recompute import LiveSource, Unverifiable, anchor_block
    from recompute.core.clock import SYSTEM
    from recompute.l2.op_stack_anchor import L2Round, OpStackRequest

    def round_now():
        head = rpc_call(release.l1.url, "eth_getBlockByNumber", ["latest", False])["hash"]
        l1 = anchor_block([LiveSource(release.l1.url)], block_hash=head)
        return L2Round(l1, LiveSource(release.l2.url), OpStackRequest(
            portal=PORTAL, l1_network="mainnet", anchor_state_registry=REGISTRY), SYSTEM)

    final = release.pair.games["final"]
    release.anchor(None, start=(release.pair.output_root_of(11), 11))
    look = round_now()
    assert look.newest().anchor.detail["game"]["anchor"] == "startingAnchorRoot"
    assert look.judge(REGISTRY).evidence["game"]["anchor"] == "startingAnchorRoot"
    standing = look.judge(final)  # an earlier anchor game, judged by the same rules
    assert (standing.tier, standing.evidence["game"]["anchor"]) == \
        ("final", "an earlier anchorGame")
    release.anchor("final", blacklisted=True)
    with pytest.raises(Unverifiable) as caught:
        round_now().judge(final)
    assert caught.value.reason == "game-blacklisted"
