"""EIP-55 checksums on every address a user or a library caller gives: mixed case is a checksum
and must be right (as `cast` has it); all lower-case and all upper-case carry none and are
accepted. Expected spellings: EIP-55's own examples."""

import pytest

from recompute.core.errors import ArgumentError, UsageError
from recompute.core.hexdata import as_data, checksum_problem, eip55, parse_address
from recompute.recipes.params import Param

# EIP-55 §Test Cases (all caps, all lower, normal)
EIP55_EXAMPLES = [
    "52908400098527886E0F7030069857D2E4169EE7", "8617E340B3D01FA5F11F306F4090FD50E238070D",
    "de709f2102306220921060314715629080e2fb77", "27b1fdb04752bbc536007a920d24acb045561c26",
    "5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "fB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
    "dbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB", "D1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
]
GOOD = "5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
WRONG = "5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"  # the last letter's case flipped


@pytest.mark.parametrize("digits", EIP55_EXAMPLES)
def test_the_eips_examples_are_accepted(digits):
    assert checksum_problem(digits) is None
    assert parse_address("0x" + digits, "--address") == bytes.fromhex(digits)
    mixed = any(c.isupper() for c in digits) and any(c.islower() for c in digits)
    if mixed:
        assert eip55(digits.lower()) == digits


def test_no_checksum_is_accepted_in_either_case():
    assert parse_address("0x" + GOOD.lower(), "--address") == bytes.fromhex(GOOD)
    assert parse_address("0x" + GOOD.upper(), "--address") == bytes.fromhex(GOOD)


def test_a_wrong_checksum_is_refused_everywhere():
    with pytest.raises(UsageError, match=f"--address 0x{WRONG} has a wrong EIP-55 checksum "
                                         rf"\(mixed case is a checksum: 0x{GOOD}\)"):
        parse_address("0x" + WRONG, "--address")
    with pytest.raises(ArgumentError, match="^address: .* wrong EIP-55 checksum"):
        as_data("0x" + WRONG, "address", 20, "an address")  # the library
    with pytest.raises(UsageError, match="wrong EIP-55 checksum"):
        Param("subject", "address", "").parse("0x" + WRONG)  # a recipe's --param
    assert as_data("0x" + "ab" * 32, "h", 32, "a hash") == bytes.fromhex("ab" * 32)  # not 20


def test_a_mapping_key_with_a_wrong_checksum_is_refused(run_cli):
    done = run_cli("layout", "slot", "amm-registry",
                   f"heads[0x{WRONG}].stateVersion")
    assert done.returncode == 64, done.stderr
    assert "wrong EIP-55 checksum" in done.stderr and len(done.stderr.splitlines()) == 1
    ok = run_cli("layout", "slot", "amm-registry", f"heads[0x{GOOD}].stateVersion")
    assert ok.returncode == 0, ok.stderr
