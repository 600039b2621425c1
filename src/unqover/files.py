"""Atomic file writes (a crash or Ctrl-C never leaves a truncated file under its final name), and table uploads.

:func:`atomic_path` is the one way the package writes a file in place: every writer (text, JSON, the predictions
file, the runner's chunks and state) goes through it.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from unqover.errors import UnqoverError


def _umask() -> int:
    """This process's umask, read without changing it where the system allows (Linux: /proc)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    umask = os.umask(0o022)  # no other way to read it: set and restore at once
    os.umask(umask)
    return umask


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path to write ``path``'s new content to; it replaces ``path`` when the block ends normally.

    The temporary file ``.NAME.XXXXXXXX.tmp`` lies in the same folder (so the final ``os.replace`` is atomic)
    and has the permissions a newly created file would get (``0666 & ~umask``: 0644 under umask 022), not
    mkstemp's private 0600. If the block raises anything (Ctrl-C included), the temporary file is removed
    and ``path`` keeps its old content. The folder must exist. The writer may open, truncate or overwrite
    the temporary file, but should not delete and recreate it (that would lose the permissions).
    """
    path = Path(path)
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(name)
    try:
        os.close(handle)
        os.chmod(tmp, 0o666 & ~_umask())
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)  # only still there after a failure: os.replace moved it


def check_writable(path: str | os.PathLike, *, folder: bool, option: str = "--output") -> Path:
    """Refuse, before any work, an output that cannot be written, with one clear error.

    ``folder``: ``path`` is a folder to create or fill (a run folder, a dataset root), else a file to write.
    Refused: a file where a folder is wanted (or the reverse), a file in the way of the folders to create, a
    symbolic link to nothing in their place, and a location where no file can be created (permissions, a
    read-only or special file system). The test creates and removes one temporary file in the nearest existing
    folder; nothing else is created.
    """
    path = Path(path)
    if path.exists():
        if folder and not path.is_dir():
            raise UnqoverError(f"{option} {path} is a file, not a folder: choose another {option}")
        if not folder and path.is_dir():
            raise UnqoverError(f"{option} {path} is a folder: give a file name")
    existing = (path if folder else path.parent).absolute()
    while not existing.exists() and existing != existing.parent:
        if existing.is_symlink():  # a dangling link: creating the folders would fail with "File exists"
            raise UnqoverError(
                f"cannot write {option} {path}: {existing} is a symbolic link to {os.readlink(existing)}, which "
                "does not exist; create its target or choose another " + option
            )
        existing = existing.parent
    if not existing.is_dir():
        raise UnqoverError(f"cannot write {option} {path}: {existing} is a file, not a folder")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as err:
        raise UnqoverError(
            f"cannot write {option} {path}: no file can be created in {existing} ({err.strerror or err})"
        ) from None
    if path.is_file() and not os.access(path, os.W_OK):
        raise UnqoverError(f"cannot write {option} {path}: the file is read-only")
    return path


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write UTF-8 text through a temporary file in the same folder and a rename: never a truncated file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path


def write_json_atomic(path: str | os.PathLike, value: object) -> Path:
    """Write JSON (no NaN: undefined values must already be None) atomically."""
    return write_text_atomic(path, json.dumps(value, indent=1, sort_keys=False, allow_nan=False))
