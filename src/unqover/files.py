"""Atomic file writes: a crash or Ctrl-C never leaves a truncated file under its final name."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write UTF-8 text through a temporary file in the same folder and a rename: never a truncated file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would make reports private
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def write_json_atomic(path: str | os.PathLike, value: object) -> Path:
    """Write JSON (no NaN: undefined values must already be None) atomically."""
    return write_text_atomic(path, json.dumps(value, indent=1, sort_keys=False, allow_nan=False))
