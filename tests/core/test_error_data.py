"""Errors that name the caller's settings carry them as data (recompute/core/errors.py): the
library words them as its arguments, the command line as its flags, and the data survives
the trip back from a Dask worker (pickle), where a range audit's recipe errors are raised."""

from __future__ import annotations

import pickle

from recompute.cli.flags import cli_detail, cli_message
from recompute.core.errors import OptionError, Unverifiable


def test_an_option_error_is_worded_by_its_reader():
    error = OptionError("{param} layer={text!r} is not an integer", ("param",), text="two")
    assert str(error) == "param layer='two' is not an integer"
    assert cli_message(error) == "--param layer='two' is not an integer"


def test_an_unverifiable_detail_names_its_options_as_data():
    error = Unverifiable("stale-anchor", "more than {max_anchor_age} 40 min; give {at} TIME",
                         ("max_anchor_age", "at"))
    assert error.reason == "stale-anchor" and error.options == ("max_anchor_age", "at")
    assert error.detail == "more than Clock.max_anchor_age 40 min; give Clock.at TIME"
    assert cli_detail(error) == "more than --max-anchor-age 40 min; give --at TIME"
    plain = Unverifiable("rpc-malformed", "a {brace} stays as written")
    assert plain.detail == cli_detail(plain) == "a {brace} stays as written"


def test_errors_come_back_whole_from_a_worker():
    option = OptionError("{recipes} {path}: no such recipe module or folder", ("recipes",),
                         path="/x")
    back = pickle.loads(pickle.dumps(option))
    assert type(back) is OptionError and cli_message(back) == cli_message(option)
    assert str(back) == "recipes /x: no such recipe module or folder"
    for error in (Unverifiable("future-head", "ahead by more than {max_clock_drift} 15 s",
                               ("max_clock_drift",)),
                  Unverifiable("rpc-malformed", "eth_getProof: not an object")):
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is Unverifiable
        assert (back.reason, back.detail, cli_detail(back)) == (
            error.reason, error.detail, cli_detail(error))
