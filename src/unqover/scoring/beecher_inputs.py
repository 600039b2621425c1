"""What both of Beecher's models take in: the scoring mode, and his corpus and vector files as text.

Shared by the TF-IDF model (:mod:`unqover.scoring.beecher_tfidf`), the GloVe vectors
(:mod:`unqover.scoring.beecher_glove`) and their loader (:mod:`unqover.scoring.beecher`): the two scoring modes
(``paper`` reproduces his code, ``default`` fixes it), a corpus given as a file or a folder of ``.txt`` files, its
lines read as UTF-8, and the files' digest recorded in the run's provenance.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

from unqover.errors import UnqoverError
from unqover.scoring.choices import BEECHER_MODES


def _check_mode(mode: str) -> str:
    if mode not in BEECHER_MODES:
        raise UnqoverError(f"scoring mode must be one of {', '.join(BEECHER_MODES)}, got {mode!r}")
    return mode


def _text_files(path: Path) -> list[Path]:
    """The corpus files of ``path``: the file itself, or a folder's ``*.txt`` files in name order."""
    if not path.exists():
        raise UnqoverError(f"{path} does not exist; give a text file or a folder of .txt files")
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() == ".txt")
        if not files:
            raise UnqoverError(f"{path} is a folder without .txt files")
        return files
    return [path]


def file_digest(files: list[Path]) -> tuple[str, int]:
    """SHA-256 and total size of ``files``: of the file itself when one, else of (name, digest) per file in order."""
    sizes = 0
    digests = []
    for f in files:
        h = hashlib.sha256()
        with open(f, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                h.update(block)
        sizes += f.stat().st_size
        digests.append((f.name, h.hexdigest()))
    if len(files) == 1:
        return digests[0][1], sizes
    manifest = "".join(f"{name}\t{digest}\n" for name, digest in digests)
    return hashlib.sha256(manifest.encode()).hexdigest(), sizes


def _lines(files: list[Path]) -> Iterator[str]:
    """Every line of ``files`` as Python's text mode reads it (universal newlines, line ends kept), UTF-8."""
    for f in files:
        try:
            with open(f, encoding="utf-8") as handle:
                yield from handle
        except UnicodeDecodeError as err:
            raise UnqoverError(f"{f} is not UTF-8 text: {err}") from None
