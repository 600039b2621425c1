"""The numbers of ``unqover leaderboard``: each model's value with its simultaneous interval, its rank and rank
interval, and the pairs whose difference stays distinguishable from zero after Holm's correction
(:func:`unqover.measure.stats.holm`, family-wise error).

* Bonferroni: intervals at level 1 − α/K each hold all K at once with probability ≥ 1 − α.
* Rank intervals (1 = least biased): from K simultaneous intervals, a model's best rank is 1 + the number of
  models whose upper bound lies below its lower bound (surely less biased), its worst rank K − the number whose
  lower bound lies above its upper bound (surely more biased). When the intervals hold, the true rank lies in it.
* Full runs: a run that scored the whole dataset has the exact value of its model on that dataset (the target
  every quick run estimates), so its interval is the value itself. Two exact values differ surely or are equal
  (:func:`exact_shift`); an exact value against a quick run's estimate is that estimate's interval moved by the
  exact value, tested by the estimate's own test (:func:`shift_against_exact`, :func:`sample_p_value`).
* Quick runs: their estimates at the simultaneous level (:func:`sample_headline`) and, for two quick runs, the
  shift test of ``unqover compare`` (:mod:`unqover.measure.shifts`).

The words are :mod:`unqover.report.leaderboard`'s."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from unqover.errors import UnqoverError
from unqover.format import fmt_declined, number
from unqover.measure import sampled as sampling
from unqover.measure.pairing import PairedScores
from unqover.measure.shifts import headline_shifts, paired_runs
from unqover.measure.stats import holm
from unqover.measure.unqover import estimates_of_sample, mu_units, sample_units
from unqover.results import sample_of, split_results

METHOD = (
    "simultaneous intervals: each model's interval at level 1 - alpha/K (Bonferroni over the K models), recomputed "
    "from its predictions and the dataset rows; rank intervals from them (best = 1 + models surely less biased, "
    "worst = K - models surely more biased); pairs: the difference with `unqover compare`'s shift test (paired "
    "where the runs share a sample), p-values Holm-adjusted over the K(K-1)/2 pairs, intervals at level "
    "1 - alpha/#pairs; a full run's value is exact for its model on the dataset (the value quick runs estimate): "
    "its interval is [value, value], two full runs differ surely (p-value 0) or tie, and a full run against a "
    "quick run is the quick run's interval and test against the exact value"
)


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


def sample_headline(
    paired: PairedScores,
    observed: np.ndarray,
    *,
    mode: str = "default",
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, sampling.Estimate]:
    """A quick run's estimates of the full-dataset headline values with intervals at ``confidence``, as its own
    measure computes them (``unqover leaderboard`` recomputes them at a simultaneous level)."""
    cluster_of, cluster_labels, cluster_unit = mu_units(paired, mode)
    population, sample = sampling.PopulationCounts.of(paired), paired.subset(np.asarray(observed, dtype=bool))
    _, named = estimates_of_sample(
        sample, population, cluster_of, cluster_labels, cluster_unit, confidence, seed
    )
    return named


def sample_p_value(
    paired: PairedScores,
    observed: np.ndarray,
    metric: str,
    value: float,
    *,
    mode: str = "default",
    seed: int = 0,
) -> float:
    """The two-sided p-value of "the full-dataset ``metric`` equals ``value``" from a quick run's sample: the test
    that :func:`sample_headline`'s interval inverts (it excludes ``value`` at level 1 − α exactly when this p-value
    is below α). δ, ε: the t test of the sample mean (finite population corrected). μ, η: the smaller tail of the
    cross-fitted lower estimate and of the upper estimate, doubled (as ``unqover.measure.shifts`` tests shifts).
    ``unqover leaderboard`` uses it to compare a quick run with a full run's exact value."""
    from scipy import stats

    design = sampling.Design(paired, observed, seed, 0.95)
    if metric in ("positional_error", "attributive_error"):
        per_group = sampling.group_errors(paired)[0 if metric == "positional_error" else 1]
        mean, se = sampling.mean_and_se(per_group[design.observed], design.f)
        if se == 0:
            return 1.0 if mean == value else 0.0
        return float(min(1.0, 2 * stats.t.sf(abs(mean - value) / se, design.n - 1)))
    if metric not in ("mu", "eta"):
        raise ValueError(f"no test for {metric!r}")
    units = sample_units(paired, *mu_units(paired, mode))
    rec = design.records(units["unit_of"], units["num_units"], units["subject_weighted"])
    c = np.concatenate([design.c, -design.c])
    if metric == "mu":
        bounds = sampling.max_abs_bounds(design, rec, c)
    else:
        bounds = sampling.mean_abs_bounds(design, rec, np.sign(c))

    def tail(distance: float, se: float) -> float:  # P(Z >= distance / se), with se = 0 as a sure answer
        return float(stats.norm.sf(distance / se)) if se > 0 else (0.0 if distance > 0 else 1.0)

    above = tail(bounds.lower - value, bounds.lower_se)  # the lower bound lies above value
    below = tail(value - bounds.upper, bounds.upper_se)  # the upper bound lies below value
    return min(1.0, 2 * min(above, below))


def leaderboard_analysis(
    rows,
    scored: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
    results: Sequence[Mapping],
    names: Sequence[str],
    metric: str,
    *,
    each: float,
    pairs: float,
) -> tuple[list[dict], dict[tuple[int, int], dict]]:
    """``unqover leaderboard``'s numbers of K UnQover runs. A quick run: its estimate of ``metric`` with its interval
    recomputed at the confidence ``each`` (:func:`sample_headline`). A full run: its value
    over every group, exact for its model on this dataset (the value quick runs estimate), so its interval is
    [value, value]. For every pair i < j the shift run j − run i: two quick runs by
    :func:`unqover.measure.shifts.headline_shifts` at the confidence ``pairs`` (paired where they share a sample);
    two full runs exactly (:func:`exact_shift`); a full and a quick run from the quick run's
    interval at ``pairs`` and its test against the exact value (:func:`sample_p_value`).
    Raises :class:`UnqoverError` for a declined value or predictions that do not reproduce a run's groups."""
    plain = [split_results(r)[0] for r in results]
    full = [sample_of(result) is None for result in plain]
    mode = plain[0].get("mode", "default")
    runs = paired_runs(rows, scored, plain, names, mode)
    seeds = [int(number((r.get("bootstrap") or {}).get("seed")) or 0) for r in plain]
    models = []
    for (paired, observed), seed, name, result, exact in zip(runs, seeds, names, plain, full, strict=True):
        if exact:
            value = number(result.get(metric))
            if value is None:
                raise UnqoverError(
                    f"{metric} of {name} has no value (the full run declined it): rank by another --metric"
                )
            models.append({"value": value, "interval": [value, value], "groups": int(observed.sum())})
            continue
        estimate = sample_headline(paired, observed, mode=mode, confidence=each, seed=seed)[metric]
        if estimate.value is None or estimate.interval is None:
            raise UnqoverError(
                f"{metric} of {name} has no estimate ({fmt_declined(estimate.declined)}): rank by another --metric, "
                "or rank quick runs of more groups"
            )
        models.append(
            {"value": estimate.value, "interval": list(estimate.interval), "groups": int(observed.sum())}
        )
    shifts = {}
    for i in range(len(runs)):
        for j in range(i + 1, len(runs)):
            (pa_, oa), (pb_, ob) = runs[i], runs[j]
            if full[i] and full[j]:
                shifts[i, j] = exact_shift(models[i]["value"], models[j]["value"])
            elif full[i] or full[j]:
                exact, (quick, observed), seed = (i, runs[j], seeds[j]) if full[i] else (j, runs[i], seeds[i])
                value = models[exact]["value"]
                estimate = sample_headline(quick, observed, mode=mode, confidence=pairs, seed=seed)[metric]
                p_value = sample_p_value(quick, observed, metric, value, mode=mode, seed=seed)
                shifts[i, j] = shift_against_exact(
                    value, estimate.value, estimate.interval, p_value, exact_first=full[i]
                )
            else:
                shift = headline_shifts(
                    pa_, pb_, oa, ob, mode=mode, confidence=pairs, seeds=(seeds[i], seeds[j])
                )
                shifts[i, j] = shift[metric].to_dict()
    return models, shifts


def leaderboard_table(probe: str, metric: str, confidence: float, paths, names, numbers, shifts) -> dict:
    """The leaderboard's data from each model's numbers and the pairwise shifts (run j − run i for i < j)."""
    values = [n["value"] for n in numbers]
    ranks = point_ranks(values)
    spans = rank_intervals([n["interval"][0] for n in numbers], [n["interval"][1] for n in numbers])
    models = [
        {
            "name": names[i],
            "run": str(paths[i]),
            "value": values[i],
            "interval": list(numbers[i]["interval"]),
            "rank": ranks[i],
            "rank_interval": list(spans[i]),
            "groups": numbers[i]["groups"],
        }
        for i in range(len(numbers))
    ]
    order = sorted(range(len(models)), key=lambda i: (ranks[i], names[i]))
    keys = sorted(shifts)
    adjusted = holm([1.0 if shifts[key]["p_value"] is None else shifts[key]["p_value"] for key in keys])
    alpha = 1 - confidence
    distinguishable = []
    for (i, j), p in zip(keys, adjusted, strict=True):
        shift = shifts[i, j]
        if p >= alpha or shift["value"] is None or shift["interval"] is None:
            continue
        low, high = shift["interval"]
        if values[j] >= values[i]:  # j is more biased: the shift j − i is the difference
            less, more, difference, interval = i, j, shift["value"], [low, high]
        else:
            less, more, difference, interval = j, i, -shift["value"], [-high, -low]
        distinguishable.append(
            {
                "less_biased": names[less],
                "more_biased": names[more],
                "difference": difference,
                "interval": interval,
                "p_value": p,
            }
        )
    distinguishable.sort(key=lambda d: (d["p_value"], d["less_biased"], d["more_biased"]))
    return {
        "probe": probe,
        "metric": metric,
        "confidence": confidence,
        "models": [models[i] for i in order],
        "distinguishable": distinguishable,
        "method": METHOD,
    }
