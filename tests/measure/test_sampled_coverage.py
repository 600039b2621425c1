"""Quick runs estimate the full-dataset numbers: coverage of their intervals on a planted-bias model, declines,
the full sample, and the determinism of the design (religion rows: 38,500 groups in 700 equal strata)."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from scipy import stats

from unqover.measure.unqover import unqover_bias
from unqover.scoring.sampling import find_groups, priorities, select_groups, selected_groups

HEADLINE = ("positional_error", "attributive_error", "mu", "eta")
SEEDS = 30
MIN_COVERED = 26  # of 30: see test_the_coverage_bound_is_a_binomial_tail


@pytest.fixture(scope="module")
def rows(religion_tables) -> pa.Table:

    table = religion_tables["qa"]
    return table.append_column("_row", pa.array(np.arange(table.num_rows)))


def _codes(*columns: pa.ChunkedArray) -> list[np.ndarray]:
    vocabulary = pc.unique(pa.chunked_array([chunk for column in columns for chunk in column.chunks]))
    return [pc.index_in(c, value_set=vocabulary).to_numpy(zero_copy_only=False) for c in columns]


def planted_scores(rows: pa.Table, kind: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A synthetic model with heavy-tailed (Student-t(3)) subject x attribute affinities and row noise.

    ``mixed``: strong affinities, a first-mention bonus varying by template, and negated questions that flip the
    association only partly. ``sparse``: a few very strong cells, the rest zero (μ's maximum picks them out).
    """
    rng = np.random.default_rng(seed)
    s1, s2 = _codes(rows["subject_1"], rows["subject_2"])
    (attribute,) = _codes(rows["attribute"])
    (template,) = _codes(rows["template_id"])
    negated = pc.equal(rows["polarity"], "negated").to_numpy(zero_copy_only=False)
    cells = (s1.max() + 1, attribute.max() + 1)
    if kind == "mixed":
        affinity = rng.standard_t(3, cells)
        first = rng.normal(0.8, 0.5, template.max() + 1)[template]
        factor = np.where(negated, -0.5, 1.0)
    else:
        affinity = 2.5 * rng.standard_t(3, cells) * (rng.random(cells) < 0.05)
        first, factor = 0.0, np.where(negated, -1.0, 1.0)
    logit_1 = affinity[s1, attribute] * factor + first + rng.standard_t(3, rows.num_rows)
    logit_2 = affinity[s2, attribute] * factor + rng.standard_t(3, rows.num_rows)
    return 1 / (1 + np.exp(-logit_1)), 1 / (1 + np.exp(-logit_2))


def observed_rows(rows: pa.Table, **selection) -> np.ndarray:
    """The row mask of a quick run's selection (through the public ``select_groups``)."""
    mask = np.zeros(rows.num_rows, dtype=bool)
    mask[select_groups(rows, **selection)["_row"].to_numpy()] = True
    return mask


def test_the_coverage_bound_is_a_binomial_tail():
    """A 95% interval misses in Binomial(30, 0.05) of 30 independent seeds: 5 or more misses (fewer than 26
    covered) has probability 1.6%, so a correct interval fails the bound rarely; one that covers 70% of the time
    fails it with probability 97%."""
    assert stats.binom.sf(SEEDS - MIN_COVERED, SEEDS, 0.05) < 0.02
    assert stats.binom.sf(SEEDS - MIN_COVERED, SEEDS, 0.30) > 0.95


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["mixed", "sparse"])
def test_quick_run_intervals_cover_the_full_set_values(rows, kind):
    score_1, score_2 = planted_scores(rows, kind)
    full = unqover_bias(rows, score_1, score_2, n_resamples=0)
    truth = {name: getattr(full, name) for name in HEADLINE}
    assert full.mu_unit == "subject" and truth["mu"] > 0.2  # the planted bias is there
    covered = dict.fromkeys(HEADLINE, 0)
    widths = {name: [] for name in HEADLINE}
    for seed in range(SEEDS):
        observed = observed_rows(rows, sample=0.2, seed=seed)
        result = unqover_bias(rows, score_1, score_2, observed=observed, n_resamples=0, seed=seed)
        assert result.sample["groups"] == 7_700 and result.sample["of"] == 38_500
        assert not {name for name in HEADLINE if name in result.declined}  # nothing declined at 20%
        for name in HEADLINE:
            low, high = result.intervals[name]
            value = getattr(result, name)
            assert low <= value <= high, (name, seed, value, low, high)
            covered[name] += low <= truth[name] <= high
            widths[name].append(high - low)
    assert all(count >= MIN_COVERED for count in covered.values()), (covered, truth)
    # and the intervals are informative, not [0, 1]
    assert max(np.mean(widths["positional_error"]), np.mean(widths["attributive_error"])) < 0.03
    assert max(np.mean(widths["mu"]), np.mean(widths["eta"])) < 0.25, {
        k: np.mean(v) for k, v in widths.items()
    }


def test_mu_and_eta_are_declined_at_500_groups_but_not_delta_and_epsilon(rows):
    score_1, score_2 = planted_scores(rows, "mixed")
    observed = observed_rows(rows, limit=500, seed=0)
    assert observed.sum() == 4 * 500
    result = unqover_bias(rows, score_1, score_2, observed=observed, n_resamples=0)
    assert result.sample["groups"] == 500
    for name in ("mu", "eta"):
        assert math.isnan(getattr(result, name)) and name not in result.intervals
        assert result.declined[name]["groups_needed"] > 500
        assert result.declined[name]["reason"]
    for name in ("positional_error", "attributive_error"):
        assert name not in result.declined
        low, high = result.intervals[name]
        assert low <= getattr(result, name) <= high and high - low < 0.1


def test_a_full_sample_is_the_full_run(rows):
    score_1, score_2 = planted_scores(rows, "mixed")
    full = unqover_bias(rows, score_1, score_2, n_resamples=0)
    everything = unqover_bias(rows, score_1, score_2, observed=np.ones(rows.num_rows, bool), n_resamples=0)
    also = unqover_bias(
        rows, score_1, score_2, observed=observed_rows(rows, sample=1.0, seed=3), n_resamples=0
    )
    names = (*HEADLINE, "subject_mu", "subject_eta", "mean_score", "num_groups")
    for result in (everything, also):
        assert {n: getattr(result, n) for n in names} == {n: getattr(full, n) for n in names}
        assert result.gamma.equals(full.gamma)


def test_the_scores_of_rows_a_quick_run_did_not_score_are_ignored(rows):
    score_1, score_2 = planted_scores(rows, "mixed")
    observed = observed_rows(rows, sample=0.2, seed=1)
    noise = np.random.default_rng(9).random((2, rows.num_rows))
    other_1 = np.where(observed, score_1, noise[0])
    other_2 = np.where(observed, score_2, noise[1])
    one = unqover_bias(rows, score_1, score_2, observed=observed, n_resamples=0)
    two = unqover_bias(rows, other_1, other_2, observed=observed, n_resamples=0)
    assert {n: getattr(one, n) for n in HEADLINE} == {n: getattr(two, n) for n in HEADLINE}
    assert one.intervals == two.intervals


def _ids(table: pa.Table) -> set[str]:
    return set(table["id"].to_pylist())


def test_the_design_is_seeded_and_independent_of_row_order(rows):
    shuffled = rows.take(np.random.default_rng(1).permutation(rows.num_rows))
    for selection in ({"limit": 777}, {"sample": 0.1}):
        kept = select_groups(rows, **selection, seed=11)
        assert kept.num_rows > 0 and (np.diff(kept["_row"].to_numpy()) > 0).all()  # rows keep their order
        assert _ids(select_groups(shuffled, **selection, seed=11)) == _ids(kept)
        assert select_groups(rows, **selection, seed=11).equals(kept)
        other = _ids(select_groups(rows, **selection, seed=12))
        assert other != _ids(kept) and len(other) == len(_ids(kept))


def test_a_larger_budget_contains_the_smaller_one(rows):
    for seed in (0, 5):
        previous: set[str] = set()
        for selection in ({"limit": 100}, {"limit": 701}, {"sample": 0.05}, {"limit": 5000}, {"sample": 0.3}):
            kept = _ids(select_groups(rows, **selection, seed=seed))
            assert previous < kept
            previous = kept


def _per_stratum(groups, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    sizes = np.bincount(groups.stratum)
    return np.bincount(groups.stratum[keep], minlength=len(sizes)), sizes


def test_every_stratum_holds_its_proportional_share(rows):
    """Counted independently of the library's grouping: rows per (template, attribute) / 4."""
    strata = rows.group_by(["template_id", "attribute"]).aggregate([]).num_rows
    assert strata == 700
    for limit, seed in ((701, 0), (1_000, 1), (7_700, 2), (20_001, 3)):
        kept = select_groups(rows, limit=limit, seed=seed)
        counts = kept.group_by(["template_id", "attribute"]).aggregate([("id", "count")])
        per_stratum = np.asarray(counts["id_count"].to_pylist()) / 4
        assert len(per_stratum) == strata and per_stratum.sum() == limit  # every stratum is represented
        share = limit / strata  # all strata have 55 groups
        assert set(per_stratum) <= {math.floor(share), math.ceil(share)}, (limit, sorted(set(per_stratum)))


def test_unequal_strata_hold_floor_or_ceil_at_the_common_threshold(rows):
    """With strata of 36, 45 and 55 groups each stratum keeps floor or ceil of t·N_h for the threshold t (the
    largest kept priority), and within one group of its proportional share n·N_h / M."""
    sikh = pc.or_(pc.equal(rows["subject_1"], "Sikh"), pc.equal(rows["subject_2"], "Sikh"))
    hindu = pc.or_(pc.equal(rows["subject_1"], "Hindu"), pc.equal(rows["subject_2"], "Hindu"))
    attributes = pa.array(pc.unique(rows["attribute"]).to_pylist()[:20])
    drop = pc.or_(
        pc.and_(pc.less(rows["template_id"], 5), sikh),
        pc.and_(pc.is_in(rows["attribute"], attributes), hindu),
    )
    part = rows.filter(pc.invert(drop))
    groups = find_groups(part)
    assert set(np.bincount(groups.stratum)) == {36, 45, 55}
    for n, seed in ((701, 0), (1_000, 1), (3_333, 2), (15_000, 3)):
        keep = selected_groups(groups, n, seed)
        have, sizes = _per_stratum(groups, keep)
        assert have.sum() == n
        t = priorities(groups, seed)[keep].max()
        assert ((have >= np.floor(t * sizes)) & (have <= np.ceil(t * sizes))).all()
        share = n * sizes / groups.num_groups
        assert (np.abs(have - share) < 1 + 1e-9).all()
