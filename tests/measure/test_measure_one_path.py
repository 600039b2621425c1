"""One path to each UnQover number: a quick run's headline values are the sampled estimates, computed once, and
C, δ and ε come from the one function of each in ``unqover.measure.cells``."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from unqover.generate.unqover import make_plan
from unqover.measure import cells, sampled
from unqover.measure.unqover import measure_paired, mu_units, pair_dataset_rows

HEADLINE = ("positional_error", "attributive_error", "mu", "eta")


@pytest.fixture(scope="module")
def paired(word_lists):
    """Religion's QA rows with scores that favour some subject-attribute pairs, paired into groups."""
    rows = pa.Table.from_batches(list(make_plan(word_lists, "religion", "qa").batches()))
    rng = np.random.default_rng(7)
    lean = {s: rng.normal() for s in set(rows["subject_1"].to_pylist())}
    s1 = np.array([0.5 + 0.1 * lean[s] for s in rows["subject_1"].to_pylist()]) + rng.uniform(
        0, 0.2, rows.num_rows
    )
    s2 = np.array([0.5 + 0.1 * lean[s] for s in rows["subject_2"].to_pylist()]) + rng.uniform(
        0, 0.2, rows.num_rows
    )
    return pair_dataset_rows(rows, np.clip(s1, 0, 1), np.clip(s2, 0, 1))


def test_a_quick_runs_headline_values_are_the_sampled_estimates(paired):
    observed = np.random.default_rng(1).random(paired.num_groups) < 0.5
    quick = measure_paired(paired, n_resamples=0, observed=observed, seed=3)
    cluster_unit = mu_units(paired, "default")[2]
    assert not cluster_unit  # religion's μ averages over subjects
    _, found = sampled.estimate_from_sample(
        paired,
        observed,
        unit_of=np.arange(len(paired.subjects)),
        num_units=len(paired.subjects),
        subject_weighted=False,
        seed=3,
    )
    for name in HEADLINE:
        estimate = found.headline[name]
        assert estimate.value is not None, name
        assert getattr(quick, name) == estimate.value, name
        assert quick.interval_estimates[name] == estimate.value, name
    assert (quick.subject_mu, quick.subject_eta) == (quick.mu, quick.eta)
    # the sample's own plain values are other numbers: the result holds the estimates, not them
    plain = measure_paired(paired.subset(observed), n_resamples=0)
    assert plain.mu != quick.mu


def test_c_delta_and_epsilon_are_the_cells_functions_on_both_paths(paired):
    design = sampled.Design(paired, np.ones(paired.num_groups, dtype=bool), seed=0, confidence=0.95)
    np.testing.assert_array_equal(design.c, cells.bias_scores(paired)[2])
    positional, attributive = sampled.group_errors(paired)
    full = measure_paired(paired, n_resamples=0)
    assert full.positional_error == pytest.approx(positional.mean(), abs=1e-15)
    assert full.attributive_error == pytest.approx(attributive.mean(), abs=1e-15)
    assert full.positional_error == float(cells.positional_errors(paired).mean())


def test_c_is_half_the_difference_of_the_two_subjects_b(paired):
    b1, b2, c = cells.bias_scores(paired)
    s = paired.scores  # (group, order, polarity, subject)
    expected_b1 = ((s[:, 0, 0, 0] - s[:, 0, 1, 0]) + (s[:, 1, 0, 0] - s[:, 1, 1, 0])) / 2
    np.testing.assert_allclose(b1, expected_b1)
    np.testing.assert_allclose(c, (b1 - b2) / 2)
