"""solc-js of exactly the version a source names: found where the user put it, or installed into
recompute's own cache and checked on every use; then run on standard JSON.

Where a compiler of release V comes from (docs/executables.md), and nowhere else:

1. a place named explicitly: ``--solc PATH`` or ``$RECOMPUTE_SOLC`` (``os.pathsep``-separated),
   each a solc-js package folder or a ``node_modules`` folder holding ``solc`` or an npm alias
   ``solc-V`` (``"solc-0.8.26": "npm:solc@0.8.26"``), whose ``package.json`` says version V;
2. the user cache, ``$XDG_CACHE_HOME/recompute/solc/V`` (``~/.cache/…``), used only as recompute
   installed it: the folder is yours and no one else may write it, its install record says V,
   the package says V, npm's lockfile names the tarball integrity recorded at install, and the
   sha256 over every installed file equals the recorded one;
3. installed there now: ``npm install solc@V`` into a temporary folder beside it (install
   scripts off), checked and recorded, then moved into place (unless
   ``RECOMPUTE_SOLC_OFFLINE=1``). A failed install leaves nothing behind.

Never the working directory's ``node_modules``, the input's folder, or a folder derived from
where Python lives. npm's solc-js packages are release builds: a nightly or otherwise
pre-release compiler can come only from an explicit place. After every run the compiler's own
version string (``0.8.26+commit.8a97fa7a.Emscripten.clang``) must be the one the source names,
pre-release tag and commit included.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recompute.core import executables
from recompute.core.errors import OptionError, UsageError
from recompute.core.jsontext import json_document, json_line
from recompute.disk.whole_file import write_whole

# v0.8.22-nightly.2023.10.22+commit.b187d065.Emscripten.clang: release, pre-release tag,
# commit, build platform (solc's own version string; metadata and Etherscan give a prefix)
VERSION = re.compile(r"v?(\d{1,3}\.\d{1,3}\.\d{1,3})(?:-([0-9A-Za-z.]{1,64}))?"
                     r"(?:\+commit\.([0-9a-f]{8}))?((?:\.[!-~]{1,64})?)")
INSTALL_TIMEOUT = 300.0
COMPILE_TIMEOUT = 600.0
MAX_OUTPUT = 256 << 20  # bytes of compiler output read (a layout-only output is far smaller)
RECORD = "install.json"  # beside node_modules in a cache entry
RECORD_FORMAT = "recompute-solc-install/1"
MAX_CACHE_FILES = 5000  # an installed solc-js holds ~100 files
MAX_CACHE_BYTES = 256 << 20  # and ~10 MB

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


@dataclass(frozen=True)
class SolcVersion:
    """A compiler as a source names it: ``0.8.26``, ``0.8.26+commit.8a97fa7a``,
    ``0.8.22-nightly.2023.10.22+commit.b187d065``."""

    release: str  # 0.8.26
    prerelease: str | None = None  # nightly.2023.10.22
    commit: str | None = None  # 8a97fa7a
    build: str = ""  # what follows: .Emscripten.clang, .mod (a modified source tree)

    @property
    def full(self) -> str:
        return (self.release + (f"-{self.prerelease}" if self.prerelease else "")
                + (f"+commit.{self.commit}" if self.commit else ""))

    @property
    def is_release(self) -> bool:
        """What npm's solc-js can give: a release build of unmodified source."""
        return self.prerelease is None and "mod" not in self.build.split(".")

    def ran_as(self, ran: SolcVersion) -> bool:
        """The compiler that ran is this one: same release and pre-release tag, and the same
        commit when this names one."""
        return (ran.release == self.release and ran.prerelease == self.prerelease
                and (self.commit is None or ran.commit == self.commit)
                and ran.is_release == self.is_release)


def parse_version(text: object, what: str) -> SolcVersion:
    """``v0.8.26+commit.8a97fa7a`` / ``0.8.26`` / ``0.8.22-nightly.…+commit.…`` -> SolcVersion."""
    if not isinstance(text, str):
        raise UsageError(f"{what}: the compiler version is missing")
    found = VERSION.fullmatch(text.strip())
    if not found:
        raise UsageError(f"{what}: {text[:80]!r} is not a solc version (e.g. 0.8.26+commit.…)")
    return SolcVersion(found.group(1), found.group(2), found.group(3), found.group(4))


def cache_dir() -> Path:
    return executables.user_cache() / "solc"


def _package_json(package: Path) -> dict[str, Any] | None:
    try:
        meta = json.loads((package / "package.json").read_bytes()[:1 << 20])
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def _is_solc(package: Path, versions: tuple[str, ...]) -> bool:
    meta = _package_json(package)
    return (meta is not None and meta.get("version") in versions
            and (package / "index.js").is_file())


def explicit_places(solc: str | None) -> list[Path]:
    """Where the user said solc-js is: ``--solc`` when given, else ``$RECOMPUTE_SOLC``."""
    text = solc if solc is not None else os.environ.get("RECOMPUTE_SOLC", "")
    return [Path(part) for part in text.split(os.pathsep) if part]


def find_solc(wanted: SolcVersion, what: str, solc: str | None = None, *,
              install: bool | None = None) -> Path:
    """The folder of a solc-js package of exactly ``wanted`` (see the module doc)."""
    release = wanted.release
    versions = (release,) if wanted.is_release else (release, f"{release}-{wanted.prerelease}")
    places = explicit_places(solc)
    for place in places:
        for package in (place, place / "solc", place / f"solc-{release}"):
            if _is_solc(package, versions):
                return package
    named = (f" ({'{solc}' if solc is not None else 'RECOMPUTE_SOLC'} names no solc-js "
             "{release})" if places else "")
    if not wanted.is_release:
        raise OptionError(
            "{what}: compiler {compiler} is not a release build, and npm's solc-js has release "
            "builds only" + named + ": give a solc-js package of exactly that build with {solc} "
            "PATH, or compile with it yourself and import the standard-JSON output", ("solc",),
            what=what, compiler=f"{wanted.full}{wanted.build}", release=release)
    entry = cache_dir() / release
    try:
        if entry.is_dir() and not entry.is_symlink() and not any(entry.iterdir()):
            entry.rmdir()  # an empty folder a failed install of an earlier recompute left
    except OSError:
        pass  # checked_entry says what is wrong with it
    if entry.exists() or entry.is_symlink():
        return checked_entry(entry, release)
    if install is None:
        install = os.environ.get("RECOMPUTE_SOLC_OFFLINE", "") not in ("1", "true", "yes")
    if not install:
        raise OptionError(
            "{what}: solc {release} is not installed" + named + " and RECOMPUTE_SOLC_OFFLINE "
            "forbids installing it: unset RECOMPUTE_SOLC_OFFLINE (recompute installs "
            "solc@{release} into {cache}), or run `npm install --prefix DIR solc@{release}` and "
            "give DIR/node_modules with {solc}", ("solc",), what=what, release=release,
            cache=cache_dir())
    return install_solc(release, what)


# ---- the user cache -------------------------------------------------------------------------

def _files_sha256(folder: Path) -> tuple[str, int]:
    """sha256 over every file and symlink under ``folder`` (path, kind, content or target), in
    path order, and their count; bounded in files and bytes."""
    digest = hashlib.sha256()
    count = size = 0
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        here = Path(root)
        names = sorted(files + [d for d in dirs if (here / d).is_symlink()])
        for name in names:
            path = here / name
            rel = path.relative_to(folder).as_posix()
            count += 1
            if count > MAX_CACHE_FILES:
                raise ValueError(f"more than {MAX_CACHE_FILES} files")
            if path.is_symlink():
                digest.update(f"L {rel}\0{os.readlink(path)}\n".encode())
                continue
            if not path.is_file():
                raise ValueError(f"{rel} is neither a file nor a link")
            size += path.stat().st_size
            if size > MAX_CACHE_BYTES:
                raise ValueError(f"more than {MAX_CACHE_BYTES} bytes")
            with path.open("rb") as handle:
                content = hashlib.file_digest(handle, "sha256").hexdigest()
            digest.update(f"F {rel}\0{content}\n".encode())
    return digest.hexdigest(), count


def _lock_integrity(entry: Path) -> str | None:
    """The tarball integrity npm's lockfile (``node_modules/.package-lock.json``) gives solc."""
    try:
        lock = json.loads((entry / "node_modules" / ".package-lock.json").read_bytes()[:8 << 20])
        found = lock["packages"]["node_modules/solc"].get("integrity")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return found if isinstance(found, str) else None


def _record(entry: Path, release: str) -> dict[str, Any]:
    files, count = _files_sha256(entry / "node_modules")
    return {"format": RECORD_FORMAT, "package": "solc", "version": release,
            "integrity": _lock_integrity(entry), "files_sha256": files, "files": count}


def checked_entry(entry: Path, release: str) -> Path:
    """The solc-js package of cache entry ``entry``, only when it is as recompute installed
    it (module doc, 2.); anything else is one line saying what is wrong and what to do."""
    def refuse(problem: str) -> UsageError:
        return UsageError(f"the cached solc {release} at {entry} {problem}: it is not run; "
                          "remove that folder and run again (recompute installs it afresh)")

    problem = executables.private_to_me(entry)
    if problem is not None:
        raise refuse(problem)
    try:
        recorded = json.loads((entry / RECORD).read_bytes()[:1 << 16])
    except (OSError, ValueError):
        raise refuse(f"has no install record ({RECORD}): recompute did not install it") from None
    if not isinstance(recorded, dict) or recorded.get("format") != RECORD_FORMAT \
            or recorded.get("version") != release:
        raise refuse(f"has an install record that is not recompute's for solc {release}")
    package = entry / "node_modules" / "solc"
    meta = _package_json(package)
    if meta is None or meta.get("name") != "solc" or meta.get("version") != release:
        raise refuse(f"holds no solc {release} package")
    try:
        now = _record(entry, release)
    except (OSError, ValueError) as exc:
        raise refuse(f"cannot be checked ({exc})") from None
    if now["integrity"] != recorded.get("integrity"):
        raise refuse("names another npm tarball than the one installed")
    if now["files_sha256"] != recorded.get("files_sha256"):
        raise refuse("was changed since it was installed (its files' sha256 differs)")
    return package


_NETWORK = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENETUNREACH",
            "EHOSTUNREACH", "UNABLE_TO_GET_ISSUER_CERT_LOCALLY", "SELF_SIGNED_CERT_IN_CHAIN")


def npm_reason(output: str) -> tuple[str, str | None]:
    """npm's own reason from its error output (``npm error …`` / ``npm ERR! …``): the first
    line that is not the error code or the log's path, and the code (``ETARGET``, ``E404``)."""
    code, lines = None, []
    for raw in output.splitlines():
        line = raw.strip()
        for prefix in ("npm error ", "npm ERR! ", "npm error", "npm ERR!"):
            if line.startswith(prefix):
                line = line[len(prefix):].strip()
                break
        else:
            continue
        if line.startswith("code ") and code is None:
            code = line[5:].strip()[:40]
        elif line and not line.startswith(("A complete log", "Log files were not written")) \
                and line not in ("404", "notarget"):
            lines.append(line.removeprefix("notarget ").strip())
    fallback = [line.strip() for line in output.splitlines() if line.strip()]
    reason = (lines or fallback[-1:] or ["no output"])[0][:200]
    return reason, code


def _npm_failed(release: str, what: str, output: str) -> OptionError:
    reason, code = npm_reason(output)
    said = f"npm {code}: " if code else "npm: "
    said += reason.rstrip(".")
    if code in ("ETARGET", "E404"):
        todo = ("check the compiler version the source names (npm's solc has release versions "
                "only); a compiler npm does not have can be given with {solc} PATH")
    elif code in _NETWORK or any(c in output for c in _NETWORK):
        todo = ("npm could not reach its registry: connect and run again, or install solc-js "
                "{release} yourself and give it with {solc} PATH")
    else:
        todo = "install solc-js {release} yourself and give it with {solc} PATH"
    return OptionError("{what}: solc {release} cannot be installed: {said}; " + todo, ("solc",),
                       what=what, release=release, said=said)


def install_solc(release: str, what: str) -> Path:
    """``npm install solc@release`` into a temporary folder of the cache, checked and recorded,
    then moved into place; nothing is left behind when it fails."""
    npm = executables.on_path("npm")
    if npm is None:
        raise OptionError("{what}: solc {release} is not installed and npm was not found on "
                          "PATH (install Node.js, or give a solc-js package with {solc} PATH)",
                          ("solc",), what=what, release=release)
    root = cache_dir()
    try:
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        work = Path(tempfile.mkdtemp(prefix=f".install-{release}-", dir=root))
    except OSError as exc:
        raise OptionError("{what}: solc {release} cannot be installed: the cache folder {root} "
                          "cannot be written ({problem}); set XDG_CACHE_HOME to a folder of "
                          "yours, or give a solc-js package with {solc} PATH", ("solc",),
                          what=what, release=release, root=root,
                          problem=exc.strerror or exc) from None
    try:
        try:
            done = subprocess.run(
                [str(npm), "install", "--prefix", str(work), "--no-audit", "--no-fund",
                 "--loglevel=error", "--no-save", "--ignore-scripts", f"solc@{release}"],
                capture_output=True, text=True, timeout=INSTALL_TIMEOUT,
                stdin=subprocess.DEVNULL, cwd=work)
        except subprocess.TimeoutExpired:
            raise UsageError(f"{what}: solc {release} cannot be installed (npm did not finish in "
                             f"{INSTALL_TIMEOUT:.0f} s)") from None
        if done.returncode != 0:
            raise _npm_failed(release, what, (done.stderr or "") + "\n" + (done.stdout or ""))
        meta = _package_json(work / "node_modules" / "solc")
        if meta is None or meta.get("name") != "solc" or meta.get("version") != release:
            raise UsageError(f"{what}: npm installed no solc {release} (package.json says "
                             f"{str((meta or {}).get('version'))[:40]})")
        try:
            record = _record(work, release)
        except (OSError, ValueError) as exc:
            raise UsageError(f"{what}: the installed solc {release} cannot be recorded "
                             f"({exc})") from None
        entry = root / release
        try:
            write_whole(work / RECORD, json_document(record, sort_keys=True) + "\n")
            work.rename(entry)
        except OSError as exc:
            if not entry.exists():
                raise UsageError(f"{what}: solc {release} cannot be installed into {entry} "
                                 f"({exc.strerror or exc})") from None
            # another run installed it meanwhile: that one is checked like any
        return checked_entry(entry, release)
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
        try:
            root.rmdir()  # only when empty: a failed first install leaves no cache folder
        except OSError:
            pass


# ---- running it -----------------------------------------------------------------------------

def compile_standard_json(package: Path, standard_input: dict[str, Any], wanted: SolcVersion,
                          what: str) -> tuple[dict[str, Any], str]:
    """Run solc-js at ``package`` on ``standard_input``: its standard-JSON output (checked to be
    an object whose ``errors`` is a list of objects) and its version string, which must be
    ``wanted``. A compiler error (severity ``error``) is one UsageError line naming the first."""
    node = executables.on_path("node")
    if node is None:
        raise UsageError("node was not found on PATH: solc-js needs Node.js (https://nodejs.org)")
    release = wanted.release
    try:
        done = subprocess.run([str(node), "-e", _RUNNER, str(package / "index.js")],
                              input=json_line(standard_input).encode(), capture_output=True,
                              timeout=COMPILE_TIMEOUT, cwd=package)
    except subprocess.TimeoutExpired:
        raise UsageError(f"{what}: solc {release} ran over {COMPILE_TIMEOUT:.0f} s") from None
    if done.returncode != 0 or len(done.stdout) > MAX_OUTPUT:
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise UsageError(f"{what}: solc-js {release} failed: {tail[0][:200]}")
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        raise UsageError(f"{what}: solc-js {release} did not answer JSON") from None
    if not isinstance(answer, dict):
        raise UsageError(f"{what}: solc-js {release} did not answer a JSON object")
    ran_text = answer.get("version")
    ran = parse_version(ran_text, f"{what}: the solc-js at {package}")
    if not wanted.ran_as(ran):
        raise OptionError(
            "{what}: the source names compiler {full}, but the solc-js at {package} is "
            "{ran}: not that build, so its layout would not be the source's; give exactly that "
            "build with {solc} PATH", ("solc",), what=what, full=wanted.full, package=package,
            ran=str(ran_text)[:80])
    output = answer.get("output")
    if not isinstance(output, dict):
        raise UsageError(f"{what}: solc {release} gave no output object")
    errors = output.get("errors", [])
    if not isinstance(errors, list) or not all(isinstance(e, dict) for e in errors):
        raise UsageError(f"{what}: solc {release}'s output: errors must be a list of objects")
    failed = [e for e in errors if e.get("severity") == "error"]
    if failed:
        first = str(failed[0].get("formattedMessage") or failed[0].get("message") or "")
        first = " ".join(first.split())[:240]
        raise UsageError(f"{what}: solc {release} could not compile it: {first}")
    return output, str(ran_text)
