"""Nothing runs that the user did not install or name (docs/executables.md).

The attacks: a folder handed to the user that carries its own ``node_modules/solc`` (or anvil),
a ``node_modules`` beside a virtualenv in a shared folder (``/tmp/venv`` → ``/tmp``), a relative
``PATH`` entry, a planted or modified entry in recompute's solc cache. Each planted program
writes a marker file when it runs; the marker must never appear. The compilers named by a
source must be the exact builds (a nightly is refused in one line), and a version npm does not
have is npm's own reason, leaving nothing in the cache. npm is a fake on ``PATH`` here (no
network): its answers are npm 11's own output for ``solc@0.8.99`` and an unknown package,
recorded by hand.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from recompute.core import executables
from recompute.core.errors import UsageError
from recompute.core.keccak import keccak256
from recompute.devnet.anvil import _platform_package, find_anvil
from recompute.devnet.lifecycle import beacon_command
from tests import REPO_ROOT

NODE_MODULES = REPO_ROOT / "node_modules"
SOURCE = "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.0;\ncontract A { uint64 x; }\n"
# solc 0.8.26's release commit (its release build is soljson-v0.8.26+commit.8a97fa7a.js)
RELEASE_0826 = "0.8.26+commit.8a97fa7a"
NIGHTLY = "0.8.22-nightly.2023.10.22+commit.b187d065"
# npm 11.19's stderr, as it printed them on this machine (`npm install --prefix P solc@0.8.99`
# and `… solcxyznotapkg@1.0.0`)
ETARGET = """npm error code ETARGET
npm error notarget No matching version found for solc@0.8.99.
npm error notarget In most cases you or one of your dependencies are requesting a package \
version that doesn't exist.
npm error A complete log of this run can be found in: /root/.npm/_logs/x-debug-0.log
"""
E404 = """npm error code E404
npm error 404 Not Found - GET https://registry.npmjs.org/solcxyznotapkg - Not found
npm error 404
npm error 404  The requested resource 'solcxyznotapkg@1.0.0' could not be found or you do \
not have permission to access it.
npm error A complete log of this run can be found in: /root/.npm/_logs/y-debug-0.log
"""


def _executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _plant_solc(node_modules: Path, marker: Path, version: str = "0.8.26") -> None:
    """A solc-js look-alike that writes ``marker`` as soon as it is loaded."""
    package = node_modules / "solc"
    package.mkdir(parents=True, exist_ok=True)
    (package / "package.json").write_text(json.dumps({"name": "solc", "version": version}))
    (package / "index.js").write_text(
        f"require('fs').writeFileSync({json.dumps(str(marker))}, 'ran');\n"
        f"module.exports = {{version: () => '{version}+commit.8a97fa7a', "
        "compile: () => '{}'};\n")


def _sourcify(folder: Path, version: str) -> Path:
    """A Sourcify folder of one contract whose metadata names compiler ``version``."""
    (folder / "sources").mkdir(parents=True, exist_ok=True)
    (folder / "sources" / "A.sol").write_text(SOURCE)
    metadata = {"language": "Solidity", "compiler": {"version": version},
                "settings": {"compilationTarget": {"A.sol": "A"},
                             "optimizer": {"enabled": False, "runs": 200}},
                "sources": {"A.sol": {"keccak256": "0x" + keccak256(SOURCE.encode()).hex()}}}
    (folder / "metadata.json").write_text(json.dumps(metadata))
    return folder


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The user's environment without the checkout's explicit settings (the tests' conftest
    names the checkout's node_modules), with a cache of its own."""
    env = {k: v for k, v in os.environ.items() if k not in ("RECOMPUTE_SOLC", "RECOMPUTE_ANVIL")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env.update(extra)
    return env


def _recompute(python: str, *args: object, cwd: Path, env: dict[str, str],
               timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([python, "-m", "recompute", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def _one_line_64(result: subprocess.CompletedProcess, *needles: str) -> str:
    assert result.returncode == 64, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _venv_beside(tmp_path: Path) -> Path:
    """A real virtualenv at ``tmp_path/venv`` that imports this checkout's recompute (its
    site-packages added by a .pth): its ``sys.prefix`` is ``tmp_path/venv``, whose parent is
    ``tmp_path`` — the ``/tmp`` of a ``/tmp/venv``."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   capture_output=True, timeout=120)
    ours = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    theirs = next(venv.glob("lib/python*/site-packages"))
    (theirs / "checkout.pth").write_text(
        "".join(f"import site; site.addsitedir({p!r})\n" for p in ours))
    return venv / "bin" / "python"


# ---- solc-js: never from the working directory, the input folder or beside the venv ----------

@pytest.mark.parametrize("where", ["input folder and cwd", "beside the virtualenv"])
def test_a_planted_solc_never_runs(tmp_path, where):
    marker = tmp_path / "marker"
    if where == "input folder and cwd":
        folder = _sourcify(tmp_path / "handed", RELEASE_0826)
        _plant_solc(folder / "node_modules", marker)
        python, cwd = sys.executable, folder
        args = ["layout", "import", ".", "-o", tmp_path / "out.json"]
    else:
        python = str(_venv_beside(tmp_path))
        _plant_solc(tmp_path / "node_modules", marker)  # <parent of sys.prefix>/node_modules
        folder = _sourcify(tmp_path / "work" / "handed", RELEASE_0826)
        cwd = tmp_path / "work"
        args = ["layout", "import", folder, "-o", tmp_path / "out.json"]
    result = _recompute(python, *args, cwd=cwd, env=_env(tmp_path, RECOMPUTE_SOLC_OFFLINE="1"))
    assert not marker.exists(), "the planted solc ran"
    _one_line_64(result, "solc 0.8.26 is not installed",
                 "RECOMPUTE_SOLC_OFFLINE forbids installing it")


def test_named_solc_compiles_and_a_planted_one_in_cwd_stays_idle(run_cli, tmp_path):
    """With the checkout's node_modules named, the compile uses it (the layout of ``uint64 x``
    is one variable at slot 0, 8 bytes) while the folder's own node_modules/solc stays idle."""
    marker = tmp_path / "marker"
    folder = _sourcify(tmp_path / "handed", RELEASE_0826)
    _plant_solc(folder / "node_modules", marker)
    out = tmp_path / "out.json"
    result = run_cli("layout", "import", ".", "-o", out, "--solc", NODE_MODULES, cwd=folder,
                     env=_env(tmp_path, RECOMPUTE_SOLC_OFFLINE="1"), timeout=600)
    assert result.returncode == 0, result.stderr
    assert not marker.exists()
    descriptor = json.loads(out.read_text())
    assert descriptor["compiler"].startswith(RELEASE_0826)
    assert [(v["label"], v["slot"], v["offset"]) for v in descriptor["storage"]] == [("x", "0", 0)]


# ---- compilers exactly as named ---------------------------------------------------------------

def _fake_npm(bin_dir: Path, body: str) -> Path:
    """``npm`` on PATH: a Python script (``args`` = its arguments, ``prefix`` = --prefix)."""
    return _executable(bin_dir / "npm", f"#!{sys.executable}\n" + textwrap.dedent("""\
        import json, shutil, sys
        from pathlib import Path
        args = sys.argv[1:]
        prefix = Path(args[args.index("--prefix") + 1])
        Path(__file__).with_name("npm-ran").write_text(json.dumps(args))
        """) + textwrap.dedent(body))


def test_a_nightly_compiler_is_refused_in_one_line(tmp_path):
    fake_bin = tmp_path / "bin"
    _fake_npm(fake_bin, "sys.exit(1)\n")
    folder = _sourcify(tmp_path / "handed", NIGHTLY)
    env = _env(tmp_path, PATH=f"{fake_bin}{os.pathsep}{os.environ['PATH']}")
    result = _recompute(sys.executable, "layout", "import", folder, "-o", tmp_path / "o.json",
                        cwd=tmp_path, env=env)
    _one_line_64(result, f"compiler {NIGHTLY} is not a release build", "--solc PATH")
    assert not (fake_bin / "npm-ran").exists(), "npm was asked for a build it cannot give"
    assert not (tmp_path / "cache" / "recompute" / "solc").exists()


def test_a_named_release_is_not_taken_for_its_nightly(run_cli, tmp_path):
    """A named node_modules may hold the exact nightly build; the one here holds the 0.8.26
    release, whose own version string (its commit 8a97fa7a, no nightly tag) is not the
    nightly's: refused after the run, nothing recorded."""
    folder = _sourcify(tmp_path / "handed", "0.8.26-nightly.2024.5.20+commit.0123abcd")
    result = run_cli("layout", "import", folder, "-o", tmp_path / "o.json", cwd=tmp_path,
                     env=_env(tmp_path, RECOMPUTE_SOLC=str(NODE_MODULES)), timeout=600)
    _one_line_64(result, "names compiler 0.8.26-nightly.2024.5.20+commit.0123abcd",
                 RELEASE_0826, "not that build")
    assert not (tmp_path / "o.json").exists()


def test_a_commit_that_is_not_the_releases_is_refused(run_cli, tmp_path):
    folder = _sourcify(tmp_path / "handed", "0.8.26+commit.deadbeef")
    result = run_cli("layout", "import", folder, "-o", tmp_path / "o.json", cwd=tmp_path,
                     env=_env(tmp_path, RECOMPUTE_SOLC=str(NODE_MODULES)), timeout=600)
    _one_line_64(result, "names compiler 0.8.26+commit.deadbeef", RELEASE_0826, "not that build")


@pytest.mark.parametrize("version,stderr,reason,code", [
    ("0.8.99+commit.0123abcd", ETARGET, "No matching version found for solc@0.8.99;", "ETARGET"),
    ("0.8.99+commit.0123abcd", E404, "404 Not Found - GET https://registry.npmjs.org/", "E404"),
])
def test_a_version_npm_does_not_have_says_npms_reason_and_leaves_nothing(tmp_path, version,
                                                                         stderr, reason, code):
    fake_bin = tmp_path / "bin"
    # like npm: it makes the --prefix folder, then fails with its own words
    _fake_npm(fake_bin, f"prefix.mkdir(parents=True, exist_ok=True)\n"
                        f"sys.stderr.write({stderr!r})\nsys.exit(1)\n")
    folder = _sourcify(tmp_path / "handed", version)
    env = _env(tmp_path, PATH=f"{fake_bin}{os.pathsep}{os.environ['PATH']}")
    result = _recompute(sys.executable, "layout", "import", folder, "-o", tmp_path / "o.json",
                        cwd=tmp_path, env=env)
    line = _one_line_64(result, f"solc 0.8.99 cannot be installed: npm {code}: ", reason,
                        "check the compiler version the source names", "--solc PATH")
    assert "complete log" not in line
    assert "--ignore-scripts" in json.loads((fake_bin / "npm-ran").read_text())
    assert not (tmp_path / "cache" / "recompute" / "solc").exists()


# ---- the user cache: installed by recompute, checked on every use -----------------------------

INSTALL_FROM_CHECKOUT = f"""
    # npm install solc@0.8.26, offline: the checkout's pinned solc-0.8.26 and its dependencies
    modules = prefix / "node_modules"
    source = Path({str(NODE_MODULES)!r})
    skip = {{"@foundry-rs", "solc", "solc-0.8.26", ".bin", ".package-lock.json", ".installed"}}
    for item in source.iterdir():
        if item.name not in skip:
            shutil.copytree(item, modules / item.name, symlinks=True)
    shutil.copytree(source / "solc-0.8.26", modules / "solc", symlinks=True)
    lock = {{"lockfileVersion": 3, "packages": {{"node_modules/solc": {{
        "version": "0.8.26", "integrity": "sha512-test-only"}}}}}}
    (modules / ".package-lock.json").write_text(json.dumps(lock))
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A cache in which recompute installed solc 0.8.26 through (the fake) npm and compiled
    with it, once for the module."""
    home = tmp_path_factory.mktemp("installed")
    fake_bin = home / "bin"
    _fake_npm(fake_bin, INSTALL_FROM_CHECKOUT)
    folder = _sourcify(home / "handed", RELEASE_0826)
    env = _env(home, PATH=f"{fake_bin}{os.pathsep}{os.environ['PATH']}")
    first = _recompute(sys.executable, "layout", "import", folder, "-o", home / "o.json",
                       cwd=home, env=env, timeout=600)
    assert first.returncode == 0, first.stderr
    assert json.loads((home / "o.json").read_text())["compiler"].startswith(RELEASE_0826)
    entry = home / "cache" / "recompute" / "solc" / "0.8.26"
    record = json.loads((entry / "install.json").read_text())
    assert record["version"] == "0.8.26" and record["integrity"] == "sha512-test-only"
    assert [p.name for p in entry.parent.iterdir()] == ["0.8.26"]  # no temporary folder left
    return home / "cache"


@pytest.fixture
def cached(installed, tmp_path):
    """A copy of that cache of this test's own, and no npm: ``(entry, run)``; ``run()``
    imports a Sourcify folder naming 0.8.26 with it."""
    shutil.copytree(installed, tmp_path / "cache", symlinks=True)
    folder = _sourcify(tmp_path / "handed", RELEASE_0826)
    no_npm = tmp_path / "bin"
    _fake_npm(no_npm, "sys.exit(1)\n")  # from now on, nothing may be installed

    def run() -> subprocess.CompletedProcess:
        return _recompute(sys.executable, "layout", "import", folder, "-o", tmp_path / "o.json",
                          cwd=tmp_path, env=_env(tmp_path, PATH=f"{no_npm}{os.pathsep}"
                                                                f"{os.environ['PATH']}"),
                          timeout=600)

    yield tmp_path / "cache" / "recompute" / "solc" / "0.8.26", run
    assert not (no_npm / "npm-ran").exists()


def test_the_cache_entry_is_used_as_installed(cached, tmp_path):
    _, run = cached
    again = run()
    assert again.returncode == 0, again.stderr
    assert json.loads((tmp_path / "o.json").read_text())["compiler"].startswith(RELEASE_0826)


@pytest.mark.parametrize("tamper,needle", [
    (lambda entry, mark: (entry / "node_modules" / "solc" / "index.js").write_text(
        f"require('fs').writeFileSync({json.dumps(str(mark))}, 'ran');\n"
        + (entry / "node_modules" / "solc" / "index.js").read_text()),
     "was changed since it was installed"),
    (lambda entry, mark: _plant_solc(entry / "node_modules" / "memorystream" / "node_modules",
                                     mark), "was changed since it was installed"),
    (lambda entry, mark: (entry / "install.json").unlink(), "has no install record"),
    (lambda entry, mark: (entry / "node_modules" / ".package-lock.json").write_text(
        '{"packages": {"node_modules/solc": {"integrity": "sha512-other"}}}'),
     "names another npm tarball"),
    (lambda entry, mark: entry.chmod(0o777), "may be written by other users"),
], ids=["index.js", "a file added", "no record", "another tarball", "world-writable"])
def test_a_changed_cache_entry_is_refused(cached, tmp_path, tamper, needle):
    entry, run = cached
    marker = tmp_path / "marker"
    tamper(entry, marker)
    line = _one_line_64(run(), f"the cached solc 0.8.26 at {entry}", needle, "remove that folder")
    assert "it is not run" in line
    assert not marker.exists()


def test_a_planted_cache_entry_is_refused(tmp_path):
    """A folder at the cache's place that recompute did not install (no install record)."""
    marker = tmp_path / "marker"
    entry = tmp_path / "cache" / "recompute" / "solc" / "0.8.26"
    _plant_solc(entry / "node_modules", marker)
    folder = _sourcify(tmp_path / "handed", RELEASE_0826)
    result = _recompute(sys.executable, "layout", "import", folder, "-o", tmp_path / "o.json",
                        cwd=tmp_path, env=_env(tmp_path))
    _one_line_64(result, "has no install record")
    assert not marker.exists()


def test_a_relative_xdg_cache_home_is_ignored(tmp_path, monkeypatch):
    """XDG: a relative $XDG_CACHE_HOME is invalid (it would put the cache in the working
    directory, where a handed folder could hold a planted entry)."""
    monkeypatch.setenv("XDG_CACHE_HOME", "cache")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert executables.user_cache() == tmp_path / ".cache" / "recompute"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "abs"))
    assert executables.user_cache() == tmp_path / "abs" / "recompute"


# ---- anvil -----------------------------------------------------------------------------------

def _plant_anvil(path: Path, marker: Path) -> None:
    _executable(path, f"#!/bin/sh\necho ran > {marker}\nexit 1\n")


def test_a_planted_anvil_in_cwd_never_runs(tmp_path):
    marker = tmp_path / "marker"
    cwd = tmp_path / "handed"
    _plant_anvil(cwd / "node_modules" / "@foundry-rs" / _platform_package() / "bin" / "anvil",
                 marker)
    _plant_anvil(cwd / "anvil", marker)  # and for a PATH with an empty entry (the cwd)
    path = os.pathsep.join(["", str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    result = _recompute(sys.executable, "devnet", "up", "--state-dir", tmp_path / "state",
                        cwd=cwd, env=_env(tmp_path, PATH=path))
    assert not marker.exists(), "the planted anvil ran"
    _one_line_64(result, "anvil not found", "RECOMPUTE_ANVIL")


def test_anvil_comes_from_recompute_anvil_or_path(tmp_path, monkeypatch):
    """RECOMPUTE_ANVIL names the binary or a node_modules folder holding the npm package;
    otherwise PATH, absolute entries only."""
    binary = NODE_MODULES / "@foundry-rs" / _platform_package() / "bin" / "anvil"
    monkeypatch.setenv("RECOMPUTE_ANVIL", str(NODE_MODULES))
    assert find_anvil() == binary
    monkeypatch.setenv("RECOMPUTE_ANVIL", str(binary))
    assert find_anvil() == binary
    monkeypatch.setenv("RECOMPUTE_ANVIL", str(tmp_path))  # a folder without the package
    with pytest.raises(UsageError, match="holds no @foundry-rs/"):
        find_anvil()
    monkeypatch.delenv("RECOMPUTE_ANVIL")
    on_path = _executable(tmp_path / "abs" / "anvil", "#!/bin/sh\n")
    _executable(tmp_path / "rel" / "anvil", "#!/bin/sh\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", os.pathsep.join(["rel", "", ".", str(on_path.parent)]))
    assert find_anvil() == on_path
    monkeypatch.setenv("PATH", os.pathsep.join(["rel", "", "."]))
    with pytest.raises(UsageError, match="anvil not found"):
        find_anvil()


def test_node_and_npm_come_from_absolute_path_entries_only(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _executable(tmp_path / "node", "#!/bin/sh\n")
    monkeypatch.setenv("PATH", os.pathsep.join(["", "."]))
    assert executables.on_path("node") is None
    assert shutil.which("node") is not None  # what the standard lookup would have run


def test_the_devnet_beacon_server_does_not_import_from_cwd(tmp_path):
    """``devnet up`` starts its beacon server as ``python -m …`` in the folder it runs in: a
    ``recompute/`` package planted there must not shadow the installed one."""
    marker = tmp_path / "marker"
    cwd = tmp_path / "handed"
    (cwd / "recompute").mkdir(parents=True)
    (cwd / "recompute" / "__init__.py").write_text(
        f"open({json.dumps(str(marker))}, 'w').write('ran')\n")
    command = beacon_command("http://127.0.0.1:9", tmp_path / "beacon.json")
    done = subprocess.run(command[:command.index("--rpc")] + ["--help"], cwd=cwd,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "--rpc" in done.stdout
    assert not marker.exists(), "a module planted in the working directory was imported"


def test_a_cache_that_cannot_be_written_is_one_line(tmp_path):
    fake_bin = tmp_path / "bin"
    _fake_npm(fake_bin, "sys.exit(1)\n")
    (tmp_path / "a-file").write_text("")
    folder = _sourcify(tmp_path / "handed", RELEASE_0826)
    env = _env(tmp_path, PATH=f"{fake_bin}{os.pathsep}{os.environ['PATH']}",
               XDG_CACHE_HOME=str(tmp_path / "a-file"))
    result = _recompute(sys.executable, "layout", "import", folder, "-o", tmp_path / "o.json",
                        cwd=tmp_path, env=env)
    _one_line_64(result, f"the cache folder {tmp_path / 'a-file' / 'recompute' / 'solc'} cannot "
                         "be written", "XDG_CACHE_HOME")
    assert not (fake_bin / "npm-ran").exists()
