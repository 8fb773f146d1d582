"""solc-js from npm, of one exact version: found or installed, then run on standard JSON.

Where a compiler of version V comes from, in order (README §Layouts from verified source):

1. the project's ``node_modules/solc`` when its version is V, or an npm alias
   ``node_modules/solc-V`` (``"solc-0.8.26": "npm:solc@0.8.26"`` in package.json) — the
   working directory's, or the one beside the virtualenv this Python runs in;
2. the user cache, ``$XDG_CACHE_HOME/recompute/solc/V`` (``~/.cache/…``), where a previous
   run installed it;
3. installed there now with ``npm install --prefix DIR solc@V`` (unless
   ``RECOMPUTE_SOLC_OFFLINE=1``).

A version that cannot be had is one line naming the package to install. The compiler runs as
``node`` on the package's own ``compile`` (standard JSON in, standard JSON out); its version
string (``0.8.26+commit.8a97fa7a.Emscripten.clang``) is checked against the one asked for,
commit included when the caller names one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from recompute.core.errors import UsageError

VERSION = re.compile(r"v?(\d{1,3}\.\d{1,3}\.\d{1,3})(?:\+commit\.([0-9a-f]{8}))?")
INSTALL_TIMEOUT = 300.0
COMPILE_TIMEOUT = 600.0
MAX_OUTPUT = 256 << 20  # bytes of compiler output read (a layout-only output is far smaller)

# solc's own standard-JSON interface, exposed by solc-js as require("solc").compile(text).
_RUNNER = r"""
const solc = require(process.argv[1]);
const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  const input = Buffer.concat(chunks).toString("utf8");
  const output = solc.compile(input);
  process.stdout.write(JSON.stringify({version: solc.version(), output: JSON.parse(output)}));
});
"""


def parse_version(text: object, what: str) -> tuple[str, str | None]:
    """``v0.8.26+commit.8a97fa7a`` / ``0.8.26`` -> (``0.8.26``, ``8a97fa7a`` or None)."""
    if not isinstance(text, str):
        raise UsageError(f"{what}: the compiler version is missing")
    found = VERSION.fullmatch(text.strip()) or VERSION.match(text.strip())
    if not found:
        raise UsageError(f"{what}: {text[:80]!r} is not a solc version (e.g. 0.8.26+commit.…)")
    return found.group(1), found.group(2)


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "recompute" / "solc"


def _package_version(package: Path) -> str | None:
    try:
        meta = json.loads((package / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta.get("version") if isinstance(meta, dict) else None


def _projects() -> list[Path]:
    return [Path.cwd(), Path(sys.prefix).parent]


def find_solc(version: str, *, install: bool | None = None) -> Path:
    """The folder of a solc-js package of exactly ``version`` (see the module doc)."""
    candidates = []
    for project in _projects():
        candidates += [project / "node_modules" / "solc",
                       project / "node_modules" / f"solc-{version}"]
    cached = cache_dir() / version / "node_modules" / "solc"
    candidates.append(cached)
    for package in candidates:
        if _package_version(package) == version and (package / "index.js").is_file():
            return package
    if install is None:
        install = os.environ.get("RECOMPUTE_SOLC_OFFLINE", "") not in ("1", "true", "yes")
    hint = (f"solc {version} is not installed: run `npm install --prefix {cache_dir() / version} "
            f"solc@{version}` (or add \"solc-{version}\": \"npm:solc@{version}\" to the "
            "project's package.json)")
    if not install:
        raise UsageError(hint)
    npm = shutil.which("npm")
    if npm is None:
        raise UsageError(f"{hint}; npm itself was not found (install Node.js)")
    prefix = cache_dir() / version
    prefix.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(
            [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
             "--loglevel=error", "--no-save", f"solc@{version}"],
            capture_output=True, text=True, timeout=INSTALL_TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise UsageError(f"{hint} (npm did not finish in {INSTALL_TIMEOUT:.0f} s)") from None
    if done.returncode != 0 or _package_version(cached) != version:
        reason = (done.stderr or done.stdout or "").strip().splitlines()[-1:] or ["no output"]
        raise UsageError(f"{hint} (npm: {reason[0][:160]})")
    return cached


def compile_standard_json(package: Path, standard_input: dict[str, Any], version: str,
                          commit: str | None, what: str) -> dict[str, Any]:
    """Run solc-js at ``package`` on ``standard_input``; its standard-JSON output. A compiler
    error (severity ``error``) is one UsageError line naming the first."""
    node = shutil.which("node")
    if node is None:
        raise UsageError("node was not found: solc-js needs Node.js (https://nodejs.org)")
    try:
        done = subprocess.run([node, "-e", _RUNNER, str(package / "index.js")],
                              input=json.dumps(standard_input).encode(), capture_output=True,
                              timeout=COMPILE_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise UsageError(f"{what}: solc {version} ran over {COMPILE_TIMEOUT:.0f} s") from None
    if done.returncode != 0 or len(done.stdout) > MAX_OUTPUT:
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise UsageError(f"{what}: solc-js {version} failed: {tail[0][:200]}")
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        raise UsageError(f"{what}: solc-js {version} did not answer JSON") from None
    ran = str(answer.get("version", ""))
    ran_version, ran_commit = parse_version(ran, f"{what}: solc-js")
    if ran_version != version or (commit is not None and ran_commit != commit):
        want = version + (f"+commit.{commit}" if commit else "")
        raise UsageError(f"{what}: the solc-js package at {package} is {ran}, not {want}")
    output = answer.get("output")
    if not isinstance(output, dict):
        raise UsageError(f"{what}: solc {version} gave no output")
    errors = [e for e in output.get("errors", []) if isinstance(e, dict)
              and e.get("severity") == "error"]
    if errors:
        first = str(errors[0].get("formattedMessage") or errors[0].get("message") or "")
        first = " ".join(first.split())[:240]
        raise UsageError(f"{what}: solc {version} could not compile it: {first}")
    output["_solc_version"] = ran
    return output
