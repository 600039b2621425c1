"""The "most biased subject–attribute pairs" list: chosen so that its intervals hold after the choosing.

Picking the k most extreme of hundreds of γ(x, a) cells picks noise: under no bias at all, the largest |γ| of a
quick run are the cells with the fewest sampled values, and their per-cell intervals miss the full-dataset value
(a 1,500-group religion sample listed ten pairs, none of whose intervals covered). The rule here:

* every cell gets an interval that holds **simultaneously** over all the cells it is chosen from: in a quick run
  the bounded-value intervals at α / K (Bonferroni over the K cells with a sampled value,
  ``unqover.measure.sampled_tables``); in a full run the bootstrap sup-t band over subjects and templates
  (``unqover.measure.bootstrap.simultaneous_band``);
* a pair is listed only when its simultaneous interval excludes zero, and pairs are ranked by how far the interval
  lies from zero (its bound nearest zero), not by |γ|: a cell with few values has a wide interval and ranks low
  however large its estimate;
* an empty list means that no pair is distinguishable from zero at that confidence, and the reports say so.

Since all K intervals hold at once with probability ≥ 1 − α, so do the listed ones, whichever are listed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

TOP = 10  # pairs listed in results.json and the reports

QUICK_RUN_RULE = (
    "bounded-value intervals that hold simultaneously over all {cells} sampled cells (Bonferroni); listed when the "
    "interval excludes zero, ranked by its distance from zero"
)
FULL_RUN_RULE = (
    "bootstrap sup-t band over other subjects and templates, simultaneous over all {cells} cells; listed when the "
    "interval excludes zero, ranked by its distance from zero"
)
NO_INTERVAL_RULE = "no intervals were computed (n_resamples 0): the {k} largest |γ(x, a)| of {cells} cells"


def distance_from_zero(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """How far each interval lies from zero (0 when it contains zero; NaN without an interval)."""
    return np.maximum(np.maximum(low, -high), 0.0)


def select_most_biased(
    gamma: pd.DataFrame, low: np.ndarray, high: np.ndarray, *, confidence: float, method: str, k: int = TOP
) -> tuple[list[dict], dict]:
    """The listed pairs and the rule that chose them, from the γ(x, a) table and its simultaneous bounds.

    ``low``/``high`` align with the rows of ``gamma`` (columns subject, attribute, [attribute_type,] gamma, eta,
    count); all NaN means that no interval was computed, and the k largest |γ| are listed without one.
    """
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    estimate = gamma["gamma"].to_numpy(dtype=float)
    with_interval = np.isfinite(low) & np.isfinite(high)
    cells = int(np.isfinite(estimate).sum())
    if not with_interval.any():
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
