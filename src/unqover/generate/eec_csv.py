"""A user's copy of the Equity Evaluation Corpus: read and check its CSV, and compare it with the generated set.

The project generates the EEC (:func:`unqover.generate.eec.eec_sentences`) because the corpus states no licence;
this module takes a copy that a user supplies instead (``unqover build-datasets eec-emotion --source eec=PATH``):
:func:`read_eec_csv` reads ``Equity-Evaluation-Corpus.csv`` into the generated table's columns, naming the file
and line of the first problem, and :func:`compare_sentences` states how it differs from the generated rows.
"""

from __future__ import annotations

import csv
import os
import re
from pathlib import Path

import pyarrow as pa

from unqover.errors import UnqoverError
from unqover.generate.eec import (
    EMOTIONS,
    FIXED,
    GENDERS,
    RACES,
    SENTENCE_COLUMNS,
    TYPO,
    _sentence_table,
    eec_sentences,
    emotion_of,
)

#: The header of an EEC CSV file.
CSV_HEADER = ("ID", "Sentence", "Template", "Person", "Gender", "Race", "Emotion", "Emotion word")


def read_eec_csv(path: str | os.PathLike) -> pa.Table:
    """Read an EEC CSV (header :data:`CSV_HEADER`, LF or CRLF, either spelling) into the columns of
    :func:`eec_sentences`. Empty Race/Emotion/Emotion word cells become null; the EEC ``ID`` is replaced by our
    content id. Raises :class:`UnqoverError` naming the file and line of the first problem."""
    path = Path(path)
    if not path.is_file():
        raise UnqoverError(f"EEC CSV {path} does not exist; pass the path of Equity-Evaluation-Corpus.csv")
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            lines = list(csv.reader(handle))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise UnqoverError(f"{path}: not a UTF-8 CSV file ({exc})") from None
    if not lines or tuple(c.strip() for c in lines[0]) != CSV_HEADER:
        found = ",".join(lines[0]) if lines else "an empty file"
        raise UnqoverError(f"{path}:1: expected the EEC header {','.join(CSV_HEADER)}, found {found}")
    rows = []
    for number, cells in enumerate(lines[1:], 2):
        if not cells:
            continue
        rows.append(_csv_row(cells, f"{path}:{number}"))
    if not rows:
        raise UnqoverError(f"{path}: no rows after the header")
    return _sentence_table(rows)


def _csv_row(cells: list[str], where: str) -> tuple:
    if len(cells) != len(CSV_HEADER):
        raise UnqoverError(f"{where}: expected {len(CSV_HEADER)} fields, found {len(cells)}")
    _, sentence, template, person, gender, race, emotion, word = (c.strip() for c in cells)
    if not sentence or not template or not person:
        raise UnqoverError(f"{where}: Sentence, Template and Person must not be empty")
    if gender not in GENDERS:
        raise UnqoverError(f"{where}: Gender {gender!r} is not one of {', '.join(GENDERS)}")
    if race and race not in RACES:
        raise UnqoverError(f"{where}: Race {race!r} is not empty or one of {', '.join(RACES)}")
    if bool(emotion) != bool(word):
        raise UnqoverError(f"{where}: Emotion and Emotion word must both be set or both be empty")
    if word:
        if emotion not in EMOTIONS:
            raise UnqoverError(f"{where}: Emotion {emotion!r} is not one of {', '.join(EMOTIONS)}")
        try:
            actual = emotion_of(word)
        except UnqoverError as exc:
            raise UnqoverError(f"{where}: {exc}") from None
        if actual != emotion:
            raise UnqoverError(f"{where}: Emotion word {word!r} is {actual}, not {emotion}")
        if not re.search(rf"\b{re.escape(word)}\b", sentence):
            raise UnqoverError(f"{where}: Sentence {sentence!r} does not contain its Emotion word {word!r}")
    return sentence, template, person, gender, race or None, emotion or None, word or None


def compare_sentences(table: pa.Table, reference: pa.Table | None = None, limit: int = 10) -> list[str]:
    """How ``table`` differs from ``reference`` (default: the generated set in the table's spelling), as lines.

    Rows are matched by id (template, person, word); an empty list means the two hold the same rows. At most
    ``limit`` examples are listed per kind of difference.
    """
    if reference is None:
        words = set(table.column("emotion_word").to_pylist())
        reference = eec_sentences("beecher" if FIXED in words and TYPO not in words else "eec")
    ours = {row["id"]: row for row in table.to_pylist()}
    theirs = {row["id"]: row for row in reference.to_pylist()}
    out = []
    if len(ours) != table.num_rows:
        out.append(f"{table.num_rows - len(ours)} duplicate rows (same template, person and emotion word)")
    missing = [theirs[i]["sentence"] for i in theirs if i not in ours]
    extra = [ours[i]["sentence"] for i in ours if i not in theirs]
    changed = [
        f"{theirs[i]['sentence']!r}: "
        + ", ".join(f"{k} {ours[i][k]!r} (expected {theirs[i][k]!r})" for k in diff)
        for i in theirs
        if i in ours and (diff := [k for k in SENTENCE_COLUMNS if ours[i][k] != theirs[i][k]])
    ]
    for label, items in (("missing", missing), ("extra", extra), ("different", changed)):
        if items:
            shown = "; ".join(str(s) for s in items[:limit])
            out.append(f"{len(items)} {label} rows, e.g. {shown}")
    return out
