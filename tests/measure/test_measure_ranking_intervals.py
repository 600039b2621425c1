"""The statistics of `unqover leaderboard` (unqover.measure.leaderboard): Bonferroni levels, ranks with ties, rank
intervals from simultaneous intervals and Holm's adjustment, against hand-worked values and properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from unqover.measure.leaderboard import bonferroni_confidence, point_ranks, rank_intervals
from unqover.measure.stats import holm


def test_bonferroni_confidence_splits_alpha():
    assert bonferroni_confidence(0.95, 1) == pytest.approx(0.95)
    assert bonferroni_confidence(0.95, 5) == pytest.approx(0.99)
    assert bonferroni_confidence(0.9, 4) == pytest.approx(0.975)
    with pytest.raises(ValueError):
        bonferroni_confidence(1.0, 3)
    with pytest.raises(ValueError):
        bonferroni_confidence(0.95, 0)


def test_point_ranks_share_ties():
    assert point_ranks([0.3, 0.1, 0.2]) == [3, 1, 2]
    assert point_ranks([0.2, 0.1, 0.2, 0.5]) == [2, 1, 2, 4]


def test_rank_intervals_known_values():
    # A [0, 1] and B [0.5, 2] overlap; C [3, 4] lies above both
    lows, highs = [0.0, 0.5, 3.0], [1.0, 2.0, 4.0]
    assert rank_intervals(lows, highs) == [(1, 2), (1, 2), (3, 3)]
    # disjoint intervals give exact ranks
    assert rank_intervals([2, 0, 4], [3, 1, 5]) == [(2, 2), (1, 1), (3, 3)]
    # touching bounds are not "surely below"
    assert rank_intervals([0, 1], [1, 2]) == [(1, 2), (1, 2)]
    with pytest.raises(ValueError):
        rank_intervals([1.0], [0.0])


def test_holm_known_values():  # measure.stats.holm, as the leaderboard uses it
    # sorted 0.01, 0.02, 0.03, 0.04 times 4, 3, 2, 1 -> 0.04, 0.06, 0.06, 0.06 (monotone)
    assert holm([0.03, 0.01, 0.04, 0.02]) == pytest.approx([0.06, 0.04, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([0.001]) == pytest.approx([0.001])
    assert len(holm([])) == 0


intervals = st.lists(
    st.tuples(st.floats(-10, 10), st.floats(0, 5)).map(lambda t: (t[0] - t[1], t[0] + t[1])),
    min_size=1,
    max_size=8,
)


@given(intervals, st.data())
def test_rank_interval_contains_rank_of_any_values_inside(pairs, data):
    """Whatever values lie in the intervals, each one's rank (ties at their best rank) lies in its rank interval."""
    values = [data.draw(st.floats(low, high)) for low, high in pairs]
    spans = rank_intervals([p[0] for p in pairs], [p[1] for p in pairs])
    for rank, (best, worst) in zip(point_ranks(values), spans, strict=True):
        assert 1 <= best <= rank <= worst <= len(pairs)


@given(st.integers(1, 9), st.floats(-5, 5), st.floats(0, 3))
def test_equal_intervals_give_every_rank(k, middle, half):
    assert rank_intervals([middle - half] * k, [middle + half] * k) == [(1, k)] * k


@given(st.lists(st.floats(0, 1), min_size=1, max_size=12))
def test_holm_is_at_least_raw_at_most_bonferroni_and_keeps_order(p):
    adjusted = holm(p)
    m = len(p)
    for raw, adj in zip(p, adjusted, strict=True):
        assert raw <= adj + 1e-12 and adj <= min(1.0, m * raw) + 1e-12
    for i in range(m):
        for j in range(m):
            if p[i] < p[j]:
                assert adjusted[i] <= adjusted[j] + 1e-12
