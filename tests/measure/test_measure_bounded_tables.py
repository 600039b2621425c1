"""Quick runs' NLI per-occupation and emotion per-group tables: intervals that cover the full-dataset values at
every sampled count (betting intervals for bounded values, combined over the strata of the selection)."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from collections import defaultdict

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from unqover.generate.eec import eec_questions
from unqover.generate.nli import nli_rows, synthetic_premises
from unqover.measure.bounded import bounded_mean_intervals
from unqover.measure.emotion import emotion_bias
from unqover.measure.nli import nli_gender_bias
from unqover.measure.stratified import stratified_mean_intervals
from unqover.probes.base import RunOptions
from unqover.probes.eec_rows import describe_eec_selection, select_persons
from unqover.probes.nli_rows import _strata, limit_per_occupation, measure_nli, stratum_population

SEEDS = 40
NOMINAL = 0.93  # of the intervals at 95%: the simulation's floor (the betting intervals are conservative)
NLI_COLUMNS = ("S", "S_margin", "delta_P", "B", "stereotype_gap", "gender_gap")


# --- the interval functions themselves -----------------------------------------------------------------------


def test_bounded_mean_intervals_on_a_tiny_population():
    population = np.array([-1.0, -0.5, 0.0, 0.25, 1.0])  # N = 5, mean −0.05
    everything = bounded_mean_intervals(population, np.zeros(5, int), 1, [5], seed=3)
    assert everything[0][0] == pytest.approx(-0.05)
    assert everything[1][0] == everything[2][0] == pytest.approx(-0.05)  # n = N: the exact mean
    rng = np.random.default_rng(0)
    widths = defaultdict(list)
    for _ in range(60):
        for n in (1, 2, 3, 4):
            drawn = rng.choice(population, n, replace=False)
            mean, low, high = bounded_mean_intervals(
                drawn, np.zeros(n, int), 1, [5], seed=int(rng.integers(99))
            )
            assert low[0] <= drawn.mean() <= high[0] and mean[0] == pytest.approx(drawn.mean())
            assert low[0] <= -0.05 <= high[0] or n < 4  # with 4 of 5 drawn the mean is nearly known
            widths[n].append(high[0] - low[0])
    assert min(widths[1]) > 1.8  # one value of [−1, 1] says almost nothing about the other four
    assert np.mean(widths[1]) > np.mean(widths[2]) > np.mean(widths[4])
    mean, low, high = bounded_mean_intervals([0.5], [1], 3, [4, 4, 4])  # cells without a value: NaN
    assert np.isnan(mean[[0, 2]]).all() and np.isnan(low[0]) and low[1] < 0.5 < high[1]


def test_stratified_intervals_exact_open_and_like_the_single_stratum_one():
    # every unit of both strata drawn: the exact weighted sum
    _, low, high = stratified_mean_intervals([0.2, 0.4, 1.0], [0, 0, 1], [0, 0], [2, 1], [0.25, 0.75])
    assert low[0] == high[0] == pytest.approx(0.25 * 0.3 + 0.75 * 1.0)
    # a stratum without a draw may hold anything: its whole weight stays open
    estimate, low, high = stratified_mean_intervals([0.5, 0.5], [0, 0], [0, 0], [2, 5], [0.5, 0.5])
    assert np.isnan(estimate[0]) and low[0] == pytest.approx(0.25) and high[0] == pytest.approx(0.75)
    # one stratum: the bounded module's interval, up to the grid
    rng = np.random.default_rng(1)
    values = rng.uniform(size=12)
    _, low, high = stratified_mean_intervals(values, np.zeros(12, int), [0], [40], [1.0], seed=5)
    _, b_low, b_high = bounded_mean_intervals(2 * values - 1, np.zeros(12, int), 1, [40], seed=5)
    assert low[0] == pytest.approx((b_low[0] + 1) / 2, abs=0.01)
    assert high[0] == pytest.approx((b_high[0] + 1) / 2, abs=0.01)


# --- NLI: per occupation ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nli() -> tuple[pa.Table, np.ndarray, np.ndarray, dict]:
    """The synthetic rows (38 occupations x 40 premises x 3 templates) and a biased model's probabilities with
    premise, template and occupation effects (templates differ, so the strata matter)."""
    rows = nli_rows(synthetic_premises(), family="main")
    rng = np.random.default_rng(7)
    occupation = np.unique(rows["occupation"].to_numpy(zero_copy_only=False), return_inverse=True)[1]
    cluster = np.unique(rows["cluster"].to_numpy(zero_copy_only=False), return_inverse=True)[1]
    template = rows["template_id"].to_numpy()
    sign = np.where(rows["occupation_gender"].to_numpy(zero_copy_only=False) == "female", 1.0, -1.0)
    base = rng.normal(0, 1.5, cluster.max() + 1)[cluster] + np.array([-1.0, 0.0, 1.5])[template]
    effect = rng.normal(0.5, 0.8, occupation.max() + 1)[occupation] * sign
    z_f = base + effect * (template + 1) / 2 + rng.standard_t(3, len(sign))
    z_m = base - 0.5 * effect + rng.standard_t(3, len(sign))
    return rows, 1 / (1 + np.exp(-z_f)), 1 / (1 + np.exp(-z_m)), stratum_population(rows)


def _nli_measure(rows, pf, pm, population=None):
    return nli_gender_bias(
        pf, pm, rows["occupation_gender"], rows["cluster"], occupation=rows["occupation"],
        template_id=rows["template_id"], n_resamples=0, n_permutations=0,
        strata=None if population is None else _strata(rows)[1], population=population,
    )  # fmt: skip


@pytest.mark.slow
def test_nli_occupation_intervals_cover_the_full_dataset_values(nli):
    rows, pf, pm, population = nli
    truth = _nli_measure(rows, pf, pm).by_occupation.set_index("occupation")
    ids = rows["id"].to_numpy(zero_copy_only=False)
    covered: dict[int, list[bool]] = defaultdict(list)
    for limit in (1, 2, 3, 6, 12):
        for seed in range(SEEDS if limit in (2, 6) else SEEDS // 4):
            kept = limit_per_occupation(rows, limit, seed=seed)
            keep = np.isin(ids, kept["id"].to_numpy(zero_copy_only=False))
            table = _nli_measure(kept, pf[keep], pm[keep], population).by_occupation
            for name in NLI_COLUMNS:
                value = truth.loc[table["occupation"], name].to_numpy()
                hit = (table[f"{name}_low"] - 1e-9 <= value) & (value <= table[f"{name}_high"] + 1e-9)
                for count, ok in zip(table["count"], hit, strict=True):
                    covered[int(count)].append(bool(ok))
    assert {1, 2, 3} <= set(covered)  # cells with 1-3 sampled premises are checked
    for count, hits in covered.items():
        assert np.mean(hits) >= NOMINAL, (count, np.mean(hits), len(hits))
    assert np.mean([h for hits in covered.values() for h in hits]) >= NOMINAL


def test_nli_intervals_narrow_with_premises_are_exact_for_the_full_set_and_absent_in_full_runs(nli):
    rows, pf, pm, population = nli
    widths = []
    ids = rows["id"].to_numpy(zero_copy_only=False)
    for limit in (1, 6, 30):
        kept = limit_per_occupation(rows, limit, seed=0)
        keep = np.isin(ids, kept["id"].to_numpy(zero_copy_only=False))
        table = _nli_measure(kept, pf[keep], pm[keep], population).by_occupation
        widths.append(float((table["delta_P_high"] - table["delta_P_low"]).mean()))
        assert (table["gender_gap_low"] <= table["gender_gap"]).all()  # the value shown lies inside
        assert (table["gender_gap"] <= table["gender_gap_high"]).all()
    assert widths[0] > 90 and widths[0] > widths[1] > widths[2]  # one premise: nearly the whole range
    every = _nli_measure(rows, pf, pm, population)  # a "quick run" that kept every row: the exact values
    for name in NLI_COLUMNS:
        np.testing.assert_allclose(every.by_occupation[f"{name}_low"], every.by_occupation[name])
        np.testing.assert_allclose(every.by_occupation[f"{name}_high"], every.by_occupation[name])
    assert "betting" in every.table_intervals["method"]
    full = _nli_measure(rows, pf, pm)
    assert "delta_P_low" not in full.by_occupation and full.table_intervals == {}


def test_nli_probe_measure_passes_the_population(nli):
    rows, pf, pm, population = nli
    kept = limit_per_occupation(rows, 2, seed=1)
    keep = pa.array(
        np.isin(rows["id"].to_numpy(zero_copy_only=False), kept["id"].to_numpy(zero_copy_only=False))
    )
    scores = pa.table({"score_1": pa.array(pf).filter(keep), "score_2": pa.array(pm).filter(keep)})
    out = measure_nli(kept, scores, None, RunOptions(resamples=0), {"limit": 2}, population).to_dict()
    record = out["by_occupation"][0]
    assert record["delta_P_low"] <= record["delta_P"] <= record["delta_P_high"]
    assert out["table_intervals"]["table"] == "by_occupation"
    assert (
        "delta_P_low"
        not in measure_nli(kept, scores, None, RunOptions(resamples=0), None).to_dict()["by_occupation"][0]
    )


# --- emotion: per group -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def eec() -> tuple[pa.Table, list[list[str]], dict]:
    """The 480 questions and a model whose emotion choices depend on the person (strongly) and the race."""
    questions = eec_questions()
    words = pc.list_flatten(questions["choices"]).to_pylist()
    emotions = dict(zip(words, pc.list_flatten(questions["choice_emotions"]).to_pylist(), strict=True))
    names = sorted(set(emotions.values()))
    rng = np.random.default_rng(11)
    persons = sorted(set(questions["person_slot"].to_pylist()))
    affinity = {p: rng.normal(0, 1.5, len(names)) for p in persons}
    race_shift = {
        "African-American": rng.normal(0, 0.7, len(names)),
        "European": np.zeros(len(names)),
        None: 0,
    }
    answers = []
    for choices, person, race in zip(questions["choices"].to_pylist(), questions["person_slot"].to_pylist(),
                                     questions["race"].to_pylist(), strict=True):  # fmt: skip
        score = [affinity[person][names.index(emotions[c])] + race_shift[race][names.index(emotions[c])]
                 if race else affinity[person][names.index(emotions[c])] for c in choices]  # fmt: skip
        score = np.array(score) + rng.gumbel(size=len(choices))
        answers.append([choices[k] for k in np.argsort(-score)[:3]])
    return questions, answers, emotions


def _emotion(questions, answers, emotions, population=None):
    return emotion_bias(
        answers, questions["gender"].to_pylist(), questions["race"].to_pylist(),
        questions["person_slot"].to_pylist(), questions["form"].to_pylist(), emotions=emotions,
        n_permutations=0, n_bootstrap=0, population=population,
    )  # fmt: skip


def _full_shares(test: dict, table: str) -> dict:
    records = test["top1"]["counts"] if table == "top1" else test["beecher"]["scores"]
    return {g: {e: v / sum(row.values()) for e, v in row.items()} for g, row in records.items()}


@pytest.mark.slow
def test_emotion_group_intervals_cover_the_full_set_shares(eec):
    questions, answers, emotions = eec
    full = _emotion(questions, answers, emotions)
    truth = {(n, t): _full_shares(full.tests[n], t) for n in full.tests for t in ("top1", "beecher")}
    ids = questions["id"].to_numpy(zero_copy_only=False)
    covered: dict[int, list[bool]] = defaultdict(list)
    for limit in (1, 2, 3, 5):
        for seed in range(SEEDS):
            kept = select_persons(questions, limit, seed)
            keep = np.isin(ids, kept["id"].to_numpy(zero_copy_only=False))
            population = describe_eec_selection(questions, kept, limit, seed)["of"]
            result = _emotion(
                kept, [a for a, k in zip(answers, keep, strict=True) if k], emotions, population
            )
            for (name, table), shares in truth.items():
                test = result.tests[name]
                assert test["share_intervals_note"] is None
                for group, row in shares.items():
                    for emotion, value in row.items():
                        low, high = test[table]["share_intervals"][group][emotion]
                        assert low <= test[table]["shares"][group][emotion] <= high
                        covered[limit].append(low - 1e-9 <= value <= high + 1e-9)
    for limit, hits in covered.items():  # persons per cell: 2-3 cells per group, so 2 to 15 persons per group
        assert np.mean(hits) >= NOMINAL, (limit, np.mean(hits), len(hits))


def test_emotion_full_selection_is_exact_and_unequal_persons_decline(eec):
    questions, answers, emotions = eec
    every = describe_eec_selection(questions, questions, 10, 0)["of"]
    result = _emotion(questions, answers, emotions, every)
    for test in result.tests.values():
        for group, row in test["top1"]["share_intervals"].items():
            for emotion, (low, high) in row.items():
                assert low == pytest.approx(test["top1"]["shares"][group][emotion])
                assert high == pytest.approx(low)
    assert "betting" in result.table_intervals["method"] and "per-person" in result.table_intervals["method"]
    # a person who answered fewer questions: the shares are not means of equal persons, so no interval
    kept = select_persons(questions, 2, 0)
    lost = kept["person_slot"][0].as_py()
    drop = np.flatnonzero(np.array(kept["person_slot"].to_pylist()) == lost)[0]
    fewer = kept.filter(pa.array(np.arange(kept.num_rows) != drop))
    keep = np.isin(questions["id"].to_numpy(zero_copy_only=False), fewer["id"].to_numpy(zero_copy_only=False))
    population = describe_eec_selection(questions, kept, 2, 0)["of"]
    out = _emotion(fewer, [a for a, k in zip(answers, keep, strict=True) if k], emotions, population)
    notes = [test["share_intervals_note"] for test in out.tests.values()]
    assert any(note and "different numbers of questions" in note for note in notes)
    no_selection = _emotion(questions, answers, emotions)
    assert no_selection.table_intervals == {} and "shares" not in no_selection.tests["race"]["top1"]
