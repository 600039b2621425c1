"""Beecher's n-gram (1-3) TF-IDF model of a corpus, scoring the emotion probe's filled-in sentences.

``paper`` mode reproduces his code (see :mod:`unqover.scoring.beecher`): scikit-learn's
``TfidfVectorizer(ngram_range=(1, 3))`` with its defaults, fitted with every line of the corpus a document, blank
lines included (they raise the document count and so every IDF); the default token pattern drops one-letter
tokens ("a", "i"); a filled sentence scores the sum of its L2-normalised TF-IDF vector (summed densely, as his
code does, so that the floating-point result is his). ``default`` mode fixes what is wrong
(:data:`unqover.scoring.beecher.DEFAULT_FIXES`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from unqover.errors import UnqoverError
from unqover.scoring.beecher_inputs import _check_mode, _lines, _text_files


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
