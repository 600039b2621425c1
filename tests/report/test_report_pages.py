"""Reports of a results dict: SVG charts, Markdown, the HTML page, and comparing two runs (synthetic results only)."""

from __future__ import annotations

import copy
import json
import re
import xml.etree.ElementTree as ET

import pytest

from unqover.cli import main
from unqover.errors import UnqoverError
from unqover.jobs.compare import compare_runs
from unqover.measure.layout import subject_heatmap, usual_count
from unqover.measure.run_shifts import comparison_numbers
from unqover.report import charts
from unqover.report.compare import compare_markdown, compare_results, compare_text
from unqover.report.html import MAX_HEATMAP_ROWS, html_report
from unqover.report.markdown import markdown_report
from unqover.results import load_results, split_results

WEIRD = "A<&>\"'s | *x*"  # a subject name that needs escaping everywhere
SVG = "{http://www.w3.org/2000/svg}"


def compared(a, b, name_a: str = "A", name_b: str = "B", *, top: int = 10) -> dict:
    """``unqover compare`` of two results dicts without predictions: the measure's numbers in the report's words."""
    numbers = comparison_numbers(split_results(a)[0], split_results(b)[0], top=top)
    return compare_results(a, b, name_a, name_b, numbers=numbers)


def make_results(
    subjects=("Alpha", WEIRD, "Gamma", "Delta"),
    attributes=("is bad", "is <rude> & loud"),
    *,
    scale: float = 1.0,
    intervals: bool = True,
    clusters: dict | None = None,
    source: str = "datasets/unqover/religion",
    config: str = "qa",
    mode: str = "default",
    mu: float | None = 0.1234,
) -> dict:
    """A small results dict with the shape of ``UnqoverBias.to_dict()`` under provenance."""
    gamma = []
    for i, subject in enumerate(subjects):
        for j, attribute in enumerate(attributes):
            value = scale * (0.3 - 0.2 * i) * (1 if j % 2 == 0 else -0.5)
            record = {
                "subject": subject,
                "attribute": attribute,
                "attribute_type": "p_act",
                "gamma": value,
                "eta": 1.0 if value > 0 else -1.0,
                "count": 12,
            }
            if intervals:
                record["gamma_low"], record["gamma_high"] = value - 0.05, value + 0.05
            gamma.append(record)
    subject_gamma = []
    for subject in subjects:
        values = [r["gamma"] for r in gamma if r["subject"] == subject]
        record = {"subject": subject, "gamma": sum(values) / len(values), "eta": 0.5, "count": 24}
        if intervals:
            record["gamma_low"], record["gamma_high"] = record["gamma"] - 0.01, record["gamma"] + 0.01
        subject_gamma.append(record)
    subject_gamma.sort(key=lambda r: -r["gamma"])
    for rank, record in enumerate(subject_gamma, 1):
        record["rank"] = rank
    cluster_gamma = []
    for k, name in enumerate(clusters or {}):
        for j, attribute in enumerate(attributes):
            value = (0.2 if k == 0 else -0.2) * (1 if j % 2 == 0 else -1) * scale
            record = {"cluster": name, "attribute": attribute, "gamma": value, "eta": 0.4, "count": 48}
            if intervals:
                record["gamma_low"], record["gamma_high"] = value - 0.03, value + 0.03
            cluster_gamma.append(record)
    result = {
        "mode": mode,
        "num_groups": 1234,
        "dropped_groups": 2,
        "positional_error": 0.0421,
        "attributive_error": 0.0789,
        "mean_score": 0.4567,
        "mu": mu,
        "eta": 0.3456,
        "mu_unit": "cluster" if clusters else "subject",
        "subject_mu": 0.1111 if clusters else mu,
        "subject_eta": 0.2222 if clusters else 0.3456,
        "position_consistency": {"inconsistent": 10, "compared": 40},
        "intervals": {
            "mu": [0.1, 0.15],
            "eta": [0.3, 0.4],
            "subject_mu": [0.09, 0.13],
            "subject_eta": [0.2, 0.25],
        }
        if intervals
        else {},
        "bias_corrected": {"mu": 0.1200, "eta": 0.3400, "subject_mu": 0.1100, "subject_eta": 0.2200}
        if intervals
        else {},
        "bootstrap": {
            "n_resamples": 200,
            "confidence": 0.95,
            "seed": 0,
            "resampled": "subjects and templates",
            "method": "basic intervals for mu and eta",
        }
        if intervals
        else {},
        "paper_inconsistent_pairs": None,
        "gamma": gamma,
        "subject_gamma": subject_gamma,
        "cluster_gamma": cluster_gamma,
        # as the measure lists them without simultaneous intervals: the largest |γ| first, each cell's interval
        "most_biased": [
            {**r, "interval": [r.get("gamma_low"), r.get("gamma_high")]}
            for r in sorted(gamma, key=lambda r: -abs(r["gamma"]))
        ],
    }
    provenance = {
        "model": {"id": "org/model-x", "revision": "abc1234", "dtype": "bfloat16"},
        "dataset": {"source": source, "config": config, "split": "test", "fingerprint": "f00d"},
        "versions": {"unqover": "0.1.0", "torch": "2.5"},
        "batch_size": 64,
    }
    return {"provenance": provenance, "result": result}


def page_of(results: dict, title: str | None = None, **kwargs) -> str:
    """The HTML report as the probe writes it: the measure's heat-map layout handed in."""
    layout = subject_heatmap(split_results(results)[0], MAX_HEATMAP_ROWS)
    return html_report(results, title, heatmap=layout, **kwargs)


def svg_blocks(page: str) -> list[ET.Element]:
    blocks = re.findall(r"<svg\b.*?</svg>", page, flags=re.S)
    return [ET.fromstring(block) for block in blocks]


def by_class(root: ET.Element, tag: str, css: str) -> list[ET.Element]:
    return [e for e in root.iter(SVG + tag) if css in (e.get("class") or "").split()]


# ---------------------------------------------------------------------------------------------------------------
# charts


def test_ranking_chart_one_row_per_subject_escaped_and_with_intervals():
    result = make_results()["result"]
    svg = charts.ranking_chart(result["subject_gamma"])
    root = ET.fromstring(svg)
    assert len(by_class(root, "g", "subject")) == 4
    assert len(by_class(root, "path", "interval")) == 4
    assert len(by_class(root, "line", "zero")) == 1
    labels = [t.text for t in root.iter(SVG + "text")]
    assert WEIRD in labels  # parsed back: escaped in the source
    assert WEIRD not in svg and charts.escape(WEIRD) in svg
    # rank order top to bottom
    rows = by_class(root, "g", "subject")
    assert rows[0].find(SVG + "title").text.startswith("1. Alpha")


def test_ranking_chart_without_intervals_and_with_missing_gamma():
    result = make_results(intervals=False)["result"]
    records = copy.deepcopy(result["subject_gamma"])
    records[1]["gamma"] = None
    root = ET.fromstring(charts.ranking_chart(records))
    assert len(by_class(root, "g", "subject")) == 4
    assert len(by_class(root, "path", "interval")) == 0
    missing = by_class(root, "g", "missing")
    assert len(missing) == 1
    assert missing[0].find(SVG + "circle") is None  # no dot at 0 for a missing value
    assert "missing" in missing[0].find(SVG + "title").text


def test_heatmap_one_cell_per_subject_attribute_with_exact_tooltips():
    result = make_results()["result"]
    order = [r["subject"] for r in result["subject_gamma"]]
    svg = charts.heatmap(result["gamma"], row_order=order, usual_count=usual_count(result["gamma"]))
    root = ET.fromstring(svg)
    rows = by_class(root, "g", "row")
    assert len(rows) == 4
    cells = [c for row in rows for c in row if c.tag in (SVG + "use", SVG + "rect")]
    assert len(cells) == 8
    tips = [c.find(SVG + "title").text for c in cells]
    # the upper bound is −0.05 + 0.05 in floats, 1.4e-17: float noise, printed as zero; η with 4 decimals as γ
    assert f"{WEIRD} × is <rude> & loud: γ -0.0500 [-0.1000, +0.0000], η -1.0000" in tips
    assert charts.escape("is <rude> & loud") in svg
    # rows follow the given order
    assert [r.find(SVG + "text").find(SVG + "title").text for r in rows] == order
    assert "n = 12 per cell" in svg  # the usual count, stated once; without it each cell states its own
    assert ", n 12" in charts.heatmap(result["gamma"], row_order=order) and "per cell" not in charts.heatmap(
        result["gamma"]
    )


def test_heatmap_missing_cells_are_not_zero():
    result = make_results()["result"]
    records = [r for r in result["gamma"] if not (r["subject"] == "Gamma" and r["attribute"] == "is bad")]
    records[0] = {**records[0], "gamma": None}
    root = ET.fromstring(charts.heatmap(records))
    missing = by_class(root, "rect", "missing")
    assert len(missing) == 2
    assert all(m.get("fill").startswith("url(#") and m.get("fill").endswith("-na)") for m in missing)
    assert {m.find(SVG + "title").text.rsplit("(", 1)[1] for m in missing} == {"no data)", "γ undefined)"}
    zero = charts.diverging_color(0.0, 1.0)
    assert all(m.get("fill") != zero for m in missing)


def test_colour_scale_is_symmetric_around_zero():
    assert charts.diverging_color(0.0, 0.4) == "#f7f7f7"
    assert charts.diverging_color(0.4, 0.4) == charts.DIVERGING[-1]
    assert charts.diverging_color(-0.4, 0.4) == charts.DIVERGING[0]
    assert charts.diverging_color(9.0, 0.4) == charts.DIVERGING[-1]  # clipped
    assert charts.diverging_color(None, 0.4) is None
    assert charts.diverging_color(float("nan"), 0.4) is None
    # asymmetric data, symmetric limits: γ in [-0.1, 0.35] gives a ±0.4 legend
    records = [
        {"subject": "s", "attribute": "a", "gamma": 0.35},
        {"subject": "s", "attribute": "b", "gamma": -0.1},
    ]
    root = ET.fromstring(charts.heatmap(records))
    legend = by_class(root, "g", "legend")[0]
    ticks = [t.text for t in legend.iter(SVG + "text")]
    assert "+.4" in ticks and "−.4" in ticks and "0" in ticks
    stops = [s.get("stop-color") for s in root.iter(SVG + "stop")]
    assert stops == list(charts.DIVERGING) and stops[len(stops) // 2] == "#f7f7f7"


def test_heatmap_cluster_rows_and_attribute_types():
    result = make_results(clusters={"female": 0, "male": 1})["result"]
    svg = charts.heatmap(result["cluster_gamma"], row_key="cluster", row_order=["female", "male"])
    root = ET.fromstring(svg)
    assert len(by_class(root, "g", "row")) == 2
    # the same text with two slot types is shown with its type; a single type is not
    records = [
        {"subject": "x", "attribute": "smelled", "attribute_type": "p_act", "gamma": 0.1},
        {"subject": "x", "attribute": "smelled", "attribute_type": "l_act", "gamma": -0.1},
        {"subject": "x", "attribute": "lied", "attribute_type": "p_act", "gamma": 0.0},
    ]
    texts = {t.text for t in by_class(ET.fromstring(charts.heatmap(records)), "text", "column")}
    assert {"smelled [p_act]", "smelled [l_act]", "lied"} <= {t.strip() for t in texts if t}


def test_heatmap_full_gender_size_stays_small():
    subjects = [f"Name{i}" for i in range(140)]
    attributes = [f"was a profession number {j}" for j in range(70)]
    records = [
        {
            "subject": s,
            "attribute": a,
            "attribute_type": "p_act",
            "gamma": (i - 70) / 200 * ((j % 7) - 3) / 3,
            "eta": 0.5,
            "count": 280,
            "gamma_low": -0.5,
            "gamma_high": 0.5,
        }
        for i, s in enumerate(subjects)
        for j, a in enumerate(attributes)
    ]
    svg = charts.heatmap(records, row_order=subjects)
    assert len(svg.encode()) < 1.6e6
    root = ET.fromstring(svg)
    assert sum(len(row.findall(SVG + "use")) for row in by_class(root, "g", "row")) == 9800


def test_error_bars():
    root = ET.fromstring(charts.error_bars(0.04, 0.08, 0.5))
    assert len(by_class(root, "g", "bar")) == 3
    assert len(list(root.iter(SVG + "rect"))) == 3
    root = ET.fromstring(charts.error_bars(None, 0.08, float("nan")))
    texts = [t.text for t in root.iter(SVG + "text")]
    assert texts.count("missing") == 2
    assert len(list(root.iter(SVG + "rect"))) == 1


# ---------------------------------------------------------------------------------------------------------------
# Markdown and HTML


def test_markdown_report_has_the_tables():
    text = markdown_report(make_results(clusters={"female": 0, "male": 1}), top=3)
    assert text.startswith("# UnQover bias report: org/model-x on religion (qa)")
    assert "Content warning" in text
    # a full run: the value over all groups, then the interval beside its own (bias-corrected) estimate
    assert (
        "| bias intensity μ (per cluster) | 0.1234 (all groups); over other subjects and templates: "
        "0.1200 [0.1000, 0.1500] |" in text
    )
    assert (
        "| μ per subject | 0.1111 (all groups); over other subjects and templates: 0.1100 [0.0900, 0.1300] |"
        in text
    )
    assert (
        "| positional error δ | 0.0421 (all groups) |" in text
        and "| attributive error ε | 0.0789 (all groups) |" in text
    )
    assert "1,234 complete groups measured, 2 incomplete groups dropped; default mode." in text
    assert "## Most biased subject–attribute pairs (top 3 of 8 by |γ(x, a)|)" in text
    assert "## Subjects ranked by γ(x) (all)" in text
    assert "## Attributes most associated with each cluster" in text
    assert (
        "| female | 1 | is bad | +0.2000 | [+0.1700, +0.2300] | +0.4000 |" in text
    )  # η with 4 decimals, as γ
    assert "- model: org/model-x @ abc1234" in text and "- dtype: bfloat16" in text
    assert "- dataset: datasets/unqover/religion (qa, test)" in text
    assert "- dataset fingerprint: f00d" in text and "- library versions: unqover 0.1.0, torch 2.5" in text
    assert "- batch size: 64" in text
    assert "95% bootstrap intervals from 200 resamples (seed 0)" in text
    # a table row with the weird subject keeps its column count: pipes are escaped, HTML is not live
    row = next(line for line in text.splitlines() if line.startswith("| 2 | A&lt;&amp;&gt;"))
    assert len(re.findall(r"(?<!\\)\|", row)) == 7
    assert "\\| \\*x\\*" in row
    assert "<rude>" not in text


def test_markdown_missing_values_and_no_bootstrap():
    results = make_results(intervals=False, mu=None)
    text = markdown_report(results)
    assert "| bias intensity μ (per subject) | — |" in text
    assert "No intervals" in text
    with pytest.raises(UnqoverError):
        markdown_report({"something": 1})
    bare = markdown_report(results["result"])  # a bare to_dict() works too
    assert "## Provenance" in bare and "- not recorded" in bare


def test_html_report_is_self_contained_and_well_formed():
    page = page_of(make_results(clusters={"female": 0, "male": 1}), title="Report <1>")
    assert page.startswith("<!DOCTYPE html>")
    assert "<title>Report &lt;1&gt;</title>" in page
    for value in re.findall(r"""\b(?:src|href)\s*=\s*["']([^"']*)""", page):
        assert "http" not in value and not value.startswith("//"), value
    assert "<script" not in page and "<link" not in page and "@import" not in page
    assert "url(http" not in page
    roots = svg_blocks(page)
    assert len(roots) == 4  # errors, ranking, heat map, cluster heat map
    ids = [e.get("id") for root in roots for e in root.iter() if e.get("id")]
    assert len(ids) == len(set(ids))
    assert "Content warning" in page
    for number in ("0.1234", "0.3456", "0.0421", "0.0789", "0.4567", "0.1200 [0.1000, 0.1500]", "all groups"):
        assert number in page
    assert WEIRD not in page and charts.escape(WEIRD) in page


def test_html_report_without_clusters_or_intervals():
    page = page_of(make_results(intervals=False, mu=None))
    assert len(svg_blocks(page)) == 3
    assert 'class="l na">—</td>' in page
    assert "No intervals" in page


# ---------------------------------------------------------------------------------------------------------------
# comparing runs


def test_compare_two_full_runs_gives_exact_shifts():
    a = make_results()
    b = make_results(scale=2.0)
    b["result"]["mu"] = 0.2234
    b["result"]["intervals"]["mu"] = [0.2, 0.25]
    b["result"]["bias_corrected"]["mu"] = 0.2200
    b["result"]["positional_error"] = 0.0521
    comparison = compared(a, b, "base", "tuned", top=3)
    head = {row["key"]: row for row in comparison["headline"]}
    assert head["mu"]["shift"] == pytest.approx(0.1)
    # two full runs measured every group: their shifts are the full-dataset shifts, exactly
    assert comparison["shift_method"] == "exact"
    assert comparison["shifts"]["mu"]["interval"] == [pytest.approx(0.1)] * 2
    assert comparison["shifts"]["mu"]["p_value"] is None and comparison["shifts"]["mu"]["method"] == "exact"
    assert head["eta"]["shift"] == pytest.approx(0.0)
    assert head["positional_error"]["shift"] == pytest.approx(0.01)
    assert "subject_mu" not in head  # per-subject unit: the same numbers as μ
    # γ(x) doubles: shift = γ_a(x), sorted by |shift|
    shifts = [(r["subject"], r["shift"]) for r in comparison["subjects"]]
    gamma_a = {r["subject"]: r["gamma"] for r in a["result"]["subject_gamma"]}
    assert [s for s, _ in shifts] == sorted(gamma_a, key=lambda s: -abs(gamma_a[s]))
    for subject, shift in shifts:
        assert shift == pytest.approx(gamma_a[subject])
    assert comparison["num_pairs"] == 8 and len(comparison["pairs"]) == 3
    top = comparison["pairs"][0]
    assert abs(top["value"]) == pytest.approx(max(abs(r["gamma"]) for r in a["result"]["gamma"]))
    assert top["interval"] == [top["value"]] * 2 and top["count"] == 12
    assert comparison["warnings"] == []
    text = compare_text(comparison)
    assert "A = base (org/model-x @ abc1234)" in text and "+0.1000 (exact)" in text
    assert "disjoint" not in text and "overlap" not in text
    markdown = compare_markdown(comparison)
    # each interval beside the estimate it is for (the bias-corrected μ of a full run), not the headline value
    assert (
        "| bias intensity μ (per subject) | 0.1234 | 0.1200 [0.1000, 0.1500] | 0.2234 | 0.2200 [0.2000, 0.2500] "
        "| +0.1000 (exact) | — | exact |" in markdown
    )
    assert "A = base (org/model-x @ abc1234): all 1,234 groups" in text


def test_compare_lists_what_only_one_run_measured():
    a = make_results(subjects=("Alpha", "Beta", "Gamma"))
    b = make_results(subjects=("Alpha", "Beta", "Omega"), attributes=("is bad", "is new"))
    comparison = compared(a, b, "a", "b")
    assert comparison["only_in"]["a"]["subjects"] == ["Gamma"]
    assert comparison["only_in"]["b"]["subjects"] == ["Omega"]
    assert comparison["only_in"]["a"]["attributes"] == ["is <rude> & loud"]
    assert comparison["only_in"]["b"]["attributes"] == ["is new"]
    assert {r["subject"] for r in comparison["subjects"]} == {"Alpha", "Beta"}
    text = compare_text(comparison)
    assert "only in a: subjects (1): Gamma; attributes (1): is <rude> & loud" in text
    assert "only in b: subjects (1): Omega" in text
    assert "only in a" in compare_markdown(comparison)


def test_compare_refuses_different_datasets_configs_and_modes():
    a = make_results()
    with pytest.raises(UnqoverError, match="different datasets"):
        other = make_results(source="datasets/unqover/gender")
        other["provenance"]["dataset"]["fingerprint"] = "beef"
        compared(a, other, "a", "b")
    with pytest.raises(UnqoverError, match="config"):
        compared(a, make_results(config="mlm"), "a", "b")
    with pytest.raises(UnqoverError, match="paper mode"):
        compared(a, make_results(mode="paper"), "a", "b")
    # the same data under two names (Hub id and local folder): same fingerprint, allowed with a warning
    hub = make_results(source="unqover/religion")
    assert compared(a, hub, "a", "b")["warnings"]
    # nothing recorded: compared, with a warning
    bare = compared(a["result"], a["result"], "x", "x")
    assert bare["names"] == ["x (A)", "x (B)"]
    assert any("not recorded" in w for w in bare["warnings"])


def test_load_results(tmp_path):
    results = make_results()
    run = tmp_path / "run"
    run.mkdir()
    with pytest.raises(UnqoverError, match=r"no results\.json"):
        load_results(run)
    (run / "results.json").write_text(json.dumps(results))
    assert load_results(run) == results
    assert load_results(run / "results.json") == results
    with pytest.raises(UnqoverError, match="not found"):
        load_results(tmp_path / "nope.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(UnqoverError, match="not valid JSON"):
        load_results(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text(json.dumps({"hello": 1}))
    with pytest.raises(UnqoverError, match="not an UnQover results"):
        load_results(tmp_path / "other.json")


def test_main_end_to_end(tmp_path, capsys):
    run_a = tmp_path / "run-a"
    run_a.mkdir()
    (run_a / "results.json").write_text(json.dumps(make_results()))
    file_b = tmp_path / "tuned.bias.json"
    file_b.write_text(json.dumps(make_results(scale=0.5)))
    output = tmp_path / "out" / "comparison.md"
    # numbers that no predictions give again are not shown (unqover.jobs.compare): refused, nothing written
    assert main(["compare", str(run_a), str(file_b), "--top", "2", "--output", str(output)]) == 2
    assert capsys.readouterr().err == (
        f"unqover: error: cannot check the numbers of run-a against its predictions (the run folder {run_a} has "
        "no predictions.parquet); `unqover compare` shows only numbers that a run's predictions give again\n"
    )
    assert not output.exists()
    # the words, as the Space shows runs whose files it does not read
    comparison = compare_runs(make_results(), make_results(scale=0.5), "run-a", "tuned", top=2)
    assert "A = run-a" in comparison.text and "B = tuned" in comparison.text
    assert "Subjects by |shift of γ(x)| (top 2 of 4, no intervals)" in comparison.text
    assert comparison.markdown.startswith("# UnQover comparison: run-a vs tuned")

    other = tmp_path / "gender.json"
    different = make_results(source="datasets/unqover/gender")
    different["provenance"]["dataset"]["fingerprint"] = "beef"
    other.write_text(json.dumps(different))
    assert main(["compare", str(run_a), str(other)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("unqover: error:") and "different datasets" in err
    assert main(["compare", str(run_a), str(tmp_path / "missing")]) == 2
    assert "not found" in capsys.readouterr().err


def test_compare_says_the_selection_changed_not_the_data():
    a, b = make_results(), make_results()
    b["provenance"]["dataset"]["fingerprint"] = "beef"
    b["provenance"]["selection"] = {"limit": 300, "seed": 0}
    a["provenance"]["selection"] = {"limit": 200, "seed": 0}
    warnings = compared(a, b, "A", "B")["warnings"]
    assert any("kept different rows of the same dataset" in w for w in warnings)
    assert not any("the data changed" in w for w in warnings)
    b["provenance"]["selection"] = a["provenance"]["selection"]
    assert any("the data changed" in w for w in compared(a, b, "A", "B")["warnings"])
