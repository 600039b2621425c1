"""Intervals and p-values for the shifts B − A between two UnQover runs (``unqover compare``): from both runs' scores
over the dataset rows (the formulas are :mod:`unqover.measure.shifts`'s), paired over the groups both runs scored
when they share nearly all of the smaller sample, unpaired otherwise. The data is the comparison's; its words are
:mod:`unqover.report.compare` and :mod:`unqover.report.compare_text`'s."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from unqover.errors import UnqoverError
from unqover.format import fmt_count, number
from unqover.measure.pairing import PairedScores
from unqover.measure.shifts import cell_shifts, headline_shifts, samples
from unqover.measure.unqover import pair_dataset_rows
from unqover.results import attribute_labels, predictions_of, sample_of, split_results


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
