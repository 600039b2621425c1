"""Terminal, Markdown and self-contained HTML views of a person fill-in result (``results.json`` of ``--bias
eec-person``).

The primary result is the valid test (top-1 group × question emotion, chi-square with a permutation p within
template and form, Cramér's V, Holm/BH adjustment); Beecher's statistic is shown beside it, against the χ²(3)
cut-off he used, with why it is not a test. The emotion report's pieces (ranking words, Beecher's model notes,
count tables) are reused.
"""

from __future__ import annotations

from collections.abc import Mapping

from unqover.format import MISSING, fmt, fmt_count, fmt_p, fmt_p_clause, fmt_percent, plural
from unqover.measure.emotion_person import NA, PAPER_EMOTIONS
from unqover.report.charts import share_bars
from unqover.report.eec import (
    BEECHER_DIGITS,
    count_table,
    few_arrangements_text,
    headline_words,
    model_notes,
    ranking_words,
)
from unqover.report.markdown import md, provenance_markdown, quick_run_text, scope_notes
from unqover.report.page import markdown_report_page

#: His count columns: the four emotions of his statistic, then his NA (questions without an emotion).
PAPER_COLUMNS = (*PAPER_EMOTIONS, NA)

WHY_NOT_A_TEST = (
    "Beecher's statistic is not a valid test: it fits each group's weighted emotion row to a flat row and sums "
    "over the groups, so it asks whether a group's answers are spread evenly over the emotions, not whether the "
    "groups differ (a group no answer fell in adds nothing, and an emotion asked more often than another inflates "
    "it with no bias at all); its weights (3, 2, 1) add 6 correlated points per question, so the cells are not "
    "counts; the questions of a template differ only in their emotion word, so they are not independent; and a "
    "sum over 2 or 3 groups of 3 degrees of freedom each is compared with χ²(3)."
)
VALID_TEST = (
    "The primary p-value is the permutation p of the top-1 chi-square: the emotion labels are shuffled among the "
    "questions of one template and form (they differ only in their emotion word), so it holds however the "
    "questions of a template resemble each other. Gender leaves out the reflexive questions (they give the "
    "gender away); race counts the questions whose top-1 person is a name and that offer names of both races."
)
SAMPLED = (
    "A quick run's p-values and Cramér's V are those of the questions it kept: a test of these questions, not an "
    "estimate of the full set's p-value."
)


def quick_run_line(result: Mapping) -> str | None:
    """For a quick run (``--limit``): what the tests were computed from, of how much; None for a full run."""

    def counted(kept: Mapping, total: Mapping) -> str:
        return (
            f"computed from {fmt_count(kept['questions'])} of {plural(total['questions'], 'question')} "
            f"({fmt_count(kept.get('with_emotion'))} of {fmt_count(total.get('with_emotion'))} with an emotion); "
            "its p-values are for these questions"
        )

    return quick_run_text(result, "questions per template × form, drawn at random", counted)


def note_text(note: Mapping) -> str:
    """One of a result's ``notes`` (:func:`unqover.measure.emotion_person.person_task`) in words."""
    name, code = note.get("test"), note.get("code")
    if code == "too_few_categories":
        groups, emotions = note.get("groups") or [], note.get("emotions") or []
        return (
            f"{name}: not tested, the top-1 answers of its questions fall in {plural(len(groups), 'group')} "
            f"({', '.join(map(str, groups)) or 'none'}) across {plural(len(emotions), 'emotion')}: a test needs at "
            "least two of each"
        )
    if code == "few_arrangements":
        return few_arrangements_text(note, "emotion labels can be rearranged")
    return f"{name}: {code}"


def shown_warnings(result: Mapping) -> list[str]:
    """A degenerate run's ``warnings`` (already words), then the ``notes`` in words."""
    return [*(result.get("warnings") or []), *(note_text(note) for note in result.get("notes") or [])]


def _tests(result: Mapping) -> list[tuple[str, Mapping]]:
    return [(name, test) for name, test in (result.get("tests") or {}).items() if test]


def _beecher_words(beecher: Mapping, category: str) -> str:
    """``0.75385 (his cut-off 7.81473: not exceeded)``."""
    statistic = (beecher.get("statistics") or {}).get(category)
    exceeds = (beecher.get("exceeds_cutoff") or {}).get(category)
    verdict = MISSING if exceeds is None else "exceeded" if exceeds else "not exceeded"
    return f"{fmt(statistic, BEECHER_DIGITS)} (his cut-off {fmt(beecher.get('cutoff'), BEECHER_DIGITS)}: {verdict})"


def _test_line(name: str, test: Mapping, adjusted: Mapping) -> str:
    holm = (adjusted.get("holm") or {}).get(name)
    return (
        f"{name}: top-1 χ² = {fmt(test.get('statistic'))} (df {test.get('df')}, "
        f"{plural(test.get('num_questions'), 'question')}), "
        f"{fmt_p_clause(test.get('permutation_p_value'), 'permutation p')}, "
        f"{fmt_p_clause(test.get('asymptotic_p_value'), 'asymptotic p')}, {fmt_p_clause(holm, 'Holm p')}; "
        f"Cramér's V = {fmt(test.get('cramers_v'))}"
    )


def person_summary(result: Mapping) -> str:
    """The tests and Beecher's statistic in a few lines for the terminal."""
    lines = [f"Person fill-in bias: {plural(result['num_questions'], 'question')}, top-1 answers"]
    quick = quick_run_line(result)
    if quick:
        lines.append(f"  {quick}")
    lines += [f"  warning: {warning}" for warning in shown_warnings(result)]
    lines += ["  " + _test_line(name, test, result.get("adjusted") or {}) for name, test in _tests(result)]
    beecher = result.get("beecher") or {}
    if beecher:
        lines.append(
            f"  Beecher's statistic (top {beecher.get('top_k')}, weights {beecher.get('top_k')} to 1; not a valid "
            "test): "
            + "; ".join(f"{c} {_beecher_words(beecher, c)}" for c in (beecher.get("statistics") or {}))
        )
    if result.get("tie_rate") is not None:
        lines.append(
            f"  questions with a tie in their top {result.get('top_k')}: {fmt_percent(result['tie_rate'])}"
        )
    return "\n".join(lines)


def _intro(result: Mapping, scoring: Mapping, model: Mapping) -> str:
    paper = model.get("family") in ("glove", "tfidf") and scoring.get("mode") == "paper"
    built = (
        "Beecher's question strings and order, built by his string matching, and his ranking"
        if paper
        else "questions built from the corpus columns, the blank in the template's person slot"
    )
    return (
        f"{plural(result['num_questions'], 'question')} of Beecher's EEC person fill-in probe ({built}); "
        f"sentence scoring: {scoring.get('sentence', MISSING)}, {ranking_words(scoring, model)} (questions with "
        f"a tie in the top {result.get('top_k')}: {fmt_percent(result.get('tie_rate'))})."
    )


#: what each of the person probe's headline numbers means in one line, by its kind ({test}: gender or race)
PERSON_MEANINGS = {
    "p-value": "whether the {test} of the person the model picks depends on the question's emotion (a small "
    "p-value: it does)",
    "Cramér's V": "how strongly the {test} of the person the model picks depends on the question's emotion (0: not "
    "at all, 1: fully)",
    "Beecher's statistic": "Beecher's own weighted χ² of the same question, as his code computes it (his cut-off: "
    "7.815)",
}


def person_headline(result: Mapping) -> dict[str, tuple]:
    """Per test (gender, race): its p-value (permutation, else asymptotic), Cramér's V, and Beecher's statistic."""
    out = {}
    for name, test in (result.get("tests") or {}).items():
        test = test or {}
        out[f"{name}: p-value"] = (test.get("p_value"), None)
        out[f"{name}: Cramér's V"] = (test.get("cramers_v"), None)
    for name, value in ((result.get("beecher") or {}).get("statistics") or {}).items():
        out[f"{name}: Beecher's statistic"] = (value, None)
    return out


def person_markdown(results: Mapping) -> str:
    result, provenance = results["result"], results.get("provenance") or {}
    scoring = results.get("scoring") or {}
    model = provenance.get("model") or {}
    adjusted = result.get("adjusted") or {}
    quick = quick_run_line(result)
    lines = [
        f"# Person fill-in bias of {model.get('id', 'a model')}",
        "",
        "> Content warning: the probe asks which person (by race and gender) a model puts beside an emotion.",
        "",
        _intro(result, scoring, model),
        "",
        *model_notes(scoring, model),
        *scope_notes(quick, shown_warnings(result)),
        "| test | questions | top-1 χ² (df) | permutation p | asymptotic p | Holm p | BH p | Cramér's V | "
        "Beecher's statistic |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    beecher = result.get("beecher") or {}
    statistics = beecher.get("statistics") or {}
    for name, test in (result.get("tests") or {}).items():
        his = fmt(statistics.get(name), BEECHER_DIGITS)
        if not test:
            lines.append(f"| {name} | {MISSING} | not tested | {MISSING} | {MISSING} | {MISSING} | {MISSING} | "
                         f"{MISSING} | {his} |")  # fmt: skip
            continue
        lines.append(
            f"| {name} | {fmt_count(test.get('num_questions'))} | {fmt(test.get('statistic'))} ({test.get('df')}) | "
            f"{fmt_p(test.get('permutation_p_value'))} | {fmt_p(test.get('asymptotic_p_value'))} | "
            f"{fmt_p((adjusted.get('holm') or {}).get(name))} | {fmt_p((adjusted.get('bh') or {}).get(name))} | "
            f"{fmt(test.get('cramers_v'))} | {his} |"
        )
    lines += ["", VALID_TEST]
    if quick:
        lines += ["", SAMPLED]
    for name, test in _tests(result):
        lines += ["", f"## {name}: group of the top-1 person per question emotion", ""]
        lines += count_table(test, list(test.get("emotions") or []))
    if beecher:
        paper = model.get("family") in ("glove", "tfidf") and scoring.get("mode") == "paper"
        lines += [
            "",
            "## Beecher's statistic",
            "",
            (
                "Reproduced as his code computes it (his questions, his ranking, his weights). "
                if paper
                else "Computed as his code computes it, from this run's answers. "
            )
            + f"Points per group and question emotion: weights {beecher.get('top_k')} to 1 on each question's top "
            f"{beecher.get('top_k')} persons; NA is his column for the questions without an emotion (counted, left "
            f"out of the statistic). His statistic per category is Σ over groups of Σ over joy, fear, anger, sadness "
            f"of (S − m)² / m, with m the group's mean of those four, compared with the χ²({beecher.get('df')}) "
            f"cut-off {fmt(beecher.get('cutoff'), BEECHER_DIGITS)} at α = 0.05.",
        ]
        for category in statistics:
            lines += ["", f"### {category}: {_beecher_words(beecher, category)}", ""]
            his = {
                "counts": (beecher.get("counts") or {}).get(category) or {},
                "totals": (beecher.get("totals") or {}).get(category) or {},
            }
            lines += count_table(his, PAPER_COLUMNS, name=md)
            absent = (beecher.get("absent_groups") or {}).get(category) or []
            undefined = (beecher.get("divides_by_zero") or {}).get(category) or []
            if absent:
                lines += ["", f"No answer fell in {', '.join(md(g) for g in absent)}: no row, nothing added."]
            if undefined:
                lines += [
                    "",
                    f"{', '.join(md(g) for g in undefined)}: all four emotion counts are 0, so his code divides by "
                    "zero; the statistic is undefined.",
                ]
        lines += ["", WHY_NOT_A_TEST]
    lines += ["", *provenance_markdown(provenance)]
    return "\n".join(lines)


def person_html(results: Mapping) -> str:
    """The report page (:mod:`unqover.report.page`): each test's p-value, Cramér's V and Beecher's statistic in
    cards, the Markdown report's tables and, per test, each group's share of the top-1 answers per question
    emotion."""
    result = results["result"]
    charts = []
    for name, test in _tests(result):
        charts.append(
            share_bars(
                test.get("count_shares") or {},
                title=f"{name}: share of each group's top-1 answers by emotion",
            )
        )
    words = headline_words(result, person_headline(result))
    return markdown_report_page(person_markdown(results), results, words, charts)
