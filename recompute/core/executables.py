"""Where a program recompute runs may come from (docs/executables.md).

recompute runs other programs only from places the user chose: a path named explicitly (an
option or an environment variable), ``PATH`` — its absolute folders only (an empty or relative
entry would mean the working directory) — or recompute's own user cache, which it fills itself.
Never from the working directory, the folder of an input file, or a folder derived from where
the Python interpreter lives.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def on_path(name: str) -> Path | None:
    """``name`` found in an absolute folder of ``PATH`` (executable regular file), else None.

    Unlike :func:`shutil.which`, an empty or relative ``PATH`` entry (``::``, ``.``, ``bin``) is
    skipped: it would resolve against the working directory, which an input's author may
    control."""
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not folder or not os.path.isabs(folder):
            continue
        candidate = Path(folder) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def user_cache() -> Path:
    """recompute's user cache: ``$XDG_CACHE_HOME/recompute`` when that is an absolute path
    (the XDG spec says to ignore a relative one), else ``~/.cache/recompute``."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / "recompute"


def private_to_me(path: Path) -> str | None:
    """None when ``path`` is a folder owned by this user that no one else may write; else what
    is wrong with it (said in a sentence)."""
    try:
        info = path.lstat()
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if not stat.S_ISDIR(info.st_mode):
        return "is not a folder"
    if info.st_uid != os.getuid():
        return f"belongs to user id {info.st_uid}, not to you ({os.getuid()})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "may be written by other users"
    return None
