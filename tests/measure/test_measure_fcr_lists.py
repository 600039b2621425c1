"""The "most biased pairs" list of a quick run: chosen with false-coverage-rate control (Benjamini–Yekutieli
FCR-adjusted intervals at level 1 − R·q/m over the cells a BH step-up selects), so that the listed intervals cover
on average over the list, nothing is listed when there is no bias, and a strong bias is listed at a budget a CPU
user runs (religion, 6,000 of 38,500 groups, about 22 values per cell).

The rule is checked by hand on normal intervals whose p-values are known, by simulation with a fixed seed, and on
the religion rows with a planted bias.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from scipy import stats

from tests.measure.test_sampled_coverage import observed_rows
from tests.measure.test_table_intervals import no_bias_scores
from unqover.measure.most_biased import fcr_level, fcr_select
from unqover.measure.unqover import unqover_bias
from unqover.report.markdown import most_biased_heading, most_biased_note

Q = 0.05


def normal_intervals(estimate: np.ndarray, se: np.ndarray):
    """Intervals estimate ± z(α)·se at every level, as :func:`fcr_select` asks for them."""

    def at(alpha: float) -> tuple[np.ndarray, np.ndarray]:
        z = stats.norm.isf(alpha / 2)
        return estimate - z * se, estimate + z * se

    return at


def bh_by_hand(p: np.ndarray, q: float) -> np.ndarray:
    """Benjamini–Hochberg: the largest k with p_(k) ≤ k·q/m; the k smallest p-values are selected."""
    m = len(p)
    order = np.argsort(p)
    passing = np.flatnonzero(p[order] <= np.arange(1, m + 1) * q / m)
    selected = np.zeros(m, dtype=bool)
    if len(passing):
        selected[order[: passing[-1] + 1]] = True
    return selected


def test_the_selection_is_bh_and_the_intervals_are_at_one_minus_r_q_over_m():
    estimate = np.array([3.9, -3.4, 3.0, 2.6, 2.2, 0.4, -0.3, 1.0, 0.0, -1.9, np.nan])
    se = np.append(np.ones(10), np.nan)  # the last cell has no sampled value: not one of the m cells
    p = 2 * stats.norm.sf(np.abs(estimate[:10]))
    expected = bh_by_hand(p, Q)
    # by hand: p = 1e-4, 7e-4, 0.0027, 0.0093, 0.028, ...; thresholds k·0.005: 0.005, 0.01, 0.015, 0.02, 0.025
    assert expected.sum() == 4 and expected[:4].all()
    chosen = fcr_select(normal_intervals(estimate, se), cells=10, q=Q)
    assert chosen.selected[:10].tolist() == expected.tolist() and not chosen.selected[10]
    assert chosen.alpha == pytest.approx(4 * Q / 10) == fcr_level(4, 10, Q)
    z = stats.norm.isf(chosen.alpha / 2)
    np.testing.assert_allclose(chosen.low[:4], estimate[:4] - z * se[:4])
    np.testing.assert_allclose(chosen.high[:4], estimate[:4] + z * se[:4])
    assert np.isnan(chosen.low[4:]).all() and np.isnan(chosen.high[4:]).all()
    assert ((chosen.low[:4] > 0) | (chosen.high[:4] < 0)).all()  # every listed interval excludes zero
    assert chosen.excluding == 4 and chosen.cells == 10


def test_a_cap_on_the_list_lowers_the_level_it_needs():
    estimate, se = np.array([5.0, 4.5, 4.0, 3.5, 0.1]), np.ones(5)
    uncapped = fcr_select(normal_intervals(estimate, se), cells=5, q=Q)
    capped = fcr_select(normal_intervals(estimate, se), cells=5, q=Q, k=2)
    assert uncapped.selected.sum() == 4 and uncapped.alpha == pytest.approx(4 * Q / 5)
    assert capped.selected.tolist() == [True, True, False, False, False]  # farthest from zero first
    assert capped.alpha == pytest.approx(2 * Q / 5) and capped.excluding >= 2


def test_nothing_is_listed_when_no_interval_excludes_zero_at_the_bonferroni_level():
    estimate, se = np.array([2.2, -2.0, 0.3]), np.ones(3)  # both exclude zero at 95%, neither at 1 − q/m
    chosen = fcr_select(normal_intervals(estimate, se), cells=3, q=Q)
    assert not chosen.selected.any() and np.isnan(chosen.low).all()
    assert chosen.alpha == pytest.approx(Q / 3) and len(chosen.low) == 3


def test_with_no_bias_a_list_appears_in_about_q_of_the_runs_and_fcr_holds_with_bias():
    """Independent normal cells, fixed seed: under no bias every listed interval misses (the truth is 0), so the
    share of runs listing anything is the FCR (BH: exactly q); with half the cells strongly biased the average
    share of listed intervals that miss stays at most q."""
    rng = np.random.default_rng(0)
    runs, m = 400, 60
    any_listed = 0
    false_coverage = []
    truth = np.where(np.arange(m) < m // 2, 3.0, 0.0)
    for _ in range(runs):
        null = rng.standard_normal(m)
        any_listed += fcr_select(normal_intervals(null, np.ones(m)), cells=m, q=Q).selected.any()
        estimate = truth + rng.standard_normal(m)
        chosen = fcr_select(normal_intervals(estimate, np.ones(m)), cells=m, q=Q)
        misses = chosen.selected & ((chosen.low > truth) | (chosen.high < truth))
        false_coverage.append(misses.sum() / max(chosen.selected.sum(), 1))
        assert chosen.selected.sum() >= 10  # the biased cells are found
    assert any_listed / runs <= 0.075  # q = 0.05; Binomial(400, 0.05) exceeds 30 with probability 2%
    assert np.mean(false_coverage) <= Q


@pytest.fixture(scope="module")
def rows(religion_tables) -> pa.Table:
    table = religion_tables["qa"]
    return table.append_column("_row", pa.array(np.arange(table.num_rows)))


def strong_scores(rows: pa.Table, seed: int = 0, scale: float = 1.2) -> tuple[np.ndarray, np.ndarray]:
    """A strong bias: subject x attribute affinities ``scale``·t(3) that negated questions flip, t(3) row noise (the
    "strong" scenario of scripts/bench_quick_runs.py)."""
    rng = np.random.default_rng(seed)
    vocabulary = pc.unique(pa.chunked_array(rows["subject_1"].chunks + rows["subject_2"].chunks))
    s1, s2 = (pc.index_in(rows[c], value_set=vocabulary).to_numpy() for c in ("subject_1", "subject_2"))
    attribute = pc.index_in(rows["attribute"], value_set=pc.unique(rows["attribute"])).to_numpy()
    factor = np.where(pc.equal(rows["polarity"], "negated").to_numpy(zero_copy_only=False), -1.0, 1.0)
    affinity = scale * rng.standard_t(3, (len(vocabulary), attribute.max() + 1))
    logit_1 = affinity[s1, attribute] * factor + rng.standard_t(3, rows.num_rows)
    logit_2 = affinity[s2, attribute] * factor + rng.standard_t(3, rows.num_rows)
    return 1 / (1 + np.exp(-logit_1)), 1 / (1 + np.exp(-logit_2))


@pytest.mark.slow
def test_a_6000_group_religion_run_lists_strong_cells_with_honest_intervals(rows):
    score_1, score_2 = strong_scores(rows, seed=2)
    full = unqover_bias(rows, score_1, score_2, n_resamples=0).gamma.set_index(["subject", "attribute"])[
        "gamma"
    ]
    listed = covered = 0
    for seed in range(2):
        quick = unqover_bias(
            rows,
            score_1,
            score_2,
            n_resamples=0,
            seed=seed,
            observed=observed_rows(rows, limit=6000, seed=seed),
        )
        rule = quick.most_biased_rule
        assert rule["listed"] == len(quick.most_biased) >= 10, rule
        assert rule["selected_from"] > 500 and rule["false_coverage_rate"] == pytest.approx(Q)
        assert rule["level"] == pytest.approx(1 - rule["listed"] * Q / rule["selected_from"])
        assert "false-coverage-rate" in rule["method"]
        table = quick.gamma.set_index(["subject", "attribute"])
        distances = []
        for entry in quick.most_biased:
            low, high = entry["interval"]
            assert low > 0 or high < 0
            own = table.loc[(entry["subject"], entry["attribute"])]
            assert low <= own["gamma_low"] and own["gamma_high"] <= high  # at 1 − R·q/m ≥ 95%: wider
            distances.append(max(low, -high))
            listed += 1
            covered += low <= full.loc[(entry["subject"], entry["attribute"])] <= high
        assert distances == sorted(distances, reverse=True)
        strongest = full.abs().sort_values(ascending=False).index[:5]
        assert {(e["subject"], e["attribute"]) for e in quick.most_biased} & set(strongest)
        result = quick.to_dict()
        assert "false-coverage-rate control" in most_biased_heading(result, 10)
        assert f"{10} shown of {rule['listed']} listed" in most_biased_heading(result, 10)
        assert "false coverage rate ≤ 5%" in most_biased_note(result)
    assert covered / listed >= 0.9


def test_no_bias_lists_nothing_and_says_so(rows):
    score_1, score_2 = no_bias_scores(rows, seed=3)
    quick = unqover_bias(
        rows, score_1, score_2, n_resamples=0, observed=observed_rows(rows, limit=6000, seed=1)
    )
    assert quick.most_biased == [] and quick.most_biased_rule["listed"] == 0
    assert quick.most_biased_rule["level"] == pytest.approx(1 - Q / quick.most_biased_rule["selected_from"])
    note = most_biased_note(quick.to_dict())
    assert note.startswith("No subject–attribute pair is distinguishable from zero")
