"""Beecher's GloVe word-vector model: vector files read his way or strictly, and the cosine scores of the choices.

``paper`` mode reproduces his code (see :mod:`unqover.scoring.beecher`): vector-file lines split on whitespace, a
line with any non-numeric field skipped, keys lower-cased, a later duplicate key overwrites an earlier one. A
sentence is cleaned of ``[^a-zA-Z0-9 ]``, lower-cased and split on single spaces; a centroid is the mean of its
known tokens' vectors; a choice scores the cosine between the question's centroid and the filled sentence's
centroid (pure-Python sums, as his). A choice missing from the vectors therefore scores about 1 and ranks first.
``default`` mode fixes what is wrong (:data:`unqover.scoring.beecher.DEFAULT_FIXES`). Vectors come from a GloVe or
word2vec text file, or from a sentence-transformers average-word-embeddings model (a local folder or a Hub repo).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from unqover.errors import UnqoverError
from unqover.scoring.beecher_inputs import _check_mode, _lines

#: Score given in ``default`` mode to a GloVe choice with no vector: below every cosine, so it never ranks first.
UNKNOWN_SCORE = -2.0


_NON_ALNUM = re.compile(r"[^a-zA-Z0-9 ]")


def paper_tokens(text: str) -> list[str]:
    """His tokeniser: drop every character but ASCII letters, digits and spaces, lower-case, split on single spaces."""
    return _NON_ALNUM.sub("", text).lower().split(" ")


@dataclass
class GloveVectors:
    """Word vectors read from a GloVe text file or a word2vec text file."""

    words: dict[str, int]
    matrix: np.ndarray
    mode: str = "default"
    stats: dict = field(default_factory=dict)

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    @classmethod
    def from_path(
        cls, path: str | Path, mode: str = "default", vocabulary: Iterable[str] | None = None
    ) -> GloveVectors:
        """Read a vector file; ``vocabulary`` (lower-case words) keeps only those vectors in memory.

        Paper mode reads as his code: a line is split on whitespace, skipped when a field after the first does not
        parse as a float, its key lower-cased, a later duplicate key replacing an earlier one. Default mode is
        strict (see :data:`unqover.scoring.beecher.DEFAULT_FIXES`). Both modes take a first line of two integers
        that is followed by vectors of that width as a word2vec header, skip blank lines, and refuse vectors of
        differing widths.

        Words with spaces (default mode): fields are split on ASCII whitespace, so a word written with no-break
        spaces (GloVe 840B's ``.\u00a0.\u00a0.``) is one field. A line with more than DIM + 1 fields is a word
        with ASCII spaces: its last DIM fields are the vector and the fields
        before them the word -- unless the field just before the vector reads as a decimal number. Then the line
        is refused with its number, as a vector with values too many: ``alonzo 0.1 0.2 0.3 0.4`` in a file of
        width 3 would otherwise be the word ``alonzo 0.1``, and ``alonzo`` would silently lose its vector. A
        genuine word ending in a number after an ASCII space cannot be told from that, and is refused too.
        """
        _check_mode(mode)
        path = Path(path)
        if not path.exists():
            raise UnqoverError(f"{path} does not exist; give a GloVe or word2vec text file")
        if path.is_dir() and _word_embedding_folder(path) is not None:
            return cls.from_word_embeddings(path, mode, vocabulary)
        if path.is_dir():
            raise UnqoverError(
                f"{path} is a folder; give a GloVe or word2vec text file, or a sentence-transformers "
                "average-word-embeddings model (a folder with whitespacetokenizer_config.json)"
            )
        keep = None if vocabulary is None else set(vocabulary)
        reader = _read_paper if mode == "paper" else _read_strict
        words, rows, stats = reader(path, keep)
        if not stats["vectors"]:
            raise UnqoverError(f"{path} holds no word vector (expected lines 'word x1 x2 ...')")
        dim = stats["dim"]
        matrix = np.array(rows, dtype=np.float64).reshape(len(rows), dim)
        return cls(words, matrix, mode, stats)

    @classmethod
    def from_word_embeddings(
        cls, path: str | Path, mode: str = "default", vocabulary: Iterable[str] | None = None
    ) -> GloveVectors:
        """A sentence-transformers WordEmbeddings folder (its vocabulary and ``emb_layer.weight``), with the text
        readers' key rules: keys lower-cased; paper mode lets a later duplicate win, default mode the first."""
        words, matrix = _read_word_embeddings(Path(path))
        keep = None if vocabulary is None else set(vocabulary)
        index: dict[str, int] = {}
        duplicates = 0
        for i, word in enumerate(words):
            key = word.lower()
            if keep is not None and key not in keep:
                continue
            if key in index:
                duplicates += 1
                if mode != "paper":
                    continue
            index[key] = i
        if not index:
            raise UnqoverError(f"{path} holds no vector for any word the questions need")
        rows = sorted(set(index.values()))
        position = {row: k for k, row in enumerate(rows)}
        stats = {
            "lines": len(words),
            "vectors": len(words),
            "kept": len(index),
            "duplicates_overwritten" if mode == "paper" else "duplicates_ignored": duplicates,
            "dim": int(matrix.shape[1]),
            "format": "sentence-transformers WordEmbeddings",
        }
        return cls({k: position[i] for k, i in index.items()}, matrix[rows], mode, stats)

    def vector(self, word: str) -> np.ndarray | None:
        i = self.words.get(word)
        return None if i is None else self.matrix[i]

    def known(self, words: list[str]) -> np.ndarray:
        """Whether each choice word has a vector (after the mode's tokenisation; all its tokens for several)."""
        out = []
        for w in words:
            tokens = [t for t in paper_tokens(w) if t]
            out.append(bool(tokens) and all(t in self.words for t in tokens))
        return np.array(out, dtype=bool)

    # ---- paper mode: his arithmetic, in Python floats, so the scores are bit for bit his.

    def _paper_centroid(self, tokens: list[str]) -> list[float] | None:
        vecs = [self.matrix[self.words[t]].tolist() for t in tokens if t in self.words]
        if not vecs:
            return None
        return [sum(column) / len(column) for column in zip(*vecs, strict=True)]

    @staticmethod
    def _paper_cosine(a: list[float], b: list[float]) -> float:
        norm_a = math.sqrt(sum(x**2 for x in a))
        norm_b = math.sqrt(sum(x**2 for x in b))
        if norm_a == 0.0 or norm_b == 0.0:
            raise UnqoverError("a centroid is the zero vector, so its cosine is undefined")
        return sum(x * y for x, y in zip([x / norm_a for x in a], [y / norm_b for y in b], strict=True))

    # ---- default mode.

    def _centroid(self, tokens: list[str]) -> np.ndarray | None:
        rows = [self.words[t] for t in tokens if t in self.words]
        return None if not rows else self.matrix[rows].mean(axis=0)

    def scores(self, questions: list[str], sentences: list[str], choices: list[str]) -> np.ndarray:
        """Each choice's score against its question (``questions`` hold his blank,
        :data:`unqover.scoring.beecher.PAPER_BLANK`, or the choice's place).

        Paper: cosine(centroid(question), centroid(filled sentence)). Default: cosine(centroid(question without
        its blank), vector(choice)), :data:`UNKNOWN_SCORE` for a choice without a vector.
        """
        out = np.empty(len(sentences), dtype=np.float64)
        cache: dict[str, object] = {}
        for i, (question, sentence, choice) in enumerate(zip(questions, sentences, choices, strict=True)):
            if question not in cache:
                tokens = paper_tokens(question)
                cache[question] = (
                    self._paper_centroid(tokens) if self.mode == "paper" else self._centroid(tokens)
                )
                if cache[question] is None:
                    raise UnqoverError(
                        f"no word of the question {question!r} has a vector; is the vector file for English "
                        "lower-case words?"
                    )
            centre = cache[question]
            if self.mode == "paper":
                out[i] = self._paper_cosine(centre, self._paper_centroid(paper_tokens(sentence)))
                continue
            choice_vec = self._centroid([t for t in paper_tokens(choice) if t])
            if choice_vec is None:
                out[i] = UNKNOWN_SCORE
                continue
            norm = float(np.linalg.norm(centre) * np.linalg.norm(choice_vec))
            if norm == 0.0:
                raise UnqoverError(f"a zero vector for {question!r} or {choice!r}: its cosine is undefined")
            out[i] = float(np.clip(np.dot(centre, choice_vec) / norm, -1.0, 1.0))
        return out

    def describe(self) -> dict:
        return dict(self.stats)


def _is_int(text: str) -> bool:
    return text.isascii() and text.isdigit()


#: ASCII whitespace: what separates the fields of a strictly read vector line. A no-break space (U+00A0) and the
#: other Unicode spaces stay inside a word, as in GloVe 840B's ``.\u00a0.\u00a0.``.
_ASCII_SPACE = re.compile(r"[ \t\n\r\f\v]+")
#: A field that reads as a decimal number (not ``nan``, ``inf`` or a word): a key part like this is a value.
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _ascii_split(line: str) -> list[str]:
    return [field for field in _ASCII_SPACE.split(line) if field]


def _fields(path: Path, stats: dict, split=str.split) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of every non-blank line; a word2vec header line is left out. ``split``: paper mode
    splits on any whitespace (his ``line.split()``), default mode on ASCII whitespace only."""
    numbered = (
        (number, split(line)) for number, line in enumerate(_lines([path]), start=1) if _count(stats, line)
    )
    first = next(numbered, None)
    if first is None:
        return
    second = next(numbered, None)
    fields = first[1]
    header = len(fields) == 2 and _is_int(fields[0]) and _is_int(fields[1])
    # "COUNT WIDTH" before vectors of more than one value is a word2vec header, and its width must be theirs (read
    # as a vector, it made every later line a word with spaces: no word of any question had a vector)
    if (
        header
        and second is not None
        and len(second[1]) > 2
        and _numbers(second[1][1:])
        and len(second[1]) - 1 != int(fields[1])
    ):
        raise UnqoverError(
            f"{path}: the word2vec header {' '.join(fields)!r} says {fields[1]} values a vector, but the "
            f"vector on line {second[0]} has {len(second[1]) - 1} values; fix the header's second number"
        )
    if header and (second is None or len(second[1]) >= int(fields[1]) + 1):
        stats["word2vec_header"] = " ".join(fields)
    else:
        yield first
    if second is not None:
        yield second
    yield from numbered


def _numbers(fields: list[str]) -> bool:
    """Whether every field parses as a number (a vector's values, not a word with spaces)."""
    try:
        for x in fields:
            float(x)
    except ValueError:
        return False
    return True


def _count(stats: dict, line: str) -> bool:
    stats["lines"] += 1
    if line.strip():
        return True
    stats["blank_lines"] += 1  # his code fails on a blank line; both modes skip it
    return False


class _Collected:
    """The vectors a reading keeps: each kept word's row, the distinct words seen and the reading's counts."""

    def __init__(self, stats: dict[str, int]) -> None:
        self.words: dict[str, int] = {}
        self.rows: list[list[float]] = []
        self.seen: set[str] = set()
        self.stats = stats

    def add(self, key: str, vec: list[float], keep: set[str] | None, repeated: str, overwrite: bool) -> None:
        """``key``'s vector; a key seen before is counted under ``repeated`` and replaces it when ``overwrite``."""
        if key in self.seen:
            self.stats[repeated] += 1
            if not overwrite:
                return
        self.seen.add(key)
        if keep is None or key in keep:
            if key in self.words:
                self.rows[self.words[key]] = vec
            else:
                self.words[key] = len(self.rows)
                self.rows.append(vec)

    def result(self, dim: int | None) -> tuple[dict[str, int], list, dict]:
        self.stats.update({"vectors": len(self.seen), "kept": len(self.words), "dim": dim})
        return self.words, self.rows, self.stats


def _read_paper(path: Path, keep: set[str] | None) -> tuple[dict[str, int], list, dict]:
    stats = {"lines": 0, "blank_lines": 0, "skipped_non_numeric": 0, "duplicates_overwritten": 0}
    collected = _Collected(stats)
    dim = None
    for number, parts in _fields(path, stats):
        try:
            vec = [float(x) for x in parts[1:]]
        except ValueError:
            stats["skipped_non_numeric"] += 1
            continue
        if dim is None:
            dim = len(vec)
        if not vec or len(vec) != dim:
            raise UnqoverError(
                f"{path}, line {number}: the vector of {parts[0]!r} has {len(vec)} values, earlier vectors "
                f"{dim}; the vector file has inconsistent dimensions"
            )
        collected.add(parts[0].lower(), vec, keep, "duplicates_overwritten", overwrite=True)
    return collected.result(dim)


def _read_strict(path: Path, keep: set[str] | None) -> tuple[dict[str, int], list, dict]:
    stats = {"lines": 0, "blank_lines": 0, "case_variants_ignored": 0, "words_with_spaces": 0}
    collected = _Collected(stats)
    dim = None
    for number, parts in _fields(path, stats, _ascii_split):
        if dim is None:
            header = stats.get("word2vec_header")
            dim = int(header.split()[1]) if header else len(parts) - 1
            if dim < 1:
                raise UnqoverError(f"{path}, line {number}: the word {parts[0]!r} has no vector")
        extra = len(parts) - dim - 1  # > 0: the word has spaces, or the vector has values too many
        if extra < 0:
            raise UnqoverError(
                f"{path}, line {number}: {len(parts) - 1} values where the file's vectors have {dim}; "
                "the vector file has inconsistent dimensions"
            )
        if extra and _DECIMAL.fullmatch(parts[extra]):
            raise UnqoverError(
                f"{path}, line {number}: {len(parts) - 1} fields after {parts[0]!r} where the file's vectors have "
                f"{dim} values, and {parts[extra]!r} is a number, not the end of a word with spaces; the vector "
                "file has inconsistent dimensions"
            )
        word = " ".join(parts[: len(parts) - dim])
        if extra:
            stats["words_with_spaces"] += 1
        try:
            vec = [float(x) for x in parts[len(parts) - dim :]]
        except ValueError:
            raise UnqoverError(f"{path}, line {number}: a value of {word!r} is not a number") from None
        if not all(math.isfinite(x) for x in vec):
            raise UnqoverError(f"{path}, line {number}: the vector of {word!r} is not finite")
        collected.add(word.lower(), vec, keep, "case_variants_ignored", overwrite=False)
    return collected.result(dim)


WORD_EMBEDDING_FILES = ("whitespacetokenizer_config.json", "model.safetensors", "pytorch_model.bin")


def _word_embedding_folder(path: Path) -> Path | None:
    """The folder of a sentence-transformers WordEmbeddings module (itself or its ``0_WordEmbeddings``), if any."""
    for folder in (path, path / "0_WordEmbeddings"):
        if (folder / WORD_EMBEDDING_FILES[0]).is_file():
            return folder
    return None


def _read_word_embeddings(path: Path) -> tuple[list[str], np.ndarray]:
    """The vocabulary (in row order) and the ``emb_layer.weight`` matrix of a WordEmbeddings folder."""
    import json

    folder = _word_embedding_folder(path)
    if folder is None:
        raise UnqoverError(
            f"{path} has no whitespacetokenizer_config.json (a sentence-transformers WordEmbeddings model)"
        )
    try:
        vocab = json.loads((folder / WORD_EMBEDDING_FILES[0]).read_text(encoding="utf-8"))["vocab"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise UnqoverError(f"{folder / WORD_EMBEDDING_FILES[0]}: no readable 'vocab' list ({err})") from err
    if (folder / WORD_EMBEDDING_FILES[1]).is_file():
        from safetensors.numpy import load_file

        weights = load_file(str(folder / WORD_EMBEDDING_FILES[1]))
    elif (folder / WORD_EMBEDDING_FILES[2]).is_file():
        import torch

        # weights_only: tensors only, no code from the pickle
        weights = {
            k: v.float().numpy()
            for k, v in torch.load(folder / WORD_EMBEDDING_FILES[2], weights_only=True).items()
        }
    else:
        raise UnqoverError(f"{folder} has no model.safetensors or pytorch_model.bin with the word vectors")
    matrix = weights.get("emb_layer.weight")
    if matrix is None or matrix.ndim != 2 or matrix.shape[0] != len(vocab):
        raise UnqoverError(
            f"{folder}: expected emb_layer.weight with one row per vocabulary word ({len(vocab):,}), "
            f"found {None if matrix is None else tuple(matrix.shape)}"
        )
    return [str(w) for w in vocab], np.asarray(matrix, dtype=np.float64)


def _hub_vectors(repo_id: str) -> Path:
    """A Hub repo of word vectors (sentence-transformers average-word-embeddings), downloaded to the cache."""
    from huggingface_hub import snapshot_download

    from unqover.env import offline

    if offline():
        raise UnqoverError(
            f"{repo_id!r} is not a local path and the Hub is offline; give a local vector file"
        )
    try:
        return Path(snapshot_download(repo_id, allow_patterns=[f"*{name}" for name in WORD_EMBEDDING_FILES]))
    except Exception as err:  # the hub client raises many kinds: one clear line for any
        raise UnqoverError(f"could not fetch the vectors {repo_id!r} from the Hub: {err}") from err
