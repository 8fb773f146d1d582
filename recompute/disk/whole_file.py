"""Every file recompute writes whole (reports, the light-client store, the devnet's state files,
vectors, layouts, suites) goes through here (docs/watch.md §Files recompute writes):

- the bytes go first to a temporary file that :func:`tempfile.mkstemp` creates in the target's
  own folder (``O_CREAT | O_EXCL``, a random name: no planted file or link is ever opened),
  are flushed and ``fsync``-ed, and the temporary is renamed over the target (``os.replace``:
  a reader sees the old file or the new one, whole; the folder is ``fsync``-ed after);
- a target that is a symbolic link is refused (:class:`LinkRefused`), unless the caller says
  the path is the one the user *named*: the very path given on the command line (``--html
  report.html``, ``--lc-store s.json``, ``--out v.json``) is the link itself, and then the
  file the link points to is written (replaced whole) and the link stays. A path recompute
  makes up (a file in a state folder, a name derived from another) is never named;
- a new file gets the mode a plain ``open`` would give (``0666`` less the umask), a file
  replaced keeps its mode.

An interrupted write leaves the target as it was and no temporary behind (removed on every
error; a ``kill -9`` can leave one ``.NAME.*.partial``, never a half target).
"""

from __future__ import annotations

import functools
import os
import stat
import tempfile
from pathlib import Path
from types import TracebackType
from typing import IO, Literal, overload


class LinkRefused(OSError):
    """The target is a symbolic link the user did not name (an ``OSError``: callers that say
    "cannot write PATH: why" say it as for any other)."""

    def __init__(self, path: Path):
        super().__init__(f"{path} is a symbolic link; recompute writes through a link only "
                         "when it is the path you gave, so remove it or give it yourself")
        self.strerror = str(self)
        self.filename = str(path)


def target(path: str | os.PathLike[str], named: bool = False) -> Path:
    """The file a write to ``path`` replaces: ``path``, or where it links to when ``named``;
    :class:`LinkRefused` for a link not named."""
    path = Path(path)
    if path.is_symlink():
        if not named:
            raise LinkRefused(path)
        return Path(os.path.realpath(path))
    return path


class WholeFile:
    """A file written in parts and put in place whole by :meth:`commit` (or not at all:
    :meth:`discard`, or leaving the ``with`` block by an exception)."""

    def __init__(self, path: str | os.PathLike[str], *, named: bool = False,
                 binary: bool = False, encoding: str = "utf-8"):
        self.path = target(path, named)
        mode = _mode(self.path)
        fd, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.",
                                         suffix=".partial")
        self.temporary = Path(temporary)
        try:
            os.fchmod(fd, mode)
            self.handle: IO[str] | IO[bytes] = (
                os.fdopen(fd, "wb") if binary
                else os.fdopen(fd, "w", encoding=encoding, newline=""))
        except BaseException:
            os.close(fd)
            self.temporary.unlink(missing_ok=True)
            raise

    def write(self, data: str | bytes) -> None:
        self.handle.write(data)  # type: ignore[arg-type]

    def commit(self) -> None:
        """Flush, fsync and rename the temporary over the target."""
        try:
            self.handle.flush()
            os.fsync(self.handle.fileno())
            self.handle.close()
            os.replace(self.temporary, self.path)
        except BaseException:
            self.discard()
            raise
        _sync_folder(self.path.parent)

    def discard(self) -> None:
        self.handle.close()
        self.temporary.unlink(missing_ok=True)

    def __enter__(self) -> WholeFile:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()


@overload
def write_whole(path: str | os.PathLike[str], data: str, *, named: bool = False,
                encoding: str = "utf-8") -> Path: ...
@overload
def write_whole(path: str | os.PathLike[str], data: bytes, *, named: bool = False,
                encoding: Literal["utf-8"] = "utf-8") -> Path: ...
def write_whole(path: str | os.PathLike[str], data: str | bytes, *, named: bool = False,
                encoding: str = "utf-8") -> Path:
    """Write ``data`` to ``path`` whole (the module's rule); the file written."""
    with WholeFile(path, named=named, binary=isinstance(data, bytes),
                   encoding=encoding) as out:
        out.write(data)
    return out.path


def _mode(path: Path) -> int:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return 0o666 & ~_umask()


@functools.cache
def _umask() -> int:  # once: the process's umask, set and put back
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _sync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover -- a folder one may write in but not open
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover -- file systems that cannot sync a folder
        pass
    finally:
        os.close(fd)


def open_log(path: str | os.PathLike[str]) -> IO[bytes]:
    """A log file (the devnet's, anvil's) opened to append, never through a link: a planted
    link there is an ``OSError`` (``O_NOFOLLOW``), not a write into what it points to."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o666)
    return os.fdopen(fd, "ab")
