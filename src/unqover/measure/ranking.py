"""Ranking several models by one bias number, honestly: simultaneous intervals, rank intervals and Holm's
adjustment of the pairwise p-values (``unqover leaderboard``).

* Bonferroni: intervals at level 1 − α/K each hold all K at once with probability ≥ 1 − α.
* Rank intervals (1 = least biased): from K simultaneous intervals, a model's best rank is 1 + the number of
  models whose upper bound lies below its lower bound (surely less biased), its worst rank K − the number whose
  lower bound lies above its upper bound (surely more biased). When the intervals hold, the true rank lies in it.
* The pairwise p-values are Holm-adjusted by :func:`unqover.measure.stats.holm` (family-wise error).
* Full runs: a run that scored the whole dataset has the exact value of its model on that dataset (the target
  every quick run estimates), so its interval is the value itself. Two exact values differ surely or are equal
  (:func:`exact_shift`); an exact value against a quick run's estimate is that estimate's interval moved by the
  exact value, tested by the estimate's own test (:func:`shift_against_exact`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def bonferroni_confidence(confidence: float, tests: int) -> float:
    """The confidence of each of ``tests`` intervals that hold simultaneously at ``confidence``: 1 − α/tests."""
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie strictly between 0 and 1")
    if tests < 1:
        raise ValueError("there must be at least one test")
    return 1 - (1 - confidence) / tests


def point_ranks(values: Sequence[float]) -> list[int]:
    """Rank 1 for the smallest value; ties share the best rank of their block (competition ranking: 1, 1, 3)."""
    values = np.asarray(values, dtype=float)
    return [int((values < v).sum()) + 1 for v in values]


def rank_intervals(lows: Sequence[float], highs: Sequence[float]) -> list[tuple[int, int]]:
    """[best, worst] rank of each model from its simultaneous interval [low, high] (1 = smallest value)."""
    low, high = np.asarray(lows, dtype=float), np.asarray(highs, dtype=float)
    if low.shape != high.shape or bool((low > high).any()):
        raise ValueError("each interval needs low <= high, as many lows as highs")
    k = len(low)
    return [(1 + int((high < low[i]).sum()), k - int((low > high[i]).sum())) for i in range(k)]


def exact_shift(a: float, b: float) -> dict:
    """The shift b − a of two exact values (two full runs): the difference itself, with the degenerate interval
    [d, d] and p-value 0 when they differ (surely distinguishable), 1 when they are equal (a tie)."""
    difference = float(b) - float(a)
    return {
        "value": difference,
        "interval": [difference, difference],
        "p_value": 0.0 if difference != 0 else 1.0,
        "paired": True,
        "method": "exact",
    }


def shift_against_exact(
    exact: float, estimate: float, interval: Sequence[float], p_value: float, exact_first: bool
) -> dict:
    """The shift between an exact value (a full run) and a quick run's ``estimate`` with its ``interval`` and the
    ``p_value`` of "the quick run's value equals ``exact``": quick − exact when ``exact_first``, else exact − quick.
    Only the quick run is uncertain, so the shift's interval is its interval moved by the exact value."""
    low, high = (float(v) - float(exact) for v in interval)
    value = float(estimate) - float(exact)
    if not exact_first:
        value, low, high = -value, -high, -low
    return {
        "value": value,
        "interval": [low, high],
        "p_value": float(p_value),
        "paired": True,
        "method": "exact-vs-sample",
    }
