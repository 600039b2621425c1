"""``unqover leaderboard`` for the NLI probe: each run's headline number at a simultaneous level and the pairwise
differences, with the machinery of the probe's own intervals (:mod:`unqover.measure.nli`).

A run is its per-cluster sums (the source premises, :func:`unqover.measure.nli_instances.cluster_sums`). The target
is each model's value on the full dataset:

* a full run scored every premise: its value is exact, its interval [value, value];
* a quick run's interval is the probe's cluster bootstrap (:func:`unqover.measure.nli.interval_by_rule`: percentile
  with ≥ 30 premises, a t interval from the bootstrap standard error with 10–29, declined below 10) at the level it
  is asked for, over its sampled premises (no finite-population correction: conservative for the full dataset);
* a pair of quick runs over the same premises (the same seeded sample) is resampled jointly, premise by premise
  (paired); otherwise each run is resampled on its own (unpaired); the difference's interval follows the same
  rule, with the smaller number of premises; its p-value is the one that interval inverts (the doubled smaller
  bootstrap tail of 0 for percentile intervals, the t test for t intervals);
* a full run against a quick run: the quick run's replicates minus the exact value;
* two full runs: the exact difference (:func:`unqover.measure.leaderboard.exact_shift`).

Bootstrap resamples: at least 50 replicates in each tail of the level asked for (so 1 − α/K percentiles are read
from enough replicates), at most :data:`MAX_RESAMPLES`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from unqover.measure.bootstrap import BootstrapSpec
from unqover.measure.leaderboard import exact_shift
from unqover.measure.nli import FEW_CLUSTERS, SIGNED, bootstrap_replicates, interval_by_rule
from unqover.measure.nli_instances import statistics

TAIL_REPLICATES = 50
MAX_RESAMPLES = 200_000


@dataclass(frozen=True)
class NliRunSums:
    """One run: per-cluster sums (K, 2, Q), the cluster labels, whether it scored every premise, its seed."""

    sums: np.ndarray
    labels: np.ndarray
    exact: bool
    seed: int = 0


def resamples_for(confidence: float, recorded: int = 1000) -> int:
    """Bootstrap resamples for an interval at ``confidence``: the run's own, or enough for 50 in each tail."""
    return min(MAX_RESAMPLES, max(recorded, math.ceil(TAIL_REPLICATES / ((1 - confidence) / 2))))


def _point(run: NliRunSums, metric: str, ties: str) -> float:
    return float(statistics(run.sums.sum(axis=0), ties)[metric])


def _replicates(sums: np.ndarray, metric: str, ties: str, confidence: float, seed: int, resamples: int):
    spec = BootstrapSpec(n_resamples=resamples_for(confidence, resamples), confidence=confidence, seed=seed)
    return bootstrap_replicates(sums, ties, spec)[metric]


def _p_value(point: float, replicates: np.ndarray, k: int) -> float:
    """The p-value of "no difference" that :func:`interval_by_rule`'s interval inverts."""
    finite = replicates[~np.isnan(replicates)]
    if k >= FEW_CLUSTERS:
        tails = min((finite <= 0).mean(), (finite >= 0).mean())
        return float(min(1.0, 2 * tails))
    se = float(np.std(finite, ddof=1)) * math.sqrt(k / (k - 1)) if len(finite) > 1 else 0.0
    if se == 0:
        return 1.0 if point == 0 else 0.0
    return float(min(1.0, 2 * stats.t.sf(abs(point) / se, k - 1)))


def _shift(point: float, replicates: np.ndarray, k: int, confidence: float, method: str) -> dict:
    interval, _, declined = interval_by_rule(point, replicates, k, confidence, signed=True)
    if interval[0] is None:
        return {
            "value": point,
            "interval": None,
            "p_value": None,
            "paired": method == "paired",
            "method": method,
            "declined": declined,
        }
    return {
        "value": point,
        "interval": interval,
        "p_value": _p_value(point, replicates, k),
        "paired": method != "unpaired",
        "method": method,
    }


def _aligned(a: NliRunSums, b: NliRunSums) -> np.ndarray | None:
    """Both runs' sums stacked (K, 2, 2, Q) over their premises when they scored the same ones, else None."""
    if len(a.labels) != len(b.labels) or set(a.labels.tolist()) != set(b.labels.tolist()):
        return None
    order_a, order_b = np.argsort(a.labels, kind="stable"), np.argsort(b.labels, kind="stable")
    return np.stack([a.sums[order_a], b.sums[order_b]], axis=1)


def nli_leaderboard(
    runs: Sequence[NliRunSums],
    names: Sequence[str],
    metric: str,
    ties: str,
    *,
    each: float,
    pairs: float,
    resamples: int = 1000,
) -> tuple[list[dict], dict[tuple[int, int], dict]]:
    """Each run's ``metric`` (value, interval at ``each``, clusters as ``groups``) and every pair's shift
    run j − run i (value, interval at ``pairs``, p-value, method), by the rules of the module docstring.
    Raises ValueError naming the run (``names``) whose value or interval is declined."""
    signed = metric in SIGNED
    models = []
    for run, name in zip(runs, names, strict=True):
        value = _point(run, metric, ties)
        if math.isnan(value):
            raise ValueError(f"{metric} of {name} is undefined")
        if run.exact:
            models.append({"value": value, "interval": [value, value], "groups": len(run.labels)})
            continue
        reps = _replicates(run.sums, metric, ties, each, run.seed, resamples)
        interval, _, declined = interval_by_rule(value, reps, len(run.labels), each, signed)
        if interval[0] is None:
            why = "; ".join(f"{key} {v}" for key, v in (declined or {}).items())
            raise ValueError(f"{metric} of {name} has no interval at the simultaneous level ({why})")
        models.append({"value": value, "interval": interval, "groups": len(run.labels)})
    shifts = {}
    for i in range(len(runs)):
        for j in range(i + 1, len(runs)):
            a, b = runs[i], runs[j]
            point = models[j]["value"] - models[i]["value"]
            if a.exact and b.exact:
                shifts[i, j] = exact_shift(models[i]["value"], models[j]["value"])
            elif a.exact or b.exact:
                quick, sign = (b, 1.0) if a.exact else (a, -1.0)
                reps = _replicates(quick.sums, metric, ties, pairs, quick.seed, resamples)
                exact = models[i if a.exact else j]["value"]
                shifts[i, j] = _shift(
                    point, sign * (reps - exact), len(quick.labels), pairs, "exact-vs-sample"
                )
            elif (joint := _aligned(a, b)) is not None:
                reps = _replicates(joint, metric, ties, pairs, a.seed, resamples)
                shifts[i, j] = _shift(point, reps[:, 1] - reps[:, 0], len(a.labels), pairs, "paired")
            else:
                rep_a = _replicates(a.sums, metric, ties, pairs, 2 * a.seed, resamples)
                rep_b = _replicates(b.sums, metric, ties, pairs, 2 * b.seed + 1, resamples)
                k = min(len(a.labels), len(b.labels))
                shifts[i, j] = _shift(point, rep_b - rep_a, k, pairs, "unpaired")
    return models, shifts
