"""Intervals and p-values for the shifts B − A between two UnQover runs (``unqover compare``): from both runs' scores
over the dataset rows (the formulas are :mod:`unqover.measure.shifts`'s), paired over the groups both runs scored
when they share nearly all of the smaller sample, unpaired otherwise; and every other number of the comparison
(:func:`comparison_numbers`: each run's values beside the shifts, exact for two full runs, the cells that moved,
what one run measured alone). The data is the comparison's; its words are :mod:`unqover.report.compare`'s."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from unqover.errors import NotAtHand, UnqoverError
from unqover.format import number
from unqover.measure.shifts import cell_shifts, headline_shifts, paired_runs, samples
from unqover.results import (
    attribute_key,
    attribute_labels,
    interval_of,
    predictions_of,
    sample_of,
    split_results,
)


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
    except (
        NotAtHand
    ):  # the word lists the runs were generated from: refused, not a comparison without intervals
        raise
    except Exception as err:  # a moved file, an unreachable dataset: the comparison goes on without intervals
        return None, f"cannot read the runs' predictions and dataset ({err})"
    try:
        return shift_analysis(rows, scored, a, b, names, top=top), None
    except (UnqoverError, ValueError) as err:  # scores that do not reproduce the runs' groups
        return None, str(err)


# ---------------------------------------------------------------------------------------------------------------
# the numbers of a comparison: each run's values beside the shifts


COMPARED_KEYS = (
    "mu",
    "eta",
    "subject_mu",
    "subject_eta",
    "positional_error",
    "attributive_error",
    "mean_score",
)


def shift_of(a: object, b: object) -> float | None:
    """B − A of two numbers; None when either is missing."""
    va, vb = number(a), number(b)
    return None if va is None or vb is None else vb - va


def _by_shift(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: (r["shift"] is None, -abs(r["shift"] or 0.0)))


def _interval(pair: Sequence | None) -> list[float] | None:
    return None if pair is None else [float(v) if number(v) is not None else None for v in pair]


def _side_by_side(ra: Mapping, rb: Mapping) -> dict:
    """γ of one record in both runs, with the shift and each run's interval."""
    return {
        "gamma_a": number(ra.get("gamma")),
        "gamma_b": number(rb.get("gamma")),
        "shift": shift_of(ra.get("gamma"), rb.get("gamma")),
        "interval_a": _interval(interval_of(ra)),
        "interval_b": _interval(interval_of(rb)),
    }


def _record_shifts(records_a: Sequence[Mapping], records_b: Sequence[Mapping], row: str) -> tuple[list, dict]:
    """Shifts of γ per (row, attribute) cell present in both runs, by |shift|, and the counts of cells in only one."""
    index_a = {(str(r.get(row)), attribute_key(r)): r for r in records_a}
    index_b = {(str(r.get(row)), attribute_key(r)): r for r in records_b}
    labels = attribute_labels(k[1] for k in [*index_a, *index_b])
    rows = []
    for key in index_a.keys() & index_b.keys():
        ra, rb = index_a[key], index_b[key]
        count = number(ra.get("count"))
        rows.append(
            {
                row: key[0],
                "attribute": key[1][0],
                "attribute_type": key[1][1],
                "label": labels[key[1]],
                **_side_by_side(ra, rb),
                "count": None if count is None else int(count),
            }
        )
    rows.sort(key=lambda r: (r[row], r["label"]))
    only = {"a": len(index_a.keys() - index_b.keys()), "b": len(index_b.keys() - index_a.keys())}
    return _by_shift(rows), only


def _attribute_keys(result: Mapping) -> set[tuple[str, str | None]]:
    """The attributes a result measured (from γ(x, a); the cluster table only when there is no γ(x, a) table)."""
    records = result.get("gamma") or result.get("cluster_gamma") or []
    return {attribute_key(r) for r in records}


def _headline_rows(ra: Mapping, rb: Mapping, exact: bool, shifts: Mapping | None) -> list[dict]:
    """Each compared measure: both runs' values and intervals, the shift with its interval (exact ``[d, d]`` for two
    full runs, else the sampled one of ``shifts``), p-value, pairing, method and why it was declined."""
    unit = ra.get("mu_unit") or "subject"
    intervals_a, intervals_b = ra.get("intervals") or {}, rb.get("intervals") or {}
    rows = []
    for key in COMPARED_KEYS:
        if (
            key in ("subject_mu", "subject_eta")
            and unit == "subject"
            and rb.get("mu_unit", unit) == "subject"
        ):
            continue  # the same numbers as μ and η
        difference = shift_of(ra.get(key), rb.get(key))
        if exact:
            interval = None if difference is None else [difference, difference]
            shift = {
                "value": difference,
                "interval": interval,
                "p_value": None,
                "paired": True,
                "method": "exact",
            }
        elif shifts is not None and key in shifts["shifts"]:
            shift = dict(shifts["shifts"][key])
        else:
            shift = {"value": difference, "interval": None, "p_value": None, "paired": None, "method": None}
        rows.append(
            {
                "key": key,
                "a": number(ra.get(key)),
                "b": number(rb.get(key)),
                "shift": shift["value"],
                "shift_interval": shift["interval"],
                "p_value": shift["p_value"],
                "paired": shift["paired"],
                "method": shift["method"],
                "declined": shift.get("declined"),
                "interval_a": _interval(intervals_a.get(key)),
                "interval_b": _interval(intervals_b.get(key)),
            }
        )
    return rows


def _listed_pairs(
    pairs: list[dict], exact: bool, shifts: Mapping | None, top: int
) -> tuple[list, int, int | None]:
    """The γ(x, a) cells listed, the number compared and the number listed: with sampled ``shifts``, theirs (the
    cells whose simultaneous interval excludes zero) with both runs' γ; otherwise the ``top`` by |shift|."""
    if shifts is not None:
        gammas = {(r["subject"], r["attribute"], r["attribute_type"]): r for r in pairs}
        listed = []
        for cell in shifts["pairs"][: max(top, 0)]:
            known = gammas.get((cell["subject"], cell["attribute"], cell.get("attribute_type")), {})
            listed.append({**cell, "gamma_a": known.get("gamma_a"), "gamma_b": known.get("gamma_b")})
        return listed, shifts["num_pairs"], shifts["num_listed"]
    listed = [
        {
            "subject": r["subject"],
            "attribute": r["attribute"],
            "attribute_type": r["attribute_type"],
            "label": r["label"],
            "value": r["shift"],
            "interval": [r["shift"], r["shift"]] if exact and r["shift"] is not None else None,
            "p_value": None,
            "paired": True if exact else None,
            "method": "exact" if exact else None,
            "count": r["count"],
            "gamma_a": r["gamma_a"],
            "gamma_b": r["gamma_b"],
        }
        for r in pairs[: max(top, 0)]
    ]
    return listed, len(pairs), None


def comparison_numbers(ra: Mapping, rb: Mapping, *, shifts: Mapping | None = None, top: int = 10) -> dict:
    """The numbers of ``unqover compare`` of two UnQover results (``split_results``' result parts), B − A.

    ``shifts`` is :func:`shift_analysis` of the two runs (the sampled shifts' intervals and p-values); two full runs
    need none (their shifts are exact). Returns plain data: ``headline`` (:func:`_headline_rows`), ``shifts`` (key
    -> ``value``, ``interval``, ``p_value``, ``paired``, ``method``), ``shift_method`` ("exact", "paired",
    "unpaired" or None) and ``samples``; ``subjects`` (γ(x) of the subjects in both runs, with ranks) and the
    ``clusters`` (the ``top`` γ(cluster, a) cells, of ``num_cluster_cells``), by |shift|; ``pairs``,
    ``num_pairs``, ``num_listed`` (:func:`_listed_pairs`); ``only_in`` (subjects, attribute labels and the counts
    of cells measured in one run only); ``top``.
    """
    exact = sample_of(ra) is None and sample_of(rb) is None
    sampled = None if exact else shifts
    method = (
        "exact"
        if exact
        else None
        if sampled is None
        else "paired"
        if sampled["samples"]["paired"]
        else "unpaired"
    )
    rows = _headline_rows(ra, rb, exact, sampled)

    sub_a = {str(r.get("subject")): r for r in ra.get("subject_gamma") or []}
    sub_b = {str(r.get("subject")): r for r in rb.get("subject_gamma") or []}
    subjects = []
    for subject in sorted(sub_a.keys() & sub_b.keys()):
        xa, xb = sub_a[subject], sub_b[subject]
        rank_a, rank_b = number(xa.get("rank")), number(xb.get("rank"))
        subjects.append(
            {
                "subject": subject,
                **_side_by_side(xa, xb),
                "rank_a": None if rank_a is None else int(rank_a),
                "rank_b": None if rank_b is None else int(rank_b),
            }
        )

    pairs, pairs_only = _record_shifts(ra.get("gamma") or [], rb.get("gamma") or [], "subject")
    pairs, num_pairs, num_listed = _listed_pairs(pairs, exact, sampled, top)
    clusters, clusters_only = _record_shifts(
        ra.get("cluster_gamma") or [], rb.get("cluster_gamma") or [], "cluster"
    )

    keys_a, keys_b = _attribute_keys(ra), _attribute_keys(rb)
    labels = attribute_labels([*sorted(keys_a, key=str), *sorted(keys_b, key=str)])

    def only(mine: dict, theirs: dict, attrs_mine: set, attrs_theirs: set, side: str) -> dict:
        return {
            "subjects": sorted(mine.keys() - theirs.keys()),
            "attributes": sorted({labels[k] for k in attrs_mine - attrs_theirs}),
            "pairs": pairs_only[side],
            "cluster_cells": clusters_only[side],
        }

    return {
        "headline": rows,
        "shifts": {
            row["key"]: {
                "value": row["shift"],
                "interval": row["shift_interval"],
                "p_value": row["p_value"],
                "paired": row["paired"],
                "method": row["method"],
                **({"declined": row["declined"]} if row["declined"] else {}),
            }
            for row in rows
        },
        "shift_method": method,
        "samples": None if sampled is None else sampled["samples"],
        "subjects": _by_shift(subjects),
        "num_pairs": num_pairs,
        "num_listed": num_listed,
        "pairs": pairs,
        "num_cluster_cells": len(clusters),
        "clusters": clusters[: max(top, 0)],
        "only_in": {
            "a": only(sub_a, sub_b, keys_a, keys_b, "a"),
            "b": only(sub_b, sub_a, keys_b, keys_a, "b"),
        },
        "top": top,
    }
