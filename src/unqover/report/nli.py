"""Terminal, Markdown and self-contained HTML views of an NLI gender-occupation result (``results.json``)."""

from __future__ import annotations

from collections.abc import Mapping

from unqover.format import (
    MISSING,
    POINTS_DIGITS,
    fmt,
    fmt_count,
    fmt_estimate,
    fmt_interval,
    fmt_level,
    fmt_p,
    fmt_p_clause,
    plural,
)
from unqover.report.charts import ranking_chart
from unqover.report.diagnostics import listed_names
from unqover.report.markdown import intervals_line, md_text, provenance_markdown, quick_run_text, scope_notes
from unqover.report.page import markdown_report_page

NLI_HEADLINE_LABELS = (
    ("S", "S: same label for both hypotheses (↑ less bias)"),
    ("delta_P", "ΔP: mean absolute difference P_f − P_m (↓)"),
    ("B", "B: pro-stereotypical hypothesis preferred (50 = chance)"),
    ("stereotype_gap", "signed stereotype gap P_stereo − P_anti (0 = none)"),
    ("gender_gap", "signed gender gap P_f − P_m (> 0: female preferred)"),
    ("alpha", "α: overall gender preference"),
    ("beta", "β: stereotype effect"),
    ("neutral_rate", "neutral rate (3-way top label)"),
)


def _points(value: object) -> str:
    """A value in percentage points, as the paper's tables: ``43.02``."""
    return fmt(value, POINTS_DIGITS)


#: the headline numbers (``unqover compare``, the summaries, the page's cards)
NLI_CARD_NAMES = ("S", "delta_P", "B")


def nli_headline(result: Mapping) -> dict[str, str]:
    """The headline numbers' labels and words (:func:`value_text`), as the page's cards show them."""
    labels = dict(NLI_HEADLINE_LABELS)
    return {labels[name]: value_text(result, name) for name in NLI_CARD_NAMES if name in result}


def value_text(result: Mapping, name: str) -> str:
    """A headline number in percentage points as every surface shows it: ``78.95 [74.25, 83.56] (p = 0.0800)``."""
    text = _points(result.get(name))
    if text == MISSING:
        return text
    interval = fmt_interval((result.get("intervals") or {}).get(name), POINTS_DIGITS)
    if interval != MISSING:
        text += f" {interval}"
    elif name in (result.get("intervals_declined") or {}):
        text += " (no interval)"
    p = (result.get("p_values") or {}).get(name)
    return text + (f" ({fmt_p_clause(p)})" if p is not None else "")


def _rows(result: Mapping) -> list[tuple[str, str]]:
    return [(label, value_text(result, name)) for name, label in NLI_HEADLINE_LABELS if name in result]


OCCUPATION_COLUMNS = (("delta_P", "ΔP"), ("B", "B"), ("gender_gap", "gender gap"))  # the per-occupation table


def occupation_cell(row: Mapping, name: str) -> str:
    """A per-occupation value in points; in a quick run with its interval for the full-dataset value
    (``<name>_low``/``<name>_high``), ``12.50 [-40.00, 61.25]``; the value alone where there is none."""
    bounds = (row.get(f"{name}_low"), row.get(f"{name}_high")) if f"{name}_low" in row else None
    return fmt_estimate(row.get(name), bounds, POINTS_DIGITS)


def largest_gap_rows(result: Mapping, k: int | None = None) -> list[Mapping]:
    """The occupations with the largest |gender gap|, at most k: the rows the measure chose
    (``largest_gaps``, :func:`unqover.measure.nli.largest_gaps`), in its order."""
    rows = result.get("by_occupation") or []
    return [rows[i] for i in (result.get("largest_gaps") or [])][:k]


def table_intervals_line(result: Mapping) -> str | None:
    """For a quick run: what the per-occupation table's intervals are (and which were declined); None without."""
    info = result.get("table_intervals") or {}
    line = intervals_line(
        info, "each occupation's full-dataset values", "sampled premises", "template", "premise"
    )
    return (
        None
        if line is None
        else line + "".join(f"; {reason}" for reason in (info.get("declined") or {}).values())
    )


def _by_gender(result: Mapping) -> list[tuple[str, str, str, str]]:
    by = result.get("by_gender", {})
    return [
        (g, *(_points((by.get(g) or {}).get(name)) for name in ("delta_P", "B", "S")))
        for g in ("male", "female")
    ]


def _scope(result: Mapping) -> str:
    """ "76 instances from 34 source premises"."""
    return f"{plural(result['num_instances'], 'instance')} from {plural(result['num_clusters'], 'source premise')}"


def quick_run_line(result: Mapping) -> str | None:
    """For a quick run (``--limit``): what the numbers were estimated from, of how much; None for a full run."""

    def counted(kept: Mapping, total: Mapping) -> str:
        return (
            f"estimated from {fmt_count(kept['source_premises'])} of "
            f"{plural(total['source_premises'], 'source premise')} ({fmt_count(kept['rows'])} of "
            f"{plural(total['rows'], 'row')}, {fmt_count(kept['occupations'])} of "
            f"{plural(total['occupations'], 'occupation')})"
        )

    return quick_run_text(
        result, "rows per occupation, drawn at random within occupation × template", counted
    )


MAX_NOTE_NAMES = 6  # statistics a note lists by name; the rest are counted


def note_text(note: Mapping) -> str:
    """One of a result's ``notes`` (what the number of source premises allows, as
    :func:`unqover.measure.nli.cluster_notes` records it) in words."""
    code, premises = note.get("code"), plural(note.get("clusters"), "source premise")
    if code == "few_clusters":
        return f"only {premises} behind these numbers: too few to say how uncertain they are" + (
            f"; no intervals (they need at least {fmt_count(note.get('needed'))} premises)"
            if note.get("intervals")
            else ""
        )
    if code == "few_gender_clusters":
        gender = note.get("gender")
        return (
            f"only {premises} with {gender}-labelled occupations: the {gender} breakdown, α and β have no "
            "intervals"
        )
    if code == "t_intervals":
        return (
            f"{premises}: intervals are t intervals with {fmt_count(note.get('df'))} degrees of freedom from the "
            "bootstrap standard error, wider than percentile ones, which are too narrow with few premises"
        )
    if code == "p_floor":
        return (
            f"with {premises} the smallest possible sign-flip p-value is {fmt_p(note.get('smallest_p'))}: no test "
            f"can reach {fmt(note.get('alpha'), 2)}"
        )
    if code == "same_value":
        named = listed_names(list(note.get("names") or []), MAX_NOTE_NAMES)
        return (
            f"{named}: every resample gave the same value, so no interval (the premises agree; that is not "
            "certainty)"
        )
    return str(code)


def shown_warnings(result: Mapping) -> list[str]:
    """Everything a result warns about, in words, as every view shows it: a degenerate run's ``warnings`` (already
    words), then its ``notes`` (an older results.json has the notes' words in ``warnings`` and no ``notes``)."""
    return [*(result.get("warnings") or []), *(note_text(note) for note in result.get("notes") or [])]


def _interval_note(result: Mapping) -> str:
    boot = result.get("bootstrap") or {}
    if not boot:
        return "no intervals"
    level = fmt_level(boot.get("confidence", 0.95))
    methods = set((boot.get("methods") or {}).values())
    if not methods:
        return "no intervals (too few source premises)"
    if methods == {"percentile"}:
        return f"{level} cluster-bootstrap intervals over source premises"
    if "percentile" not in methods:
        return f"{level} t intervals from a cluster-bootstrap standard error (fewer than 30 source premises)"
    return (
        f"{level} cluster-bootstrap intervals over source premises (percentile; t intervals from the bootstrap "
        "standard error for numbers that rest on fewer than 30 premises)"
    )


def nli_summary(result: Mapping) -> str:
    """The headline numbers (percent) with intervals, the paper's Table 6 view, and any warnings."""
    lines = [f"NLI gender-occupation bias: {_scope(result)}"]
    quick = quick_run_line(result)
    if quick:
        lines.append(f"  {quick}")
    lines += [f"  warning: {warning}" for warning in shown_warnings(result)]  # above what they qualify
    lines += [f"  {label:<58} {value}" for label, value in _rows(result)]
    lines += ["", "  by occupation gender      ΔP      B       S"]
    lines += [f"  {g:<24} {dp:>7} {b:>7} {s:>7}" for g, dp, b, s in _by_gender(result)]
    explained = table_intervals_line(result)
    if explained:  # a quick run: the occupations' values are estimates, shown with their intervals
        lines += ["", *_occupation_lines(result), f"  {explained}"]
    return "\n".join(lines)


def _occupation_lines(result: Mapping) -> list[str]:
    """A quick run's occupations with the largest gender gap, each value with its interval, as aligned lines."""
    shown = largest_gap_rows(result)
    total = len(result.get("by_occupation") or [])
    header = [f"by occupation ({len(shown)} largest gender gaps of {total})", "n"]
    header += [label for _, label in OCCUPATION_COLUMNS]
    rows = [
        [f"{r.get('occupation')} ({r.get('occupation_gender') or '?'})", fmt_count(r.get("count"))]
        + [occupation_cell(r, name) for name, _ in OCCUPATION_COLUMNS]
        for r in shown
    ]
    widths = [max(len(cells[k]) for cells in [header, *rows]) for k in range(len(header))]
    return [
        "  "
        + "  ".join(
            c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in enumerate(zip(cells, widths, strict=True))
        )
        for cells in [header, *rows]
    ]


def nli_markdown(results: Mapping) -> str:
    result, provenance = results["result"], results.get("provenance", {})
    model = provenance.get("model", {})
    lines = [
        f"# NLI gender-occupation bias of {model.get('id', 'a model')}",
        "",
        "> Content warning: the probe pairs occupations with gender stereotypes by design.",
        "",
        f"{_scope(result)} (an instance is a premise × template); percent; {_interval_note(result)}; "
        "p-values from sign-flip permutations.",
        "",
        *scope_notes(quick_run_line(result), shown_warnings(result)),
        "| measure | value |",
        "|---|---|",
        *[f"| {label} | {value} |" for label, value in _rows(result)],
        "",
        "| occupation gender | ΔP | B | S |",
        "|---|---|---|---|",
        *[f"| {g} | {dp} | {b} | {s} |" for g, dp, b, s in _by_gender(result)],
        "",
        "| occupation | label | n | ΔP | B | gender gap |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for row in result.get("by_occupation", []):
        lines.append(
            f"| {row['occupation']} | {row.get('occupation_gender', '')} | {fmt_count(row.get('count'))} | "
            + " | ".join(occupation_cell(row, name) for name, _ in OCCUPATION_COLUMNS)
            + " |"
        )
    explained = table_intervals_line(result)
    if explained:  # a quick run's occupations: what their intervals are
        lines += ["", explained[0].upper() + explained[1:] + "."]
    if provenance.get("labels"):
        lines += ["", f"Labels read from the model: {md_text(provenance['labels'])}"]
    lines.append("")
    lines += provenance_markdown(provenance)
    return "\n".join(lines)


def nli_html(results: Mapping) -> str:
    """The report page (:mod:`unqover.report.page`): S, ΔP and B in cards, the Markdown report's tables, the
    occupations' chart and the provenance."""
    extra = []
    occupations = []
    rows = results["result"].get("by_occupation", [])
    for r in (
        rows[i] for i in results["result"].get("gap_ranking") or range(len(rows))
    ):  # the measure's order
        point = {
            "occupation": f"{r['occupation']} ({r.get('occupation_gender', '?')})",
            "gamma": r.get("gender_gap"),
        }
        if "gender_gap_low" in r:  # a quick run's interval: a whisker
            point.update(gamma_low=r.get("gender_gap_low"), gamma_high=r.get("gender_gap_high"))
        occupations.append(point)
    if occupations:
        chart = ranking_chart(
            occupations, title="Occupations by signed gender gap P_f − P_m (points)", label="occupation"
        )
        extra.append(chart)
    return markdown_report_page(
        nli_markdown(results), results, nli_headline(results["result"]), extra, "Occupations"
    )
