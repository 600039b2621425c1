"""Compare two UnQover runs on the same dataset: did bias change? Headline and γ(x, a) shifts with intervals.

The comparison data of ``unqover compare RUN_A RUN_B`` (:mod:`unqover.jobs.compare`) for UnQover runs. A run is a
run folder holding ``results.json`` (and ``predictions.parquet``) or a results JSON file as written by ``unqover
measure`` (which records the predictions file it read). Shifts are B − A, of the full-dataset values:

* two full runs: exact shifts (every group was measured);
* otherwise, from both runs' predictions joined by ``id`` to the dataset rows (loaded once): an interval and a p-value
  for each headline shift and the γ(x, a) cells that moved, paired over the groups both runs scored when they share
  nearly all of the smaller sample (same design and seed, nested budgets, or a quick run against a full one),
  unpaired otherwise (:mod:`unqover.measure.run_shifts`). Without the predictions: the shifts of the values
  alone, with a warning saying why.

Runs on different datasets, configs, splits or modes are refused (:func:`unqover.results.check_comparable`): their
numbers are not comparable. Subjects and attributes measured in only one run are listed, never silently dropped.
The text and Markdown views are :mod:`unqover.report.compare_text`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from unqover.errors import UnqoverError
from unqover.format import fmt_count, number
from unqover.report.charts import interval_of
from unqover.report.markdown import (
    ALL_GROUPS,
    GENERALIZATION,
    HEADLINE_NAMES,
    headline,
    sample_line,
)
from unqover.results import (
    attribute_key,
    attribute_labels,
    check_comparable,
    dataset_of,
    model_of,
    sample_of,
    split_results,
)

COMPARED_MEASURES = tuple(
    (key, HEADLINE_NAMES[key])
    for key in (
        "mu",
        "eta",
        "subject_mu",
        "subject_eta",
        "positional_error",
        "attributive_error",
        "mean_score",
    )
)


def _scope(result: Mapping) -> str:
    """What a run's numbers come from: ``estimated from n of M groups (p%), …`` or ``all N groups``."""
    line = sample_line(result)
    if line is not None:
        return line
    total = number(result.get("num_groups"))
    return ALL_GROUPS if total is None else f"all {fmt_count(total)} groups"


def _interval_kind(result: Mapping) -> str | None:
    """``sampling`` (quick run), ``generalization`` (full run with intervals) or None (no intervals)."""
    if sample_of(result) is not None:
        return "sampling"
    if not any(v for v in (result.get("intervals") or {}).values()):
        return None
    return result.get("interval_kind") or "generalization"


def shift_of(a: object, b: object) -> float | None:
    """B − A of two numbers; None when either is missing."""
    va, vb = number(a), number(b)
    return None if va is None or vb is None else vb - va


def _by_shift(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: (r["shift"] is None, -abs(r["shift"] or 0.0)))


def _interval(pair: Sequence | None) -> list[float] | None:
    return None if pair is None else [float(v) if number(v) is not None else None for v in pair]


def _cell_shifts(records_a: Sequence[Mapping], records_b: Sequence[Mapping], row: str) -> tuple[list, dict]:
    """Shifts of γ per (row, attribute) cell present in both runs, and the counts of cells in only one."""
    index_a = {(str(r.get(row)), attribute_key(r)): r for r in records_a}
    index_b = {(str(r.get(row)), attribute_key(r)): r for r in records_b}
    labels = attribute_labels(k[1] for k in [*index_a, *index_b])
    rows = []
    for key in index_a.keys() & index_b.keys():
        ra, rb = index_a[key], index_b[key]
        ia, ib = interval_of(ra), interval_of(rb)
        rows.append(
            {
                row: key[0],
                "attribute": key[1][0],
                "attribute_type": key[1][1],
                "label": labels[key[1]],
                "gamma_a": number(ra.get("gamma")),
                "gamma_b": number(rb.get("gamma")),
                "shift": shift_of(ra.get("gamma"), rb.get("gamma")),
                "interval_a": _interval(ia),
                "interval_b": _interval(ib),
                "count": None if number(ra.get("count")) is None else int(number(ra.get("count"))),
            }
        )
    rows.sort(key=lambda r: (r[row], r["label"]))
    only = {"a": len(index_a.keys() - index_b.keys()), "b": len(index_b.keys() - index_a.keys())}
    return _by_shift(rows), only


def _attribute_keys(result: Mapping) -> set[tuple[str, str | None]]:
    """The attributes a result measured (from γ(x, a); the cluster table only when there is no γ(x, a) table)."""
    records = result.get("gamma") or result.get("cluster_gamma") or []
    return {attribute_key(r) for r in records}


def compare_results(
    a: Mapping,
    b: Mapping,
    name_a: str = "A",
    name_b: str = "B",
    *,
    top: int = 10,
    shifts: Mapping | None = None,
    no_shifts: str | None = None,
) -> dict:
    """Compare two results dicts of the same dataset, config and mode; shifts are B − A.

    ``shifts`` is :func:`shift_analysis` of the two runs (intervals and p-values for the shifts); two full runs
    need none (their shifts are exact); without it, ``no_shifts`` says why there are no intervals.

    Returns plain data: ``names``, ``models``, ``dataset``, ``mode``, ``warnings``; ``headline`` (μ, η, per-subject
    μ and η, δ, ε, mean score: each run's value and interval with the estimate it is for, and the shift with its
    interval, p-value and method); ``shifts`` (key -> ``value``, ``interval``, ``p_value``, ``paired``, ``method``);
    ``shift_method`` ("exact", "paired", "unpaired" or None) and ``samples``; ``pairs`` (γ(x, a) shifts: with
    intervals, the ``top`` cells whose simultaneous interval excludes zero, farthest from zero first; exact or
    without intervals, the ``top`` by |shift|: each ``subject``, ``attribute``, ``value``, ``interval``,
    ``p_value``, ``paired``, ``count``), with ``num_pairs`` compared and ``num_listed``; ``subjects`` (γ(x) of the
    subjects in both runs, with ranks) and ``clusters`` (γ(cluster, a)), by |shift|, without intervals;
    ``only_in`` (subjects, attributes and cells measured in one run only). Raises :class:`UnqoverError` when the
    runs measured different datasets, configs, splits or modes.
    """
    ra, pa = split_results(a)
    rb, pb = split_results(b)
    for name, result in ((name_a, ra), (name_b, rb)):
        if "mu" not in result:
            raise UnqoverError(
                f"{name} is not an UnQover probe result (no μ); `unqover compare` compares UnQover runs — compare "
                "NLI runs by the S, ΔP and B, and emotion runs by the tests, in their report.md"
            )
    if name_a == name_b:
        name_a, name_b = f"{name_a} (A)", f"{name_b} (B)"
    names = (name_a, name_b)
    warnings = check_comparable(ra, pa, rb, pb, names)
    intervals_a, intervals_b = ra.get("intervals") or {}, rb.get("intervals") or {}
    unit = ra.get("mu_unit") or "subject"

    estimates = [{row["key"]: row["estimate"] for row in headline(r)} for r in (ra, rb)]
    declined = [{row["key"]: row["declined"] for row in headline(r) if row["declined"]} for r in (ra, rb)]
    scopes = [_scope(ra), _scope(rb)]
    kinds = [_interval_kind(ra), _interval_kind(rb)]
    if None not in kinds and kinds[0] != kinds[1]:
        quick = names[kinds.index("sampling")]
        full = names[kinds.index("generalization")]
        warnings.append(
            f"{quick}'s intervals are for the full-dataset values (a sample of groups), {full}'s are {GENERALIZATION} "
            "(all groups): they answer different questions, so read the shifts, not whether these intervals overlap"
        )

    exact = sample_of(ra) is None and sample_of(rb) is None
    method = (
        "exact"
        if exact
        else None
        if shifts is None
        else "paired"
        if shifts["samples"]["paired"]
        else "unpaired"
    )
    if method is None:
        warnings.append(
            "no intervals for the shifts: "
            + (no_shifts or "they need both runs' predictions (a run folder's predictions.parquet)")
        )
    rows = []
    for key, name in COMPARED_MEASURES:
        if (
            key in ("subject_mu", "subject_eta")
            and unit == "subject"
            and rb.get("mu_unit", unit) == "subject"
        ):
            continue  # the same numbers as μ and η
        ia, ib = intervals_a.get(key), intervals_b.get(key)
        difference = shift_of(ra.get(key), rb.get(key))
        if exact:
            shift = {
                "value": difference,
                "interval": None if difference is None else [difference, difference],
                "p_value": None,
                "paired": True,
                "method": "exact",
            }
        elif method is not None and key in shifts["shifts"]:
            shift = dict(shifts["shifts"][key])
        else:
            shift = {"value": difference, "interval": None, "p_value": None, "paired": None, "method": None}
        rows.append(
            {
                "key": key,
                "name": f"{name} (per {unit})" if key in ("mu", "eta") else name,
                "a": number(ra.get(key)),
                "b": number(rb.get(key)),
                "shift": shift["value"],
                "shift_interval": shift["interval"],
                "p_value": shift["p_value"],
                "paired": shift["paired"],
                "method": shift["method"],
                "declined": shift.get("declined"),
                "interval_a": _interval(ia),
                "interval_b": _interval(ib),
                # the estimate each interval is for (a full run's bias-corrected μ and η, not its headline value)
                "estimate_a": estimates[0].get(key),
                "estimate_b": estimates[1].get(key),
                # why a run's value is missing (a quick run too small for μ or η), as its reports say
                "declined_a": declined[0].get(key),
                "declined_b": declined[1].get(key),
            }
        )

    sub_a = {str(r.get("subject")): r for r in ra.get("subject_gamma") or []}
    sub_b = {str(r.get("subject")): r for r in rb.get("subject_gamma") or []}
    subjects = []
    for subject in sub_a.keys() & sub_b.keys():
        xa, xb = sub_a[subject], sub_b[subject]
        ia, ib = interval_of(xa), interval_of(xb)
        rank_a, rank_b = number(xa.get("rank")), number(xb.get("rank"))
        subjects.append(
            {
                "subject": subject,
                "gamma_a": number(xa.get("gamma")),
                "gamma_b": number(xb.get("gamma")),
                "shift": shift_of(xa.get("gamma"), xb.get("gamma")),
                "interval_a": _interval(ia),
                "interval_b": _interval(ib),
                "rank_a": None if rank_a is None else int(rank_a),
                "rank_b": None if rank_b is None else int(rank_b),
            }
        )
    subjects.sort(key=lambda r: r["subject"])
    subjects = _by_shift(subjects)

    pairs, pairs_only = _cell_shifts(ra.get("gamma") or [], rb.get("gamma") or [], "subject")
    num_pairs, num_listed = len(pairs), None
    if method in ("paired", "unpaired"):
        gammas = {(r["subject"], r["attribute"], r["attribute_type"]): r for r in pairs}
        listed = []
        for cell in shifts["pairs"][: max(top, 0)]:
            known = gammas.get((cell["subject"], cell["attribute"], cell.get("attribute_type")), {})
            listed.append({**cell, "gamma_a": known.get("gamma_a"), "gamma_b": known.get("gamma_b")})
        pairs, num_pairs, num_listed = listed, shifts["num_pairs"], shifts["num_listed"]
    else:
        pairs = [
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
    cluster_rows, clusters_only = _cell_shifts(
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
        "names": list(names),
        "models": [model_of(pa), model_of(pb)],
        "dataset": dataset_of(pa) if any(dataset_of(pa).values()) else dataset_of(pb),
        "mode": ra.get("mode", "default"),
        "mu_unit": unit,
        "confidence": number((ra.get("bootstrap") or {}).get("confidence")),
        "warnings": warnings,
        "scopes": scopes,
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
        "samples": None if shifts is None or exact else shifts["samples"],
        "subjects": subjects,
        "num_pairs": num_pairs,
        "num_listed": num_listed,
        "pairs": pairs,
        "num_cluster_cells": len(cluster_rows),
        "clusters": cluster_rows[: max(top, 0)],
        "only_in": {
            "a": only(sub_a, sub_b, keys_a, keys_b, "a"),
            "b": only(sub_b, sub_a, keys_b, keys_a, "b"),
        },
        "top": top,
    }
