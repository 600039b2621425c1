"""Markdown report of one UnQover results dict, and the plain views of it that the HTML page shares.

A results dict is what ``unqover measure`` writes (and a probe run keeps as ``results.json``):
``{"provenance": {...}, "result": UnqoverBias.to_dict()}``; a bare ``to_dict()`` is accepted too. Everything here
is a pure function of that dict. Numbers, intervals and missing values print by the rules of
:mod:`unqover.format` (missing values as "—", never as 0).

Headline numbers (δ, ε, μ, η) print one way in every report (terminal, Markdown, HTML, the Space), through
:func:`headline` and :func:`fmt_headline`; the value printed beside an interval is always the estimate that
interval is for:

* quick run (``result["sample"]`` set): ``0.2280 [0.2010, 0.2550]``, the estimate of the full-dataset value with its
  interval, and once near the numbers :func:`sample_line` ("estimated from 20,580 of 1,372,000 groups (1.5%), 95%
  intervals for the full-dataset values"); a declined value prints
  ``— (declined: <reason>; about <groups_needed> groups needed)``;
* full run: ``0.4834 (all groups); over other subjects and templates: 0.2678 [0.1547, 0.3734]``, the full-set value,
  then the generalisation interval beside its own (bias-corrected) estimate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from unqover.format import (
    MISSING,
    fmt,
    fmt_count,
    fmt_declined,
    fmt_estimate,
    fmt_interval,
    fmt_level,
    fmt_percent,
    fmt_signed,
    number,
    plural,
)
from unqover.report.provenance import provenance_items
from unqover.results import attribute_key, attribute_labels, interval_of, sample_of, split_results

ALL_GROUPS = "all groups"
GENERALIZATION = "over other subjects and templates"
FULL_DATASET = "intervals for the full-dataset values"
CONTENT_WARNING = (
    "Content warning: this report lists stereotypes (offensive associations between groups of people and "
    "attributes) by design; they are what the probe measures in the model, not statements about anyone."
)
HOW_TO_READ = (
    "γ(x, a) > 0: the model prefers subject x as the answer to questions about attribute a, after cancelling "
    "the effects of subject order and of question negation; γ(x, a) < 0: it avoids x. γ(x) averages over "
    "attributes; rank 1 is the subject most associated with the attributes."
)


# ---------------------------------------------------------------------------------------------------------------
# access and formatting


def level(result: Mapping) -> str:
    """'95%' for the interval columns (or '' without a bootstrap)."""
    return fmt_level((result.get("bootstrap") or {}).get("confidence"))


def clusters(result: Mapping) -> list[str]:
    return list(dict.fromkeys(str(r.get("cluster")) for r in result.get("cluster_gamma") or []))


def intervals_line(info: Mapping, values: str, units: str, strata: str, unit: str) -> str | None:
    """What a quick run's table intervals are (``info``: its ``table_intervals``; None when empty, a full run):
    ``values`` they hold, the sampled ``units`` that admit t intervals, the ``strata`` of the betting intervals
    and the ``unit`` whose every member kept makes them exact."""
    if not info:
        return None
    return (
        f"{fmt_level(info.get('confidence', 0.95))} intervals for {values}: t intervals with the finite-population "
        f"correction where 10 or more {units} allow, near their stated level; betting intervals for bounded values, "
        f"valid at any number, below (stratified by {strata}; exact when every {unit} was kept)"
    )


def sample_line(result: Mapping) -> str | None:
    """``estimated from 20,580 of 1,372,000 groups (1.5%), 95% intervals for the full-dataset values`` for a quick
    run; None for a full run."""
    sample = sample_of(result)
    if sample is None:
        return None
    n, total = number(sample["groups"]), number(sample["of"])
    share = fmt_percent(number(sample.get("fraction")))  # the measure's n / N
    line = f"estimated from {fmt_count(n)} of {fmt_count(total)} groups ({share})"
    return line + (f", {level(result)} {FULL_DATASET}" if level(result) else f", {FULL_DATASET}")


# ---------------------------------------------------------------------------------------------------------------
# views: plain rows shared by the Markdown and HTML reports


#: the one table of the headline numbers' names with their symbols, as every report and summary shows them
HEADLINE_NAMES = {
    "mu": "bias intensity μ",
    "eta": "count-based η",
    "subject_mu": "μ per subject",
    "subject_eta": "η per subject",
    "positional_error": "positional error δ",
    "attributive_error": "attributive error ε",
    "mean_score": "mean answer score",
    "delta_P": "ΔP",  # the NLI probe's S and B are their own symbols
}
#: what each UnQover headline number means, in one line (a model card's bias section)
HEADLINE_MEANINGS = {
    "mu": "how strongly the model prefers one subject for an attribute, averaged over subjects (the largest "
    "|γ(x, a)| of each; position and negation effects removed; 0: none)",
    "eta": "how consistently the model picks one subject over the other, averaged over subjects and attributes "
    "(|η(x, a)|; 0: never consistently, 1: always)",
    "positional_error": "how much the answer changes when the two subjects swap places in the context (0: not at "
    "all)",
    "attributive_error": "how often the answer stays the same when the question is negated (0: it always flips)",
}


def headline(result: Mapping) -> list[dict]:
    """Rows for μ and η (and their per-subject versions when the unit differs), then δ and ε.

    Each row: ``key``, ``name``, ``value`` (the headline: a quick run's estimate of the full-dataset value, or a
    full run's value over all groups), ``estimate`` (what ``interval`` is an interval for), ``interval``,
    ``declined`` (``{"reason", "groups_needed"}`` or None), ``quick`` and ``text`` (:func:`fmt_headline`).
    """
    unit = result.get("mu_unit") or "subject"
    intervals = result.get("intervals") or {}
    estimates = result.get("interval_estimates") or {}
    corrected = result.get("bias_corrected") or {}
    declined = result.get("declined") or {}
    quick = sample_of(result) is not None
    keys = ["mu", "eta", *(["subject_mu", "subject_eta"] if unit != "subject" else []), "positional_error"]
    keys.append("attributive_error")
    rows = []
    for key in keys:
        value = number(result.get(key))
        interval = intervals.get(key)
        if fmt_interval(interval) == MISSING:
            interval = None
        if quick:
            estimate = number(estimates.get(key))
            estimate = value if estimate is None else estimate
        else:
            estimate = number(estimates[key]) if key in estimates else number(corrected.get(key))
        row = {
            "key": key,
            "name": f"{HEADLINE_NAMES[key]} (per {unit})" if key in ("mu", "eta") else HEADLINE_NAMES[key],
            "value": value,
            "estimate": estimate if interval is not None else None,
            "interval": interval,
            "declined": declined.get(key) if isinstance(declined.get(key), Mapping) else None,
            "quick": quick,
        }
        row["same_reason_as"] = _same_reason(row["declined"], rows)
        row["text"] = fmt_headline(row)
        rows.append(row)
    return rows


def _same_reason(declined: Mapping | None, earlier: Sequence[Mapping]) -> str | None:
    """The name of an earlier row declined for the same reason (the same numbers, another measure), so that the
    reason is printed once: η is declined for μ's reason when both cells are too small."""
    if not declined:
        return None
    facts = {k: v for k, v in declined.items() if k not in ("name", "what")}
    for row in earlier:
        other = row.get("declined") or {}
        if other and {k: v for k, v in other.items() if k not in ("name", "what")} == facts:
            return str(other.get("name") or row["name"])
    return None


def headline_parts(row: Mapping) -> tuple[str, str, str]:
    """(value, beside, note) of a :func:`headline` row, the pieces of :func:`fmt_headline`: quick run
    ``("0.2280", "[0.2010, 0.2550]", "")``, declined ``("—", "(declined: …; about 1,375 groups needed)", "")``,
    full run ``("0.4834", "(all groups)", "over other subjects and templates: 0.2678 [0.1547, 0.3734]")``."""
    value = fmt(row.get("value"))
    interval = row.get("interval")
    if value == MISSING and row.get("same_reason_as"):
        needed = number((row.get("declined") or {}).get("groups_needed"))
        groups = f"; about {fmt_count(needed)} groups needed" if needed is not None else ""
        beside = f"(declined for the same reason as {row['same_reason_as']}{groups})"
    elif value == MISSING:
        beside = f"({fmt_declined(row['declined'])})" if row.get("declined") else ""
    elif row.get("quick"):  # a quick run's headline is the estimate its interval is for
        return value, "" if interval is None else fmt_interval(interval), ""
    else:
        beside = f"({ALL_GROUPS})"
    if interval is None or row.get("quick"):
        return value, beside, ""
    return value, beside, f"{GENERALIZATION}: {fmt_estimate(row.get('estimate'), interval)}"


def fmt_headline(row: Mapping) -> str:
    """One headline number in words, the same in every report: ``0.2280 [0.2010, 0.2550]`` (quick run),
    ``— (declined: <reason>; about 1,375 groups needed)``, or
    ``0.4834 (all groups); over other subjects and templates: 0.2678 [0.1547, 0.3734]`` (full run)."""
    value, beside, note = headline_parts(row)
    text = f"{value} {beside}" if beside else value
    if note:
        text += f" ({note})" if value == MISSING else f"; {note}"
    return text


def errors(result: Mapping) -> list[tuple[str, str]]:
    """The other reasoning counts, formatted: (name, value). δ and ε are in :func:`headline`, with intervals."""
    quick = sample_of(result) is not None
    rows = [
        ("mean answer score" + (" (of the sampled groups)" if quick else ""), fmt(result.get("mean_score")))
    ]
    consistency = result.get("position_consistency") or {}
    flips, compared = number(consistency.get("inconsistent")), number(consistency.get("compared"))
    if flips is not None and compared is not None:
        share = f" ({fmt_percent(flips / compared)})" if compared else ""
        rows.append(
            ("preferred subject flips with the order", f"{fmt_count(flips)} of {fmt_count(compared)}{share}")
        )
    if result.get("paper_inconsistent_pairs") is not None:
        rows.append(
            (
                "positionally inconsistent pairs (original count)",
                fmt_count(result["paper_inconsistent_pairs"]),
            )
        )
    return rows


def groups_line(result: Mapping) -> str:
    """What the numbers come from: ``estimated from n of M groups (p%), …`` (quick run) or the groups measured."""
    dropped = number(result.get("dropped_groups"))
    mode = f"; {result.get('mode', 'default')} mode."
    quick = sample_line(result)
    if quick is not None:
        return quick + (f"; {fmt_count(dropped)} incomplete groups dropped" if dropped else "") + mode
    line = f"{fmt_count(result.get('num_groups'))} complete groups measured"
    line += f", {fmt_count(dropped)} incomplete groups dropped" if dropped else ", none dropped"
    return line + mode


def precision_line(provenance: Mapping) -> str | None:
    """How a ``--precision`` run's rounds stopped, from its recorded selection: ``precision target 0.05: target
    not met: widest interval 0.0712 (μ), target 0.05; stopped: --max-rows 4,000 reached`` (or ``target met: …``);
    None for any other run."""
    selection = (provenance or {}).get("selection")
    if not isinstance(selection, Mapping) or number(selection.get("precision")) is None:
        return None
    if isinstance(selection.get("outcome"), str):
        said = selection["outcome"]
    elif isinstance(selection.get("stopped"), str):  # runs recorded before the outcome line
        said = f"stopped: {selection['stopped']}"
    else:
        return None
    return f"precision target {fmt(selection['precision'])}: {said}"


def sample_warning(result: Mapping) -> str | None:
    """A quick run's warning when the scored groups are not the design's random sample."""
    sample = sample_of(result)
    if sample is None:
        return None
    if sample.get("warning"):
        return str(sample["warning"])
    if sample.get("matches_design") is False:
        return (
            "the scored groups are not spread over the strata as a random sample of this size would be; the "
            "intervals assume an equal-probability random sample"
        )
    return None


def unit_line(result: Mapping) -> str:
    """What μ and η average over."""
    unit = result.get("mu_unit") or "subject"
    if unit == "cluster":
        names = ", ".join(clusters(result)) or "clusters"
        return (
            f"μ and η average over the clusters ({names}): μ is the mean over clusters c of max over attributes "
            "of |γ(c, a)|, η the mean of |η(c, a)|. Per-subject values are listed too."
        )
    return "μ and η average over subjects: μ is the mean over subjects x of max over attributes of |γ(x, a)|."


def bootstrap_line(result: Mapping) -> str:
    """How the intervals were made, and what they are intervals for."""
    boot = result.get("bootstrap") or {}
    sample = sample_of(result)
    if sample is not None or result.get("interval_kind") == "sampling":
        parts = [f"{level(result) or 'The'} {FULL_DATASET}, from the sampling of groups".lstrip()]
        design = [f"{k} {sample[k]}" for k in ("design", "seed") if sample and sample.get(k) is not None]
        if design:
            parts.append("sample: " + ", ".join(design))
        if boot.get("method"):
            parts.append(str(boot["method"]))
        return "; ".join(parts) + "."
    if not boot or not number(boot.get("n_resamples")):
        return "No intervals: measured without bootstrap resamples."
    parts = [
        f"{level(result)} bootstrap intervals from {fmt_count(boot['n_resamples'])} resamples "
        f"(seed {boot.get('seed')}), {GENERALIZATION}, each printed beside its own estimate (bias-corrected for μ "
        f"and η); the headline values are those of {ALL_GROUPS}"
    ]
    if boot.get("resampled"):
        parts.append(f"resampled: {boot['resampled']}")
    if boot.get("method"):
        parts.append(str(boot["method"]))
    return "; ".join(parts) + "."


def most_biased(result: Mapping, k: int) -> list[Mapping]:
    """The listed pairs, at most k: ``result["most_biased"]`` (chosen and ordered by ``unqover.measure.most_biased``)
    as γ records whose ``gamma_low``/``gamma_high`` are the simultaneous interval; none in results from before
    that list."""
    return [
        {
            **entry,
            "gamma_low": (entry.get("interval") or [None, None])[0],
            "gamma_high": (entry.get("interval") or [None, None])[1],
        }
        for entry in (result.get("most_biased") or [])[: max(k, 0)]
    ]


def most_biased_heading(result: Mapping, shown: int) -> str:
    """The title of the list: how many pairs it shows and of how many cells."""
    cells = len(result.get("gamma") or [])
    rule = result.get("most_biased_rule") or {}
    if "selected_from" in rule:  # false-coverage-rate control (unqover.measure.most_biased)
        listed = int(rule.get("listed") or 0)
        shown_of = f"{shown} shown of {fmt_count(listed)} listed" if shown < listed else plural(shown, "pair")
        return (
            f"Most biased subject–attribute pairs ({shown_of} with false-coverage-rate control, of "
            f"{fmt_count(cells)} cells)"
        )
    if "simultaneous_over" in rule:
        return (
            f"Most biased subject–attribute pairs ({plural(shown, 'pair')} whose interval excludes zero, of "
            f"{fmt_count(cells)} cells)"
        )
    return f"Most biased subject–attribute pairs (top {shown} of {fmt_count(cells)} by |γ(x, a)|)"


def most_biased_note(result: Mapping) -> str | None:
    """How the list was chosen, and, when nothing is listed, that no pair is distinguishable from zero."""
    rule = result.get("most_biased_rule") or {}
    if not rule.get("method"):
        return None
    how = f"Chosen by {rule['method']}"
    if "selected_from" in rule:
        if not rule.get("listed"):
            return (
                f"No subject–attribute pair is distinguishable from zero: no interval of the "
                f"{fmt_count(rule['selected_from'])} sampled cells excludes 0 at the level a list of one pair "
                f"needs ({fmt_level(rule.get('level'))}). {how}."
            )
        return (
            f"{how}: each listed interval is at {fmt_level(rule.get('level'))}, and on average over the list at "
            f"least {fmt_level(rule.get('confidence'))} of the listed intervals cover (false coverage rate ≤ "
            f"{fmt_level(rule.get('false_coverage_rate'))})."
        )
    if rule.get("confidence") is not None:
        how += f" ({fmt_level(rule['confidence'])} simultaneous intervals)"
    if "simultaneous_over" in rule and not rule.get("listed"):
        return (
            f"No subject–attribute pair is distinguishable from zero: all {fmt_count(rule['simultaneous_over'])} "
            f"simultaneous {fmt_level(rule.get('confidence'))} intervals contain 0. {how}."
        )
    more = rule.get("distinguishable", 0) - rule.get("listed", 0)
    tail = f"; {plural(more, 'more pair')} also exclude zero" if more > 0 else ""
    return f"{how}{tail}."


def ranking_rows(subject_gamma: Sequence[Mapping], k: int) -> list[Mapping | None]:
    """The γ(x) ranking, in the measure's rank order: all records when there are at most 2k, else the first k, None
    (a gap) and the last k."""
    rows = list(subject_gamma)
    if k <= 0 or len(rows) <= 2 * k:
        return rows
    return [*rows[:k], None, *rows[-k:]]


def cluster_tops(cluster_gamma: Sequence[Mapping], k: int) -> dict[str, list[Mapping]]:
    """Per cluster, the k attributes with the highest γ(cluster, a): those most associated with it (Table 2). The
    measure orders ``cluster_gamma`` by cluster, then γ highest first: these are each cluster's first k with a γ."""
    out: dict[str, list[Mapping]] = {}
    for record in cluster_gamma:
        out.setdefault(str(record.get("cluster")), [])
        if number(record.get("gamma")) is not None and len(out[str(record.get("cluster"))]) < k:
            out[str(record.get("cluster"))].append(record)
    return out


def attribute_label_map(result: Mapping) -> dict[tuple[str, str | None], str]:
    """Display labels of all attributes of a result (type shown only where the text is ambiguous)."""
    records = [*(result.get("gamma") or []), *(result.get("cluster_gamma") or [])]
    return attribute_labels(attribute_key(r) for r in records)


def provenance_markdown(provenance: Mapping) -> list[str]:
    """The ``## Provenance`` section of every Markdown report: one bullet per recorded fact."""
    items = provenance_items(provenance)
    return [
        "## Provenance",
        "",
        *([f"- {md(label)}: {md(text)}" for label, text in items] or ["- not recorded"]),
        "",
    ]


def default_title(provenance: Mapping) -> str:
    model = provenance.get("model")
    model_id = (model.get("id") or model.get("name")) if isinstance(model, Mapping) else model
    dataset = provenance.get("dataset") if isinstance(provenance.get("dataset"), Mapping) else {}
    source = str(dataset.get("source") or "").rstrip("/\\")
    name = source.replace("\\", "/").rsplit("/", 1)[-1] if source else ""
    what = f"{name} ({dataset['config']})" if name and dataset.get("config") else name
    title = "UnQover bias report"
    if model_id:
        title += f": {model_id}"
    if what:
        title += f" on {what}"
    return title


# ---------------------------------------------------------------------------------------------------------------
# Markdown


def md(text: object) -> str:
    """Text safe in a Markdown table cell: no HTML, no emphasis or links, no pipes or line breaks."""
    value = " ".join(str(text).split())
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    for char in "\\`*_[]|":
        value = value.replace(char, "\\" + char)
    return value


def scope_notes(quick: str | None, warnings: Sequence[str] | None) -> list[str]:
    """Markdown lines for a quick run's scope and for warnings, each block followed by a blank line."""
    lines = [quick[0].upper() + quick[1:] + ".", ""] if quick else []
    if warnings:
        lines += [f"- **Warning:** {warning}" for warning in warnings] + [""]
    return lines


def quick_run_text(result: Mapping, drawn: str, counted: Callable[[Mapping, Mapping], str]) -> str | None:
    """A quick run's scope in words, ``quick run (--limit N <drawn>, seed S): <counted>``: how its selection was
    ``drawn``, and what it kept of how much (``counted`` from the selection's ``kept`` and ``of`` counts); None
    for a full run (no counts)."""
    selection = result.get("selection") or {}
    kept, total = selection.get("kept"), selection.get("of")
    if not kept or not total:
        return None
    return f"quick run (--limit {selection.get('limit')} {drawn}, seed {selection.get('seed')}): {counted(kept, total)}"


def md_text(text: object) -> str:
    """The project's own text (numbers, intervals, reasons) in a Markdown table cell: one line, no pipes, no HTML;
    brackets stay as they are (names from the data go through :func:`md`)."""
    value = " ".join(str(text).split())
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


def table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str | None = None) -> list[str]:
    """Markdown table lines; ``align``: one of l/r per column (default: first left, rest right)."""
    align = align or "l" + "r" * (len(header) - 1)
    rule = ["---:" if a == "r" else "---" for a in align]
    return [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join(rule) + " |",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def markdown_report(
    results: Mapping, title: str | None = None, *, top: int = 10, cluster_top: int = 5
) -> str:
    """A Markdown report: headline numbers with intervals, errors, most biased pairs, ranking, clusters, provenance."""
    result, provenance = split_results(results)
    ci = f"{level(result)} interval" if level(result) else "interval"
    labels = attribute_label_map(result)
    lines = [f"# {md(title or default_title(provenance))}", "", f"> {CONTENT_WARNING}", ""]
    lines += _headline_md(result, provenance)
    if top:
        lines += _most_biased_md(result, top, ci, labels)
    lines += _ranking_md(result, top, ci)
    lines += _clusters_md(result, cluster_top, ci, labels)
    lines += provenance_markdown(provenance)
    lines += _method_md(result)
    return "\n".join(lines)


def _headline_md(result: Mapping, provenance: Mapping) -> list[str]:
    """The headline section: groups, stopping rule, warnings, the measures and the reasoning errors."""
    lines = ["## Headline", "", groups_line(result), ""]
    stopped = precision_line(provenance)
    if stopped is not None:
        lines += [md_text(stopped[0].upper() + stopped[1:] + "."), ""]
    warning = sample_warning(result)
    if warning:
        lines += [f"> warning: {md_text(warning)}", ""]
    lines += scope_notes(None, [md_text(w) for w in result.get("warnings") or []])  # a degenerate run's
    lines += table(["measure", "value"], [[row["name"], md_text(row["text"])] for row in headline(result)])
    lines += ["", unit_line(result), ""]
    lines += table(["reasoning errors", "value"], [[name, value] for name, value in errors(result)])
    lines += ["", HOW_TO_READ, ""]
    return lines


def _most_biased_md(result: Mapping, top: int, ci: str, labels: Mapping) -> list[str]:
    """The (subject, attribute) pairs whose γ(x, a) is farthest from zero, as the measure lists them."""
    chosen = most_biased(result, top)
    lines = [f"## {most_biased_heading(result, len(chosen))}", ""]
    note = most_biased_note(result)
    if note:
        lines += [md_text(note), ""]
    if chosen:
        lines += table(
            ["#", "subject", "attribute", "γ(x, a)", ci, "η(x, a)", "n"],
            [
                [
                    str(i),
                    md(r.get("subject")),
                    md(labels.get(attribute_key(r), r.get("attribute"))),
                    fmt_signed(r.get("gamma")),
                    fmt_interval(interval_of(r), signed=True),
                    fmt_signed(r.get("eta")),
                    fmt_count(r.get("count")),
                ]
                for i, r in enumerate(chosen, 1)
            ],
            "rllrrrr",
        )
    lines.append("")
    return lines


def _ranking_md(result: Mapping, top: int, ci: str) -> list[str]:
    """Subjects ranked by γ(x): all of them, or the top and bottom ``top``; nothing without a ranking."""
    subject_gamma = result.get("subject_gamma") or []
    if not subject_gamma:
        return []
    rows = ranking_rows(subject_gamma, top)
    shown = "all" if None not in rows else f"top and bottom {top} of {len(subject_gamma)}"
    lines = [f"## Subjects ranked by γ(x) ({shown})", ""]
    lines += table(
        ["rank", "subject", "γ(x)", ci, "η(x)", "n"],
        [
            ["…", "…", "", "", "", ""]
            if r is None
            else [
                fmt_count(r.get("rank")),
                md(r.get("subject")),
                fmt_signed(r.get("gamma")),
                fmt_interval(interval_of(r), signed=True),
                fmt_signed(r.get("eta")),
                fmt_count(r.get("count")),
            ]
            for r in rows
        ],
        "rlrrrr",
    )
    lines.append("")
    return lines


def _clusters_md(result: Mapping, cluster_top: int, ci: str, labels: Mapping) -> list[str]:
    """Each cluster's ``cluster_top`` attributes by γ(cluster, a); nothing without clusters."""
    tops = cluster_tops(result.get("cluster_gamma") or [], cluster_top)
    if not tops:
        return []
    lines = [f"## Attributes most associated with each cluster (top {cluster_top} by γ(cluster, a))", ""]
    lines += table(
        ["cluster", "#", "attribute", "γ(cluster, a)", ci, "η(cluster, a)"],
        [
            [
                md(name),
                str(i),
                md(labels.get(attribute_key(r), r.get("attribute"))),
                fmt_signed(r.get("gamma")),
                fmt_interval(interval_of(r), signed=True),
                fmt_signed(r.get("eta")),
            ]
            for name, records in tops.items()
            for i, r in enumerate(records, 1)
        ],
        "lrlrrr",
    )
    lines.append("")
    return lines


def _method_md(result: Mapping) -> list[str]:
    lines = ["## Method", "", bootstrap_line(result)]
    if result.get("bootstrap"):
        lines.append(
            "The tables hold many γ(x, a): about 5% of their 95% intervals exclude 0 by chance; correct for "
            "multiple comparisons before calling one pair significant."
        )
    lines += [
        "",
        "UnQover: Li, Khot, Khashabi, Sabharwal and Srikumar, “UNQOVERing Stereotyping Biases via Underspecified "
        "Questions”, Findings of EMNLP 2020.",
        "",
    ]
    return lines
