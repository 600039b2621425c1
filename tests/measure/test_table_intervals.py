"""A quick run's tables and its "most biased" list: intervals that cover the full-dataset values at every cell size,
a list whose intervals hold after the choosing, and "no pair is distinguishable" when nothing is.

Religion rows (550 γ(x, a) cells of 140 values each); a 1,500-group sample expects about 5 values per cell, where
the normal intervals used before covered 36% of the cells with 2 values.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from tests.measure.test_sampled_coverage import observed_rows, planted_scores
from unqover.measure.bounded import bounded_mean_intervals, bounded_mean_p_values
from unqover.measure.unqover import unqover_bias
from unqover.report.markdown import markdown_report
from unqover.report.text import summary

SEEDS = 4
KEYS = ["subject", "attribute"]


@pytest.fixture(scope="module")
def rows(religion_tables) -> pa.Table:

    table = religion_tables["qa"]
    return table.append_column("_row", pa.array(np.arange(table.num_rows)))


def no_bias_scores(rows: pa.Table, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Independent uniform scores: a model with no bias at all."""
    rng = np.random.default_rng(seed)
    return rng.random(rows.num_rows), rng.random(rows.num_rows)


def coverage_by_count(full: pd.DataFrame, quick: pd.DataFrame, value: str = "gamma") -> pd.DataFrame:
    """Per sampled count: how many cell intervals there are and the share covering the full-dataset value."""
    keys = [k for k in KEYS if k in quick]
    joined = quick.merge(full[[*keys, value]], on=keys, suffixes=("", "_full"))
    covers = (joined[f"{value}_low"] <= joined[f"{value}_full"]) & (
        joined[f"{value}_full"] <= joined[f"{value}_high"]
    )
    return (
        pd.DataFrame({"count": joined["count"], "covers": covers})
        .groupby("count")["covers"]
        .agg(["size", "mean"])
    )


def test_cell_intervals_cover_at_every_sampled_count_under_no_bias(rows):
    score_1, score_2 = no_bias_scores(rows)
    full = unqover_bias(rows, score_1, score_2, n_resamples=0)
    tallies = []
    for seed in range(SEEDS):
        quick = unqover_bias(
            rows,
            score_1,
            score_2,
            n_resamples=0,
            seed=seed,
            observed=observed_rows(rows, limit=1500, seed=seed),
        )
        assert quick.gamma["gamma_low"].notna().all()  # every sampled cell has an interval
        tallies.append(coverage_by_count(full.gamma, quick.gamma))
        tallies.append(coverage_by_count(full.gamma, quick.gamma, "eta"))
        # the listed pairs: nothing is distinguishable from zero when there is no bias
        assert quick.most_biased == []
        assert quick.most_biased_rule["listed"] == 0 and quick.most_biased_rule["selected_from"] > 500
    tally = pd.concat(tallies)
    by_count = tally.groupby(level=0).apply(lambda t: (t["size"] * t["mean"]).sum() / t["size"].sum())
    small = by_count.loc[by_count.index <= 3]
    assert len(small) >= 2 and (small >= 0.93).all(), by_count
    # below 10 values the betting intervals (conservative); from 10 the t intervals, near nominal: pooled, since
    # a count of 11 or 12 holds a dozen cells, and 95% of them is within binomial noise of 93%
    assert (by_count.loc[by_count.index < 10] >= 0.93).all(), by_count
    large = tally.loc[tally.index >= 10]
    cells = large["size"].sum()
    pooled = (large["size"] * large["mean"]).sum() / cells
    assert pooled >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / cells), (pooled, cells)


def test_the_reports_say_no_pair_is_distinguishable(rows):
    score_1, score_2 = no_bias_scores(rows, seed=1)
    quick = unqover_bias(
        rows, score_1, score_2, n_resamples=0, observed=observed_rows(rows, limit=1500, seed=0)
    )
    results = {"result": quick.to_dict(), "provenance": {"model": "uniform", "dataset": {"bias": "religion"}}}
    assert results["result"]["most_biased"] == []
    report = markdown_report(results)
    assert "No subject–attribute pair is distinguishable from zero" in report
    assert "No subject–attribute pair is distinguishable from zero" in summary(quick)


@pytest.mark.slow
def test_listed_pairs_hold_after_selection_and_do_not_favour_small_cells(rows):
    score_1, score_2 = planted_scores(rows, "sparse", seed=3)
    full = unqover_bias(rows, score_1, score_2, n_resamples=0).gamma.set_index(KEYS)["gamma"]
    listed = covered = 0
    for seed in range(SEEDS):
        quick = unqover_bias(
            rows,
            score_1,
            score_2,
            n_resamples=0,
            seed=seed,
            observed=observed_rows(rows, limit=15000, seed=seed),
        )
        assert quick.most_biased, "strong planted cells are found"
        table = quick.gamma.set_index(KEYS)
        distances = []
        for entry in quick.most_biased:
            assert set(entry) >= {"subject", "attribute", "gamma", "interval", "count"}
            low, high = entry["interval"]
            assert low > 0 or high < 0  # listed only when its FCR-adjusted interval excludes zero
            row = table.loc[(entry["subject"], entry["attribute"])]
            assert (
                low <= row["gamma_low"] and row["gamma_high"] <= high
            )  # at level 1 − R·q/m ≥ the cell's own: wider
            truth = full.loc[(entry["subject"], entry["attribute"])]
            listed += 1
            covered += low <= truth <= high
            distances.append(max(low, -high))
        assert distances == sorted(distances, reverse=True)  # ranked by the distance from zero, not by |γ|
    assert listed >= 10 and covered / listed >= 0.9


def test_full_runs_list_pairs_by_a_simultaneous_bootstrap_band(rows):
    score_1, score_2 = planted_scores(rows, "sparse", seed=3)
    full = unqover_bias(rows, score_1, score_2, n_resamples=200)
    table = full.gamma.set_index(KEYS)
    assert full.most_biased and full.most_biased_rule["confidence"] == 0.95
    for entry in full.most_biased:
        row = table.loc[(entry["subject"], entry["attribute"])]
        assert entry["gamma"] == row["gamma"]  # exact values
        low, high = entry["interval"]
        assert low <= row["gamma_low"] and row["gamma_high"] <= high and (low > 0 or high < 0)
    assert full.to_dict()["most_biased"] == full.most_biased


def test_bounded_intervals_exact_at_the_whole_cell_and_wide_at_one_value():
    values = np.array([0.5, -0.2, 0.1, 0.9, 0.5, -0.2, 0.1, 0.9])
    cell = np.array([0, 0, 0, 0, 1, 1, 1, 2])
    mean, low, high = bounded_mean_intervals(values, cell, 4, np.array([4, 40, 40, 40]))
    assert mean[0] == pytest.approx(0.325) and low[0] == high[0] == pytest.approx(0.325)  # n = N: exact
    assert low[1] <= mean[1] <= high[1] and high[1] - low[1] > 0.5
    assert high[2] - low[2] > 1.5  # one value of a bounded cell says little
    assert np.isnan(mean[3]) and np.isnan(low[3])  # no value, no interval
    p = bounded_mean_p_values(values, cell, 4, np.array([4, 40, 40, 40]))
    assert 0 < p[1] <= 1 and np.isnan(p[3])


def test_bounded_intervals_cover_a_skewed_population():
    """Two-point populations (most values −1, a few +1) are where a normal interval fails at small n."""
    rng = np.random.default_rng(0)
    cells, size = 400, 60
    population = np.where(rng.random((cells, size)) < 0.1, 1.0, -1.0)
    truth = population.mean(axis=1)
    for n in (2, 5, 15):
        pick = np.argsort(rng.random((cells, size)), axis=1)[:, :n]
        values = np.take_along_axis(population, pick, axis=1).ravel()
        _, low, high = bounded_mean_intervals(
            values, np.repeat(np.arange(cells), n), cells, np.full(cells, size)
        )
        assert np.mean((low <= truth) & (truth <= high)) >= 0.93, n
