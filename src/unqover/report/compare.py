"""Compare two UnQover runs on the same dataset: did bias change? Headline and γ(x, a) shifts with intervals.

``unqover compare RUN_A RUN_B`` (see :func:`main`). A run is a run folder holding ``results.json`` (and
``predictions.parquet``) or a results JSON file as written by ``unqover measure`` (which records the predictions file
it read). Shifts are B − A, of the full-dataset values:

* two full runs: exact shifts (every group was measured);
* otherwise, from both runs' predictions joined by ``id`` to the dataset rows (loaded once): an interval and a p-value
  for each headline shift and the γ(x, a) cells that moved, paired over the groups both runs scored when they share
  nearly all of the smaller sample (same design and seed, nested budgets, or a quick run against a full one),
  unpaired otherwise (:mod:`unqover.measure.shifts`). Without the predictions: the shifts of the values alone, with a
  warning saying why.

Runs on different datasets, configs, splits or modes are refused: their numbers are not comparable. Subjects and
attributes measured in only one run are listed, never silently dropped.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from unqover.errors import UnqoverError
from unqover.measure.shifts import cell_shifts, headline_shifts, samples
from unqover.measure.unqover import pair_dataset_rows
from unqover.report.charts import attribute_key, attribute_labels, interval_of
from unqover.report.format import (
    MISSING,
    fmt,
    fmt_count,
    fmt_estimate,
    fmt_interval,
    fmt_level,
    fmt_p,
    fmt_percent,
    fmt_signed,
    number,
    plural,
)
from unqover.report.markdown import (
    ALL_GROUPS,
    GENERALIZATION,
    headline,
    md,
    sample_line,
    sample_of,
    split_results,
    table,
)

RESULTS_FILE = "results.json"
PREDICTIONS_FILE = "predictions.parquet"
METHODS = {
    "exact": "exact",
    "paired": "paired over the groups both runs scored",
    "unpaired": "unpaired: the runs scored different samples",
}
HEADLINE = (
    ("mu", "bias intensity μ"),
    ("eta", "count-based η"),
    ("subject_mu", "μ per subject"),
    ("subject_eta", "η per subject"),
    ("positional_error", "positional error δ"),
    ("attributive_error", "attributive error ε"),
    ("mean_score", "mean answer score"),
)


# ---------------------------------------------------------------------------------------------------------------
# loading


def load_results(path: str | os.PathLike) -> dict:
    """The results dict of a run folder (its ``results.json``) or of a results JSON file, checked for its shape."""
    path = Path(path)
    if path.is_dir():
        folder, path = path, path / RESULTS_FILE
        if not path.is_file():
            others = sorted(p.name for p in folder.glob("*.json"))
            hint = f"; JSON files there: {', '.join(others[:5])}" if others else ""
            raise UnqoverError(f"no {RESULTS_FILE} in the run folder {folder}{hint}")
    elif not path.exists():
        raise UnqoverError(
            f"{path} not found: pass a run folder holding {RESULTS_FILE} or a results JSON file"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise UnqoverError(f"cannot read {path}: {err}") from err
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise UnqoverError(
            f"{path} is not valid JSON ({err.msg} at line {err.lineno}, column {err.colno})"
        ) from err
    try:
        result, provenance = split_results(data)
    except UnqoverError as err:
        raise UnqoverError(f"{path}: {err}") from err
    return {"provenance": provenance, "result": result}


def predictions_of(path: str | os.PathLike, provenance: Mapping) -> Path:
    """The predictions file of a run: the one ``unqover measure`` recorded, else the run folder's
    ``predictions.parquet``; an error saying why when there is none."""
    path = Path(path)
    recorded = provenance.get("predictions")
    if isinstance(recorded, str) and recorded:
        if Path(recorded).is_file():
            return Path(recorded)
        raise UnqoverError(f"the predictions file {recorded} that {path.name} records is not there")
    folder = path if path.is_dir() else path.parent if path.name == RESULTS_FILE else None
    if folder is not None:
        if (folder / PREDICTIONS_FILE).is_file():
            return folder / PREDICTIONS_FILE
        raise UnqoverError(f"the run folder {folder} has no {PREDICTIONS_FILE}")
    raise UnqoverError(
        f"{path.name} does not record its predictions file (`unqover measure` records it since this version: "
        "measure the predictions again)"
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
    runs = []
    for (score_1, score_2, rows_scored), result, name in zip(scored, (ra, rb), names, strict=True):
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


# ---------------------------------------------------------------------------------------------------------------
# comparing


def _dataset(provenance: Mapping) -> dict:
    dataset = provenance.get("dataset") if isinstance(provenance.get("dataset"), Mapping) else {}
    out = {
        k: (None if dataset.get(k) in (None, "") else str(dataset[k])) for k in ("source", "config", "split")
    }
    out["fingerprint"] = dataset.get("fingerprint") or provenance.get("fingerprint")
    return out


def _same_source(a: str, b: str) -> bool:
    def norm(text: str) -> str:
        local = Path(text).expanduser()
        return str(local.resolve()) if local.exists() else os.path.normpath(text.rstrip("/\\"))

    return a == b or norm(a) == norm(b)


def _model(provenance: Mapping) -> str | None:
    model = provenance.get("model")
    if isinstance(model, Mapping):
        name = model.get("id") or model.get("name")
        return None if not name else f"{name}" + (f" @ {model['revision']}" if model.get("revision") else "")
    return None if model is None else str(model)


def _check_comparable(
    ra: Mapping, pa: Mapping, rb: Mapping, pb: Mapping, names: tuple[str, str]
) -> list[str]:
    """Raise when the runs measured different things; return warnings for what cannot be verified."""
    warnings: list[str] = []
    mode_a, mode_b = ra.get("mode", "default"), rb.get("mode", "default")
    if mode_a != mode_b:
        raise UnqoverError(
            f"{names[0]} was measured in {mode_a} mode and {names[1]} in {mode_b} mode: re-measure one of them "
            f"with `unqover measure --mode {mode_a}` to compare"
        )
    da, db = _dataset(pa), _dataset(pb)
    for key in ("config", "split"):
        if da[key] and db[key] and da[key] != db[key]:
            raise UnqoverError(
                f"the runs measured different dataset {key}s: {names[0]} {da[key]!r}, {names[1]} {db[key]!r}"
            )
    same_fingerprint = bool(
        da["fingerprint"] and db["fingerprint"] and da["fingerprint"] == db["fingerprint"]
    )
    if da["source"] and db["source"] and not _same_source(da["source"], db["source"]):
        if not same_fingerprint:
            raise UnqoverError(
                f"the runs measured different datasets: {names[0]} {da['source']!r}, {names[1]} {db['source']!r}; "
                "their numbers are not comparable"
            )
        warnings.append(
            f"the dataset sources differ ({da['source']}, {db['source']}) but their fingerprints match"
        )
    elif (
        da["fingerprint"]
        and db["fingerprint"]
        and not same_fingerprint
        and pa.get("selection") != pb.get("selection")
    ):
        warnings.append(
            f"the runs kept different rows of the same dataset (selections: {selection_text(pa.get('selection'))}; "
            f"{selection_text(pb.get('selection'))}): quick-run numbers are estimates of the full dataset, with "
            "intervals"
        )
    elif da["fingerprint"] and db["fingerprint"] and not same_fingerprint:
        warnings.append(
            f"same dataset source, different fingerprints ({da['fingerprint']}, {db['fingerprint']}): the data "
            "changed between the runs"
        )
    for key in ("source", "config"):
        missing = [n for n, d in zip(names, (da, db), strict=True) if not d[key]]
        if missing:
            warnings.append(
                f"the dataset {key} of {' and '.join(missing)} is not recorded: cannot check it matches"
            )
    if ra.get("mu_unit") != rb.get("mu_unit"):
        warnings.append(
            f"μ and η average over different units ({ra.get('mu_unit')}, {rb.get('mu_unit')}): compare the "
            "per-subject values"
        )
    for key, what in (("selection", "row selections (limit/sample)"), ("scoring", "scoring methods")):
        if pa.get(key) != pb.get(key) and pa.get(key) is not None and pb.get(key) is not None:
            texts = [selection_text(p.get(key)) if key == "selection" else str(p.get(key)) for p in (pa, pb)]
            warnings.append(f"the runs used different {what}: {texts[0]}; {texts[1]}")
    ca = number((ra.get("bootstrap") or {}).get("confidence"))
    cb = number((rb.get("bootstrap") or {}).get("confidence"))
    if ca is not None and cb is not None and ca != cb:
        warnings.append(f"the intervals have different confidence levels ({fmt_level(ca)}, {fmt_level(cb)})")
    return warnings


def selection_text(selection: object) -> str:
    """A run's row selection in words: ``2,000 groups, seed 0``, ``a 20.0% sample, seed 3``, ``all rows``."""
    if not isinstance(selection, Mapping):
        return "all rows" if selection is None else str(selection)
    parts = []
    if number(selection.get("limit")) is not None:
        parts.append(f"{fmt_count(selection['limit'])} groups")
    if number(selection.get("sample")) is not None:
        parts.append(f"a {fmt_percent(selection['sample'])} sample")
    if number(selection.get("precision")) is not None:
        parts.append(f"precision target {fmt(selection['precision'])}")
    if number(selection.get("groups")) is not None:
        of = number(selection.get("of"))
        parts.append(
            f"{fmt_count(selection['groups'])}"
            + (f" of {fmt_count(of)}" if of is not None else "")
            + " groups"
        )
    if isinstance(selection.get("stopped"), str):
        parts.append(f"stopped: {selection['stopped']}")
    if number(selection.get("seed")) is not None:
        parts.append(f"seed {fmt_count(selection['seed'])}")
    return ", ".join(parts) or "all rows"


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


def _shift(a: object, b: object) -> float | None:
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
                "shift": _shift(ra.get("gamma"), rb.get("gamma")),
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
    warnings = _check_comparable(ra, pa, rb, pb, names)
    intervals_a, intervals_b = ra.get("intervals") or {}, rb.get("intervals") or {}
    unit = ra.get("mu_unit") or "subject"

    estimates = [{row["key"]: row["estimate"] for row in headline(r)} for r in (ra, rb)]
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
    for key, name in HEADLINE:
        if (
            key in ("subject_mu", "subject_eta")
            and unit == "subject"
            and rb.get("mu_unit", unit) == "subject"
        ):
            continue  # the same numbers as μ and η
        ia, ib = intervals_a.get(key), intervals_b.get(key)
        difference = _shift(ra.get(key), rb.get(key))
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
                "shift": _shift(xa.get("gamma"), xb.get("gamma")),
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
        "models": [_model(pa), _model(pb)],
        "dataset": _dataset(pa) if any(_dataset(pa).values()) else _dataset(pb),
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


# ---------------------------------------------------------------------------------------------------------------
# rendering


def _shift_text(row: Mapping) -> str:
    """A shift with its interval, ``+0.0500 [+0.0100, +0.0900]``; ``+0.1000 (exact)``; ``— (declined: …)``; the
    value alone without an interval."""
    if row.get("declined"):
        return f"{MISSING} (declined: {row['declined']})"
    value = row.get("value", row.get("shift"))
    if row.get("method") == "exact":
        return f"{fmt_signed(value)} (exact)"
    return fmt_estimate(value, row.get("interval", row.get("shift_interval")), signed=True)


def _method_word(row: Mapping) -> str:
    method = row.get("method")
    if method is None and row.get("paired") is not None:
        method = "paired" if row["paired"] else "unpaired"
    return method or ""


def _how(comparison: Mapping) -> str:
    """How the shifts were estimated, in words."""
    method, sample = comparison.get("shift_method"), comparison.get("samples") or {}
    if method == "exact":
        return "exact (both runs measured every group)"
    if method is None:
        return "no intervals (see the warning)"
    groups, of, shared = sample.get("groups") or [None, None], sample.get("of"), sample.get("shared")
    drawn = f"{fmt_count(groups[0])} and {fmt_count(groups[1])} of {fmt_count(of)} groups scored"
    if method == "paired":
        return f"paired over the {fmt_count(shared)} groups both runs scored ({drawn})"
    return f"unpaired: the runs scored different samples ({drawn}, {fmt_count(shared)} shared)"


def _pairs_heading(comparison: Mapping) -> str | None:
    """The heading of the γ(x, a) shifts; None when there is nothing to list."""
    method, rows = comparison.get("shift_method"), comparison.get("pairs") or []
    compared, level = comparison.get("num_pairs") or 0, fmt_level(comparison.get("confidence")) or "95%"
    if method in ("paired", "unpaired"):
        if not rows:
            return (
                f"No subject–attribute shift is distinguishable from zero (simultaneous {level} intervals over "
                f"{compared:,} cells, {method})."
            )
        listed = comparison.get("num_listed") or len(rows)
        which = (
            f"the {plural(listed, 'cell')} whose interval excludes zero"
            if listed == len(rows)
            else f"the top {len(rows)} of {listed:,} cells whose interval excludes zero"
        )
        return (
            f"Subject–attribute shifts of γ(x, a): {which}, farthest from zero first (simultaneous {level} "
            f"intervals over {compared:,} cells, {method})"
        )
    if not rows:
        return None
    how = "exact" if method == "exact" else "no intervals"
    return (
        f"Most changed subject–attribute pairs by |shift of γ(x, a)| ({how}; top {len(rows)} of {compared:,})"
    )


def _footnote(comparison: Mapping) -> str:
    method, level = comparison.get("shift_method"), fmt_level(comparison.get("confidence")) or "95%"
    if method in ("paired", "unpaired"):
        return (
            f"Shifts: B − A of the full-dataset values, with {level} intervals ({method}) and p, the p-value of no "
            "shift; the γ(x, a) intervals hold simultaneously over all cells compared. γ(x) and cluster shifts are "
            "the differences of the two runs' values, without intervals."
        )
    if method == "exact":
        return (
            "Shifts: exact, both runs measured every group; the A and B intervals are each run's own (over other "
            "subjects and templates)."
        )
    return (
        "Shifts: the differences of the two runs' values, without intervals (see the warning); the A and B intervals "
        "are each run's own, and whether they overlap is no test of a shift."
    )


def _describe(comparison: Mapping) -> list[str]:
    names, models = comparison["names"], comparison["models"]
    data = comparison.get("dataset") or {}
    what = str(data.get("source") or "an unrecorded dataset")
    detail = ", ".join(str(data[k]) for k in ("config", "split") if data.get(k))
    scopes = comparison.get("scopes") or [None, None]
    lines = [
        f"A = {names[0]}"
        + (f" ({models[0]})" if models[0] else "")
        + (f": {scopes[0]}" if scopes[0] else ""),
        f"B = {names[1]}"
        + (f" ({models[1]})" if models[1] else "")
        + (f": {scopes[1]}" if scopes[1] else ""),
        f"dataset {what}"
        + (f" ({detail})" if detail else "")
        + f", {comparison.get('mode')} mode; shifts are B − A",
        f"shifts: {_how(comparison)}",
    ]
    return lines


def _with_interval(row: Mapping, side: str) -> str:
    """A headline row's interval beside the estimate it is for (empty without an interval)."""
    interval = row.get(f"interval_{side}")
    if fmt_interval(interval) == MISSING:
        return ""
    return fmt_estimate(row.get(f"estimate_{side}"), interval)


def _level(comparison: Mapping) -> str:
    level = fmt_level(comparison.get("confidence"))
    return f"{level} intervals" if level else "intervals"


def _listing(names: Sequence[str], limit: int | None) -> str:
    if limit is None or len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f", … ({len(names) - limit} more)"


def _only_lines(comparison: Mapping, bullet: str = "  ", limit: int | None = None) -> list[str]:
    lines = []
    for side, name in zip(("a", "b"), comparison["names"], strict=True):
        only = comparison["only_in"][side]
        parts = []
        if only["subjects"]:
            parts.append(f"subjects ({len(only['subjects'])}): {_listing(only['subjects'], limit)}")
        if only["attributes"]:
            parts.append(f"attributes ({len(only['attributes'])}): {_listing(only['attributes'], limit)}")
        if only["pairs"] and not (only["subjects"] or only["attributes"]):
            parts.append(f"{only['pairs']:,} subject–attribute cells")
        if only["cluster_cells"] and not only["attributes"]:
            parts.append(f"{only['cluster_cells']:,} cluster–attribute cells")
        if parts:
            lines.append(f"{bullet}only in {name}: " + "; ".join(parts))
    return lines


def compare_text(comparison: Mapping) -> str:
    """The comparison for the terminal."""
    top = comparison.get("top", 10)
    lines = ["UnQover comparison", *(f"  {line}" for line in _describe(comparison))]
    lines += [f"  warning: {w}" for w in comparison.get("warnings", [])]
    lines += [
        "",
        f"  {'measure':<30} {'A':>7} {'(estimate [interval])':>24} {'B':>7} {'(estimate [interval])':>24}",
    ]
    for row in comparison["headline"]:
        a, b = _with_interval(row, "a"), _with_interval(row, "b")
        lines.append(f"  {row['name']:<30} {fmt(row['a']):>7} {a:>24} {fmt(row['b']):>7} {b:>24}")
    level = fmt_level(comparison.get("confidence")) or "95%"
    with_intervals = comparison.get("shift_method") in ("paired", "unpaired")
    lines += [
        "",
        f"Shifts B − A ({level} intervals for the full-dataset shift, p-value of no shift):"
        if with_intervals
        else f"Shifts B − A, {_how(comparison)}:",
        f"  {'measure':<31} {'shift [interval]':<32} {'p':>8}",
    ]
    for row in comparison["headline"]:
        lines.append(
            f"  {row['name']:<31} {_shift_text(row):<32} {fmt_p(row['p_value']):>8}  {_method_word(row)}".rstrip()
        )
    subjects = comparison["subjects"]
    if subjects and top:
        lines += [
            "",
            f"Subjects by |shift of γ(x)| (top {min(top, len(subjects))} of {len(subjects)}, no intervals):",
        ]
        for r in subjects[:top]:
            ranks = f"rank {fmt_count(r['rank_a'])} → {fmt_count(r['rank_b'])}"
            lines.append(
                f"  {fmt_signed(r['shift']):>8}  {fmt_signed(r['gamma_a'])} → {fmt_signed(r['gamma_b'])}  "
                f"{ranks:<16} {r['subject']}"
            )
    heading = _pairs_heading(comparison)
    if heading is not None:
        lines += ["", heading if heading.endswith(".") else heading + ":"]
        for r in comparison.get("pairs") or []:
            counted = f"{fmt_count(r.get('count'))} values" if r.get("count") is not None else ""
            gammas = (
                f"γ {fmt_signed(r.get('gamma_a'))} → {fmt_signed(r.get('gamma_b'))}"
                if r.get("gamma_a") is not None and r.get("gamma_b") is not None
                else ""
            )
            p_text = f"p {fmt_p(r['p_value'])}" if r.get("p_value") is not None else ""
            lines.append(
                f"  {_shift_text(r):<32} {p_text:<10} {counted:<11} {gammas:<19} {r['subject']} — {r['label']}"
            )
    rows = comparison.get("clusters") or []
    if rows:
        lines += [
            "",
            f"Most changed cluster–attribute cells by |shift of γ(cluster, a)| (top {len(rows)} of "
            f"{comparison['num_cluster_cells']:,}, no intervals):",
        ]
        for r in rows:
            lines.append(
                f"  {fmt_signed(r['shift']):>8}  {fmt_signed(r['gamma_a'])} → {fmt_signed(r['gamma_b'])}  "
                f"{r['cluster']} — {r['label']}"
            )
    only = _only_lines(comparison, limit=20)
    if only:
        lines += ["", "Measured in one run only:", *only]
    lines += ["", _footnote(comparison)]
    return "\n".join(lines)


def compare_markdown(comparison: Mapping, title: str | None = None) -> str:
    """The comparison as Markdown."""
    names, top = comparison["names"], comparison.get("top", 10)
    level = _level(comparison)
    lines = [f"# {md(title or f'UnQover comparison: {names[0]} vs {names[1]}')}", ""]
    lines += [f"- {md(line)}" for line in _describe(comparison)]
    lines += [f"- **warning**: {md(w)}" for w in comparison.get("warnings", [])]
    lines += ["", "## Headline", ""]
    lines += table(
        [
            "measure",
            f"A: {md(names[0])}",
            f"A: estimate [{level}]",
            f"B: {md(names[1])}",
            f"B: estimate [{level}]",
            "shift B − A [interval]",
            "p",
            "how",
        ],
        [
            [
                row["name"],
                fmt(row["a"]),
                _with_interval(row, "a") or MISSING,
                fmt(row["b"]),
                _with_interval(row, "b") or MISSING,
                _shift_text(row),
                fmt_p(row["p_value"]),
                _method_word(row) or "no interval",
            ]
            for row in comparison["headline"]
        ],
        "lrrrrrrl",
    )
    subjects = comparison["subjects"]
    if subjects and top:
        lines += [
            "",
            f"## Subjects by |shift of γ(x)| (top {min(top, len(subjects))} of {len(subjects)}, no intervals)",
            "",
        ]
        lines += table(
            ["subject", "γ(x) A", "interval A", "γ(x) B", "interval B", "shift", "rank A → B"],
            [
                [
                    md(r["subject"]),
                    fmt_signed(r["gamma_a"]),
                    fmt_interval(r["interval_a"], signed=True),
                    fmt_signed(r["gamma_b"]),
                    fmt_interval(r["interval_b"], signed=True),
                    fmt_signed(r["shift"]),
                    f"{fmt_count(r['rank_a'])} → {fmt_count(r['rank_b'])}",
                ]
                for r in subjects[:top]
            ],
        )
    heading = _pairs_heading(comparison)
    if heading is not None and not comparison.get("pairs"):
        lines += ["", "## Subject–attribute shifts", "", md(heading)]
    elif heading is not None:
        lines += ["", f"## {md(heading)}", ""]
        lines += table(
            ["subject", "attribute", "γ A", "γ B", "shift [interval]", "p", "values", "how"],
            [
                [
                    md(r["subject"]),
                    md(r["label"]),
                    fmt_signed(r.get("gamma_a")),
                    fmt_signed(r.get("gamma_b")),
                    _shift_text(r),
                    fmt_p(r.get("p_value")),
                    fmt_count(r.get("count")),
                    _method_word(r) or "no interval",
                ]
                for r in comparison["pairs"]
            ],
            "llrrrrrl",
        )
    rows = comparison.get("clusters") or []
    if rows:
        lines += [
            "",
            f"## Most changed cluster–attribute cells by |shift of γ(cluster, a)| (top {len(rows)} of "
            f"{comparison['num_cluster_cells']:,}, no intervals)",
            "",
        ]
        lines += table(
            ["cluster", "attribute", "γ A", "interval A", "γ B", "interval B", "shift"],
            [
                [
                    md(r["cluster"]),
                    md(r["label"]),
                    fmt_signed(r["gamma_a"]),
                    fmt_interval(r["interval_a"], signed=True),
                    fmt_signed(r["gamma_b"]),
                    fmt_interval(r["interval_b"], signed=True),
                    fmt_signed(r["shift"]),
                ]
                for r in rows
            ],
            "llrrrrr",
        )
    only = _only_lines(comparison, bullet="")
    if only:
        lines += ["", "## Measured in one run only", "", *(f"- {md(line)}" for line in only)]
    lines += ["", md(_footnote(comparison)), ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------------
# command line


def _run_name(path: str | os.PathLike) -> str:
    path = Path(path)
    if path.name == RESULTS_FILE or path.is_dir():
        folder = path.parent if path.name == RESULTS_FILE else path
        return folder.resolve().name or str(folder)
    name = path.name
    for suffix in (".json", ".bias"):
        name = name.removesuffix(suffix)
    return name or str(path)


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from err
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="unqover compare",
        description="Compare two UnQover runs measured on the same dataset, config and mode: shifts of μ, η, δ, ε "
        "with both intervals, and the subjects and subject–attribute pairs that changed most (B − A).",
    )
    parser.add_argument(
        "run_a", type=Path, metavar="RUN_A", help="run folder (with results.json) or results JSON"
    )
    parser.add_argument(
        "run_b", type=Path, metavar="RUN_B", help="run folder (with results.json) or results JSON"
    )
    parser.add_argument("--top", type=_non_negative, default=10, help="rows per table (default: %(default)s)")
    parser.add_argument(
        "--output",
        type=Path,
        metavar="FILE.json|FILE.md",
        help="also write the comparison: JSON when the name ends in .json (shifts with their intervals, p-values "
        "and pairing), else Markdown",
    )
    parser.add_argument("--name-a", help="label of RUN_A (default: its folder or file name)")
    parser.add_argument("--name-b", help="label of RUN_B (default: its folder or file name)")
    return parser


def compare_headlines(
    a: Mapping[str, tuple], b: Mapping[str, tuple], name_a: str, name_b: str, warnings: Sequence[str] = ()
) -> str:
    """Any probe's headline numbers side by side (name -> (value, interval) per run), with the shift B − A, as a
    Markdown table (it reads as plain text too)."""
    lines = [f"| | {md(name_a)} | {md(name_b)} | shift (B − A) |", "|---|---:|---:|---:|"]
    for key in dict.fromkeys([*a, *b]):
        value_a, interval_a = a.get(key, (None, None))
        value_b, interval_b = b.get(key, (None, None))
        lines.append(
            f"| {md(key)} | {fmt_estimate(value_a, interval_a)} | {fmt_estimate(value_b, interval_b)} | "
            f"{fmt_signed(_shift(value_a, value_b))} |"
        )
    return "\n".join([*lines, *(f"\nwarning: {w}" for w in warnings)])


def _write(path: Path, comparison: Mapping, markdown: Callable[[], str]) -> Path:
    from unqover.files import write_json_atomic, write_text_atomic

    if path.suffix.lower() == ".json":
        return write_json_atomic(path, comparison)
    return write_text_atomic(path, markdown())


def shifts_between(
    paths: tuple[Path, Path],
    a: Mapping,
    b: Mapping,
    names: tuple[str, str],
    scores_of: Callable | None,
    *,
    top: int = 10,
) -> tuple[dict | None, str | None]:
    """:func:`shift_analysis` of two UnQover runs read from ``paths`` (run folders or results files), or None and
    why not (two full runs need none); ``scores_of(results, predictions paths)`` loads their rows and scores."""
    results = [split_results(r)[0] for r in (a, b)]
    if all(sample_of(r) is None for r in results) or "mu" not in results[0] or "mu" not in results[1]:
        return None, None
    if scores_of is None:
        return None, "this surface reads no predictions"
    try:
        paths = [predictions_of(path, split_results(r)[1]) for path, r in zip(paths, (a, b), strict=True)]
        rows, scored = scores_of(a, paths)
    except Exception as err:  # a moved file, an unreachable dataset: the comparison goes on without intervals
        return None, f"cannot read the runs' predictions and dataset ({err})"
    try:
        return shift_analysis(rows, scored, a, b, names, top=top), None
    except (UnqoverError, ValueError) as err:  # scores that do not reproduce the runs' groups
        return None, str(err)


def main(
    argv: Sequence[str] | None = None,
    headline_of: Callable[[Mapping], Mapping | None] | None = None,
    scores_of: Callable[[Mapping, Sequence[Path]], tuple] | None = None,
) -> int:
    """``unqover compare RUN_A RUN_B [--top K] [--output FILE.json|FILE.md]``; returns the exit status (2 on errors).

    ``headline_of(results)`` gives the headline numbers of a probe other than UnQover (None for UnQover runs,
    which get the full comparison of subjects and cells). ``scores_of(results_a, [predictions_a, predictions_b])``
    gives the dataset rows run A measured and each predictions file's (score_1, score_2, scored-row mask) over
    them, for the shift intervals.
    """
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        a, b = load_results(args.run_a), load_results(args.run_b)
        name_a = args.name_a or _run_name(args.run_a)
        name_b = args.name_b or _run_name(args.run_b)
        head_a, head_b = (None, None) if headline_of is None else (headline_of(a), headline_of(b))
        if (head_a is None) != (head_b is None):
            raise UnqoverError(f"{name_a} and {name_b} were written by different probes")
        if head_a is not None:
            _, pa = split_results(a)
            _, pb = split_results(b)
            if pa.get("probe") != pb.get("probe"):
                raise UnqoverError(f"{name_a} ran {pa.get('probe')} and {name_b} ran {pb.get('probe')}")
            config = [_dataset(p)["config"] for p in (pa, pb)]
            if None not in config and config[0] != config[1]:
                raise UnqoverError(
                    f"the runs measured different dataset configs: {config[0]!r}, {config[1]!r}"
                )
            warnings = [] if pa.get("selection") == pb.get("selection") else ["the runs kept different rows"]
            text = compare_headlines(head_a, head_b, name_a, name_b, warnings)
            print(text)
            if args.output:
                data = {
                    "probe": pa.get("probe"),
                    "names": [name_a, name_b],
                    "shifts": {
                        key: {
                            "value": _shift(head_a.get(key, (None,))[0], head_b.get(key, (None,))[0]),
                            "interval": None,
                            "p_value": None,
                            "paired": None,
                        }
                        for key in dict.fromkeys([*head_a, *head_b])
                    },
                    "warnings": warnings,
                }
                print(f"\nComparison written to {_write(args.output, data, lambda: text + chr(10))}")
            return 0
        comparison = compare_results(
            a, b, name_a, name_b, top=args.top
        )  # refuses runs that are not comparable
        names = tuple(comparison["names"])
        shifts, why = shifts_between((args.run_a, args.run_b), a, b, names, scores_of, top=args.top)
        if shifts is not None or why is not None:
            comparison = compare_results(a, b, name_a, name_b, top=args.top, shifts=shifts, no_shifts=why)
        print(compare_text(comparison))
        if args.output:
            written = _write(args.output, comparison, lambda: compare_markdown(comparison))
            print(f"\nComparison written to {written}")
    except UnqoverError as err:
        print(f"unqover compare: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"unqover compare: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
