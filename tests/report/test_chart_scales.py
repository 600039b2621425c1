"""Each chart is scaled to the data it shows and says its scale: a real model's γ(x) of about 0.001 with quick-run
intervals of ±0.8 is drawn across the plot, not on the zero line (issue 45, item 8)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from unqover.report import charts

SVG = "{http://www.w3.org/2000/svg}"


def subjects(gammas, half_width):
    return [
        {
            "rank": i + 1,
            "subject": f"s{i}",
            "gamma": g,
            "gamma_low": g - half_width,
            "gamma_high": g + half_width,
        }
        for i, g in enumerate(gammas)
    ]


def dots(svg: str) -> list[float]:
    return [float(c.get("cx")) for c in ET.fromstring(svg).iter(SVG + "circle")]


def test_axis_limit_follows_the_values_and_stretches_for_whiskers_only_within_reach():
    assert charts.axis_limit([0.0012, -0.0009]) == pytest.approx(0.0015)
    # whiskers a little wider than the values: shown whole
    assert charts.axis_limit([0.0012], [0.003]) == pytest.approx(0.003)
    # whiskers far wider than the values: the values set the scale
    assert charts.axis_limit([0.0012], [0.8]) == pytest.approx(0.0015)
    # nothing present, or only whiskers: the whiskers or 1
    assert charts.axis_limit([None, float("nan")]) == 1.0
    assert charts.axis_limit([0.0], [0.3]) == pytest.approx(0.3)
    # shares and rates: at most 1 unless a value exceeds it
    assert charts.axis_limit([0.2, 0.35], cap=1.0) == pytest.approx(0.4)
    assert charts.axis_limit([0.9], cap=1.0) == 1.0
    assert charts.axis_limit([1.3], cap=1.0) == pytest.approx(1.3)


def test_ranking_chart_of_tiny_gammas_with_wide_intervals_spreads_the_dots_and_says_the_scale():
    gammas = [0.0012, 0.0006, -0.0002, -0.0011]
    svg = charts.ranking_chart(subjects(gammas, 0.8), width=760)
    xs = dots(svg)
    assert len(xs) == 4
    # the dots span a good part of the plot (on a ±0.8 axis they would lie within a pixel of each other)
    assert max(xs) - min(xs) > 200
    assert xs == sorted(xs, reverse=True)  # γ descending, left of zero for negative γ
    text = " ".join(t.text or "" for t in ET.fromstring(svg).iter(SVG + "text"))
    assert "scale ±0.0015" in text
    assert "4 intervals run past the edge" in text
    # each cut whisker is marked at both ends; the tooltips keep the whole interval
    cuts = [p for p in ET.fromstring(svg).iter(SVG + "path") if p.get("class") == "cut"]
    assert len(cuts) == 8
    assert "<title>1. s0: γ(x) = +0.0012 [-0.7988, +0.8012]" in svg


def test_ranking_chart_shows_narrow_intervals_whole():
    svg = charts.ranking_chart(subjects([0.2, -0.1], 0.05))
    assert not [p for p in ET.fromstring(svg).iter(SVG + "path") if p.get("class") == "cut"]
    assert "scale ±0.25" in svg and "run past" not in svg


def test_share_bars_are_scaled_to_the_largest_share_and_say_it():
    svg = charts.share_bars({"f": {"joy": 0.02, "fear": 0.01}, "m": {"joy": 0.03, "fear": None}}, title="t")
    root = ET.fromstring(svg)
    widths = [float(r.get("width")) for r in root.iter(SVG + "rect") if r.get("fill") not in ("none", None)]
    assert max(widths) == pytest.approx(320.0)  # the largest share (3%) fills the bar
    scale = [t.text for t in root.iter(SVG + "text") if t.get("class") == "scale"]
    assert scale and re.search(r"a full bar is 3(\.0)?%", scale[0])
