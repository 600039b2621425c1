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
Its terminal text and Markdown (:func:`compare_text`, :func:`compare_markdown`) are below, with any probe's headline
numbers side by side (:func:`compare_headlines`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from unqover import format as formats
from unqover.errors import UnqoverError
from unqover.report.markdown import (
    ALL_GROUPS,
    GENERALIZATION,
    HEADLINE_NAMES,
    headline,
    md,
    md_text,
    sample_line,
    table,
)
from unqover.results import check_comparable, dataset_of, model_of, run_settings, sample_of, split_results


def _scope(result: Mapping) -> str:
    """What a run's numbers come from: ``estimated from n of M groups (p%), …`` or ``all N groups``."""
    line = sample_line(result)
    if line is not None:
        return line
    total = formats.number(result.get("num_groups"))
    return ALL_GROUPS if total is None else f"all {formats.fmt_count(total)} groups"


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
        "confidence": formats.number((ra.get("bootstrap") or {}).get("confidence")),
        "warnings": warnings,
        "scopes": [_scope(ra), _scope(rb)],
        **numbers,
        "headline": rows,
    }


def _shift_text(row: Mapping) -> str:
    """A shift with its interval, ``+0.0500 [+0.0100, +0.0900]``; ``+0.1000 (exact)``; ``— (declined: …)``; the
    value alone without an interval."""
    if row.get("declined"):
        return f"{formats.MISSING} ({formats.fmt_declined(row['declined'])})"
    value = row.get("value", row.get("shift"))
    if row.get("method") == "exact":
        return f"{formats.fmt_signed(value)} (exact)"
    return formats.fmt_estimate(value, row.get("interval", row.get("shift_interval")), signed=True)


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
    drawn = f"{formats.fmt_count(groups[0])} and {formats.fmt_count(groups[1])} of {formats.fmt_count(of)} groups scored"
    if method == "paired":
        return f"paired over the {formats.fmt_count(shared)} groups both runs scored ({drawn})"
    return f"unpaired: the runs scored different samples ({drawn}, {formats.fmt_count(shared)} shared)"


def _subjects_heading(subjects: Sequence[Mapping], top: int) -> str:
    """The heading of the subjects that moved most (the terminal's and the Markdown's)."""
    return f"Subjects by |shift of γ(x)| (top {min(top, len(subjects))} of {len(subjects)}, no intervals)"


def _clusters_heading(comparison: Mapping, rows: Sequence[Mapping]) -> str:
    """The heading of the cluster–attribute cells that moved most (the terminal's and the Markdown's)."""
    return (
        f"Most changed cluster–attribute cells by |shift of γ(cluster, a)| (top {len(rows)} of "
        f"{comparison['num_cluster_cells']:,}, no intervals)"
    )


def _gamma_cells(row: Mapping) -> list[str]:
    """A moved row's cells in the Markdown tables: γ of run A and its interval, γ of run B and its interval, the
    shift (no interval of its own)."""
    return [
        formats.fmt_signed(row["gamma_a"]),
        formats.fmt_interval(row["interval_a"], signed=True),
        formats.fmt_signed(row["gamma_b"]),
        formats.fmt_interval(row["interval_b"], signed=True),
        formats.fmt_signed(row["shift"]),
    ]


def _pairs_heading(comparison: Mapping) -> str | None:
    """The heading of the γ(x, a) shifts; None when there is nothing to list."""
    method, rows = comparison.get("shift_method"), comparison.get("pairs") or []
    compared, level = (
        comparison.get("num_pairs") or 0,
        formats.fmt_level(comparison.get("confidence")) or "95%",
    )
    if method in ("paired", "unpaired"):
        if not rows:
            return (
                f"No subject–attribute shift is distinguishable from zero (simultaneous {level} intervals over "
                f"{compared:,} cells, {method})."
            )
        listed = comparison.get("num_listed") or len(rows)
        which = (
            f"the {formats.plural(listed, 'cell')} whose interval excludes zero"
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
    method, level = comparison.get("shift_method"), formats.fmt_level(comparison.get("confidence")) or "95%"
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
    names, settings = comparison["names"], comparison.get("settings") or ["", ""]
    # each run's model, with the settings that tell the two runs apart (dtype, system prompt, quick run, ...)
    models = [", ".join(filter(None, pair)) for pair in zip(comparison["models"], settings, strict=True)]
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
    if formats.fmt_interval(interval) == formats.MISSING:
        return ""
    return formats.fmt_estimate(row.get(f"estimate_{side}"), interval)


def declined_lines(comparison: Mapping) -> list[str]:
    """Why a run's headline value is missing, as its reports say: ``μ (per subject) in A and B: declined: …``."""
    names = comparison["names"]
    lines = []
    for row in comparison["headline"]:
        said: dict[str, list[str]] = {}
        for side, name in zip(("a", "b"), names, strict=True):
            if row.get(f"declined_{side}"):
                said.setdefault(formats.fmt_declined(row[f"declined_{side}"]), []).append(name)
        lines += [f"{row['name']} in {' and '.join(runs)}: {text}" for text, runs in said.items()]
    return lines


def _level(comparison: Mapping) -> str:
    level = formats.fmt_level(comparison.get("confidence"))
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
        lines.append(
            f"  {row['name']:<30} {formats.fmt(row['a']):>7} {a:>24} {formats.fmt(row['b']):>7} {b:>24}"
        )
    lines += [f"  {line}" for line in declined_lines(comparison)]
    level = formats.fmt_level(comparison.get("confidence")) or "95%"
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
            f"  {row['name']:<31} {_shift_text(row):<32} {formats.fmt_p(row['p_value']):>8}  {_method_word(row)}".rstrip()
        )
    subjects = comparison["subjects"]
    if subjects and top:
        lines += [
            "",
            f"{_subjects_heading(subjects, top)}:",
        ]
        for r in subjects[:top]:
            ranks = f"rank {formats.fmt_count(r['rank_a'])} → {formats.fmt_count(r['rank_b'])}"
            lines.append(
                f"  {formats.fmt_signed(r['shift']):>8}  {formats.fmt_signed(r['gamma_a'])} → {formats.fmt_signed(r['gamma_b'])}  "
                f"{ranks:<16} {r['subject']}"
            )
    heading = _pairs_heading(comparison)
    if heading is not None:
        lines += ["", heading if heading.endswith(".") else heading + ":"]
        for r in comparison.get("pairs") or []:
            counted = f"{formats.fmt_count(r.get('count'))} values" if r.get("count") is not None else ""
            gammas = (
                f"γ {formats.fmt_signed(r.get('gamma_a'))} → {formats.fmt_signed(r.get('gamma_b'))}"
                if r.get("gamma_a") is not None and r.get("gamma_b") is not None
                else ""
            )
            p_text = f"p {formats.fmt_p(r['p_value'])}" if r.get("p_value") is not None else ""
            lines.append(
                f"  {_shift_text(r):<32} {p_text:<10} {counted:<11} {gammas:<19} {r['subject']} — {r['label']}"
            )
    rows = comparison.get("clusters") or []
    if rows:
        lines += [
            "",
            f"{_clusters_heading(comparison, rows)}:",
        ]
        for r in rows:
            lines.append(
                f"  {formats.fmt_signed(r['shift']):>8}  {formats.fmt_signed(r['gamma_a'])} → {formats.fmt_signed(r['gamma_b'])}  "
                f"{r['cluster']} — {r['label']}"
            )
    only = _only_lines(comparison, limit=20)
    if only:
        lines += ["", "Measured in one run only:", *only]
    lines += ["", _footnote(comparison)]
    return "\n".join(lines)


def _section(
    heading: str, header: Sequence[str], rows: Sequence[Sequence[str]], align: str | None = None
) -> list[str]:
    """A section of the Markdown comparison: its heading (Markdown already) and its table."""
    return ["", f"## {heading}", "", *table(header, rows, align)]


def compare_markdown(comparison: Mapping, title: str | None = None) -> str:
    """The comparison as Markdown."""
    names, top = comparison["names"], comparison.get("top", 10)
    level = _level(comparison)
    lines = [f"# {md(title or f'UnQover comparison: {names[0]} vs {names[1]}')}", ""]
    lines += [f"- {md(line)}" for line in _describe(comparison)]
    lines += [f"- **warning**: {md(w)}" for w in comparison.get("warnings", [])]
    lines += _section(
        "Headline",
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
                formats.fmt(row["a"]),
                _with_interval(row, "a") or formats.MISSING,
                formats.fmt(row["b"]),
                _with_interval(row, "b") or formats.MISSING,
                _shift_text(row),
                formats.fmt_p(row["p_value"]),
                _method_word(row) or "no interval",
            ]
            for row in comparison["headline"]
        ],
        "lrrrrrrl",
    )
    declined = declined_lines(comparison)
    if declined:
        lines += ["", *(f"- {md_text(line)}" for line in declined)]
    subjects = comparison["subjects"]
    if subjects and top:
        lines += _section(
            _subjects_heading(subjects, top),
            ["subject", "γ(x) A", "interval A", "γ(x) B", "interval B", "shift", "rank A → B"],
            [
                [
                    md(r["subject"]),
                    *_gamma_cells(r),
                    f"{formats.fmt_count(r['rank_a'])} → {formats.fmt_count(r['rank_b'])}",
                ]
                for r in subjects[:top]
            ],
        )
    heading = _pairs_heading(comparison)
    if heading is not None and not comparison.get("pairs"):
        lines += ["", "## Subject–attribute shifts", "", md(heading)]
    elif heading is not None:
        lines += _section(
            md(heading),
            ["subject", "attribute", "γ A", "γ B", "shift [interval]", "p", "values", "how"],
            [
                [
                    md(r["subject"]),
                    md(r["label"]),
                    formats.fmt_signed(r.get("gamma_a")),
                    formats.fmt_signed(r.get("gamma_b")),
                    _shift_text(r),
                    formats.fmt_p(r.get("p_value")),
                    formats.fmt_count(r.get("count")),
                    _method_word(r) or "no interval",
                ]
                for r in comparison["pairs"]
            ],
            "llrrrrrl",
        )
    rows = comparison.get("clusters") or []
    if rows:
        lines += _section(
            _clusters_heading(comparison, rows),
            ["cluster", "attribute", "γ A", "interval A", "γ B", "interval B", "shift"],
            [
                [
                    md(r["cluster"]),
                    md(r["label"]),
                    *_gamma_cells(r),
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


def compare_headlines(
    a: Mapping[str, tuple],
    b: Mapping[str, tuple],
    shifts: Mapping[str, float | None],
    names: tuple[str, str],
    warnings: Sequence[str] = (),
    words: tuple[Mapping[str, str], Mapping[str, str]] = ({}, {}),
) -> str:
    """Any probe's headline numbers side by side (name -> (value, interval) per run), with their ``shifts`` B − A
    (name -> value, the probe's), as a Markdown table (it reads as plain text too); each number in its run's
    ``words`` where given (the probe's ``results.headline_text``)."""
    name_a, name_b = names
    lines = [f"| | {md(name_a)} | {md(name_b)} | shift (B − A) |", "|---|---:|---:|---:|"]
    for key in shifts:
        value_a, interval_a = a.get(key, (None, None))
        value_b, interval_b = b.get(key, (None, None))
        shown_a = words[0].get(key) or formats.fmt_estimate(value_a, interval_a)
        shown_b = words[1].get(key) or formats.fmt_estimate(value_b, interval_b)
        lines.append(
            f"| {md(key)} | {md_text(shown_a)} | {md_text(shown_b)} | {formats.fmt_signed(shifts[key])} |"
        )
    return "\n".join([*lines, *(f"\nwarning: {w}" for w in warnings)])
