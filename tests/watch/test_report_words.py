"""The audit report's words (docs/report.md §The HTML page): expectations worked by hand."""

from recompute.core.keccak import keccak256
from recompute.watch.report_words import (
    age,
    anchor_rows,
    anchor_sentences,
    derived_value,
    duration,
    iso,
)


def test_times_are_iso_8601_utc_and_ages_words():
    assert iso(1763341400) == "2025-11-17T01:03:20Z"  # the devnet's as-of (docs/devnet.md)
    assert iso(0) == "1970-01-01T00:00:00Z"
    assert duration(0) == "0 s"
    assert duration(59) == "59 s"
    assert duration(12 * 60 + 5) == "12 min 5 s"
    assert duration(2 * 3600 + 30) == "2 h 30 s"  # the two largest units that are not zero
    assert duration(32_822_778) == "1 year 14 days"  # 31,536,000 s + 14 × 86,400 + 5,178 s
    assert age(720) == "12 min before the clock" and age(-5) == "5 s after the clock"


def test_the_anchor_in_sentences():
    assert anchor_sentences({"method": "block-hash", "pinned_hash": "0xab",
                             "trusts": "the block hash you pinned"}) == [
        "Pinned by the block hash you gave, 0xab."]
    light = anchor_sentences({
        "method": "light-client", "trusts": "the trusted root", "trusted_root": "0x81",
        "network": "devnet", "finalized_beacon_slot": 96, "participation": "512/512",
        "block_timestamp": 1763341400, "clock": "at", "as_of": 1763342120, "age_s": 720})
    assert light[0] == ("Pinned by the beacon light client from the trusted root 0x81 (network "
                        "devnet): its sync committees signed up to finalized beacon slot 96, "
                        "512/512 signatures.")
    assert light[-1] == ("The block's time is 2025-11-17T01:03:20Z; judged as of "
                         "2025-11-17T01:15:20Z (the --at time you gave), 12 min after the "
                         "block.")
    single = anchor_sentences({"method": "single-rpc", "endpoint": "https://n.example/KEY"})
    assert single[0].startswith("Not pinned: the node itself (https://n.example/…) said")
    assert "KEY" not in " ".join(single)


def test_the_anchor_rows_name_times_and_hide_keys():
    rows = dict(anchor_rows({"method": "quorum", "trusts": "t", "block_timestamp": 1763341400,
                             "as_of": 1763341400, "age_s": 0, "clock": "system",
                             "endpoints": {"https://a.example/KEY": "0x01"}}))
    assert rows == {"block time": "2025-11-17T01:03:20Z",
                    "judged as of": "2025-11-17T01:03:20Z",
                    "age of the block at that time": "0 s before the clock",
                    "clock": "this machine's clock",
                    "endpoints": "{https://a.example/…: 0x01}"}


def test_derived_values_by_their_type():
    worker = "0x" + keccak256(b"sai.role.worker").hex()  # the specification's reserved role id
    assert derived_value("clock", "1763341400") == "2025-11-17T01:03:20Z"  # amm: a time
    assert derived_value("silent_since", "0") == "none (0)"
    assert derived_value("cap", "1000000") == "1,000,000 units"  # 8312: an amount
    assert derived_value("role", worker) == f"worker ({worker[:10]}…)"
    assert derived_value("active_by_role", {worker: "2"}) == "{worker: 2}"
    assert derived_value("within_cap", False) == "false"
    assert derived_value("unknown", "1763341400") == "1763341400"  # no declared type: as is
