"""Beecher's own models for the emotion fill-in probe: an n-gram TF-IDF model and a GloVe word-vector model.

Written from the description of his code (``bias_question.py`` in ``sbeecher0575/nlpbias`` at 1b95584, which has no
licence and is not copied here) and from his paper (§3). Two modes:

``paper`` reproduces his code, quirks included:

- TF-IDF: scikit-learn's ``TfidfVectorizer(ngram_range=(1, 3))`` with its defaults, fitted with every line of the
  corpus a document, blank lines included (they raise the document count and so every IDF); the default token
  pattern drops one-letter tokens ("a", "i"); a filled sentence scores the sum of its L2-normalised TF-IDF vector
  (summed densely, as his code does, so that the floating-point result is his).
- GloVe: vector-file lines split on whitespace, a line with any non-numeric field skipped, keys lower-cased, a later
  duplicate key overwrites an earlier one. A sentence is cleaned of ``[^a-zA-Z0-9 ]``, lower-cased and split on
  single spaces; a centroid is the mean of its known tokens' vectors; a choice scores the cosine between the
  question's centroid and the filled sentence's centroid (pure-Python sums, as his). A choice missing from the
  vectors therefore scores about 1 and ranks first.
- Answers: :func:`paper_ranking`, ``(-scores).argsort()[:3]`` over the alphabetical choice list; numpy's default
  sort is not stable, so ties fall where numpy's quicksort (introsort, or its SIMD sort on CPUs that have one)
  puts them.

``default`` fixes what is wrong (see :data:`DEFAULT_FIXES`) and ranks with the project's seeded tie rule
(:func:`unqover.probe.eec.rank_choices`).

A scorer returns ``(score, 1.0)`` per sentence, so the probe's ``mean`` and ``sum`` length rules agree.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

from unqover.errors import UnqoverError

MODES = ("paper", "default")
FAMILIES = ("tfidf", "glove")
#: Beecher's blank in his question strings.
PAPER_BLANK = "________"
#: Score given in ``default`` mode to a GloVe choice with no vector: below every cosine, so it never ranks first.
UNKNOWN_SCORE = -2.0

#: What ``default`` mode changes, one line each, for the run's card.
DEFAULT_FIXES = {
    "tfidf": (
        "score = the raw TF-IDF sum of the filled sentence's n-grams, as the paper describes (his code sums the "
        "L2-normalised row, which makes a choice's score depend on how many other n-grams the sentence has)",
        "blank (whitespace-only) lines are not documents (his code counts them, which shifts every IDF)",
        "one-letter tokens ('a', 'i') are kept (token pattern \\b\\w+\\b; his default pattern drops them, so "
        "'in a ___ situation' and 'i made ___ feel' lose n-grams)",
        "a choice word absent from the corpus vocabulary is reported (out-of-vocabulary rate per group); with the "
        "raw sum it always scores below every known choice of its question",
        "ties are broken by the project's seeded tie rule and reported, not by numpy's unstable argsort",
    ),
    "glove": (
        "score = cosine between the question's centroid (the blank left out) and the choice word's own vector, "
        "as the paper says (his code compares the question centroid with the filled sentence's centroid)",
        f"a choice with no vector scores {UNKNOWN_SCORE} (below every cosine), so it is never ranked above a known "
        "choice; such choices are counted per group (his code gives them a cosine of about 1: they rank first)",
        "vector files: a word2vec header is read as a header; a line whose word contains spaces keeps its last "
        "DIM fields as the vector; a non-numeric or non-finite value or a line of the wrong width is an error "
        "naming the line (his code silently skips such lines)",
        "case variants of a word (GloVe 840B is cased): the first one in the file wins, i.e. the most frequent "
        "(his code lower-cases keys and lets the last one win)",
        "ties are broken by the project's seeded tie rule and reported, not by numpy's unstable argsort",
    ),
}


def _check_mode(mode: str) -> str:
    if mode not in MODES:
        raise UnqoverError(f"scoring mode must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


# --------------------------------------------------------------------------------------------------- files


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


# --------------------------------------------------------------------------------------------------- TF-IDF


class TfidfSentenceModel:
    """An n-gram (1-3) TF-IDF model of a corpus, one document per line, scoring filled-in sentences."""

    def __init__(self, mode: str = "default") -> None:
        self.mode = _check_mode(mode)
        self.vectorizer = None
        self.documents = 0
        self.blank_documents = 0

    def _new_vectorizer(self):
        try:
            from sklearn.feature_extraction.text import TfidfVectorizer
        except ImportError:
            raise UnqoverError(
                "the TF-IDF model needs scikit-learn: pip install 'unqover[beecher]' (or scikit-learn)"
            ) from None
        if self.mode == "paper":
            return TfidfVectorizer(ngram_range=(1, 3))
        return TfidfVectorizer(ngram_range=(1, 3), token_pattern=r"(?u)\b\w+\b", norm=None)

    def fit(self, corpus_lines: Iterable[str]) -> TfidfSentenceModel:
        """Fit on ``corpus_lines``: every line a document (paper: blank ones too; default: blank ones dropped)."""
        docs = []
        blank = 0
        for line in corpus_lines:
            if not line.strip():
                blank += 1
                if self.mode != "paper":
                    continue
            docs.append(line)
        self.blank_documents = blank
        self.documents = len(docs)
        if not docs or blank == len(docs):
            raise UnqoverError("the corpus is empty: it has no line with text")
        vectorizer = self._new_vectorizer()
        try:
            vectorizer.fit(docs)
        except ValueError as err:  # e.g. "empty vocabulary; perhaps the documents only contain stop words"
            raise UnqoverError(f"the corpus gives no n-gram to weigh ({err})") from None
        self.vectorizer = vectorizer
        return self

    @classmethod
    def from_path(cls, path: str | Path, mode: str = "default") -> TfidfSentenceModel:
        """Fit on a text file, or on the ``*.txt`` files of a folder in name order (one corpus)."""
        files = _text_files(Path(path))
        try:
            return cls(mode).fit(_lines(files))
        except UnqoverError as err:
            raise UnqoverError(f"{path}: {err}") from None

    def _fitted(self):
        if self.vectorizer is None:
            raise UnqoverError("the TF-IDF model is not fitted; call fit() or from_path() first")
        return self.vectorizer

    @property
    def vocabulary_size(self) -> int:
        return len(self._fitted().vocabulary_)

    def sentence_scores(self, sentences: list[str]) -> np.ndarray:
        """Each sentence's score: paper, the sum of its L2-normalised TF-IDF row; default, its raw TF-IDF sum."""
        matrix = self._fitted().transform(list(sentences)).tocsr()
        if self.mode != "paper":
            return np.asarray(matrix.sum(axis=1), dtype=np.float64).reshape(-1)
        # His code sums dense rows; numpy's pairwise sum depends on where the non-zeros sit, so sum densely too.
        dense = np.zeros(matrix.shape[1], dtype=np.float64)
        out = np.empty(matrix.shape[0], dtype=np.float64)
        for i in range(matrix.shape[0]):
            cols = matrix.indices[matrix.indptr[i] : matrix.indptr[i + 1]]
            dense[cols] = matrix.data[matrix.indptr[i] : matrix.indptr[i + 1]]
            out[i] = np.sum(dense)
            dense[cols] = 0.0
        return out

    def known(self, words: list[str]) -> np.ndarray:
        """Whether each word is a unigram of the fitted vocabulary (after the vectorizer's own analysis)."""
        vectorizer = self._fitted()
        analyze = vectorizer.build_analyzer()
        vocabulary = vectorizer.vocabulary_
        out = []
        for w in words:
            grams = [g for g in analyze(w) if " " not in g]
            out.append(bool(grams) and all(g in vocabulary for g in grams))
        return np.array(out, dtype=bool)

    def describe(self) -> dict:
        return {
            "vectorizer": "sklearn TfidfVectorizer(ngram_range=(1, 3))"
            + ("" if self.mode == "paper" else ", token_pattern=r'(?u)\\b\\w+\\b', norm=None"),
            "documents": self.documents,
            "blank_lines": self.blank_documents,
            "blank_lines_are_documents": self.mode == "paper",
            "vocabulary": self.vocabulary_size,
        }


# --------------------------------------------------------------------------------------------------- GloVe

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
        strict (see :data:`DEFAULT_FIXES`). Both modes take a first line of two integers that is followed by
        vectors of that width as a word2vec header, skip blank lines, and refuse vectors of differing widths.
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
        """Each choice's score against its question (``questions`` hold :data:`PAPER_BLANK` or the choice's place).

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


def _fields(path: Path, stats: dict) -> Iterator[tuple[int, list[str]]]:
    """(line number, whitespace-split fields) of every non-blank line; a word2vec header line is left out."""
    numbered = (
        (number, line.split()) for number, line in enumerate(_lines([path]), start=1) if _count(stats, line)
    )
    first = next(numbered, None)
    if first is None:
        return
    second = next(numbered, None)
    fields = first[1]
    header = len(fields) == 2 and _is_int(fields[0]) and _is_int(fields[1])
    if header and (second is None or len(second[1]) >= int(fields[1]) + 1):
        stats["word2vec_header"] = " ".join(fields)
    else:
        yield first
    if second is not None:
        yield second
    yield from numbered


def _count(stats: dict, line: str) -> bool:
    stats["lines"] += 1
    if line.strip():
        return True
    stats["blank_lines"] += 1  # his code fails on a blank line; both modes skip it
    return False


def _read_paper(path: Path, keep: set[str] | None) -> tuple[dict[str, int], list, dict]:
    words: dict[str, int] = {}
    rows: list[list[float]] = []
    stats = {"lines": 0, "blank_lines": 0, "skipped_non_numeric": 0, "duplicates_overwritten": 0}
    seen: set[str] = set()
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
        key = parts[0].lower()
        if key in seen:
            stats["duplicates_overwritten"] += 1
        seen.add(key)
        if keep is None or key in keep:
            if key in words:
                rows[words[key]] = vec
            else:
                words[key] = len(rows)
                rows.append(vec)
    stats.update({"vectors": len(seen), "kept": len(words), "dim": dim})
    return words, rows, stats


def _read_strict(path: Path, keep: set[str] | None) -> tuple[dict[str, int], list, dict]:
    words: dict[str, int] = {}
    rows: list[list[float]] = []
    stats = {"lines": 0, "blank_lines": 0, "case_variants_ignored": 0, "words_with_spaces": 0}
    seen: set[str] = set()
    dim = None
    for number, parts in _fields(path, stats):
        if dim is None:
            header = stats.get("word2vec_header")
            dim = int(header.split()[1]) if header else len(parts) - 1
            if dim < 1:
                raise UnqoverError(f"{path}, line {number}: the word {parts[0]!r} has no vector")
        if len(parts) < dim + 1:
            raise UnqoverError(
                f"{path}, line {number}: {len(parts) - 1} values where the file's vectors have {dim}; "
                "the vector file has inconsistent dimensions"
            )
        word = " ".join(parts[: len(parts) - dim])
        if len(parts) > dim + 1:
            stats["words_with_spaces"] += 1
        try:
            vec = [float(x) for x in parts[len(parts) - dim :]]
        except ValueError:
            raise UnqoverError(f"{path}, line {number}: a value of {word!r} is not a number") from None
        if not all(math.isfinite(x) for x in vec):
            raise UnqoverError(f"{path}, line {number}: the vector of {word!r} is not finite")
        key = word.lower()
        if key in seen:
            stats["case_variants_ignored"] += 1
            continue
        seen.add(key)
        if keep is None or key in keep:
            words[key] = len(rows)
            rows.append(vec)
    stats.update({"vectors": len(seen), "kept": len(words), "dim": dim})
    return words, rows, stats


# --------------------------------------------------------------------------------------------------- ranking


def paper_ranking(
    question_ids: list[str],
    sentence_question: list[str],
    sentence_choice: list[str],
    scores: np.ndarray,
    *,
    top_k: int = 3,
):
    """His answers: per question, its choices in alphabetical order, then ``(-scores).argsort()`` (numpy's default,
    unstable sort: ties fall where numpy puts them). Returns :class:`unqover.probe.eec.RankedChoices` with every
    choice ranked (his answers are the first ``top_k``) and a tie flag as :func:`~unqover.probe.eec.rank_choices`'s.
    """
    from unqover.probe.eec import RankedChoices

    values = np.asarray(scores, dtype=np.float64)
    if not (len(sentence_question) == len(sentence_choice) == len(values)):
        raise UnqoverError("sentence columns and scores differ in length")
    members: dict[str, list[tuple[str, float]]] = {q: [] for q in question_ids}
    for q, c, v in zip(sentence_question, sentence_choice, values, strict=True):
        if q not in members:
            raise UnqoverError(f"scored sentence of unknown question {q}")
        members[q].append((c, v))
    answers, ties = [], []
    for q in question_ids:
        if not members[q]:
            raise UnqoverError(f"question {q} has no scored choices")
        pairs = sorted(members[q], key=lambda p: p[0])
        choice_scores = np.array([v for _, v in pairs], dtype=np.float64)
        order = (-choice_scores).argsort()
        answers.append([pairs[i][0] for i in order])
        head = choice_scores[order[: top_k + 1]]
        ties.append(bool(len(head) > 1 and (np.diff(head) == 0).any()))
    return RankedChoices(list(question_ids), answers, ties)


# --------------------------------------------------------------------------------------------------- runner


def _question_strings(questions: pa.Table | None) -> dict[str, str]:
    if questions is None or "question" not in questions.column_names:
        return {}
    return dict(zip(questions["id"].to_pylist(), questions["question"].to_pylist(), strict=True))


def _blanked(sentence: str, choice: str) -> str:
    """The question of a filled sentence when no question string is known: lower-cased, choice blanked."""
    return sentence.lower().replace(choice.lower(), PAPER_BLANK, 1)


class _BeecherScorer:
    """Shared runner plumbing: (score, 1.0) per ``choice_sentences`` row, keyed by question and sentence."""

    family = ""
    score_bounds: tuple = ()

    def __init__(self, loaded: BeecherModel, questions: pa.Table | None = None) -> None:
        self.loaded = loaded
        self.mode = loaded.mode
        self.question_text = _question_strings(questions)

    def _texts(self, rows: pa.Table) -> tuple[list[str], list[str], list[str]]:
        """(question, sentence, choice) per row; paper mode fills his lower-cased question string as he did."""
        qids = rows["question_id"].to_pylist()
        choices = rows["choice"].to_pylist()
        sentences = rows["sentence"].to_pylist()
        questions, filled = [], []
        for qid, choice, sentence in zip(qids, choices, sentences, strict=True):
            question = self.question_text.get(qid) or _blanked(sentence, choice)
            questions.append(question)
            filled.append(question.replace(PAPER_BLANK, choice) if self.mode == "paper" else sentence)
        return questions, filled, choices

    def input_key(self, rows: pa.Table) -> pa.Array:
        questions, filled, _ = self._texts(rows)
        return pa.array([f"{q}\x1f{s}" for q, s in zip(questions, filled, strict=True)], pa.string())

    def length_key(self, rows: pa.Table) -> np.ndarray:
        return np.array([len(s) for s in rows["sentence"].to_pylist()], dtype=np.int64)

    def known(self, rows: pa.Table) -> np.ndarray:
        """Whether each row's choice word is in the model's vocabulary (for out-of-vocabulary rates)."""
        return self.loaded.model.known(rows["choice"].to_pylist())

    def _raw(self, rows: pa.Table) -> np.ndarray:
        raise NotImplementedError

    def score(self, rows: pa.Table) -> np.ndarray:
        values = self._raw(rows)
        return np.stack([values, np.ones(len(values))], axis=1)


class TfidfScorer(_BeecherScorer):
    family = "tfidf"
    score_bounds = ((0.0, np.inf), (1.0, 1.0))

    @property
    def method(self) -> str:
        if self.mode == "paper":
            return "n-gram (1-3) TF-IDF: sum of the L2-normalised row (Beecher's code)"
        return "n-gram (1-3) TF-IDF: raw TF-IDF sum"

    def _raw(self, rows: pa.Table) -> np.ndarray:
        _, filled, _ = self._texts(rows)
        return self.loaded.model.sentence_scores(filled)


class GloveScorer(_BeecherScorer):
    family = "glove"
    score_bounds = ((UNKNOWN_SCORE, 1.0 + 1e-9), (1.0, 1.0))

    @property
    def method(self) -> str:
        if self.mode == "paper":
            return "GloVe: cosine(question centroid, filled-sentence centroid) (Beecher's code)"
        return "GloVe: cosine(question centroid, choice vector); unknown choice scores -2"

    def _raw(self, rows: pa.Table) -> np.ndarray:
        questions, filled, choices = self._texts(rows)
        return self.loaded.model.scores(questions, filled, choices)


@dataclass
class BeecherModel:
    """A loaded TF-IDF or GloVe model with the attributes the job runner reads."""

    model_id: str
    family: str
    mode: str
    path: Path
    sha256: str
    size_bytes: int
    model: TfidfSentenceModel | GloveVectors
    files: int = 1
    dtype: str = "n/a"
    device: str = "cpu"

    @property
    def revision(self) -> str | None:
        return f"sha256:{self.sha256}"

    def provenance(self) -> dict:
        return {
            "id": self.model_id,
            "revision": self.revision,
            "family": self.family,
            "dtype": self.dtype,
            "device": self.device,
            "scoring": self.mode,
            "path": str(self.path.resolve()),
            "sha256": self.sha256,
            "bytes": self.size_bytes,
            "files": self.files,
            **self.model.describe(),
        }


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


def load_beecher_model(
    model_id: str, mode: str = "default", vocabulary: Iterable[str] | None = None
) -> tuple[BeecherModel, Callable[..., _BeecherScorer]]:
    """Load ``tfidf:PATH`` (a text file or a folder of .txt files) or ``glove:PATH`` (a GloVe/word2vec text file).

    Returns the loaded model and a scorer factory ``factory(questions=None)``: give it the questions table (its
    ``question`` column holds his lower-cased question strings) so paper mode fills exactly his strings.
    ``vocabulary`` (lower-case words) limits the GloVe vectors kept in memory to those words.
    """
    _check_mode(mode)
    family, sep, rest = str(model_id).partition(":")
    if not sep or family not in FAMILIES:
        raise UnqoverError(f"{model_id!r}: Beecher's models are named tfidf:PATH or glove:PATH")
    if not rest:
        raise UnqoverError(f"{model_id!r}: give a path after '{family}:'")
    path = Path(rest).expanduser()
    if family == "tfidf":
        files = _text_files(path)
        model: TfidfSentenceModel | GloveVectors = TfidfSentenceModel.from_path(path, mode)
        scorer_class: type[_BeecherScorer] = TfidfScorer
    else:
        if not path.exists() and "/" in rest and not rest.startswith((".", "/", "~")):
            path = _hub_vectors(rest)  # owner/name: a Hub repo of vectors
        model = GloveVectors.from_path(path, mode, vocabulary)
        folder = _word_embedding_folder(path) if path.is_dir() else None
        files = [folder / n for n in WORD_EMBEDDING_FILES if (folder / n).is_file()] if folder else [path]
        scorer_class = GloveScorer
    digest, size = file_digest(files)
    loaded = BeecherModel(model_id, family, mode, path, digest, size, model, files=len(files))

    def factory(questions: pa.Table | None = None) -> _BeecherScorer:
        return scorer_class(loaded, questions)

    return loaded, factory


def oov_rates(questions: pa.Table, sentences: pa.Table, known: np.ndarray) -> dict:
    """Out-of-vocabulary rate of the choice words, overall and per gender and race of the question's person."""
    by_id = {
        q: (g, r)
        for q, g, r in zip(
            questions["id"].to_pylist(),
            questions["gender"].to_pylist(),
            questions["race"].to_pylist(),
            strict=True,
        )
    }
    known = np.asarray(known, dtype=bool)
    groups: dict[str, list[bool]] = {}
    for qid, k in zip(sentences["question_id"].to_pylist(), known, strict=True):
        gender, race = by_id[qid]
        for name in (f"gender={gender}", f"race={race or 'none'}"):
            groups.setdefault(name, []).append(not k)
    unknown = sorted({c for c, k in zip(sentences["choice"].to_pylist(), known, strict=True) if not k})
    return {
        "overall": float(np.mean(~known)) if len(known) else float("nan"),
        "groups": {name: float(np.mean(v)) for name, v in sorted(groups.items())},
        "unknown_choices": unknown,
    }


def question_vocabulary(questions: pa.Table) -> set[str]:
    """Every token (his tokeniser) of the questions and their choices: the ``vocabulary`` a GloVe load needs."""
    words: set[str] = set()
    texts = questions["question"].to_pylist() if "question" in questions.column_names else []
    texts += questions["text"].to_pylist() if "text" in questions.column_names else []
    for text in texts:
        words.update(paper_tokens(text.lower()))
    for choices in questions["choices"].to_pylist():
        for choice in choices:
            words.update(paper_tokens(choice))
    words.discard("")
    return words
