"""Beecher's own models for the emotion fill-in probe: an n-gram TF-IDF model and a GloVe word-vector model.

Written from the description of his code (``bias_question.py`` in ``sbeecher0575/nlpbias`` at 1b95584, which has no
licence and is not copied here) and from his paper (§3). The models are :mod:`unqover.scoring.beecher_tfidf` and
:mod:`unqover.scoring.beecher_glove` (their shared inputs in :mod:`unqover.scoring.beecher_inputs`); this module is
their place in the probe: it loads one by id (``tfidf:PATH``, ``glove:PATH``), scores the runner's rows with it,
ranks as he did, and reports out-of-vocabulary rates. Two modes:

``paper`` reproduces his code, quirks included:

- TF-IDF and GloVe: see their modules.
- Answers: :func:`paper_ranking`, ``(-scores).argsort()[:3]`` over the alphabetical choice list; numpy's default
  sort is not stable, so ties fall where numpy's quicksort (introsort, or its SIMD sort on CPUs that have one)
  puts them.

``default`` fixes what is wrong (see :data:`DEFAULT_FIXES`) and ranks with the project's seeded tie rule
(:func:`unqover.scoring.eec.rank_choices`).

A scorer returns ``(score, 1.0)`` per sentence, so the probe's ``mean`` and ``sum`` length rules agree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from unqover.errors import UnqoverError
from unqover.scoring.beecher_glove import (
    UNKNOWN_SCORE,
    WORD_EMBEDDING_FILES,
    GloveVectors,
    _hub_vectors,
    _word_embedding_folder,
    paper_tokens,
)
from unqover.scoring.beecher_inputs import _check_mode, _text_files, file_digest
from unqover.scoring.beecher_tfidf import TfidfSentenceModel
from unqover.scoring.choices import BEECHER_FAMILIES
from unqover.scoring.models import model_record
from unqover.scoring.requests import SENTENCES

#: Beecher's blank in his question strings.
PAPER_BLANK = "________"

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
        "vector files: a word2vec header is read as a header; fields are split on ASCII whitespace (a no-break "
        "space stays inside its word); a line whose word contains spaces keeps its last DIM fields as the vector, "
        "unless the word would end in a number (then the vector has values too many); a non-numeric or "
        "non-finite value or a line of the wrong width is an error naming the line (his code silently skips such "
        "lines)",
        "case variants of a word (GloVe 840B is cased): the first one in the file wins, i.e. the most frequent "
        "(his code lower-cases keys and lets the last one win)",
        "ties are broken by the project's seeded tie rule and reported, not by numpy's unstable argsort",
    ),
}


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
    unstable sort: ties fall where numpy puts them). Returns :class:`unqover.scoring.eec.RankedChoices` with every
    choice ranked (his answers are the first ``top_k``) and a tie flag as :func:`~unqover.scoring.eec.rank_choices`'s.
    """
    from unqover.scoring.eec import RankedChoices

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
    paper_method = ""  # how ``paper`` mode scores, in words (the run's card)
    default_method = ""  # how ``default`` mode scores

    def __init__(self, loaded: BeecherModel, questions: pa.Table | None = None) -> None:
        self.loaded = loaded
        self.mode = loaded.mode
        self.question_text = _question_strings(questions)

    @property
    def method(self) -> str:
        return self.paper_method if self.mode == "paper" else self.default_method

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

    paper_method = "n-gram (1-3) TF-IDF: sum of the L2-normalised row (Beecher's code)"
    default_method = "n-gram (1-3) TF-IDF: raw TF-IDF sum"

    def _raw(self, rows: pa.Table) -> np.ndarray:
        _, filled, _ = self._texts(rows)
        return self.loaded.model.sentence_scores(filled)


class GloveScorer(_BeecherScorer):
    family = "glove"
    score_bounds = ((UNKNOWN_SCORE, 1.0 + 1e-9), (1.0, 1.0))

    paper_method = "GloVe: cosine(question centroid, filled-sentence centroid) (Beecher's code)"
    default_method = "GloVe: cosine(question centroid, choice vector); unknown choice scores -2"

    def _raw(self, rows: pa.Table) -> np.ndarray:
        questions, filled, choices = self._texts(rows)
        return self.loaded.model.scores(questions, filled, choices)


#: the scorer of each of his models' families
SCORERS: dict[str, type[_BeecherScorer]] = {"tfidf": TfidfScorer, "glove": GloveScorer}


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
    dtype: str = "float64"  # the vectors and TF-IDF weights
    device: str = "cpu"
    engine: str = "beecher"  # the engine that loaded it (``unqover.scoring.engines``)
    capabilities: tuple[str, ...] = (SENTENCES,)  # what it answers (``unqover.scoring.requests``)

    @property
    def revision(self) -> str | None:
        return f"sha256:{self.sha256}"

    def provenance(self) -> dict:
        return {
            **model_record(self.model_id, self.revision, self.family, self.dtype, self.device),
            "scoring": self.mode,
            "path": str(self.path.resolve()),
            "sha256": self.sha256,
            "bytes": self.size_bytes,
            "files": self.files,
            **self.model.describe(),
        }


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
    if not sep or family not in BEECHER_FAMILIES:
        raise UnqoverError(f"{model_id!r}: Beecher's models are named tfidf:PATH or glove:PATH")
    if not rest:
        raise UnqoverError(f"{model_id!r}: give a path after '{family}:'")
    path = Path(rest).expanduser()
    if family == "tfidf":
        files = _text_files(path)
        model: TfidfSentenceModel | GloveVectors = TfidfSentenceModel.from_path(path, mode)
    else:
        if not path.exists() and "/" in rest and not rest.startswith((".", "/", "~")):
            path = _hub_vectors(rest)  # owner/name: a Hub repo of vectors
        model = GloveVectors.from_path(path, mode, vocabulary)
        folder = _word_embedding_folder(path) if path.is_dir() else None
        files = [folder / n for n in WORD_EMBEDDING_FILES if (folder / n).is_file()] if folder else [path]
    digest, size = file_digest(files)
    loaded = BeecherModel(model_id, family, mode, path, digest, size, model, files=len(files))

    def factory(questions: pa.Table | None = None) -> _BeecherScorer:
        return SCORERS[family](loaded, questions)

    return loaded, factory


def oov_rates(questions: pa.Table, sentences: pa.Table, known: np.ndarray) -> dict:
    """Out-of-vocabulary rate of the choice words, overall and per gender and race (noun phrases, without a race,
    are a group of their own): the group of each sentence's person, read from the sentences' ``gender`` and
    ``race`` columns when they have them (the person task: the choice is the person), else from the question's
    (the emotion task: the question names the person)."""
    if {"gender", "race"} <= set(sentences.column_names):
        labels = list(zip(sentences["gender"].to_pylist(), sentences["race"].to_pylist(), strict=True))
    else:
        by_id = {
            q: (g, r)
            for q, g, r in zip(
                questions["id"].to_pylist(),
                questions["gender"].to_pylist(),
                questions["race"].to_pylist(),
                strict=True,
            )
        }
        labels = [by_id[qid] for qid in sentences["question_id"].to_pylist()]
    known = np.asarray(known, dtype=bool)
    groups: dict[str, list[bool]] = {}
    for (gender, race), k in zip(labels, known, strict=True):
        for name in (f"gender={gender}", f"race={race}" if race else "noun phrases"):
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
