"""The state folders of the devnets ``recompute devnet up`` started, so that ``devnet down``
finds them wherever they are (docs/devnet.md §Stopping).

One resolved path a line in ``$XDG_STATE_HOME/recompute/devnets`` (default
``~/.local/state/recompute/devnets``): ``up`` adds its folder, ``down`` removes the folders it
stopped or found stopped. The file is the user's own; it is read bounded, and a line that is not
an absolute path to a folder is left out (no process is looked for there).
"""

from __future__ import annotations

import os
from pathlib import Path

from recompute.disk.whole_file import write_whole

MAX_BYTES = 1 << 20  # far more than any user's devnets
MAX_ENTRIES = 1000


def registry_file() -> Path:
    base = os.environ.get("XDG_STATE_HOME", "")
    if not os.path.isabs(base):  # XDG: a relative value is invalid, the default holds
        base = str(Path.home() / ".local" / "state")
    return Path(base) / "recompute" / "devnets"


def known() -> list[Path]:
    """The recorded state folders, in the order recorded (each once; absent ones left out)."""
    path = registry_file()
    try:
        with open(path, "rb") as file:
            raw = file.read(MAX_BYTES)
    except OSError:
        return []
    out: list[Path] = []
    for line in raw.decode("utf-8", "replace").splitlines()[:MAX_ENTRIES]:
        folder = Path(line)
        if line and folder.is_absolute() and folder.is_dir() and folder not in out:
            out.append(folder)
    return out


def record(state_dir: Path) -> None:
    """Add ``state_dir`` (resolved) to the registry."""
    _write([*(f for f in known() if f != state_dir.resolve()), state_dir.resolve()])


def forget(state_dir: Path) -> None:
    """Remove ``state_dir`` from the registry (a folder no longer there is dropped too)."""
    _write([f for f in known() if f != state_dir.resolve()])


def _write(folders: list[Path]) -> None:
    path = registry_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_whole(path, "".join(f"{folder}\n" for folder in folders[-MAX_ENTRIES:]))
    except OSError:
        pass  # no registry: `down` still stops the folder it is given
