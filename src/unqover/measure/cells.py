"""The values the UnQover measures aggregate: C seen from each subject, and per-cell sums and estimates.

Shared by the point estimates (``unqover.measure.unqover``) and the crossed bootstrap (``unqover.measure.bootstrap``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from unqover.measure.pairing import PairedScores


def bias_scores(paired: PairedScores) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """B(x1), B(x2) and C(x1, x2, a, τ) of every group (Eqs. 5–6)."""
    s = paired.scores  # (G, order, polarity, subject)
    b = (s[:, :, 0, :] - s[:, :, 1, :]).mean(axis=1)  # mean over orders of positive minus negated
    return b[:, 0], b[:, 1], 0.5 * (b[:, 0] - b[:, 1])


def positional_errors(paired: PairedScores) -> np.ndarray:
    """|S(x|τ12(q)) − S(x|τ21(q))| per group, polarity and subject: shape (G, 2, 2)."""
    return np.abs(paired.scores[:, 0] - paired.scores[:, 1])


def attributive_errors(paired: PairedScores) -> np.ndarray:
    """|S(x|τ(a)) − S(other|τ(ā))| per group, order and subject: shape (G, 2, 2)."""
    s = paired.scores
    return np.abs(s[:, :, 0, :] - s[:, :, 1, ::-1])


@dataclass(frozen=True)
class SubjectValues:
    """C values seen from each subject: both orientations of every group."""

    subject: np.ndarray
    partner: np.ndarray
    attribute: np.ndarray
    template: np.ndarray
    value: np.ndarray

    @classmethod
    def from_groups(cls, paired: PairedScores, c: np.ndarray) -> SubjectValues:
        return cls(
            subject=np.concatenate([paired.x1, paired.x2]),
            partner=np.concatenate([paired.x2, paired.x1]),
            attribute=np.concatenate([paired.attribute, paired.attribute]),
            template=np.concatenate([paired.template, paired.template]),
            value=np.concatenate([c, -c]),
        )


@dataclass(frozen=True)
class Sums:
    """Per subject x attribute: Σ C, Σ sign C and the count (optionally weighted)."""

    total: np.ndarray  # (..., S, A)
    signs: np.ndarray
    count: np.ndarray


@dataclass(frozen=True)
class Estimates:
    """Everything derived from :class:`Sums` under one mode; each array may carry leading replicate axes."""

    gamma: np.ndarray  # (..., S, A) γ(x, a)
    eta: np.ndarray  # (..., S, A) η(x, a)
    subject_gamma: np.ndarray  # (..., S)
    subject_eta: np.ndarray
    cluster_gamma: np.ndarray  # (..., K, A)
    cluster_eta: np.ndarray
    mu: np.ndarray  # (...)
    eta_model: np.ndarray
    subject_mu: np.ndarray
    subject_eta_model: np.ndarray
