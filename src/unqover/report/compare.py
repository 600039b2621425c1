"""Compare two UnQover runs on the same dataset: did bias change? The words around the numbers.

The comparison data of ``unqover compare RUN_A RUN_B`` (:mod:`unqover.jobs.compare`) for UnQover runs: the numbers
are :func:`unqover.measure.run_shifts.comparison_numbers`' (this module computes none), set beside the runs' names,
scopes, models and warnings. A run is a run folder holding ``results.json`` (and ``predictions.parquet``) or a
results JSON file as written by ``unqover measure`` (which records the predictions file it read). Shifts are B − A,
of the full-dataset values:

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

from collections.abc import Mapping

from unqover.errors import UnqoverError
from unqover.format import fmt_count, number
from unqover.report.markdown import (
    ALL_GROUPS,
    GENERALIZATION,
    HEADLINE_NAMES,
    headline,
    sample_line,
)
from unqover.results import check_comparable, dataset_of, model_of, run_settings, sample_of, split_results


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


def compare_results(
    a: Mapping,
    b: Mapping,
    name_a: str = "A",
    name_b: str = "B",
    *,
    numbers: Mapping,
    no_shifts: str | None = None,
) -> dict:
    """The comparison of two results dicts of the same dataset, config and mode: ``numbers``
    (:func:`unqover.measure.run_shifts.comparison_numbers` of their result parts, B − A) with the names and words.

    Without intervals for the shifts, ``no_shifts`` says why. Returns plain data: ``names``, ``models``,
    ``settings`` (what tells the runs apart beside their models: :func:`unqover.results.run_settings`),
    ``dataset``, ``mode``, ``mu_unit``, ``confidence``, ``warnings``, ``scopes``; then ``numbers``' ``headline``
    (each row with its measure's ``name``, the estimate each run's interval is for and why a run's value was
    declined), ``shifts``, ``shift_method``, ``samples``, ``subjects``, ``num_pairs``, ``num_listed``, ``pairs``,
    ``num_cluster_cells``, ``clusters``, ``only_in`` and ``top``. Raises :class:`UnqoverError` when the runs
    measured different datasets, configs, splits or modes.
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
    unit = ra.get("mu_unit") or "subject"

    estimates = [{row["key"]: row["estimate"] for row in headline(r)} for r in (ra, rb)]
    declined = [{row["key"]: row["declined"] for row in headline(r) if row["declined"]} for r in (ra, rb)]
    kinds = [_interval_kind(ra), _interval_kind(rb)]
    if None not in kinds and kinds[0] != kinds[1]:
        quick = names[kinds.index("sampling")]
        full = names[kinds.index("generalization")]
        warnings.append(
            f"{quick}'s intervals are for the full-dataset values (a sample of groups), {full}'s are {GENERALIZATION} "
            "(all groups): they answer different questions, so read the shifts, not whether these intervals overlap"
        )
    if numbers["shift_method"] is None:
        warnings.append(
            "no intervals for the shifts: "
            + (no_shifts or "they need both runs' predictions (a run folder's predictions.parquet)")
        )
    rows = [
        {
            "key": row["key"],
            "name": f"{HEADLINE_NAMES[row['key']]} (per {unit})"
            if row["key"] in ("mu", "eta")
            else HEADLINE_NAMES[row["key"]],
            **{k: v for k, v in row.items() if k != "key"},
            # the estimate each interval is for (a full run's bias-corrected μ and η, not its headline value)
            "estimate_a": estimates[0].get(row["key"]),
            "estimate_b": estimates[1].get(row["key"]),
            # why a run's value is missing (a quick run too small for μ or η), as its reports say
            "declined_a": declined[0].get(row["key"]),
            "declined_b": declined[1].get(row["key"]),
        }
        for row in numbers["headline"]
    ]
    return {
        "names": list(names),
        "models": [model_of(pa), model_of(pb)],
        "settings": run_settings([a, b]),
        "dataset": dataset_of(pa) if any(dataset_of(pa).values()) else dataset_of(pb),
        "mode": ra.get("mode", "default"),
        "mu_unit": unit,
        "confidence": number((ra.get("bootstrap") or {}).get("confidence")),
        "warnings": warnings,
        "scopes": [_scope(ra), _scope(rb)],
        **numbers,
        "headline": rows,
    }
