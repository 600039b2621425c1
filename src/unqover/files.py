"""Atomic file writes (a crash or Ctrl-C never leaves a truncated file under its final name), and table uploads."""

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


def read_table_file(path: str | os.PathLike, csv_dtype: object = None):
    """A CSV, JSON Lines (``.jsonl``), JSON or Parquet file as a pandas DataFrame (the modules' apps take uploads)."""
    import pandas as pd

    suffix = Path(path).suffix.lower()
    if suffix == ".parquet":
        return pd.read_parquet(path)
    if suffix in (".jsonl", ".json"):
        return pd.read_json(path, lines=suffix == ".jsonl")
    if csv_dtype is str:
        return pd.read_csv(path, dtype=str, keep_default_na=False)
    return pd.read_csv(path, dtype=csv_dtype)
