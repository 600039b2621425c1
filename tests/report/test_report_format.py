"""The one formatting module: missing values, tiny values, signs, percentages, p-values, plurals; and no ad-hoc
float formats in the reports, the Space and the evaluate modules' apps."""

from __future__ import annotations

import ast
import math
import re
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from unqover.format import (
    MISSING,
    declined_reason,
    fmt,
    fmt_count,
    fmt_declined,
    fmt_estimate,
    fmt_interval,
    fmt_level,
    fmt_p,
    fmt_p_clause,
    fmt_percent,
    fmt_signed,
    number,
    plural,
)
from unqover.report import charts, markdown

ROOT = Path(__file__).resolve().parents[2]
MISSING_VALUES = [None, float("nan"), float("inf"), -float("inf"), "x", np.nan, True, [], {}]


# ---------------------------------------------------------------------------------------------------------------
# missing values


@pytest.mark.parametrize("value", MISSING_VALUES, ids=repr)
def test_missing_values_render_as_missing_everywhere(value):
    assert number(value) is None
    for render in (fmt, fmt_signed, fmt_estimate, fmt_percent, fmt_count, fmt_p):
        assert render(value) == MISSING, render.__name__
    assert fmt_interval([value, 0.5]) == MISSING and fmt_interval([0.5, value]) == MISSING
    assert fmt_estimate(value, [value, value]) == MISSING
    assert fmt_p_clause(value) == f"p = {MISSING}"
    assert fmt_level(value) == ""


def test_missing_intervals():
    for pair in (None, [], [0.1], [0.1, 0.2, 0.3], "ab", {"low": 0.1, "high": 0.2}, 0.5):
        assert fmt_interval(pair) == MISSING, pair
    # an estimate without an interval is the value alone; an interval without an estimate, the interval alone
    assert fmt_estimate(0.25) == "0.2500"
    assert fmt_estimate(None, (0.1, 0.2)) == "[0.1000, 0.2000]"
    assert fmt_estimate(0.15, (0.1, 0.2)) == "0.1500 [0.1000, 0.2000]"


def test_number_accepts_numbers_of_any_kind():
    assert number(1) == 1.0 and number(np.float32(0.5)) == 0.5 and number(Decimal("0.25")) == 0.25
    assert number("0.5") == 0.5 and number(np.int64(3)) == 3.0
    assert math.copysign(1.0, number(-0.0)) == 1.0  # −0.0 becomes 0.0
    assert charts.number is number and markdown.number is number  # one function, not copies


# ---------------------------------------------------------------------------------------------------------------
# tiny values are never printed as zero


def test_tiny_values_are_not_zero():
    assert fmt(1.5e-5) == "1.5e-05" and fmt(1.5e-5) != "0.0000"
    assert fmt(-1.5e-5) == "-1.5e-05"
    assert fmt_signed(1.5e-5) == "+1.5e-05" and fmt_signed(-1.5e-5) == "-1.5e-05"
    assert fmt_interval([1.5e-5, 3e-5]) == "[1.5e-05, 3.0e-05]"
    assert fmt_interval([-2e-6, 0.25], signed=True) == "[-2.0e-06, +0.2500]"
    assert fmt_estimate(1.5e-5, [1.0e-5, 2.04e-5]) == "1.5e-05 [1.0e-05, 2.0e-05]"
    # the threshold follows the digits: below 10^-digits, two significant digits
    assert fmt(0.0001) == "0.0001" and fmt(0.00009) == "9.0e-05"
    assert fmt(0.004, 2) == "4.0e-03" and fmt(0.01, 2) == "0.01"
    assert fmt(0.22804) == "0.2280" and fmt(12.345678) == "12.3457" and fmt(0.0) == "0.0000"


def test_negative_zero_and_signs():
    assert fmt(-0.0) == "0.0000" and fmt_signed(-0.0) == "+0.0000" and fmt_signed(0) == "+0.0000"
    assert fmt_interval([-0.0, 0.1], signed=True) == "[+0.0000, +0.1000]"
    assert fmt_signed(0.05) == "+0.0500" and fmt_signed(-0.05) == "-0.0500"
    assert fmt_interval([-0.1, 0.0], signed=True) == "[-0.1000, +0.0000]"
    assert fmt_estimate(-0.05, [-0.1, 0.0], signed=True) == "-0.0500 [-0.1000, +0.0000]"
    assert "-0.0000" not in fmt_estimate(-1e-9, [-1e-9, -0.0], signed=True)


# ---------------------------------------------------------------------------------------------------------------
# percentages, levels, counts, p-values, plurals, declines


def test_percentages_one_decimal_and_never_zero():
    assert fmt_percent(0.015) == "1.5%" and fmt_percent(0.5) == "50.0%" and fmt_percent(1) == "100.0%"
    assert fmt_percent(0.078) == "7.8%" and fmt_percent(0) == "0.0%"
    assert fmt_percent(12 / 38500) == "0.031%"  # below 0.1%: two significant digits
    assert fmt_percent(1.5e-7) == "1.5e-05%"


def test_levels_and_counts():
    assert fmt_level(0.95) == "95%" and fmt_level(0.975) == "97.5%" and fmt_level(0.9) == "90%"
    # a level strictly between 0 and 1 is never shown as 100% or 0%
    assert fmt_level(0.999999999) == "99.9999999%" and fmt_level(0.99999) == "99.999%"
    assert fmt_level(1 - 2**-53) == "99.99999999999999%" and fmt_level(1e-9) == "0.0000001%"
    assert fmt_level(1) == "100%" and fmt_level(0) == "0%"
    assert fmt_count(1372000) == "1,372,000" and fmt_count(12.0) == "12" and fmt_count(0) == "0"


def test_p_values_four_decimals_with_a_floor():
    assert fmt_p(0.027) == "0.0270" and fmt_p(1.0) == "1.0000" and fmt_p(0.0001) == "0.0001"
    assert fmt_p(0.00005) == "< 0.0001" and fmt_p(1e-30) == "< 0.0001" and fmt_p(0.0) == "< 0.0001"
    assert fmt_p_clause(0.027) == "p = 0.0270" and fmt_p_clause(1e-12) == "p < 0.0001"
    assert fmt_p_clause(0.5, "Holm p") == "Holm p = 0.5000"


def test_plural():
    assert [plural(n, "premise") for n in (0, 1, 2, 1000)] == [
        "0 premises",
        "1 premise",
        "2 premises",
        "1,000 premises",
    ]
    assert plural(1, "person") == "1 person" and plural(3, "person") == "3 persons"
    assert plural(2, "child", "children") == "2 children" and plural(1, "child", "children") == "1 child"
    assert plural(None, "group") == f"{MISSING} groups"


def test_declined():
    assert (
        fmt_declined({"reason": "too few", "groups_needed": 1375})
        == "declined: too few; about 1,375 groups needed"
    )
    assert fmt_declined(None) == "declined: too few groups sampled"


def test_declined_values_are_worded_from_their_numbers():
    """The measures record why a value is declined as numbers (unqover.measure.sampled, .shifts); the reason is
    worded here, with a tiny expectation never shown as 0.0; an older results.json's sentence prints as it is."""
    cell = {
        "code": "few_values_per_cell",
        "reason": "too few sampled values per cell",
        "name": "μ",
        "what": "mean of maxima",
        "smallest": 140,
        "groups": 500,
        "of": 38500,
        "expected": 500 / 38500 * 140,
        "needed": 5,
        "groups_needed": 1375,
    }
    assert fmt_declined(cell) == (
        "declined: μ is a mean of maxima over cells of only 140 values in the full dataset; with 500 of 38,500 "
        "groups a cell expects 1.8 sampled values, too few for an unbiased estimate (at least 5 are needed); "
        "about 1,375 groups needed"
    )
    assert "expects 4.0e-02 sampled values" in declined_reason(cell | {"expected": 0.04, "smallest": 1})
    assert "of only 1 value in" in declined_reason(cell | {"smallest": 1})
    few = {"code": "few_groups", "reason": "too few groups sampled", "groups": 12, "needed": 30}
    assert declined_reason(few) == "only 12 groups were sampled; a mean needs at least 30"
    assert declined_reason(few | {"groups": 1}) == "only 1 group was sampled; a mean needs at least 30"
    compared = {"code": "few_groups_compared", "groups": 12, "needed": 30}
    assert fmt_declined(compared) == "declined: only 12 groups to compare; a mean needs at least 30"
    old = "μ is a mean of maxima over cells of only 140 values"  # a comparison's reason before the numbers
    assert fmt_declined(old) == f"declined: {old}" and declined_reason({"reason": old}) == old


def test_reports_share_the_module():
    from unqover.report import eec, nli

    assert eec.plural is plural and nli.plural is plural
    assert markdown.fmt is fmt and markdown.MISSING == MISSING
    assert charts.MISSING_COLOR.startswith("#")  # the colour of missing values, not the missing text


# ---------------------------------------------------------------------------------------------------------------
# no ad-hoc float formats outside the formatting module

# a format spec with a precision: {x:.4f}, {x:+.{digits}f}, {x:,.1f}, {x:.0%}; printf style "%.3f"; format(x, ".2f")
FLOAT_FORMAT = re.compile(
    r":[<>^=]?[+\- ]?#?0?\d*[,_]?\.(?:\d+|\{[^{}]*\})[eEfFgG%]"
    r"|%[-+ 0#]*\d*\.\d+[eEfFgG]"
    r"|format\([^()]*,\s*[\"'][^\"']*\.\d+[eEfFgG%]"
)
# a missing value spelled another way than format.MISSING (or spelled out instead of using it)
AD_HOC_MISSING = {"—", "n/a", "N/A", "NA", "nan", "NaN", "None", "none", "null", "undefined"}

# the whole package (the measures return numbers, the reports word them) and the evaluate modules with their apps
SCANNED = sorted(
    {
        *(ROOT / "src/unqover").rglob("*.py"),
        *ROOT.glob("metrics/*/app.py"),
        *ROOT.glob("metrics/*/*.py"),
    }
    - {ROOT / "src/unqover/format.py"}
)
# (file, text of the line) pairs allowed to format floats themselves, each with its reason
ALLOWED = {
    # SVG geometry and axis ticks, not reported numbers
    ("src/unqover/report/charts.py", 'text = f"{value:.1f}"'): "SVG coordinates",
    (
        "src/unqover/report/charts.py",
        'return f"{value:+.3g}" if signed else f"{value:.3g}"',
    ): "axis tick labels",
    ("src/unqover/report/charts.py", "stop-color"): "SVG gradient stop offsets",
    # sizes and durations in the Space's messages, not measured values
}


def _findings(pattern: re.Pattern) -> list[str]:
    found = []
    for path in SCANNED:
        rel = path.relative_to(ROOT).as_posix()
        for number_, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line) and not any(file == rel and text in line for (file, text) in ALLOWED):
                found.append(f"{rel}:{number_}: {line.strip()}")
    return found


def test_no_ad_hoc_float_formats():
    found = _findings(FLOAT_FORMAT)
    assert not found, "format numbers with unqover.format, not by hand:\n" + "\n".join(found)


# (file, text of the line) pairs allowed to spell one of AD_HOC_MISSING, each with its reason
ALLOWED_MISSING = {
    ("src/unqover/measure/emotion.py", 'NO_RACE = "none"'): "the label of the noun phrases' race stratum",
    ("src/unqover/lexicon/wordlists.py", 'cluster == "None"'): "the word lists' spelling of no cluster",
    ("src/unqover/train/nli_debias.py", 'report_to="none"'): "transformers' value for no logging integration",
    (
        "src/unqover/probes/causal_prompt.py",
        'CHAT_TEMPLATES = ("auto", "none")',
    ): "--chat-template none: an option value",
    ("src/unqover/scoring/causal.py", 'chat_template == "none"'): "--chat-template none",
    ("src/unqover/space/app.py", '== ["none"]'): "UNQOVER_SPACE_RESULTS_REPOS=none: a setting's value",
    (
        "src/unqover/measure/emotion_person.py",
        'NA = "NA"',
    ): "Beecher's label of no emotion and no race (his results)",
}


def _not_shown(tree: ast.AST) -> set[int]:
    """The ids of the string constants in ``tree`` that are no missing value shown to a reader: docstrings, the
    text of exceptions (errors, not reported values), ``float("nan")`` (a value, not text) and the word "none"
    after ``", ".join(...) or`` (an empty list in words)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr):
            skipped.add(id(node.value))
        elif isinstance(node, ast.Raise):
            skipped |= {id(inner) for inner in ast.walk(node)}
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float":
            skipped |= {id(arg) for arg in node.args}
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            first = node.values[0]
            if (
                isinstance(first, ast.Call)
                and isinstance(first.func, ast.Attribute)
                and first.func.attr == "join"
            ):
                skipped |= {id(value) for value in node.values[1:]}
    return skipped


def test_no_ad_hoc_missing_values():
    """No string literal that spells a missing value where a reader could see it: they all use ``MISSING``."""
    found = []
    for path in SCANNED:
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        tree = ast.parse(text)
        skipped = _not_shown(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value in AD_HOC_MISSING
                and id(node) not in skipped
                and not any(
                    file == rel and allowed in lines[node.lineno - 1] for (file, allowed) in ALLOWED_MISSING
                )
            ):
                found.append(f"{rel}:{node.lineno}: {node.value!r}")
    assert not found, "show missing values as unqover.format.MISSING:\n" + "\n".join(found)


def test_the_scan_covers_the_whole_package():
    scanned = {path.relative_to(ROOT).as_posix() for path in SCANNED}
    for rel in ("src/unqover/cli.py", "src/unqover/measure/emotion.py", "src/unqover/scoring/sampling.py"):
        assert rel in scanned
    assert (
        "metrics/eec_emotion_bias/app.py" in scanned
        and "metrics/eec_emotion_bias/eec_emotion_bias.py" in scanned
    )
    assert "src/unqover/format.py" not in scanned


def test_allow_list_is_not_stale():
    for (file, text), why in {**ALLOWED, **ALLOWED_MISSING}.items():
        assert text in (ROOT / file).read_text(encoding="utf-8"), (file, text, why)


def test_float_noise_is_zero_but_small_values_are_not():
    from unqover.format import fmt, fmt_signed

    assert fmt_signed(-0.05 + 0.05 + 1.4e-17) == "+0.0000" and fmt(1e-13) == "0.0000"
    assert fmt(1.5e-11) == "1.5e-11"


def test_sizes_never_print_a_small_model_as_zero():
    from unqover.format import fmt_size

    assert fmt_size(35_000) == "35.0k" and fmt_size(66_400_000) == "66.4M" and fmt_size(1.5e9) == "1.5B"
    assert fmt_size(350) == "350" and fmt_size(None) == "—"


@pytest.mark.parametrize(
    ("value", "digits", "text"),
    [
        (2320.5, 3, "2,320"),  # never '2.32e+03'
        (123456, 3, "123,000"),
        (45.0, 3, "45"),
        (1.1, 3, "1.1"),
        (0.0342, 3, "0.0342"),
        (0.0344, 2, "0.034"),
        (-9.876, 2, "-9.9"),
        (0, 3, "0"),
        (None, 3, "—"),
        (float("nan"), 3, "—"),
    ],
)
def test_measured_rates_print_to_their_significant_digits(value, digits, text):
    from unqover.format import fmt_significant

    assert fmt_significant(value, digits) == text
