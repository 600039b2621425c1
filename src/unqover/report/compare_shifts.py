"""Intervals and p-values for the shifts B − A between two UnQover runs: from both runs' scores over the dataset
rows (:mod:`unqover.measure.shifts`), paired over the groups both runs scored when they share nearly all of the
smaller sample, unpaired otherwise."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from unqover.errors import UnqoverError
from unqover.measure.pairing import PairedScores
from unqover.measure.shifts import cell_shifts, headline_shifts, samples
from unqover.measure.unqover import pair_dataset_rows
from unqover.report.charts import attribute_labels
from unqover.report.compare_checks import predictions_of
from unqover.report.format import fmt_count, fmt_declined, number
from unqover.report.markdown import sample_of, split_results


def paired_runs(
    rows,
    scored: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
    results: Sequence[Mapping],
    names: Sequence[str],
    mode: str,
) -> list[tuple[PairedScores, np.ndarray]]:
    """Each run's groups over the whole dataset ``rows`` (its scores where it scored, zeros elsewhere) and the mask
    of the groups it scored; ``results`` are the runs' results (not provenance). Raises :class:`UnqoverError` when
    the scores do not reproduce the groups a run measured."""
    runs = []
    for (score_1, score_2, rows_scored), result, name in zip(scored, results, names, strict=True):
        paired = pair_dataset_rows(
            rows,
            np.where(rows_scored, score_1, 0.0),
            np.where(rows_scored, score_2, 0.0),
            mode=mode,
            drop_incomplete=True,
        )
        observed = rows_scored[paired.rows].all(axis=1)
        sample = sample_of(result)
        measured = (sample["groups"], sample["of"]) if sample else (result.get("num_groups"),) * 2
        found = (int(observed.sum()), paired.num_groups)
        if any(number(m) is not None and int(number(m)) != f for m, f in zip(measured, found, strict=True)):
            raise UnqoverError(
                f"the predictions of {name} cover {found[0]:,} of the dataset's {found[1]:,} groups, but its results "
                f"measured {fmt_count(measured[0])} of {fmt_count(measured[1])}"
            )
        runs.append((paired, observed))
    return runs


def shift_analysis(
    rows,
    scored: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
    a: Mapping,
    b: Mapping,
    names: tuple[str, str] = ("A", "B"),
    *,
    top: int = 10,
) -> dict:
    """Intervals and p-values for the shifts B − A (:mod:`unqover.measure.shifts`), from both runs' scores on the
    dataset ``rows``: ``scored`` holds, per run, score_1, score_2 and the mask of the rows it scored.

    Returns plain data: ``shifts`` (headline key -> value, interval, p_value, paired, method), ``pairs`` (the
    ``top`` γ(x, a) cells whose simultaneous interval excludes zero), ``num_pairs`` (cells compared), ``num_listed``
    and ``samples`` (groups each run scored, shared groups, of how many, paired). Raises :class:`UnqoverError` when
    the scores do not reproduce the groups the runs measured.
    """
    ra, rb = split_results(a)[0], split_results(b)[0]
    mode = ra.get("mode", "default")
    runs = paired_runs(rows, scored, (ra, rb), names, mode)
    (paired_a, observed_a), (paired_b, observed_b) = runs
    confidence = number((ra.get("bootstrap") or {}).get("confidence")) or 0.95
    seeds = tuple(int(number((r.get("bootstrap") or {}).get("seed")) or 0) for r in (ra, rb))
    overlap = samples(observed_a, observed_b)
    shifts = headline_shifts(
        paired_a, paired_b, observed_a, observed_b, mode=mode, confidence=confidence, seeds=seeds
    )
    cells = cell_shifts(paired_a, paired_b, observed_a, observed_b, confidence=confidence, seed=seeds[0])
    listed = cells.listed()
    types = paired_a.attribute_types
    keys = [
        (str(paired_a.attributes[k]), None if types is None else str(types[k]))
        for k in cells.attribute[listed]
    ]
    labels = attribute_labels(keys)
    pairs = []
    for i, key in zip(listed[: max(top, 0)], keys, strict=False):
        p_value = number(cells.p_value[i])
        pairs.append(
            {
                "subject": str(paired_a.subjects[cells.subject[i]]),
                "attribute": key[0],
                "attribute_type": key[1],
                "label": labels[key],
                "value": float(cells.value[i]),
                "interval": [float(cells.low[i]), float(cells.high[i])],
                "p_value": p_value,
                "paired": cells.method == "paired",
                "method": cells.method,
                "count": int(cells.count[i]),
            }
        )
    return {
        "shifts": {name: shift.to_dict() for name, shift in shifts.items()},
        "pairs": pairs,
        "num_pairs": cells.compared,
        "num_listed": len(listed),
        "samples": {
            "groups": list(overlap.groups),
            "shared": int(overlap.shared.sum()),
            "of": overlap.of,
            "paired": overlap.paired,
        },
    }


def shifts_between(
    paths: Sequence[Path],
    a: Mapping,
    b: Mapping,
    names: tuple[str, str],
    scores_of: Callable[[Mapping, Sequence[Path]], tuple],
    *,
    top: int = 10,
) -> tuple[dict | None, str | None]:
    """:func:`shift_analysis` of two runs read from ``paths`` (run folders or results files), or None and why not
    (two full runs need none: their shifts are exact). Both runs must carry the scores of groups of subjects
    (the caller asks only for runs that do); ``scores_of(results_a, [predictions_a, predictions_b])`` gives the
    dataset rows run A measured and each predictions file's (score_1, score_2, scored-row mask) over them."""
    if all(sample_of(split_results(r)[0]) is None for r in (a, b)):
        return None, None
    try:
        paths = [predictions_of(path, split_results(r)[1]) for path, r in zip(paths, (a, b), strict=True)]
        rows, scored = scores_of(a, paths)
    except Exception as err:  # a moved file, an unreachable dataset: the comparison goes on without intervals
        return None, f"cannot read the runs' predictions and dataset ({err})"
    try:
        return shift_analysis(rows, scored, a, b, names, top=top), None
    except (UnqoverError, ValueError) as err:  # scores that do not reproduce the runs' groups
        return None, str(err)


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
    from unqover.measure.ranking import exact_shift, shift_against_exact
    from unqover.measure.unqover import sample_headline, sample_p_value

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
