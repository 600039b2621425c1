"""Compare two UnQover runs on the same dataset: headline shifts with both intervals, γ(x) and γ(x, a) shifts.

``unqover compare RUN_A RUN_B`` (see :func:`main`). A run is a run folder holding ``results.json`` or a results JSON
file as written by ``unqover measure``. Shifts are B − A. Runs on different datasets, configs, splits or modes are
refused: their numbers are not comparable. Subjects and attributes measured in only one run are listed, never
silently dropped.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from unqover.errors import UnqoverError
from unqover.report.charts import attribute_key, attribute_labels, interval_of
from unqover.report.format import (
    MISSING,
    fmt,
    fmt_count,
    fmt_estimate,
    fmt_interval,
    fmt_level,
    fmt_signed,
    number,
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
            f"the runs kept different rows of the same dataset (selections {pa.get('selection')} and "
            f"{pb.get('selection')}): quick-run numbers are estimates of the full dataset, with intervals"
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
            warnings.append(f"the runs used different {what}: {pa.get(key)}, {pb.get(key)}")
    ca = number((ra.get("bootstrap") or {}).get("confidence"))
    cb = number((rb.get("bootstrap") or {}).get("confidence"))
    if ca is not None and cb is not None and ca != cb:
        warnings.append(f"the intervals have different confidence levels ({fmt_level(ca)}, {fmt_level(cb)})")
    return warnings


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


def _overlap(a: Sequence | None, b: Sequence | None) -> bool | None:
    """Whether two intervals overlap; None when either is missing."""
    if not a or not b or len(a) != 2 or len(b) != 2:
        return None
    lows_highs = [number(v) for v in (*a, *b)]
    if any(v is None for v in lows_highs):
        return None
    low_a, high_a, low_b, high_b = lows_highs
    return low_a <= high_b and low_b <= high_a


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
                "overlap": _overlap(ia, ib),
            }
        )
    rows.sort(key=lambda r: (r[row], r["label"]))
    only = {"a": len(index_a.keys() - index_b.keys()), "b": len(index_b.keys() - index_a.keys())}
    return _by_shift(rows), only


def _attribute_keys(result: Mapping) -> set[tuple[str, str | None]]:
    """The attributes a result measured (from γ(x, a); the cluster table only when there is no γ(x, a) table)."""
    records = result.get("gamma") or result.get("cluster_gamma") or []
    return {attribute_key(r) for r in records}


def compare_results(a: Mapping, b: Mapping, name_a: str = "A", name_b: str = "B", *, top: int = 10) -> dict:
    """Compare two results dicts of the same dataset, config and mode; shifts are B − A.

    Returns plain data: ``names``, ``models``, ``dataset``, ``mode``, ``warnings``; ``headline`` (μ, η, per-subject
    μ and η, δ, ε, mean score: values, shift, both intervals with the estimate each is for, and whether they
    overlap); ``subjects`` (γ(x) of the
    subjects in both runs, with ranks, sorted by |shift|); ``pairs`` and ``clusters`` (the ``top`` most changed
    γ(x, a) and γ(cluster, a)), with the number compared; ``only_in`` (subjects, attributes and cells measured in one
    run only). Raises :class:`UnqoverError` when the runs measured different datasets, configs, splits or modes.
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
            "(all groups): they answer different questions, so their overlap is a rough guide only"
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
        rows.append(
            {
                "key": key,
                "name": f"{name} (per {unit})" if key in ("mu", "eta") else name,
                "a": number(ra.get(key)),
                "b": number(rb.get(key)),
                "shift": _shift(ra.get(key), rb.get(key)),
                "interval_a": _interval(ia),
                "interval_b": _interval(ib),
                # the estimate each interval is for (a full run's bias-corrected μ and η, not its headline value)
                "estimate_a": estimates[0].get(key),
                "estimate_b": estimates[1].get(key),
                "overlap": _overlap(ia, ib),
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
                "overlap": _overlap(ia, ib),
                "rank_a": None if rank_a is None else int(rank_a),
                "rank_b": None if rank_b is None else int(rank_b),
            }
        )
    subjects.sort(key=lambda r: r["subject"])
    subjects = _by_shift(subjects)

    pairs, pairs_only = _cell_shifts(ra.get("gamma") or [], rb.get("gamma") or [], "subject")
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
        "subjects": subjects,
        "num_pairs": len(pairs),
        "pairs": pairs[: max(top, 0)],
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


def _overlap_word(value: bool | None) -> str:
    return MISSING if value is None else "overlap" if value else "disjoint"


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
        f"  {'measure':<30} {'A':>7} {'(estimate [interval])':>24} {'B':>7} {'(estimate [interval])':>24} "
        f"{'shift':>9}  {_level(comparison)}",
    ]
    for row in comparison["headline"]:
        a, b = _with_interval(row, "a"), _with_interval(row, "b")
        lines.append(
            f"  {row['name']:<30} {fmt(row['a']):>7} {a:>24} {fmt(row['b']):>7} {b:>24} "
            f"{fmt_signed(row['shift']):>9}  {'' if row['overlap'] is None else _overlap_word(row['overlap'])}"
        )
    subjects = comparison["subjects"]
    if subjects and top:
        lines += ["", f"Subjects by |shift of γ(x)| (top {min(top, len(subjects))} of {len(subjects)}):"]
        for r in subjects[:top]:
            ranks = f"rank {fmt_count(r['rank_a'])} → {fmt_count(r['rank_b'])}"
            lines.append(
                f"  {fmt_signed(r['shift']):>8}  {fmt_signed(r['gamma_a'])} → {fmt_signed(r['gamma_b'])}  "
                f"{ranks:<16} {_overlap_word(r['overlap']):<8} {r['subject']}"
            )
    for key, count, what in (
        ("pairs", "num_pairs", "subject–attribute pairs by |shift of γ(x, a)|"),
        ("clusters", "num_cluster_cells", "cluster–attribute cells by |shift of γ(cluster, a)|"),
    ):
        rows = comparison.get(key) or []
        if rows:
            row_key = "subject" if key == "pairs" else "cluster"
            lines += ["", f"Most changed {what} (top {len(rows)} of {comparison[count]:,}):"]
            for r in rows:
                lines.append(
                    f"  {fmt_signed(r['shift']):>8}  {fmt_signed(r['gamma_a'])} → {fmt_signed(r['gamma_b'])}  "
                    f"{_overlap_word(r['overlap']):<8} {r[row_key]} — {r['label']}"
                )
    only = _only_lines(comparison, limit=20)
    if only:
        lines += ["", "Measured in one run only:", *only]
    lines += [
        "",
        "Overlap: whether the two intervals overlap; disjoint intervals suggest a real change, overlapping ones do "
        "not rule it out.",
    ]
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
            "shift",
            "intervals",
        ],
        [
            [
                row["name"],
                fmt(row["a"]),
                _with_interval(row, "a") or MISSING,
                fmt(row["b"]),
                _with_interval(row, "b") or MISSING,
                fmt_signed(row["shift"]),
                _overlap_word(row["overlap"]),
            ]
            for row in comparison["headline"]
        ],
    )
    subjects = comparison["subjects"]
    if subjects and top:
        lines += [
            "",
            f"## Subjects by |shift of γ(x)| (top {min(top, len(subjects))} of {len(subjects)})",
            "",
        ]
        lines += table(
            ["subject", "γ(x) A", "interval A", "γ(x) B", "interval B", "shift", "rank A → B", "intervals"],
            [
                [
                    md(r["subject"]),
                    fmt_signed(r["gamma_a"]),
                    fmt_interval(r["interval_a"], signed=True),
                    fmt_signed(r["gamma_b"]),
                    fmt_interval(r["interval_b"], signed=True),
                    fmt_signed(r["shift"]),
                    f"{fmt_count(r['rank_a'])} → {fmt_count(r['rank_b'])}",
                    _overlap_word(r["overlap"]),
                ]
                for r in subjects[:top]
            ],
        )
    for key, count, heading, row_key in (
        ("pairs", "num_pairs", "subject–attribute pairs by |shift of γ(x, a)|", "subject"),
        ("clusters", "num_cluster_cells", "cluster–attribute cells by |shift of γ(cluster, a)|", "cluster"),
    ):
        rows = comparison.get(key) or []
        if rows:
            lines += ["", f"## Most changed {heading} (top {len(rows)} of {comparison[count]:,})", ""]
            lines += table(
                [row_key, "attribute", "γ A", "interval A", "γ B", "interval B", "shift", "intervals"],
                [
                    [
                        md(r[row_key]),
                        md(r["label"]),
                        fmt_signed(r["gamma_a"]),
                        fmt_interval(r["interval_a"], signed=True),
                        fmt_signed(r["gamma_b"]),
                        fmt_interval(r["interval_b"], signed=True),
                        fmt_signed(r["shift"]),
                        _overlap_word(r["overlap"]),
                    ]
                    for r in rows
                ],
                "llrrrrrl",
            )
    only = _only_lines(comparison, bullet="")
    if only:
        lines += ["", "## Measured in one run only", "", *(f"- {md(line)}" for line in only)]
    lines += [
        "",
        "Intervals: whether the two intervals overlap; disjoint intervals suggest a real change, overlapping ones do "
        "not rule it out.",
        "",
    ]
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
        "--output", type=Path, metavar="FILE.md", help="also write the comparison as Markdown"
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


def main(
    argv: Sequence[str] | None = None, headline_of: Callable[[Mapping], Mapping | None] | None = None
) -> int:
    """``unqover compare RUN_A RUN_B [--top K] [--output FILE.md]``; returns the exit status (2 on errors).

    ``headline_of(results)`` gives the headline numbers of a probe other than UnQover (None for UnQover runs,
    which get the full comparison of subjects and cells).
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
                from unqover.files import write_text_atomic

                print(f"\nComparison written to {write_text_atomic(args.output, text + chr(10))}")
            return 0
        comparison = compare_results(a, b, name_a, name_b, top=args.top)
        print(compare_text(comparison))
        if args.output:
            from unqover.files import write_text_atomic

            written = write_text_atomic(args.output, compare_markdown(comparison))
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
