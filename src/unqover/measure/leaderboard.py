"""The numbers of ``unqover leaderboard``: each model's value with its simultaneous interval, its rank and rank
interval, and the pairs whose difference stays distinguishable from zero after Holm's correction. The formulas are
:mod:`unqover.measure.ranking`'s (Bonferroni levels, rank intervals, exact shifts),
:func:`unqover.measure.stats.holm` and, for UnQover runs, :mod:`unqover.measure.shifts`' (pairwise shifts) and
:func:`unqover.measure.unqover.sample_headline` (a quick run's estimate); the words are
:mod:`unqover.report.leaderboard`'s."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from unqover.errors import UnqoverError
from unqover.format import fmt_declined, number
from unqover.measure.ranking import exact_shift, point_ranks, rank_intervals, shift_against_exact
from unqover.measure.run_shifts import paired_runs
from unqover.measure.shifts import headline_shifts
from unqover.measure.stats import holm
from unqover.measure.unqover import sample_headline, sample_p_value
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
    recomputed at the confidence ``each`` (:func:`unqover.measure.unqover.sample_headline`). A full run: its value
    over every group, exact for its model on this dataset (the value quick runs estimate), so its interval is
    [value, value]. For every pair i < j the shift run j − run i: two quick runs by
    :func:`unqover.measure.shifts.headline_shifts` at the confidence ``pairs`` (paired where they share a sample);
    two full runs exactly (:func:`unqover.measure.ranking.exact_shift`); a full and a quick run from the quick run's
    interval at ``pairs`` and its test against the exact value (:func:`unqover.measure.unqover.sample_p_value`).
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
