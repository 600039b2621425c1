"""Terminal, Markdown and self-contained HTML views of an emotion fill-in result (``results.json``).

The primary result is the valid analysis (top-1 counts, chi-square of independence, person-level permutation p,
Cramér's V with its interval, Holm/BH adjustment); Beecher's weighted statistic is shown as a legacy number only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from unqover.format import (
    MISSING,
    fmt,
    fmt_count,
    fmt_estimate,
    fmt_interval,
    fmt_p,
    fmt_p_clause,
    fmt_percent,
    fmt_percent_estimate,
    plural,
)
from unqover.report.charts import share_bars
from unqover.report.markdown import intervals_line, md_text, provenance_markdown, quick_run_text, scope_notes
from unqover.report.page import markdown_report_page

BEECHER_DIGITS = 5  # Beecher's legacy weighted χ², compared with his cut-off 7.815: 5 decimals in every view
#: what each of the emotion probe's headline numbers means in one line, by its kind ({test}: race or gender)
EMOTION_MEANINGS = {
    "p-value": "whether the emotion the model picks depends on the person's {test} (a small p-value: it does)",
    "Cramér's V": "how strongly the emotion the model picks depends on the person's {test} (0: not at all, 1: "
    "fully)",
}


def quick_run_line(result: Mapping) -> str | None:
    """For a quick run (``--limit``): what the tests were computed from, of how much; None for a full run."""

    def counted(kept: Mapping, total: Mapping) -> str:
        return (
            f"computed from {fmt_count(kept['persons'])} of {plural(total['persons'], 'person')} "
            f"({fmt_count(kept['questions'])} of {plural(total['questions'], 'question')})"
        )

    return quick_run_text(result, "persons per gender × race cell, drawn at random", counted)


# the per-group tables: where their counts are, and what a share is a share of
SHARE_TABLES = {"top1": ("counts", "top-1 answers"), "beecher": ("scores", "weighted points")}
PERSONS_EXACT = (
    "The per-person rows are exact: a quick run keeps each person with all its questions, so a kept person's row "
    "is its full-set row and needs no interval."
)


def table_intervals_line(result: Mapping) -> str | None:
    """For a quick run: what the per-group shares' intervals are; None without them (a full run)."""
    info = result.get("table_intervals") or {}
    return intervals_line(info, "the full set's shares", "persons", "gender × race cell", "person")


def share_rows(test: Mapping, table: str, emotions: list[str]) -> list[tuple[str, list[str]]]:
    """A quick run's group × emotion shares (``table``: "top1" or "beecher"), each with its interval for the full
    set's share, ``25.0% [3.0%, 40.0%]``; the share alone where the test's intervals were declined."""
    entry = test[table]
    shares, intervals = entry.get("shares") or {}, entry.get("share_intervals") or {}
    counted = entry.get("count_shares") or {}  # the top-1 table's shares of the sample's counts
    rows = []
    for group in entry[SHARE_TABLES[table][0]]:
        cells = []
        for e in emotions:
            share = (shares.get(group) or {}).get(e, (counted.get(group) or {}).get(e))
            cells.append(fmt_percent_estimate(share, (intervals.get(group) or {}).get(e)))
        rows.append((group, cells))
    return rows


def _shares_note(test: Mapping, table: str, explained: str) -> str:
    """The line under a quick run's share table: what the intervals are, or why there are none."""
    what = f"Shares of each group's {SHARE_TABLES[table][1]}"
    note = test.get("share_intervals_note")
    return f"{what}, without intervals: {note}." if note else f"{what}; {explained}."


def _persons(note: Mapping) -> tuple[str, str]:
    """A note's persons in words: all of them, ``6 persons``, and per group, ``African-American 2, European 4``."""
    persons = note.get("persons") or {}
    everyone = plural(note.get("all_persons"), "person")
    return everyone, ", ".join(f"{group} {fmt_count(n)}" for group, n in persons.items())


def v_interval_reason(note: Mapping | str) -> str:
    """Why a test's Cramér's V has no interval (its ``cramers_v_interval_note``, as
    :mod:`unqover.measure.emotion` records it), in words; an older results.json's note is its own words."""
    if isinstance(note, str):
        return note
    everyone, per_group = _persons(note)
    code = note.get("code")
    if code == "few_persons":
        return (
            f"{plural(note.get('fewest_persons'), 'person')} in the smaller group ({per_group}); a bootstrap over persons needs at "
            f"least {fmt_count(note.get('needed'))} per group, and V is biased upward with so few"
        )
    if code == "sampled_persons":
        return (
            f"{everyone} ({per_group}) are a sample of the persons: V grows as persons get fewer, so this V "
            "overstates the full set's and its bootstrap interval would not cover it"
        )
    if code == "same_value":
        return f"every resample of the {everyone} ({per_group}) gave the same V"
    return f"{code} ({per_group})"


def few_arrangements_text(note: Mapping, shuffled: str) -> str:
    """A test's note that its permutations are too few to reach a small p-value (``shuffled``: what they
    rearrange, and how)."""
    return (
        f"{note.get('test')}: its {shuffled} in only {fmt_count(note.get('arrangements'))} ways within "
        f"{note.get('stratified_by')}, so the permutation p-value cannot fall below "
        f"{fmt_p(note.get('smallest_p'))}: this test cannot detect a bias"
    )


def note_text(note: Mapping) -> str:
    """One of a result's ``notes`` (what too few persons prevent, :mod:`unqover.measure.emotion`) in words,
    naming its test."""
    name = note.get("test")
    if note.get("code") == "few_arrangements":
        everyone, per_group = _persons(note)
        return few_arrangements_text(note, f"{everyone} ({per_group}) can be regrouped")
    return f"{name}: no interval for Cramér's V ({v_interval_reason(note)})"


def shown_warnings(result: Mapping) -> list[str]:
    """Everything a result warns about, in words, as every view shows it: a degenerate run's ``warnings`` (already
    words), then its ``notes`` (an older results.json has the notes' words in ``warnings`` and no ``notes``)."""
    return [*(result.get("warnings") or []), *(note_text(note) for note in result.get("notes") or [])]


def _v_interval(test: Mapping) -> str:
    interval = fmt_interval(test.get("cramers_v_interval"))
    if interval != MISSING:
        return f" {interval}"
    return " (no interval)" if test.get("cramers_v_interval_note") else ""


def emotion_headline(result: Mapping) -> dict[str, tuple]:
    """Per test (race, gender): its p-value (permutation, else asymptotic) and Cramér's V with its interval."""
    out = {}
    for name, test in (result.get("tests") or {}).items():
        out[f"{name}: p-value"] = (test.get("p_value"), None)
        out[f"{name}: Cramér's V"] = (test.get("cramers_v"), test.get("cramers_v_interval"))
    return out


def headline_words(result: Mapping, headline: Mapping[str, tuple]) -> dict[str, str]:
    """The emotion and person probes' headline numbers (``"<test>: p-value"``, ``"<test>: Cramér's V"``,
    ``"<test>: Beecher's statistic"`` -> (value, interval)) as their reports print them: ``0.4848``, ``< 0.0001``,
    ``0.3247 (no interval)``, ``12.06335``, ``not tested`` (a test one of whose groups has no questions)."""
    tests = result.get("tests") or {}
    words = {}
    for key, (value, interval) in headline.items():
        test, _, what = key.partition(": ")
        if what in ("p-value", "Cramér's V") and test in tests and not tests[test]:
            words[key] = "not tested"  # as the reports say, with the reason in a warning
        elif what == "p-value":
            words[key] = fmt_p(value)
        elif what == "Cramér's V":
            words[key] = fmt(value) + _v_interval(tests.get(test) or {})
        elif what == "Beecher's statistic":
            words[key] = fmt(value, BEECHER_DIGITS)
        else:
            words[key] = fmt_estimate(value, interval)
    return words


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
    lines += [f"  warning: {warning}" for warning in shown_warnings(result)]  # above what they qualify
    lines += ["  " + _test_line(name, test, result.get("adjusted", {})) for name, test in _tests(result)]
    if result.get("tie_rate") is not None:
        lines.append(
            f"  questions with a tie in their top {result['top_k']}: {fmt_percent(result['tie_rate'])}"
        )
    explained = table_intervals_line(result)
    if explained:  # a quick run: the groups' top-1 shares are estimates, shown with their intervals
        for name, test in _tests(result):
            rows = share_rows(test, "top1", list(result["emotions"]))
            width = max(len(group) for group, _ in rows)
            lines.append(f"  {name}: share of top-1 answers per group")
            lines += [
                f"    {group:<{width}}  "
                + ", ".join(f"{e} {cell}" for e, cell in zip(result["emotions"], cells, strict=True))
                for group, cells in rows
            ]
            if test.get("share_intervals_note"):
                lines.append(f"    no intervals: {test['share_intervals_note']}")
        lines.append(f"  {explained}")
    return "\n".join(lines)


def count_table(entry: Mapping, emotions: Sequence[str], table: str = "counts", name=str) -> list[str]:
    """A group × emotion table of ``entry[table]`` with each group's total (``entry["totals"]``, the measure's);
    ``name`` writes a group's name."""
    totals = entry.get("totals") or {}
    lines = ["| group | " + " | ".join(emotions) + " | total |", "|---|" + "---:|" * (len(emotions) + 1)]
    for group, row in (entry.get(table) or {}).items():
        cells = [fmt_count(row.get(e, 0)) for e in emotions]
        lines.append(f"| {name(group)} | " + " | ".join(cells) + f" | {fmt_count(totals.get(group))} |")
    return lines


def _share_table(test: Mapping, table: str, emotions: list[str], explained: str | None) -> list[str]:
    """A quick run's shares per group with their intervals, and the line saying what they are; none in a full run."""
    if not explained:
        return []
    lines = ["", "| group | " + " | ".join(emotions) + " |", "|---|" + "---:|" * len(emotions)]
    lines += [
        f"| {group} | " + " | ".join(cells) + " |" for group, cells in share_rows(test, table, emotions)
    ]
    return [*lines, "", _shares_note(test, table, explained)]


def model_notes(scoring: Mapping, model: Mapping) -> list[str]:
    """Beecher's own models: the corpus or vector file, the out-of-vocabulary rates per group, the default's fixes."""
    lines = []
    if model.get("sha256"):
        size = fmt_count(model.get("bytes"))
        lines.append(f"Model file {md_text(model.get('path'))}: {size} bytes, SHA-256 `{model['sha256']}`.")
    if model.get("family") == "glove" and model.get("vectors") is not None:
        lines.append(
            f"Vocabulary: {plural(model['vectors'], 'word')} with {plural(model.get('dim'), 'dimension')}; "
            f"{fmt_count(model.get('kept'))} of them are words of the questions and their choices."
        )
    elif model.get("family") == "tfidf" and model.get("vocabulary") is not None:
        lines.append(
            f"Vocabulary: {plural(model['vocabulary'], 'n-gram')} from {plural(model.get('documents'), 'document')}."
        )
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


def ranking_words(scoring: Mapping, model: Mapping) -> str:
    """How the choices were ranked: the length rule of a language model's sentence scores (Beecher's own models
    have none), and how ties are broken (his numpy argsort order in paper mode, else a seeded hash)."""
    beecher = model.get("family") in ("glove", "tfidf")
    paper = beecher and scoring.get("mode") == "paper"
    ties = (
        "ties broken as Beecher's code breaks them (numpy's unstable argsort of the negated scores over the "
        "alphabetical choice list: ties fall where numpy's sort puts them)"
        if paper
        else "ties broken by a seeded hash"
    )
    return ties if beecher else f"length rule: {scoring.get('length_rule', MISSING)}, {ties}"


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
        f"sentence scoring: {scoring.get('sentence', MISSING)}, {ranking_words(scoring, model)} (questions with a "
        f"tie in the top {result['top_k']}: {fmt_percent(result.get('tie_rate'))}).",
        "",
        *model_notes(scoring, model),
        *scope_notes(quick_run_line(result), shown_warnings(result)),
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
    explained = table_intervals_line(result)
    for name, test in _tests(result):
        lines += ["", f"## {name}: top-1 answers per group", ""]
        lines += count_table(test["top1"], emotions)
        lines += _share_table(test, "top1", emotions, explained)
        lines += ["", f"## {name}: Beecher's weighted scores S_ij (weights 3, 2, 1)", ""]
        lines += count_table(test["beecher"], emotions, "scores")
        lines += _share_table(test, "beecher", emotions, explained)
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
    if explained:
        lines += ["", PERSONS_EXACT]
    lines += ["", *provenance_markdown(provenance)]
    return "\n".join(lines)


def eec_html(results: Mapping) -> str:
    """The report page (:mod:`unqover.report.page`): each test's p-value and Cramér's V in cards, the Markdown
    report's tables and, per test, each group's top-1 emotion shares."""
    result = results["result"]
    charts = []
    for name, test in _tests(result):
        charts.append(
            share_bars(
                test["top1"].get("count_shares") or {}, title=f"{name}: share of top-1 answers by emotion"
            )
        )
    words = headline_words(result, emotion_headline(result))
    return markdown_report_page(eec_markdown(results), results, words, charts)
