"""The totals, shares and orders the reports lay out are computed in the measures (issue 45, item 9): a table's row
totals and shares, the heat map's rows and columns, and the NLI occupations' largest gaps and gap ranking."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from unqover.measure.layout import count_shares, heatmap_order, row_totals, subject_heatmap
from unqover.measure.nli import gap_ranking, largest_gaps


def test_row_totals_and_shares():
    table = {"f": {"joy": 3, "fear": 1}, "m": {"joy": 0, "fear": 0}}
    assert row_totals(table) == {"f": 4, "m": 0}
    assert count_shares(table) == {"f": {"joy": 0.75, "fear": 0.25}, "m": {"joy": None, "fear": None}}


def record(subject, attribute, gamma):
    return {"subject": subject, "attribute": attribute, "attribute_type": "p_act", "gamma": gamma}


def test_heatmap_columns_follow_the_top_rows_and_rows_their_order_or_mean():
    # "a" is high for the top subject x and low for z; "b" the reverse: "a" comes first
    records = [
        record("z", "a", -0.3), record("z", "b", 0.1),
        record("x", "a", 0.4), record("x", "b", -0.1),
        record("y", "a", 0.0), record("y", "b", 0.0),
    ]  # fmt: skip
    rows, columns = heatmap_order(records)
    assert rows == ["x", "y", "z"]  # mean γ, highest first
    assert columns == [("a", "p_act"), ("b", "p_act")]
    rows, columns = heatmap_order(records, row_order=["z", "x"])  # y not in the order: appended
    assert rows == ["z", "x", "y"]
    assert columns == [("a", "p_act"), ("b", "p_act")]  # the loading uses the row scores, not their order


def test_subject_heatmap_shows_the_ranking_s_ends_when_it_is_long():
    subjects = [f"s{i}" for i in range(6)]
    result = {
        "subject_gamma": [{"subject": s, "rank": i + 1} for i, s in enumerate(subjects)],
        "gamma": [record(s, "a", 0.1 * (6 - i)) for i, s in enumerate(subjects)],
    }
    assert subject_heatmap(result, 10)["rows"] == subjects
    layout = subject_heatmap(result, 4)
    assert layout["rows"] == ["s0", "s1", "s4", "s5"] and layout["of"] == 6


def test_nli_largest_gaps_and_gap_ranking():
    table = pd.DataFrame({"occupation": list("abcde"), "gender_gap": [5.0, -20.0, math.nan, 20.0, -1.0]})
    assert largest_gaps(table, 3) == [1, 3, 0]  # |gap|, ties in the table's order; missing counts as 0
    assert gap_ranking(table) == [3, 0, 4, 1, 2]  # signed, highest first, missing last
    assert largest_gaps(pd.DataFrame(columns=["count"])) == [] == gap_ranking(pd.DataFrame(columns=["count"]))


@pytest.mark.parametrize("k", [0, 1, 10])
def test_largest_gaps_at_most_k(k):
    table = pd.DataFrame({"gender_gap": [1.0, 2.0, 3.0]})
    assert len(largest_gaps(table, k)) == min(k, 3)
