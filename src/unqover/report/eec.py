"""Terminal, Markdown and self-contained HTML views of an emotion fill-in result (``results.json``).

The primary result is the valid analysis (top-1 counts, chi-square of independence, person-level permutation p,
Cramér's V with its interval, Holm/BH adjustment); Beecher's weighted statistic is shown as a legacy number only.
"""

from __future__ import annotations

from collections.abc import Mapping

from unqover.report.charts import share_bars
from unqover.report.format import (
    MISSING,
    fmt,
    fmt_count,
    fmt_interval,
    fmt_p,
    fmt_p_clause,
    fmt_percent,
    plural,
)
from unqover.report.markdown import md_text, scope_notes
from unqover.report.page import markdown_page

BEECHER_DIGITS = 5  # Beecher's legacy weighted χ², compared with his cut-off 7.815: 5 decimals in every view


def quick_run_line(result: Mapping) -> str | None:
    """For a quick run (``--limit``): what the tests were computed from, of how much; None for a full run."""
    selection = result.get("selection") or {}
    kept, total = selection.get("kept"), selection.get("of")
    if not kept or not total:
        return None
    return (
        f"quick run (--limit {selection.get('limit')} persons per gender × race cell, drawn at random, seed "
        f"{selection.get('seed')}): computed from {kept['persons']:,} of {plural(total['persons'], 'person')} "
        f"({kept['questions']:,} of {total['questions']:,} questions)"
    )


def _v_interval(test: Mapping) -> str:
    interval = fmt_interval(test.get("cramers_v_interval"))
    if interval != MISSING:
        return f" {interval}"
    return " (no interval)" if test.get("cramers_v_interval_note") else ""


def _tests(result: Mapping) -> list[tuple[str, Mapping]]:
    return [(name, test) for name, test in result.get("tests", {}).items() if test]


def _test_line(name: str, test: Mapping, adjusted: Mapping) -> str:
    top1 = test["top1"]
    holm = adjusted.get("holm", {}).get(name)
    return (
        f"{name}: top-1 χ² = {fmt(top1['statistic'])} (df {top1['df']}), "
        f"{fmt_p_clause(top1.get('permutation_p_value'), 'permutation p')}, "
        f"{fmt_p_clause(top1.get('p_value'), 'asymptotic p')}, {fmt_p_clause(holm, 'Holm p')}; "
        f"Cramér's V = {fmt(test.get('cramers_v'))}{_v_interval(test)}; "
        f"Beecher χ² = {fmt(test['beecher']['statistic'], BEECHER_DIGITS)} (legacy)"
    )


def eec_summary(result: Mapping) -> str:
    """The tests in a few lines for the terminal."""
    lines = [
        f"Emotion fill-in bias: {plural(result['num_questions'], 'question')}, "
        f"{plural(result['num_persons'], 'person')}, top-{result['top_k']}"
    ]
    quick = quick_run_line(result)
    if quick:
        lines.append(f"  {quick}")
    lines += ["  " + _test_line(name, test, result.get("adjusted", {})) for name, test in _tests(result)]
    if result.get("tie_rate") is not None:
        lines.append(
            f"  questions with a tie in their top {result['top_k']}: {fmt_percent(result['tie_rate'])}"
        )
    lines += [f"  warning: {warning}" for warning in result.get("warnings") or []]
    return "\n".join(lines)


def _count_table(records: Mapping[str, Mapping[str, float]], emotions: list[str]) -> list[str]:
    lines = ["| group | " + " | ".join(emotions) + " | total |", "|---|" + "---:|" * (len(emotions) + 1)]
    for group, row in records.items():
        values = [row.get(e, 0) for e in emotions]
        lines.append(
            f"| {group} | " + " | ".join(fmt_count(v) for v in values) + f" | {fmt_count(sum(values))} |"
        )
    return lines


def _model_notes(scoring: Mapping, model: Mapping) -> list[str]:
    """Beecher's own models: the corpus or vector file, the out-of-vocabulary rates per group, the default's fixes."""
    lines = []
    if model.get("sha256"):
        size = fmt_count(model.get("bytes"))
        lines.append(f"Model file {md_text(model.get('path'))}: {size} bytes, SHA-256 `{model['sha256']}`.")
    oov = scoring.get("oov")
    if oov:
        groups = ", ".join(
            f"{md_text(name)} {fmt_percent(rate)}" for name, rate in (oov.get("groups") or {}).items()
        )
        lines.append(
            f"Choice words without a vector or n-gram (out of vocabulary): {fmt_percent(oov.get('overall'))} ({groups})."
        )
    for fix in scoring.get("fixes") or []:
        lines.append(f"- fixed from Beecher's code: {md_text(fix)}")
    return [*lines, ""] if lines else []


def eec_markdown(results: Mapping) -> str:
    result, provenance = results["result"], results.get("provenance", {})
    scoring = results.get("scoring", {})
    emotions = list(result["emotions"])
    model = provenance.get("model", {})
    lines = [
        f"# Emotion fill-in bias of {model.get('id', 'a model')}",
        "",
        "> Content warning: the probe asks which emotion a model attributes to people of a given race or gender.",
        "",
        f"{plural(result['num_questions'], 'question')} of Beecher's EEC fill-in probe "
        f"({plural(result['num_persons'], 'person')}); "
        f"sentence scoring: {scoring.get('sentence', '?')}, length rule: {scoring.get('length_rule', '?')}, "
        f"ties broken by a seeded hash (questions with a tie in the top {result['top_k']}: "
        f"{fmt_percent(result.get('tie_rate'))}).",
        "",
        *_model_notes(scoring, model),
        *scope_notes(quick_run_line(result), result.get("warnings")),
        "| test | top-1 χ² (df) | permutation p | asymptotic p | Holm p | BH p | Cramér's V [95%] | Beecher χ² (legacy) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    adjusted = result.get("adjusted", {})
    for name, test in _tests(result):
        top1 = test["top1"]
        lines.append(
            f"| {name} | {fmt(top1['statistic'])} ({top1['df']}) | {fmt_p(top1.get('permutation_p_value'))} | "
            f"{fmt_p(top1.get('p_value'))} | {fmt_p(adjusted.get('holm', {}).get(name))} | "
            f"{fmt_p(adjusted.get('bh', {}).get(name))} | {fmt(test.get('cramers_v'))}{_v_interval(test)} | "
            f"{fmt(test['beecher']['statistic'], BEECHER_DIGITS)} |"
        )
    lines += [
        "",
        "The primary p-value is the person-level permutation p of the top-1 chi-square (all questions of a person move "
        "together, stratified by the other attribute). Beecher's weighted χ² is shown for comparison with his paper; "
        "it is not a valid test (weighted scores are not counts, and questions are not independent).",
    ]
    for name, test in _tests(result):
        lines += ["", f"## {name}: top-1 answers per group", ""]
        lines += _count_table(test["top1"]["counts"], emotions)
        lines += ["", f"## {name}: Beecher's weighted scores S_ij (weights 3, 2, 1)", ""]
        lines += _count_table(test["beecher"]["scores"], emotions)
        beecher = test["beecher"]
        lines += [
            "",
            f"Beecher χ² = {fmt(beecher['statistic'], BEECHER_DIGITS)} against his cut-off "
            f"{fmt(beecher['cutoff'], BEECHER_DIGITS)} ({'exceeded' if beecher['exceeds_cutoff'] else 'not exceeded'}); "
            f"its {fmt_p_clause(beecher.get('permutation_p_value'), 'permutation p')}.",
        ]
    lines += [
        "",
        "## Per-person top-1 answers",
        "",
        "| person | gender | race | " + " | ".join(emotions) + " |",
    ]
    lines.append("|---|---|---|" + "---:|" * len(emotions))
    for person in result.get("persons", []):
        lines.append(
            f"| {person['person']} | {person['gender']} | {person.get('race') or MISSING} | "
            + " | ".join(str(person.get(f"top1_{e}", 0)) for e in emotions)
            + " |"
        )
    lines.append("")
    return "\n".join(lines)


def eec_html(results: Mapping) -> str:
    """A self-contained page: the Markdown report's tables and, per test, each group's top-1 emotion shares."""
    result = results["result"]
    charts = []
    for name, test in _tests(result):
        counts = test["top1"]["counts"]
        shares = {
            group: {e: (v / sum(row.values()) if sum(row.values()) else None) for e, v in row.items()}
            for group, row in counts.items()
        }
        charts.append(share_bars(shares, title=f"{name}: share of top-1 answers by emotion"))
    return markdown_page(eec_markdown(results), "Emotion fill-in bias", charts)
