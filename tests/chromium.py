"""Headless Chromium (Debian's ``chromium``) for the tests of the HTML report: the page's DOM as
Chromium built it, and the console messages it logged while loading (a Content-Security-Policy
violation, a failed load, a script error).

Absent Chromium, a test skips with the reason, except under CI (``CI=true``), where it fails:
``.ci/run`` installs it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-extensions", "--enable-logging=stderr", "--v=0")


def installed(program: str, package: str) -> str:
    """The path of ``program`` (from Debian's ``package``); absent, the test skips, or fails
    under CI (``CI=true``: .ci/run installs it)."""
    found = shutil.which(program)
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{program} is not installed: CI installs it (.ci/run, apt-get install "
                        f"{package})")
        pytest.skip(f"{program} is not installed (apt-get install {package})")
    return found


def chromium() -> str:
    return installed("chromium", "chromium")


def _run(page: Path, *flags: str, profile: Path) -> subprocess.CompletedProcess:
    return subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *flags,
                           page.resolve().as_uri()],
                          capture_output=True, text=True, timeout=120)


def console(stderr: str) -> list[str]:
    """The console messages among Chromium's log lines."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def dump_dom(page: Path, profile: Path) -> tuple[str, list[str]]:
    """(the DOM Chromium built, serialised; the console messages)."""
    done = _run(page, "--dump-dom", profile=profile)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, console(done.stderr)


def screenshot(page: Path, png: Path, profile: Path, size: str = "1200,3000") -> list[str]:
    """Draw the page into ``png``; the console messages."""
    done = _run(page, f"--screenshot={png}", f"--window-size={size}", "--hide-scrollbars",
                profile=profile)
    assert done.returncode == 0, done.stderr[-2000:]
    return console(done.stderr)
