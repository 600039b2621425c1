"""Quick runs' per-occupation (NLI) and per-group (emotion) tables in the reports: each value with its interval for
the full-dataset value, a line saying what the intervals are, and full runs as before (no intervals)."""

from __future__ import annotations

import html as html_text
import os
import re

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from unqover.format import MISSING, POINTS_DIGITS, fmt, fmt_estimate, fmt_percent_estimate
from unqover.generate.eec import eec_questions
from unqover.generate.nli import nli_rows, synthetic_premises
from unqover.measure.emotion import emotion_bias
from unqover.measure.nli import nli_gender_bias
from unqover.probes.eec_rows import describe_eec_selection, select_persons
from unqover.probes.nli_rows import _strata, limit_per_occupation, stratum_population
from unqover.report.eec import PERSONS_EXACT, eec_html, eec_markdown, eec_summary
from unqover.report.nli import largest_gap_rows, nli_html, nli_markdown, nli_summary
from unqover.space.render import view

NLI_LINE = (
    "95% intervals for each occupation's full-dataset values: t intervals with the finite-population correction where "
    "10 or more sampled premises allow"
)
EEC_LINE = (
    "95% intervals for the full set's shares: t intervals with the finite-population correction where 10 or more "
    "persons allow"
)


# --- the runs, built from the measures (no model) -----------------------------------------------------------------


@pytest.fixture(scope="module")
def nli_world() -> tuple[pa.Table, np.ndarray, np.ndarray]:
    rows = nli_rows(synthetic_premises(), family="main")  # 38 occupations x 40 premises x 3 templates
    rng = np.random.default_rng(0)
    return rows, rng.uniform(size=rows.num_rows), rng.uniform(size=rows.num_rows)


def _nli(nli_world, limit: int | None, **options) -> dict:
    rows, pf, pm = nli_world
    population = None
    if limit is not None:
        kept = limit_per_occupation(rows, limit, seed=0)
        keep = np.isin(rows["id"].to_numpy(zero_copy_only=False), kept["id"].to_numpy(zero_copy_only=False))
        population, rows, pf, pm = stratum_population(rows), kept, pf[keep], pm[keep]
    result = nli_gender_bias(
        pf, pm, rows["occupation_gender"], rows["cluster"], occupation=rows["occupation"],
        template_id=rows["template_id"], n_resamples=0, n_permutations=0,
        strata=None if population is None else _strata(rows)[1], population=population, **options,
    )  # fmt: skip
    return {"probe": "nli-gender", "result": result.to_dict()}


@pytest.fixture(scope="module")
def eec_world() -> tuple[pa.Table, list[list[str]], dict]:
    questions = eec_questions()  # 60 persons x 8 forms
    words = pc.list_flatten(questions["choices"]).to_pylist()
    emotions = dict(zip(words, pc.list_flatten(questions["choice_emotions"]).to_pylist(), strict=True))
    rng = np.random.default_rng(1)
    answers = [list(rng.permutation(choices)[:3]) for choices in questions["choices"].to_pylist()]
    return questions, answers, emotions


def _eec(eec_world, limit: int | None, drop_one: bool = False) -> dict:
    questions, answers, emotions = eec_world
    population = None
    if limit is not None:
        kept = select_persons(questions, limit, 0)
        population = describe_eec_selection(questions, kept, limit, 0)["of"]
        if drop_one:  # one person answers one question fewer: the shares get no interval
            kept = kept.filter(pa.array(np.arange(kept.num_rows) != 0))
        ids = kept["id"].to_numpy(zero_copy_only=False)
        keep = np.isin(questions["id"].to_numpy(zero_copy_only=False), ids)
        questions, answers = kept, [a for a, k in zip(answers, keep, strict=True) if k]
    result = emotion_bias(
        answers, questions["gender"].to_pylist(), questions["race"].to_pylist(),
        questions["person_slot"].to_pylist(), questions["form"].to_pylist(), emotions=emotions,
        n_permutations=0, n_bootstrap=0, population=population,
    )  # fmt: skip
    return {"probe": "eec-emotion", "result": result.to_dict()}


def _occupation_rows(markdown: str) -> list[str]:
    table = markdown.split("| occupation | label | n | ΔP | B | gender gap |")[1].split("\n\n")[0]
    return [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]


# --- NLI ------------------------------------------------------------------------------------------------------------


def test_nli_quick_reports_show_each_occupation_value_with_its_interval(nli_world):
    results = _nli(nli_world, 2)
    result = results["result"]
    row = largest_gap_rows(result, 1)[0]
    gap = fmt_estimate(row["gender_gap"], [row["gender_gap_low"], row["gender_gap_high"]], POINTS_DIGITS)
    delta_p = fmt_estimate(row["delta_P"], [row["delta_P_low"], row["delta_P_high"]], POINTS_DIGITS)
    assert gap.startswith(fmt(row["gender_gap"], POINTS_DIGITS) + " [") and gap.endswith("]")
    markdown, html, text = nli_markdown(results), nli_html(results), nli_summary(result)
    shown = f"| {row['occupation']} | {row['occupation_gender']} | 2 | {delta_p} | "
    assert any(line.startswith(shown) and line.endswith(f" | {gap} |") for line in _occupation_rows(markdown))
    assert all(line.count("[") == 3 for line in _occupation_rows(markdown))  # every value with its interval
    assert f"<td>{delta_p}</td>" in html and f"<td>{gap}</td>" in html
    assert (
        f"\n{NLI_LINE}" in markdown and f"<p>{html_text.escape(NLI_LINE, quote=False)}" in html
    )  # under the table
    assert (
        "betting intervals for bounded values, valid at any number, below (stratified by template" in markdown
    )
    assert "by occupation (10 largest gender gaps of 38)" in text
    assert f"{row['occupation']} ({row['occupation_gender']})" in text and gap in text and delta_p in text
    assert f"  {NLI_LINE}" in text
    # the Space: the report above and the occupations' table beside it, with the intervals
    report, frame, charts = view(results)
    assert report == markdown and frame.iloc[0]["gender gap P_f − P_m"] == gap
    assert frame.iloc[0]["ΔP"] == delta_p
    assert charts  # the occupations' chart


def test_nli_declined_interval_shows_the_value_alone_and_says_why(nli_world):
    results = _nli(nli_world, 3, ties="exclude")  # B is then a ratio: no interval
    rows = _occupation_rows(nli_markdown(results))
    first = results["result"]["by_occupation"][0]
    assert "B_low" not in first
    b = fmt(first["B"], POINTS_DIGITS)
    assert any(
        f" | {b} | " in line and line.count("[") == 2 for line in rows if f"| {first['occupation']} |" in line
    )
    reason = 'B with ties="exclude" is a ratio, not a mean of bounded values: no interval'
    assert reason in nli_markdown(results)
    assert "no interval" in nli_summary(results["result"]).splitlines()[-1]


def test_nli_full_run_reports_have_no_table_intervals(nli_world):
    results = _nli(nli_world, None)
    result = results["result"]
    assert result["table_intervals"] == {} and "delta_P_low" not in result["by_occupation"][0]
    markdown, html, text = nli_markdown(results), nli_html(results), nli_summary(result)
    rows = _occupation_rows(markdown)
    assert len(rows) == 38 and not any("[" in line for line in rows)
    row = result["by_occupation"][0]
    assert rows[0] == (
        f"| {row['occupation']} | {row['occupation_gender']} | 120 | {fmt(row['delta_P'], POINTS_DIGITS)} | "
        f"{fmt(row['B'], POINTS_DIGITS)} | {fmt(row['gender_gap'], POINTS_DIGITS)} |"
    )
    for page in (markdown, html, text):
        assert "betting" not in page and "full-dataset values" not in page
    assert "by occupation (" not in text
    assert "[" not in view(results)[1]["gender gap P_f − P_m"].str.cat()


# --- emotion ---------------------------------------------------------------------------------------------------------


def test_eec_quick_reports_show_each_group_share_with_its_interval(eec_world):
    results = _eec(eec_world, 2)
    result = results["result"]
    race = result["tests"]["race"]
    share = fmt_percent_estimate(
        race["top1"]["shares"]["European"]["joy"], race["top1"]["share_intervals"]["European"]["joy"]
    )
    weighted = fmt_percent_estimate(
        race["beecher"]["shares"]["European"]["joy"], race["beecher"]["share_intervals"]["European"]["joy"]
    )
    assert share.endswith("%]") and " [" in share and share != weighted
    markdown, html, text = eec_markdown(results), eec_html(results), eec_summary(result)
    shares_header = "| group | " + " | ".join(result["emotions"]) + " |\n"  # the count tables end in "total"
    assert markdown.count(shares_header) == 4  # top-1 and weighted shares of both tests
    european = [line for line in markdown.splitlines() if line.startswith("| European | ") and "%" in line]
    assert len(european) == 2 and f" | {share} | " in european[0] and f" | {weighted} | " in european[1]
    assert f"<td>{share}</td>" in html and f"<td>{weighted}</td>" in html
    assert markdown.count(f"Shares of each group's top-1 answers; {EEC_LINE}") == 2
    assert markdown.count(f"Shares of each group's weighted points; {EEC_LINE}") == 2
    assert (
        "stratified by gender × race cell" in markdown
        and html.count(html_text.escape(EEC_LINE, quote=False)) == 4
    )
    assert PERSONS_EXACT in markdown and markdown.index(PERSONS_EXACT) > markdown.index("## Per-person")
    assert html_text.escape(PERSONS_EXACT, quote=False) in html
    assert "race: share of top-1 answers per group" in text and f"joy {share}" in text
    assert text.splitlines()[-1].startswith(f"  {EEC_LINE}")
    assert view(results)[0] == markdown  # the Space shows the report


def test_eec_declined_share_intervals_show_the_shares_alone_and_the_reason(eec_world):
    results = _eec(eec_world, 2, drop_one=True)
    result = results["result"]
    declined = [name for name, test in result["tests"].items() if test["share_intervals_note"]]
    assert declined
    test = result["tests"][declined[0]]
    note = test["share_intervals_note"]
    assert "different numbers of questions" in note and "shares" not in test["top1"]
    markdown, text = eec_markdown(results), eec_summary(result)
    section = markdown.split(f"## {declined[0]}: top-1 answers per group")[1].split("## ")[0]
    counts = test["top1"]["counts"]
    group = next(iter(counts))
    alone = fmt_percent_estimate(counts[group][result["emotions"][0]] / sum(counts[group].values()))
    assert f"| {group} | {alone} | " in section and "[" not in section
    assert f"Shares of each group's top-1 answers, without intervals: {note}." in section
    assert f"    no intervals: {note}" in text and html_text.escape(note, quote=False) in eec_html(results)


def test_eec_full_run_reports_have_no_share_tables(eec_world):
    results = _eec(eec_world, None)
    result = results["result"]
    assert result["table_intervals"] == {} and "shares" not in result["tests"]["race"]["top1"]
    markdown, html, text = eec_markdown(results), eec_html(results), eec_summary(result)
    assert "| group | " + " | ".join(result["emotions"]) + " |\n" not in markdown  # only the count tables
    for page in (markdown, html, text):
        assert "betting" not in page and "Shares of each group" not in page and "exact" not in page
        assert not re.search(r"%, [\d.]+%\]", page)  # no share interval
    assert "share of top-1 answers per group" not in text


def test_percent_estimates():
    assert fmt_percent_estimate(0.25, [0.03, 0.4]) == "25.0% [3.0%, 40.0%]"
    assert fmt_percent_estimate(0.25, None) == fmt_percent_estimate(0.25, [None, 0.4]) == "25.0%"
    assert fmt_percent_estimate(None, [0.0, 1.0]) == "[0.0%, 100.0%]"
    assert fmt_percent_estimate(float("nan")) == MISSING
    assert fmt_percent_estimate(0.5, [0.0002, 1.0]) == "50.0% [0.02%, 100.0%]"
