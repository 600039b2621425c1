"""What the evaluate modules' apps read from a web user's upload: one table file, bounded and checked.

The apps are surfaces: they read uploads here (the job layer) and word their answers with :mod:`unqover.report`.
"""

from __future__ import annotations

import os
from pathlib import Path

from unqover.errors import UnqoverError, first_line

#: the largest upload an app reads (a full UnQover class's scored rows as Parquet is well under this)
MAX_UPLOAD_BYTES = 512 * 1024**2
UPLOAD_SUFFIXES = (".csv", ".jsonl", ".json", ".parquet")


def read_upload(path: str | os.PathLike, csv_dtype: object = None, max_bytes: int = MAX_UPLOAD_BYTES):
    """A CSV, JSON Lines (``.jsonl``), JSON or Parquet file as a pandas DataFrame; anything else, a file over
    ``max_bytes`` or one that does not parse is refused with one line (:class:`UnqoverError`).

    ``csv_dtype=str`` reads every CSV cell as text (empty cells stay ""); other values go to pandas as ``dtype``.
    """
    import pandas as pd

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in UPLOAD_SUFFIXES:
        raise UnqoverError(f"{path.name}: upload a {', '.join(UPLOAD_SUFFIXES)} file")
    size = path.stat().st_size
    if size > max_bytes:
        from unqover.format import fmt_size

        raise UnqoverError(
            f"{path.name} is {fmt_size(size)}; the largest upload read here is {fmt_size(max_bytes)}"
        )
    try:
        if suffix == ".parquet":
            return pd.read_parquet(path)
        if suffix in (".jsonl", ".json"):
            return pd.read_json(path, lines=suffix == ".jsonl")
        if csv_dtype is str:
            return pd.read_csv(path, dtype=str, keep_default_na=False)
        return pd.read_csv(path, dtype=csv_dtype)
    except (ValueError, OSError, UnicodeDecodeError) as err:  # pyarrow's ArrowInvalid is a ValueError
        raise UnqoverError(f"{path.name} is not a readable {suffix[1:]} table: {first_line(err)}") from None
