"""The premise corpora of the NLI dataset's natural-text configs: where each comes from (a local file or the Hub),
what its card says about it, and how their texts become sentences.

Sentence splitting (:func:`split_sentences`, used for ANLI contexts and QNLI sentences): a break after ``.``,
``!`` or ``?`` (and any closing quotes or brackets) followed by whitespace and a capital letter, digit or opening
quote, except after a known abbreviation (``Mr.``, ``Dr.``, ``St.``, ``Inc.`` ...), a single-letter initial
(``J.``) or a dotted acronym (``U.S.``). It is deliberately simple; the premise filters drop most of its misses
(long or name-bearing sentences).
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from unqover.env import offline
from unqover.errors import UnqoverError


@dataclass(frozen=True)
class SourceSpec:
    """Where a corpus's premises come from on the Hub, and what the card says about it."""

    hub_id: str
    hub_config: str
    splits: tuple[str, ...]
    column: str
    split_sentences: bool
    role: str
    title: str
    license: str
    license_note: str


#: Premise corpora (spec §4.2). ``column`` is the premise text column; local files may use ``sentence1`` too.
SOURCES: dict[str, SourceSpec] = {
    "mnli": SourceSpec(
        "nyu-mll/glue",
        "mnli",
        ("train",),
        "premise",
        False,
        "in-distribution",
        "MultiNLI",
        "other",
        "MultiNLI: mostly OANC text (permissive) plus fiction under other permissive licences, some CC BY-SA 3.0 "
        "(see the MultiNLI data description)",
    ),
    "snli": SourceSpec(
        "stanfordnlp/snli",
        "plain_text",
        ("train",),
        "premise",
        False,
        "in-distribution",
        "SNLI",
        "cc-by-sa-4.0",
        "SNLI: CC BY-SA 4.0",
    ),
    "anli": SourceSpec(
        "facebook/anli",
        "plain_text",
        ("train_r1", "train_r2", "train_r3"),
        "premise",
        True,
        "out-of-distribution",
        "ANLI",
        "cc-by-nc-4.0",
        "ANLI: CC BY-NC 4.0 (non-commercial)",
    ),
    "qnli": SourceSpec(
        "nyu-mll/glue",
        "qnli",
        ("train",),
        "sentence",
        True,
        "out-of-distribution",
        "QNLI",
        "cc-by-sa-4.0",
        "QNLI: CC BY-SA 4.0 (Wikipedia text via SQuAD)",
    ),
}

_COLUMN_ALIASES = {"premise": ("premise", "sentence1"), "sentence": ("sentence",)}
_LOCAL_SUFFIXES = (".parquet", ".jsonl", ".json", ".csv", ".tsv")

# --- sentences ---------------------------------------------------------------------------------------------

_ABBREVIATIONS = frozenset(
    {
        "mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "mt", "ft", "lt", "gen", "col", "capt", "sgt", "rev",
        "gov", "sen", "rep", "inc", "ltd", "co", "corp", "bros", "vs", "etc", "no", "nos", "vol", "fig", "approx",
        "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "ca", "cf", "al",
    }
)  # fmt: skip

_BREAK = re.compile(r"[.!?]+[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences with the simple rule of the module docstring (whitespace normalized)."""
    text = " ".join(str(text).split())
    out: list[str] = []
    start = 0
    for match in _BREAK.finditer(text):
        if text[match.start()] == ".":
            word = text[start : match.start()].rsplit(" ", 1)[-1].lstrip("\"'([").lower()
            if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()) or "." in word:
                continue
        out.append(text[start : match.end()].strip())
        start = match.end()
    rest = text[start:].strip()
    if rest:
        out.append(rest)
    return out


def _dedup(texts: Iterable[object]) -> list[str]:
    seen: set[str] = set()
    out = []
    for raw in texts:
        if raw is None:
            continue
        text = " ".join(str(raw).split())
        if text and text not in seen:
            seen.add(text)
            out.append(text)
    return out


def _how_to_pass(source: str) -> str:
    spec = SOURCES[source]
    return (
        f"pass a local file instead: sources={{'{source}': 'path/to/{source}.parquet'}} (Parquet, JSON Lines, "
        f"CSV/TSV with a '{spec.column}' column, or a folder saved with Dataset.save_to_disk)"
    )


def _pick_column(names: Sequence[str], column: str, where: object) -> str:
    for candidate in _COLUMN_ALIASES.get(column, (column,)):
        if candidate in names:
            return candidate
    raise UnqoverError(f"{where} has no '{column}' column (columns: {', '.join(names) or 'none'})")


def _read_file(path: Path, column: str) -> list[object]:
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        names = pq.read_schema(path).names
        return pq.read_table(path, columns=[_pick_column(names, column, path)]).column(0).to_pylist()
    if suffix in {".jsonl", ".json"}:
        rows = []
        with path.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise UnqoverError(f"{path}:{number}: not JSON Lines ({exc})") from None
        if not rows:
            return []
        name = _pick_column(list(rows[0]), column, path)
        return [row.get(name) for row in rows]
    if suffix in {".csv", ".tsv"}:
        with path.open(encoding="utf-8", newline="") as handle:
            if suffix == ".tsv":
                reader = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
            else:
                reader = csv.DictReader(handle)
            name = _pick_column(list(reader.fieldnames or []), column, path)
            return [row.get(name) for row in reader]
    raise UnqoverError(f"{path}: unsupported file type; use one of {', '.join(_LOCAL_SUFFIXES)}")


def _read_local(path: Path, column: str) -> list[object]:
    if not path.exists():
        raise UnqoverError(f"premise source {path} does not exist")
    if path.is_file():
        return _read_file(path, column)
    if any((path / marker).exists() for marker in ("dataset_info.json", "state.json", "dataset_dict.json")):
        import datasets

        saved = datasets.load_from_disk(str(path))
        parts = list(saved.values()) if isinstance(saved, datasets.DatasetDict) else [saved]
        texts: list[object] = []
        for part in parts:
            texts.extend(part[_pick_column(part.column_names, column, path)])
        return texts
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in _LOCAL_SUFFIXES)
    if not files:
        raise UnqoverError(f"{path} holds no {', '.join(_LOCAL_SUFFIXES)} files and is not a saved dataset")
    return [text for file in files for text in _read_file(file, column)]


def _read_hub(source: str) -> list[object]:
    spec = SOURCES[source]
    if offline():
        raise UnqoverError(
            f"cannot load {source} from the Hub ({spec.hub_id}) while offline; {_how_to_pass(source)}"
        )
    import datasets

    try:
        ds = datasets.load_dataset(spec.hub_id, spec.hub_config, split="+".join(spec.splits))
    except Exception as exc:
        raise UnqoverError(
            f"cannot load {source} from the Hub ({spec.hub_id}, {spec.hub_config}): {exc}; {_how_to_pass(source)}"
        ) from exc
    return list(ds[spec.column])


def load_source_sentences(source: str, path: str | os.PathLike | None = None) -> list[str]:
    """Candidate premise sentences of one corpus, deduplicated, in first-seen order.

    ``source`` is ``mnli``, ``snli``, ``anli`` or ``qnli``. With ``path``, read a local Parquet / JSON Lines /
    CSV / TSV file (or a folder of them, or a folder written by ``save_to_disk``) with the premise column of
    :data:`SOURCES` (``premise``, or ``sentence1`` as in the raw SNLI/MNLI files; ``sentence`` for QNLI); without
    it, load the Hub dataset's training split(s). ANLI and QNLI texts are split with :func:`split_sentences`.
    Raises :class:`UnqoverError` when offline without ``path``, saying how to pass a local file.
    """
    if source not in SOURCES:
        raise UnqoverError(f"unknown premise source {source!r}: use one of {', '.join(SOURCES)}")
    spec = SOURCES[source]
    texts = _read_local(Path(path), spec.column) if path is not None else _read_hub(source)
    if spec.split_sentences:
        texts = [sentence for text in texts if text is not None for sentence in split_sentences(str(text))]
    return _dedup(texts)
