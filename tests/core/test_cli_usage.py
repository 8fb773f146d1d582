"""Bad input is one line on stderr and exit 64; the CLI's surface answers."""

from __future__ import annotations

import pytest

from recompute import __version__
from tests.cli import run_cli

ADDRESS = "0x7dcd17433742f4c0ca53122ab541d0ba67fc27df"




def test_help_lists_the_commands_and_version_works():
    help_ = run_cli("--help")
    assert help_.returncode == 0 and "proof" in help_.stdout
    version = run_cli("--version")
    assert version.returncode == 0 and __version__ in version.stdout


@pytest.mark.parametrize("args,needle", [
    (["--address", "0x1234", "--block", "1"], "--address '0x1234' is not an address"),
    (["--address", "zz" * 20, "--block", "1"], "is not an address"),
    (["--address", ADDRESS, "--block", "1", "--slot", "0xzz"], "--slot '0xzz' is not a number"),
    (["--address", ADDRESS, "--block", "1", "--slot", str(2**256)], "does not fit in 256 bits"),
    (["--address", ADDRESS, "--block-hash", "0x12"], "--block-hash '0x12' is not a 32-byte hash"),
    (["--address", ADDRESS, "--block", "soon"], "--block 'soon' is not a number"),
    (["--address", ADDRESS, "--block", "1", "--expect", "5"], "is not SLOT=VALUE"),
    (["--address", ADDRESS, "--checkpoint", "0x" + "11" * 32], "--checkpoint needs --block N"),
    (["--address", ADDRESS, "--block", "1", "--quorum", "0"], "--quorum must be at least 1"),
    (["--address", ADDRESS, "--block", "1", "--quorum", "3"], "--quorum 3 needs at least 3"),
    (["--address", ADDRESS], "give --block N|latest or --block-hash H"),
    (["--block", "1"], "Missing option '--address'"),
    (["--address", ADDRESS, "--block", "1", "--bogus"], "No such option '--bogus'"),
])
def test_bad_arguments_are_one_line_and_exit_64(args, needle):
    rpc = ["--rpc", "http://127.0.0.1:1"] if "--bogus" not in args else []
    result = run_cli("proof", *rpc, *args)
    assert result.returncode == 64, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("url", ["127.0.0.1:8545", "ftp://127.0.0.1", "http://", "http://h:99999"])
def test_bad_rpc_urls_are_usage_errors(url):
    result = run_cli("proof", "--rpc", url, "--block", "1", "--address", ADDRESS)
    assert result.returncode == 64
    assert "--rpc" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_no_rpc_is_a_usage_error():
    result = run_cli("proof", "--block", "1", "--address", ADDRESS)
    assert result.returncode == 64 and "give --rpc URL" in result.stderr


def test_the_core_names_options_the_cli_words_them_as_flags():
    """The anchoring raises its usage errors as data (OptionError); the library's message names
    its arguments, the command line's its flags, and no module below recompute/cli spells a
    flag in an OptionError."""
    from recompute.cli.flags import cli_message
    from recompute.core.anchor import anchor_block
    from recompute.core.errors import OptionError
    from recompute.core.hexdata import parse_block

    with pytest.raises(OptionError) as caught:
        anchor_block([], block=1)
    assert str(caught.value) == "no source endpoint given"
    assert cli_message(caught.value) == "no --rpc endpoint given"
    with pytest.raises(OptionError) as caught:
        parse_block("0x1" + "0" * 16)
    assert str(caught.value) == "block '0x10000000000000000' is not a block number"
    assert cli_message(caught.value) == "--block '0x10000000000000000' is not a block number"


@pytest.mark.parametrize(("typed", "meant"), [
    (["stpe"], "step"), (["wacth"], "watch"), (["vectors", "verfy"], "verify"),
    (["devnet", "dwon"], "down")])
def test_a_mistyped_command_says_which_it_may_have_meant(run_cli, typed, meant):
    done = run_cli(*typed)
    assert done.returncode == 64
    assert f"No such command '{typed[-1]}'. Did you mean '{meant}'?" in done.stderr
    assert len(done.stderr.splitlines()) == 1


def test_no_suggestion_for_a_word_like_no_command(run_cli):
    done = run_cli("zzz")
    assert done.returncode == 64
    assert done.stderr.strip() == "error: No such command 'zzz'. (see `recompute --help`)"
