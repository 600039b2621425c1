"""The "most biased subject–attribute pairs" list: chosen so that its intervals hold after the choosing.

Picking the k most extreme of hundreds of γ(x, a) cells picks noise: under no bias at all, the largest |γ| of a
quick run are the cells with the fewest sampled values, and their per-cell intervals miss the full-dataset value
(a 1,500-group religion sample listed ten pairs, none of whose intervals covered).

**Quick runs: false-coverage-rate control** (Benjamini & Yekutieli, "False discovery rate–adjusted multiple
confidence intervals for selected parameters", JASA 2005). Of the m cells with a sampled value, R are listed, each
with its interval at level 1 − R·q/m (q = 1 − confidence): BY's FCR-adjusted intervals, which keep the false
coverage rate E[(listed intervals that miss) / max(R, 1)] at most q, so that on average over the list at least
1 − q of the listed intervals cover the full-dataset values, whatever was listed (Theorem 1: independent cells,
any selection rule; Theorem 3: the step-up selection below under positive dependence). The cells of one attribute
share their groups (each C value enters two subjects' cells with opposite signs, so they sum to zero), a mild
negative dependence the theorems do not cover; ``scripts/bench_quick_runs.py`` measures the coverage of the listed
intervals under it. (BY's bound for any dependence divides q by H_m = 1 + ½ + … + 1/m, about 7 for religion's 550
cells; it lists almost nothing at the budgets a CPU user runs.)

The selection is the step-up rule on the intervals themselves (BH on the cells' tests of "γ = 0", written with
intervals so that every listed interval excludes zero at its reported level): start at R = m; compute every cell's
interval at α_R = R·q/m; if fewer than R exclude zero, set R to their number and repeat; else list them, farthest
from zero first (cells with few values have wide intervals and rank low however large their estimate). The whole
list is in ``most_biased`` (the reports show its first pairs). With no bias, a list appears in about q of the runs
or fewer. The Bonferroni bound used before (every cell at α/m) is the case R = 1: under a strong bias many cells
are listed and the level each needs grows with R.

**Full runs** (every group, intervals from the bootstrap): the sup-t band over subjects and templates
(``unqover.measure.bootstrap.simultaneous_band``), simultaneous over all cells; a pair is listed when its band
excludes zero, ranked by the band's distance from zero.

An empty list means that no pair is distinguishable from zero at that confidence, and the reports say so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

TOP = 10  # pairs listed in results.json and the reports

QUICK_RUN_RULE = (
    "false-coverage-rate control (Benjamini–Yekutieli FCR-adjusted intervals, BH step-up selection) over {cells} "
    "sampled cells: a pair is listed when its interval at level 1 − R·q/m excludes zero (R listed of m cells, "
    "q = 1 − confidence), ranked by its distance from zero; on average over the list at least 1 − q of the listed "
    "intervals cover the full-dataset values"
)
FULL_RUN_RULE = (
    "bootstrap sup-t band over other subjects and templates, simultaneous over all {cells} cells; listed when the "
    "interval excludes zero, ranked by its distance from zero"
)
NO_INTERVAL_RULE = "no intervals were computed (n_resamples 0): the {k} largest |γ(x, a)| of {cells} cells"


def distance_from_zero(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """How far each interval lies from zero (0 when it contains zero; NaN without an interval)."""
    return np.maximum(np.maximum(low, -high), 0.0)


@dataclass(frozen=True)
class FcrSelection:
    """The cells listed by :func:`fcr_select` (R of them) and their intervals at level 1 − ``alpha`` (NaN elsewhere)."""

    selected: np.ndarray  # (cells,) bool
    low: np.ndarray
    high: np.ndarray
    alpha: float  # R·q/m, or q/m when nothing is listed (the level a single cell would have needed)
    cells: int  # m: cells with an interval
    q: float
    excluding: int = 0  # intervals that exclude zero at level 1 − alpha (≥ R; more than R when capped at k)

    def rule(self, method: str, confidence: float) -> dict:
        """How the list was chosen, for ``most_biased_rule``."""
        return {
            "method": method.format(cells=self.cells),
            "confidence": confidence,
            "false_coverage_rate": self.q,
            "selected_from": self.cells,
            "level": 1 - self.alpha,
            "distinguishable": self.excluding,
        }


def fcr_level(listed: int, cells: int, q: float) -> float:
    """α_R = R·q/m: the level at which R listed intervals of m keep the false coverage rate at most q."""
    return max(listed, 1) * q / cells


def fcr_select(
    intervals_at: Callable[[float], tuple[np.ndarray, np.ndarray]], cells: int, q: float, k: int | None = None
) -> FcrSelection:
    """The cells listed (at most ``k``; default: no cap) with false-coverage-rate control at ``q`` over ``cells`` (m) cells (module
    docstring), from ``intervals_at(α)``: every cell's (low, high) at level 1 − α (NaN for a cell without an
    interval; m counts the others).

    Step-up on the intervals: R starts at k (or m) and drops to the number of intervals that exclude zero at α_R until
    at least R do; the R farthest from zero are listed (ties by the larger |midpoint|)."""
    listed = cells if k is None else min(k, cells)
    low = high = np.full(0, np.nan)
    while listed > 0:
        alpha = fcr_level(listed, cells, q)
        low, high = (np.asarray(v, dtype=float) for v in intervals_at(alpha))
        with np.errstate(invalid="ignore"):
            distance = np.where(np.isfinite(low) & np.isfinite(high), distance_from_zero(low, high), 0.0)
        excluding = int((distance > 0).sum())
        if excluding >= listed:
            selected = np.zeros(len(low), dtype=bool)
            selected[np.lexsort((-np.abs(low + high), -distance))[:listed]] = True
            nan = np.full(len(low), np.nan)
            low, high = np.where(selected, low, nan), np.where(selected, high, nan)
            return FcrSelection(selected, low, high, alpha, cells, q, excluding)
        listed = excluding
    alpha = fcr_level(1, max(cells, 1), q)
    size = len(low) if len(low) else len(intervals_at(alpha)[0])  # no cell (or k = 0): nothing was asked yet
    nan = np.full(size, np.nan)
    return FcrSelection(np.zeros(size, dtype=bool), nan, nan, alpha, cells, q)


def select_most_biased(
    gamma: pd.DataFrame,
    low: np.ndarray,
    high: np.ndarray,
    *,
    confidence: float,
    method: str,
    k: int = TOP,
    fcr: FcrSelection | None = None,
) -> tuple[list[dict], dict]:
    """The listed pairs and the rule that chose them, from the γ(x, a) table and its simultaneous bounds (or,
    with ``fcr``, the intervals of the cells :func:`fcr_select` listed, NaN elsewhere).

    ``low``/``high`` align with the rows of ``gamma`` (columns subject, attribute, [attribute_type,] gamma, eta,
    count); all NaN without ``fcr`` means that no interval was computed, and the k largest |γ| are listed without
    one.
    """
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    estimate = gamma["gamma"].to_numpy(dtype=float)
    with_interval = np.isfinite(low) & np.isfinite(high)
    cells = int(np.isfinite(estimate).sum())
    if fcr is not None:
        distance = np.where(with_interval, distance_from_zero(low, high), 0.0)
        order = np.lexsort((-np.abs(np.nan_to_num(estimate)), -distance))
        chosen = [i for i in order if distance[i] > 0][:k]
        rule = fcr.rule(method, confidence)
        intervals = [[float(low[i]), float(high[i])] for i in chosen]
    elif not with_interval.any():
        order = np.argsort(-np.abs(np.nan_to_num(estimate, nan=-np.inf)), kind="stable")
        chosen = [i for i in order if np.isfinite(estimate[i])][:k]
        rule = {"method": NO_INTERVAL_RULE.format(k=k, cells=cells), "confidence": None}
        intervals = [None] * len(chosen)
    else:
        distance = np.where(with_interval, distance_from_zero(low, high), 0.0)
        order = np.lexsort((-np.abs(np.nan_to_num(estimate)), -distance))
        chosen = [i for i in order if distance[i] > 0][:k]
        rule = {
            "method": method.format(cells=int(with_interval.sum())),
            "confidence": confidence,
            "simultaneous_over": int(with_interval.sum()),
            "distinguishable": int((distance > 0).sum()),
        }
        intervals = [[float(low[i]), float(high[i])] for i in chosen]
    rule.update({"k": k, "listed": len(chosen)})
    listed = []
    for i, interval in zip(chosen, intervals, strict=True):
        row = gamma.iloc[i]
        entry = {
            "subject": row["subject"],
            "attribute": row["attribute"],
            "gamma": float(row["gamma"]),
            "interval": interval,
            "count": int(row["count"]),
            "eta": None if pd.isna(row["eta"]) else float(row["eta"]),
        }
        if "attribute_type" in gamma:
            entry["attribute_type"] = row["attribute_type"]
        listed.append(entry)
    return listed, rule
