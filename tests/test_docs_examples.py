"""Every shell example of the README and of the documentation site (docs/*.md) runs, as a user
would type it, and prints what the page shows.

A fenced block labelled ``sh``, ``shell``, ``bash`` or ``console`` is an example. In a
``console`` block a line starting with ``$ `` is a command (continued while a line ends with
``\\``) and the lines after it are its output as shown: each must be printed (stdout, then
stderr) in that order; ``…`` stands for characters the page leaves out; the page may leave lines
out. In an ``sh`` block every line that is not a comment is a command. A command exits 0 unless
it ends with ``# exit N``; one ending with ``&`` runs in the background until the page is done
(its first line of output is what a shown line under it is checked against). An example that
cannot run here is marked just before its fence with ``<!-- not-run: why -->``; every other
fence must say what it holds (``text``, ``json``, ``toml``, ``python``…), so that no example is
left out by accident.

All examples run against one devnet, brought up for this module with ``recompute devnet up`` in
a scratch folder with the checkout's ``examples/`` in it, as the docs tell a user to; every
page's examples run in that folder, one page after the other (the README first), as a user
following them all would run them. Where the devnet could not have its documented ports
(8545, the beacon's 5052), the URLs the pages show are replaced by the ones it printed.
"""

from __future__ import annotations

import json
import os
import re
import select
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from recompute.devnet.anvil import free_port
from tests import REPO_ROOT

PAGES = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
SHELL = {"sh", "shell", "bash", "console"}
NOT_RUN = re.compile(r"<!--\s*not-run:\s*(.*?)\s*-->")
EXIT = re.compile(r"#\s*exit (\d+)\s*$")
DEVNET_RPC, DEVNET_BEACON, FIXTURE_PORT = "http://127.0.0.1:8545", "http://127.0.0.1:5052", "8546"
COMMAND_TIMEOUT = 300


@dataclass
class Command:
    text: str
    line: int
    shown: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        found = EXIT.search(self.text)
        return int(found.group(1)) if found else 0

    @property
    def background(self) -> bool:
        return EXIT.sub("", self.text).rstrip().endswith("&")


@dataclass
class Fence:
    page: Path
    line: int
    info: str
    body: list[str]
    not_run: str | None

    def commands(self) -> list[Command]:
        out: list[Command] = []
        console = self.info == "console"
        lines = iter(enumerate(self.body, self.line + 1))
        for number, line in lines:
            if console and not line.startswith("$ "):
                if out:
                    out[-1].shown.append(line)
                continue
            text = line[2:] if console else line
            if not console and (not text.strip() or text.lstrip().startswith("#")):
                continue
            while text.endswith("\\"):
                text = text[:-1] + " " + next(lines)[1].strip()
            out.append(Command(text, number))
        return out


def fences(page: Path) -> list[Fence]:
    found, lines, at = [], page.read_text(encoding="utf-8").splitlines(), 0
    while at < len(lines):
        if lines[at].startswith("```"):
            start = at
            at += 1
            while not lines[at].startswith("```"):
                at += 1
            before = next((lines[i] for i in range(start - 1, -1, -1) if lines[i].strip()), "")
            marker = NOT_RUN.fullmatch(before.strip())
            found.append(Fence(page, start + 1, lines[start][3:].strip(), lines[start + 1:at],
                               marker.group(1) if marker else None))
        at += 1
    return found


def _pattern(line: str) -> re.Pattern[str]:
    return re.compile("".join(".*?" if part == "…" else re.escape(part)
                              for part in re.split("(…)", line)) + r"\Z")


def _assert_shown(where: str, shown: list[str], printed: list[str]) -> None:
    at = 0
    for line in shown:
        pattern = _pattern(line.rstrip())
        while at < len(printed) and not pattern.match(printed[at].rstrip()):
            at += 1
        assert at < len(printed), (f"{where}: the page shows a line the command does not print: "
                                   f"{line!r}\nprinted:\n" + "\n".join(printed))
        at += 1


LINKED = ("examples", ".venv", "node_modules")  # what a page's folder has of the checkout


class Devnet:
    """The devnet the examples run against, brought up in ``root`` as a user does."""

    def __init__(self, root: Path):
        self.root = root
        self.env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}"
                        f"{os.environ.get('PATH', '')}", RECOMPUTE_SOLC_OFFLINE="1",
                        NO_COLOR="1")
        self.env.pop("ETH_RPC_URL", None)
        self.fixture_port = str(free_port())

    def link_checkout(self) -> None:
        """The checkout's examples/ (and .venv, node_modules) in the scratch folder, as a user
        in a checkout has them."""
        for link in LINKED:
            if (REPO_ROOT / link).exists():
                (self.root / link).symlink_to(REPO_ROOT / link)

    def substitute(self, text: str) -> str:
        """The page's URLs made this devnet's (read anew: `up` after `down` may move them)."""
        manifest = json.loads((self.root / ".devnet" / "manifest.json").read_text())
        text = text.replace(DEVNET_RPC, manifest["rpc"])
        text = text.replace(DEVNET_BEACON, manifest["beacon"]["url"])
        return re.sub(rf"(127\.0\.0\.1:|--port ){FIXTURE_PORT}\b",
                      rf"\g<1>{self.fixture_port}", text)

    def run(self, command: str, folder: Path, env: dict | None = None,
            timeout: float = COMMAND_TIMEOUT) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-c", command], cwd=folder, env=env or self.env,
                              capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def devnet_folder(tmp_path_factory):
    devnet = Devnet(tmp_path_factory.mktemp("docs"))
    devnet.link_checkout()
    up = devnet.run("recompute devnet up", devnet.root)
    assert up.returncode == 0, up.stdout + up.stderr
    try:
        yield devnet
    finally:
        devnet.run("recompute devnet down", devnet.root, timeout=60)


@dataclass
class PageRun:
    """One page's examples, in order, with an environment of its own (an `export` holds for
    the page's later commands)."""

    devnet: Devnet
    folder: Path
    env: dict
    background: list[subprocess.Popen] = field(default_factory=list)

    def command(self, command: Command, where: str) -> None:
        text = self.devnet.substitute(EXIT.sub("", command.text).rstrip())
        shown = [self.devnet.substitute(line) for line in command.shown]
        export = re.fullmatch(r"export ([A-Z_][A-Z0-9_]*)=(\S+)", text)
        if export:
            self.env[export.group(1)] = export.group(2)
            return
        source = re.fullmatch(r"(?:source|\.) (\S+)", text)
        if source:  # the virtualenv's bin is first on PATH already
            assert (self.folder / source.group(1)).exists() or not (REPO_ROOT / ".venv").exists()
            return
        if command.background:
            process = subprocess.Popen(["bash", "-c", text.removesuffix("&")], cwd=self.folder,
                                       env=self.env, stdout=subprocess.PIPE, text=True,
                                       start_new_session=True)
            self.background.append(process)
            ready, _, _ = select.select([process.stdout], [], [], 60)
            assert ready, f"{where}: {text!r} printed nothing within 60 s"
            _assert_shown(where, shown, [process.stdout.readline()])
            return
        started = time.monotonic()
        done = self.devnet.run(text, self.folder, self.env)
        printed = done.stdout.splitlines() + done.stderr.splitlines()
        assert done.returncode == command.exit_code, (
            f"{where}: {text!r} exited {done.returncode}, the page says {command.exit_code} "
            f"({time.monotonic() - started:.1f} s)\n" + "\n".join(printed))
        _assert_shown(where, shown, printed)

    def stop(self) -> None:
        for process in self.background:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=10)


def _run_page(devnet: Devnet, page: Path) -> int:
    run = PageRun(devnet, devnet.root, dict(devnet.env))
    ran = 0
    try:
        for fence in fences(page):
            if fence.info in SHELL and fence.not_run is None:
                for command in fence.commands():
                    run.command(command, f"{page.name}:{command.line}")
                    ran += 1
    finally:
        run.stop()
    return ran


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_fence_says_what_it_holds(page):
    unlabelled = [f"{page.name}:{f.line}" for f in fences(page) if not f.info]
    assert not unlabelled, f"label these fences (sh/console to run, text/json/… not): {unlabelled}"
    for fence in fences(page):
        if fence.not_run is not None:
            assert fence.info in SHELL and fence.not_run, f"{page.name}:{fence.line}"


def test_the_readme_is_a_front_door():
    readme = PAGES[0].read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (REPO_ROOT / link).is_file(), link
    # its two commands, as the Makefile and CI run them
    assert "make demo" in readme and "make test" in readme
    assert "make test" in (REPO_ROOT / ".ci" / "run").read_text()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_shell_example_runs(devnet_folder, page):
    ran = _run_page(devnet_folder, page)
    runnable = [f for f in fences(page) if f.info in SHELL and f.not_run is None]
    assert ran == sum(len(f.commands()) for f in runnable)


def test_examples_are_parsed_as_commands_and_output():
    fence = Fence(Path("x.md"), 1, "console", [
        "$ recompute a \\", "    --b c   # exit 1", "out 1", "out 2", "$ server --port 8546 &",
        "http://127.0.0.1:8546"], None)
    first, second = fence.commands()
    assert (first.text, first.exit_code, first.shown) == (
        "recompute a  --b c   # exit 1", 1, ["out 1", "out 2"])
    assert second.background and second.exit_code == 0
    assert shlex.split(EXIT.sub("", first.text)) == ["recompute", "a", "--b", "c"]
