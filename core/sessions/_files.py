"""The safe write every command uses: a temp file beside the target, fsync, rename; and
the backup kept beside a file rewritten in place."""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path

#: The names `backup` and `atomic_write` leave beside a file: never a session to list.
_OURS = re.compile(r"\.bak(\.\d+)?$|^\..+\.tmp$")


def written_by_toolpair(name: str) -> bool:
    """Whether a file name is a backup or a temp file this module writes."""
    return _OURS.search(name) is not None


def backup(path: Path) -> Path:
    """Keep the original next to the file: ``FILE.bak``, or ``FILE.bak.N`` when that is
    taken. A hard link where possible (the rename that follows leaves it the old
    content), else a synced copy."""
    kept = path.with_name(path.name + ".bak")
    n = 0
    while kept.exists():
        n += 1
        kept = path.with_name(f"{path.name}.bak.{n}")
    try:
        os.link(path, kept)
    except OSError:
        atomic_write(kept, [path.read_bytes()], mode_from=path)
    return kept


def _umask() -> int:
    """The process's umask (read by setting it, and set straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: Path, data: Iterable[bytes], *, mode_from: Path | None = None) -> None:
    """Write ``data`` to ``path`` so that a crash leaves either the old file or the new
    one: a temp file in the same directory, fsync, rename, fsync of the directory."""
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in data:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        source = mode_from or (path if path.exists() else None)
        with contextlib.suppress(OSError):
            # mkstemp creates the file 0600: a new file gets what open() would give it
            # (0666 less the umask), a rewritten one keeps its own mode.
            mode = os.stat(source).st_mode & 0o7777 if source is not None else 0o666 & ~_umask()
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError, AttributeError):
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
