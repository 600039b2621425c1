"""How the reports print quick runs (estimates of the full-dataset values from a sample of groups) and full runs.

One rule in every format (terminal, Markdown, HTML, the Space): the value printed beside an interval is the
estimate that interval is for. Synthetic results dicts only (the shape of ``UnqoverBias.to_dict()``).
"""

from __future__ import annotations

import copy
import dataclasses
import html
import re
from types import SimpleNamespace

import pandas as pd
import pytest

from tests.report.test_report_pages import compared, make_results, page_of
from unqover.measure.unqover import UnqoverBias
from unqover.report.compare import compare_markdown, compare_text
from unqover.report.markdown import markdown_report
from unqover.report.text import summary
from unqover.space.render import quick_run_web_line, unqover_headline
from unqover.space.results import INTERVAL_ESTIMATE, runs_table

HEADLINE = ("positional_error", "attributive_error", "mu", "eta")
SAMPLE_LINE = "estimated from 20,580 of 1,372,000 groups (1.5%), 95% intervals for the full-dataset values"
REASON = (
    "μ is a mean of maxima over cells of only 140 values in the full dataset; with 500 of 38,500 groups a cell "
    "expects 1.8 sampled values, too few for an unbiased estimate (at least 5 are needed)"
)
DECLINED_MU = f"— (declined: {REASON}; about 1,375 groups needed)"
NUMBER = r"[-+]?\d+\.\d+"
INTERVAL = re.compile(rf"\[({NUMBER}), ({NUMBER})\]")
ESTIMATE_AND_INTERVAL = re.compile(rf"({NUMBER}) \[({NUMBER}), ({NUMBER})\]")


def quick_results(*, declined: bool = False, clusters: dict | None = None) -> dict:
    """A quick run's results: estimates of the full-dataset values with sampling intervals (μ, η declined)."""
    results = make_results(clusters=clusters)
    result = results["result"]
    values = {
        "positional_error": 0.0410,
        "attributive_error": 0.0800,
        "mu": 0.2280,
        "eta": 0.3310,
        "subject_mu": 0.1500 if clusters else 0.2280,
        "subject_eta": 0.2500 if clusters else 0.3310,
    }
    intervals = {
        "positional_error": [0.0390, 0.0430],
        "attributive_error": [0.0770, 0.0830],
        "mu": [0.2010, 0.2550],
        "eta": [0.3000, 0.3600],
        "subject_mu": [0.1200, 0.1800] if clusters else [0.2010, 0.2550],
        "subject_eta": [0.2200, 0.2800] if clusters else [0.3000, 0.3600],
    }
    result.update(values)
    result.update(
        num_groups=1_372_000,
        dropped_groups=0,
        intervals=intervals,
        interval_estimates=dict(values),
        interval_kind="sampling",
        bias_corrected={},
        bootstrap={
            "n_resamples": 0,
            "confidence": 0.95,
            "seed": 0,
            "method": "design-based: simple random sampling of groups with finite population correction",
        },
        sample={
            "groups": 20_580,
            "of": 1_372_000,
            "fraction": 20_580 / 1_372_000,
            "seed": 0,
            "design": "stratified-prn-v1",
            "matches_design": True,
        },
        declined={},
    )
    if declined:
        for name in ("mu", "eta", "subject_mu", "subject_eta"):
            result[name] = None
            del result["intervals"][name], result["interval_estimates"][name]
            result["declined"][name] = {
                "reason": REASON if "mu" in name else REASON.replace("μ is a mean of maxima", "η is a mean"),
                "groups_needed": 1375,
            }
    return results


def full_results() -> dict:
    """A full run as in issue 12: μ over all groups lies outside the generalisation interval of its bias-corrected
    estimate."""
    results = make_results()
    result = results["result"]
    result.update(
        mu=0.4834,
        subject_mu=0.4834,
        intervals={
            "mu": [0.1547, 0.3734],
            "eta": [0.3000, 0.4000],
            "subject_mu": [0.1547, 0.3734],
            "subject_eta": [0.3000, 0.4000],
            "positional_error": [0.0400, 0.0440],
            "attributive_error": [0.0760, 0.0820],
        },
        bias_corrected={"mu": 0.2678, "eta": 0.3400, "subject_mu": 0.2678, "subject_eta": 0.3400},
        interval_kind="generalization",
        interval_estimates={
            "mu": 0.2678,
            "eta": 0.3400,
            "subject_mu": 0.2678,
            "subject_eta": 0.3400,
            "positional_error": 0.0421,
            "attributive_error": 0.0789,
        },
        sample=None,
        declined={},
    )
    return results


FLOATS = ("positional_error", "attributive_error", "mean_score", "mu", "eta", "subject_mu", "subject_eta")


def as_bias(results: dict) -> UnqoverBias:
    """The ``UnqoverBias`` behind a results dict (a declined value is NaN in the object, None in the dict)."""
    result = copy.deepcopy(results["result"])
    tables = {name: pd.DataFrame(result.pop(name)) for name in ("gamma", "subject_gamma", "cluster_gamma")}
    known = {f.name for f in dataclasses.fields(UnqoverBias)}
    scalars = {k: (float("nan") if v is None and k in FLOATS else v) for k, v in result.items() if k in known}
    return UnqoverBias(**scalars, **tables)


def renderings(results: dict) -> dict[str, str]:
    """The headline section of every format, as plain text (HTML tags stripped)."""
    text = summary(as_bias(results), top=3)
    markdown = markdown_report(results, top=3)
    page = page_of(results, top=3)
    section = page[page.index('<section id="headline">') : page.index("</section>")]
    return {
        "text": text.split("\n\n")[0],
        "markdown": markdown[
            markdown.index("## Headline") : markdown.index("\n## ", markdown.index("## Headline"))
        ],
        "html": " ".join(html.unescape(re.sub(r"<[^>]+>", " ", section)).split()),
        "space": unqover_headline(results),
    }


def check_estimates_inside_intervals(section: str) -> int:
    """Every interval is printed right after its estimate, and the estimate lies inside it; returns how many."""
    intervals = INTERVAL.findall(section)
    pairs = ESTIMATE_AND_INTERVAL.findall(section)
    assert len(pairs) == len(intervals), section  # no interval stands apart from its estimate
    for estimate, low, high in pairs:
        assert float(low) <= float(estimate) <= float(high), (estimate, low, high, section)
    return len(pairs)


@pytest.mark.parametrize("clusters", [None, {"female": 0, "male": 1}])
def test_quick_run_prints_estimated_from_and_every_headline_with_its_interval(clusters):
    results = quick_results(clusters=clusters)
    for fmt, section in renderings(results).items():
        assert SAMPLE_LINE in section, fmt
        for value, (low, high) in (
            ("0.2280", ("0.2010", "0.2550")),  # μ
            ("0.3310", ("0.3000", "0.3600")),  # η
            ("0.0410", ("0.0390", "0.0430")),  # δ
            ("0.0800", ("0.0770", "0.0830")),  # ε
        ):
            assert f"{value} [{low}, {high}]" in section, (fmt, value)
        assert "all groups" not in section and "over other subjects and templates" not in section, fmt
        assert check_estimates_inside_intervals(section) >= 4
    markdown = markdown_report(results)
    assert "| bias intensity μ (per " in markdown and "| 0.2280 [0.2010, 0.2550] |" in markdown
    assert "95% intervals for the full-dataset values, from the sampling of groups" in markdown  # the method
    assert "No intervals" not in markdown
    assert quick_run_web_line(results) == SAMPLE_LINE


def test_declined_values_print_a_dash_with_the_reason_never_nan_or_zero():
    results = quick_results(declined=True)
    for fmt, section in renderings(results).items():
        assert SAMPLE_LINE in section, fmt
        assert DECLINED_MU in section, fmt
        assert "— (declined: η is a mean" in section, fmt
        assert not re.search(r"\bnan\b", section, re.I), fmt
        mu_line = section[section.index("μ") :].split(DECLINED_MU)[0]
        assert "0.0000" not in mu_line, fmt
        assert "0.0410 [0.0390, 0.0430]" in section  # δ is still estimated
        assert check_estimates_inside_intervals(section) == 2  # δ and ε only
    everything = markdown_report(results) + page_of(results) + summary(as_bias(results))
    assert not re.search(r"\bnan\b", everything, re.I)
    page = page_of(results)
    assert '<div class="value">—</div>' in page and "about 1,375 groups needed" in page


def test_a_masked_lm_s_tiny_mu_is_never_printed_as_zero():
    """Issue 13: a masked LM's μ of 1.5e-5 printed as 0.0000; every format now shows 1.5e-05 (format.fmt)."""
    results = quick_results()
    result = results["result"]
    for name in ("mu", "subject_mu"):
        result[name] = result["interval_estimates"][name] = 1.5e-5
        result["intervals"][name] = [1.1e-5, 1.9e-5]
    for fmt, section in renderings(results).items():
        assert "1.5e-05 [1.1e-05, 1.9e-05]" in section, (fmt, section)
        mu_line = section[section.index("μ") :].split("1.5e-05")[0]
        assert "0.0000" not in mu_line, fmt
    full = full_results()
    full["result"].update(mu=1.5e-5, subject_mu=1.5e-5)
    full["result"]["intervals"]["mu"] = [-2e-6, 3.2e-5]
    full["result"]["interval_estimates"]["mu"] = 1.4e-5
    for fmt, section in renderings(full).items():
        assert (
            "1.5e-05 (all groups); over other subjects and templates: 1.4e-05 [-2.0e-06, 3.2e-05]" in section
        ), fmt


def test_full_run_prints_all_groups_and_the_interval_beside_its_own_estimate():
    results = full_results()
    for fmt, section in renderings(results).items():
        assert "0.4834 (all groups); over other subjects and templates: 0.2678 [0.1547, 0.3734]" in section, (
            fmt
        )
        assert "0.4834 [" not in section, fmt  # never the headline beside another estimate's interval
        assert "0.0421 (all groups); over other subjects and templates: 0.0421 [0.0400, 0.0440]" in section, (
            fmt
        )
        assert "estimated from" not in section, fmt
        assert check_estimates_inside_intervals(section) >= 4
    page = page_of(results)
    assert "bias-corrected 0.2678" not in page  # the old card: a value beside another estimate's interval
    assert "over other subjects and templates" in markdown_report(results).split("## Method")[1]


def test_older_results_without_the_new_fields_fall_back_to_the_bias_corrected_estimate():
    results = full_results()
    for key in ("interval_kind", "interval_estimates", "sample", "declined"):
        del results["result"][key]
    section = renderings(results)["markdown"]
    assert "0.4834 (all groups); over other subjects and templates: 0.2678 [0.1547, 0.3734]" in section
    # δ had no estimate recorded for its interval: the interval stands alone, not beside the headline
    assert "0.0421 (all groups); over other subjects and templates: [0.0400, 0.0440]" in section

    # an UnqoverBias object from before the new attributes: the summary reads them with defaults
    bias = as_bias(results)
    old = SimpleNamespace(
        **{
            f.name: getattr(bias, f.name)
            for f in dataclasses.fields(UnqoverBias)
            if f.name
            not in (
                "interval_kind",
                "interval_estimates",
                "sample",
                "declined",
                "most_biased",
                "most_biased_rule",
            )
        },
    )
    text = summary(old, top=2)
    assert (
        "bias intensity μ     0.4834 (all groups); over other subjects and templates: 0.2678 [0.1547, 0.3734]"
        in text
    )


def test_design_warning_is_printed():
    results = quick_results()
    results["result"]["sample"]["matches_design"] = False
    results["result"]["sample"]["warning"] = "the scored groups are not spread over the strata"
    for fmt, section in renderings(results).items():
        assert "the scored groups are not spread over the strata" in section, fmt


def test_comparison_prints_each_interval_beside_its_estimate():
    quick, full = quick_results(declined=True), full_results()
    comparison = compared(quick, full, "quick", "full")
    text, markdown = compare_text(comparison), compare_markdown(comparison)
    for out in (text, markdown):
        assert f"quick (org/model-x @ abc1234): {SAMPLE_LINE}" in out
        assert "full (org/model-x @ abc1234): all 1,234 groups" in out
        assert "0.2678 [0.1547, 0.3734]" in out and "0.4834 [" not in out
        assert "they answer different questions" in out
        assert not re.search(r"\bnan\b", out, re.I)
        check_estimates_inside_intervals(out.split("Subjects by")[0])


def test_space_runs_table_says_how_many_groups_and_which_estimate_the_interval_is_for():
    table = runs_table(
        {"quick": quick_results(), "declined": quick_results(declined=True), "full": full_results()}
    )
    rows = {row["run"]: row for row in table.to_dict(orient="records")}
    assert rows["quick"]["groups"] == "20,580 of 1,372,000 groups (1.5%)"
    assert rows["full"]["groups"] == "all 1,234 groups"
    assert rows["full"]["μ"] == pytest.approx(0.4834) and rows["full"][INTERVAL_ESTIMATE] == pytest.approx(
        0.2678
    )
    for row in (rows["quick"], rows["full"]):
        assert row["μ low"] <= row[INTERVAL_ESTIMATE] <= row["μ high"]
    assert pd.isna(rows["declined"]["μ"]) and pd.isna(rows["declined"]["μ low"])


def test_a_reason_shared_by_mu_and_eta_is_printed_once():
    results = quick_results(declined=True)
    why = {
        "code": "few_values_per_cell",
        "reason": "too few sampled values per cell",
        "smallest": 140,
        "groups": 500,
        "of": 38500,
        "expected": 1.82,
        "needed": 5,
        "groups_needed": 1375,
    }
    results["result"]["declined"] = {
        "mu": {**why, "name": "μ", "what": "mean of maxima"},
        "eta": {**why, "name": "η", "what": "mean"},
    }
    for fmt, section in renderings(results).items():
        assert section.count("too few for an unbiased estimate") == 1, fmt
        assert "declined for the same reason as μ; about 1,375 groups needed" in section, fmt
    # another reason is printed in full
    results["result"]["declined"]["eta"]["smallest"] = 70
    assert renderings(results)["text"].count("too few for an unbiased estimate") == 2
