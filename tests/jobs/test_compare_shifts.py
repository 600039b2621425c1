"""`unqover compare` answers whether bias changed: intervals and p-values for the full-dataset shifts B − A.

Religion rows (38,500 groups) and synthetic models whose full-dataset values are measured on all the rows, so the
shifts the intervals must cover are known. Quick runs draw nested samples with the library's design (a larger
budget with the same seed keeps a superset), so the paired analysis applies.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from unqover.cli import main
from unqover.measure.shifts import cell_shifts, headline_shifts, samples
from unqover.measure.unqover import pair_dataset_rows, unqover_bias
from unqover.predictions import read_predictions, write_predictions
from unqover.scoring.sampling import select_groups

HEADLINE = ("mu", "eta", "positional_error", "attributive_error", "mean_score")
SEEDS = 30
MIN_COVERED = 27  # of 30 (90%): a calibrated 95% interval falls below it with probability 6% (binomial tail)
PLANTED = ((3, 7), (5, 11))  # (subject code, attribute code) cells whose association B reverses


@pytest.fixture(scope="module")
def rows(religion_tables) -> pa.Table:
    table = religion_tables["qa"]
    return table.append_column("_row", pa.array(np.arange(table.num_rows)))


def _codes(*columns: pa.ChunkedArray) -> tuple[list[np.ndarray], list[str]]:
    vocabulary = pc.unique(pa.chunked_array([chunk for column in columns for chunk in column.chunks]))
    codes = [pc.index_in(c, value_set=vocabulary).to_numpy(zero_copy_only=False) for c in columns]
    return codes, vocabulary.to_pylist()


@pytest.fixture(scope="module")
def world(rows) -> dict:
    """What the synthetic models share: subject x attribute affinities (Student-t(3)), a first-mention bonus per
    template and row noise (the same inputs give the same noise, as a deterministic model would)."""
    rng = np.random.default_rng(0)
    (s1, s2), subjects = _codes(rows["subject_1"], rows["subject_2"])
    (attribute,), attributes = _codes(rows["attribute"])
    (template,), _ = _codes(rows["template_id"])
    negated = pc.equal(rows["polarity"], "negated").to_numpy(zero_copy_only=False)
    cells = (s1.max() + 1, attribute.max() + 1)
    return {
        "s1": s1,
        "s2": s2,
        "attribute": attribute,
        "factor": np.where(negated, -0.5, 1.0),
        "affinity": rng.standard_t(3, cells),
        "first": rng.normal(0.8, 0.5, template.max() + 1)[template],
        "noise": (rng.standard_t(3, rows.num_rows), rng.standard_t(3, rows.num_rows)),
        "planted": {(subjects[s], attributes[t]) for s, t in PLANTED},
    }


def scores(world: dict, affinity: np.ndarray, first_bonus: float = 0.0, noise=None) -> tuple:
    noise_1, noise_2 = world["noise"] if noise is None else noise
    a, factor = world["attribute"], world["factor"]
    logit_1 = affinity[world["s1"], a] * factor + world["first"] + first_bonus + noise_1
    logit_2 = affinity[world["s2"], a] * factor + noise_2
    return 1 / (1 + np.exp(-logit_1)), 1 / (1 + np.exp(-logit_2))


@pytest.fixture(scope="module")
def models(world) -> dict:
    """A; B: stronger affinities and a larger first-mention bonus (every headline shifts); C: A's affinities
    with other row noise (equal in expectation); and A and B with two cells whose association B reverses."""
    affinity = world["affinity"]
    reversed_a, reversed_b = affinity.copy(), 1.3 * affinity
    for k, (subject, attribute) in enumerate(PLANTED):
        sign = 1 if k == 0 else -1
        reversed_a[subject, attribute], reversed_b[subject, attribute] = -6.0 * sign, 6.0 * sign
    rng = np.random.default_rng(5)
    other_noise = (rng.standard_t(3, len(world["s1"])), rng.standard_t(3, len(world["s1"])))
    few = np.random.default_rng(1)
    sparse = 2.5 * few.standard_t(3, affinity.shape) * (few.random(affinity.shape) < 0.05)
    return {
        "A": scores(world, affinity),
        "B": scores(world, 1.6 * affinity, 0.3),
        # a few strong cells: μ's bounds are tight, so the standard errors are what makes them cover
        "A sparse": scores(world, sparse),
        "B sparse": scores(world, 1.5 * sparse, 0.3),
        "C": scores(world, affinity, noise=other_noise),
        "A cells": scores(world, reversed_a),
        "B cells": scores(world, reversed_b, 0.1),
    }


def full_values(rows, model) -> object:
    return unqover_bias(rows, *model, n_resamples=0)


def observed_groups(rows, paired, **selection) -> np.ndarray:
    """The groups a quick run of ``selection`` scores (through the public ``select_groups``)."""
    mask = np.zeros(rows.num_rows, dtype=bool)
    mask[select_groups(rows, **selection)["_row"].to_numpy()] = True
    return mask[paired.rows].all(axis=1)


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "fraction"), [("", 0.2), (" sparse", 0.5)])
def test_paired_headline_intervals_cover_the_full_dataset_shift_and_are_narrower(
    rows, models, kind, fraction
):
    full_a, full_b = full_values(rows, models["A" + kind]), full_values(rows, models["B" + kind])
    truth = {name: getattr(full_b, name) - getattr(full_a, name) for name in HEADLINE}
    assert truth["mu"] > 0.03 and abs(truth["positional_error"]) > 0.005
    a, b = pair_dataset_rows(rows, *models["A" + kind]), pair_dataset_rows(rows, *models["B" + kind])
    covered = dict.fromkeys(HEADLINE, 0)
    widths = {"paired": {n: [] for n in HEADLINE}, "unpaired": {n: [] for n in HEADLINE}}
    for seed in range(SEEDS):
        observed_a = observed_groups(rows, a, sample=fraction, seed=seed)
        observed_b = observed_groups(rows, a, sample=fraction + 0.05, seed=seed)  # nested: a superset of A's
        overlap = samples(observed_a, observed_b)
        assert overlap.paired and overlap.shared.sum() == observed_a.sum() == round(fraction * 38_500)
        paired = headline_shifts(a, b, observed_a, observed_b, seeds=(seed, seed))
        unpaired = headline_shifts(a, b, observed_a, observed_b, seeds=(seed, seed), paired=False)
        for name in HEADLINE:
            shift = paired[name]
            assert shift.method == "paired" and unpaired[name].method == "unpaired"
            low, high = shift.interval
            assert low <= shift.value <= high, (name, seed, shift)
            covered[name] += low <= truth[name] <= high
            widths["paired"][name].append(high - low)
            widths["unpaired"][name].append(unpaired[name].interval[1] - unpaired[name].interval[0])
    assert all(count >= MIN_COVERED for count in covered.values()), (covered, truth)
    for name in HEADLINE:
        assert np.mean(widths["paired"][name]) < np.mean(widths["unpaired"][name]), name
    # the means over groups gain most from the pairing (the row noise cancels); μ and η keep their bias gap
    for name in ("positional_error", "attributive_error", "mean_score"):
        assert np.mean(widths["paired"][name]) < 0.5 * np.mean(widths["unpaired"][name]), name
    assert np.mean(widths["paired"]["mu"]) < 0.8 * np.mean(widths["unpaired"]["mu"])


@pytest.mark.slow
def test_p_values_are_small_for_a_planted_large_shift_and_not_for_equal_models(rows, models):
    a, b = pair_dataset_rows(rows, *models["A"]), pair_dataset_rows(rows, *models["B"])
    c = pair_dataset_rows(rows, *models["C"])
    for seed in range(3):
        observed_a = observed_groups(rows, a, sample=0.5, seed=seed)
        observed_b = observed_groups(rows, a, sample=0.6, seed=seed)
        changed = headline_shifts(a, b, observed_a, observed_b, seeds=(seed, seed))
        for name in ("mu", "eta", "positional_error", "attributive_error"):
            assert changed[name].p_value < 0.01, (name, seed, changed[name])
            low, high = changed[name].interval
            assert not low <= 0 <= high, (name, seed, changed[name])
        same = headline_shifts(a, a, observed_a, observed_a, seeds=(seed, seed))  # one model, one sample
        for name in HEADLINE:
            assert same[name].p_value == 1.0 and same[name].interval[0] <= 0 <= same[name].interval[1], name
        # one model on nested samples: the two estimates differ by sampling alone, which the interval holds
        nested = headline_shifts(a, a, observed_a, observed_b, seeds=(seed, seed))
        for name in ("mu", "eta"):
            assert nested[name].interval[0] <= 0 <= nested[name].interval[1], (name, nested[name])
        equal = headline_shifts(a, c, observed_a, observed_b, seeds=(seed, seed))  # equal in expectation
        for name in ("mu", "eta"):
            assert equal[name].p_value > 0.5, (name, seed, equal[name])


@pytest.mark.slow
def test_listed_cell_shifts_are_the_planted_ones_with_simultaneous_intervals(rows, world, models):
    a, b = pair_dataset_rows(rows, *models["A cells"]), pair_dataset_rows(rows, *models["B cells"])
    full_a, full_b = full_values(rows, models["A cells"]), full_values(rows, models["B cells"])
    truth = (
        full_b.gamma.set_index(["subject", "attribute"])["gamma"]
        - full_a.gamma.set_index(["subject", "attribute"])["gamma"]
    )
    planted = world["planted"]
    assert all(abs(truth[cell]) > 0.8 for cell in planted)
    for seed in range(2):
        observed_a = observed_groups(rows, a, sample=0.5, seed=seed)
        observed_b = observed_groups(rows, a, sample=0.6, seed=seed)
        cells = cell_shifts(a, b, observed_a, observed_b, seed=seed)
        assert cells.method == "paired" and cells.compared == 550
        listed = cells.listed()
        top = {(a.subjects[cells.subject[i]], a.attributes[cells.attribute[i]]) for i in listed[:2]}
        assert top == planted, [(a.subjects[cells.subject[i]], cells.value[i]) for i in listed[:5]]
        for i in listed:
            assert not cells.low[i] <= 0 <= cells.high[i] and cells.p_value[i] < 0.05
        known = ~np.isnan(cells.low)
        true = np.array(
            [
                truth[(a.subjects[s], a.attributes[t])]
                for s, t in zip(cells.subject, cells.attribute, strict=True)
            ]
        )
        assert known.sum() == 550 and (cells.low[known] <= true[known] + 1e-9).all()
        assert (true[known] <= cells.high[known] + 1e-9).all()  # every cell at once: simultaneous intervals
        # unpaired (different seeds): wider, but still valid, and no p-values
        unpaired = cell_shifts(a, b, observed_a, observed_groups(rows, a, sample=0.6, seed=seed + 50))
        assert unpaired.method == "unpaired" and np.isnan(unpaired.p_value).all()
        assert ((unpaired.low <= true + 1e-9) & (true <= unpaired.high + 1e-9)).all()
        assert np.nanmean(unpaired.high - unpaired.low) > np.nanmean(cells.high - cells.low)
    nothing = cell_shifts(a, a, observed_a, observed_b)
    assert len(nothing.listed()) == 0


def test_different_samples_are_compared_unpaired(rows, models):
    a, b = pair_dataset_rows(rows, *models["A"]), pair_dataset_rows(rows, *models["B"])
    observed_a = observed_groups(rows, a, sample=0.2, seed=1)
    observed_b = observed_groups(rows, a, sample=0.2, seed=2)
    assert not samples(observed_a, observed_b).paired
    shifts = headline_shifts(a, b, observed_a, observed_b, seeds=(1, 2))
    assert {s.method for s in shifts.values()} == {"unpaired"}
    assert all(s.to_dict()["paired"] is False for s in shifts.values())
    with pytest.raises(ValueError, match="exact"):
        everything = np.ones(a.num_groups, dtype=bool)
        headline_shifts(a, b, everything, everything)


@pytest.mark.slow
def test_mu_per_cluster_also_shifts_per_subject(rows, world):
    """Religion's pairs across two clusters of subjects: μ and η are per cluster, and the per-subject μ and η get
    their own shifts."""
    subjects = sorted(set(rows["subject_1"].to_pylist()))
    first = [
        pc.is_in(rows[c], pa.array(subjects[:5])).to_numpy(zero_copy_only=False)
        for c in ("subject_1", "subject_2")
    ]
    keep = first[0] != first[1]
    clustered = rows.filter(pa.array(keep))
    clustered = clustered.drop_columns(
        [c for c in ("subject_1_cluster", "subject_2_cluster", "_row") if c in clustered.column_names]
    )
    for k, column in enumerate(("subject_1_cluster", "subject_2_cluster")):
        clustered = clustered.append_column(column, pa.array(np.where(first[k][keep], "X", "Y")))
    clustered = clustered.append_column("_row", pa.array(np.arange(clustered.num_rows)))
    model_a = [score[keep] for score in scores(world, world["affinity"])]
    model_b = [score[keep] for score in scores(world, 1.6 * world["affinity"], 0.3)]
    full_a, full_b = full_values(clustered, model_a), full_values(clustered, model_b)
    assert full_a.mu_unit == "cluster"
    names = ("mu", "eta", "subject_mu", "subject_eta")
    truth = {name: getattr(full_b, name) - getattr(full_a, name) for name in names}
    a, b = pair_dataset_rows(clustered, *model_a), pair_dataset_rows(clustered, *model_b)
    for seed in range(3):
        observed_a = observed_groups(clustered, a, sample=0.5, seed=seed)
        observed_b = observed_groups(clustered, a, sample=0.6, seed=seed)
        shifts = headline_shifts(a, b, observed_a, observed_b, seeds=(seed, seed))
        assert set(names) <= set(shifts)
        for name in names:
            low, high = shifts[name].interval
            assert low <= truth[name] <= high and shifts[name].method == "paired", (name, seed)
        assert shifts["subject_mu"].p_value < 0.01  # per subject, the planted change shows


# ---------------------------------------------------------------------------------------------------------------
# the command line


@pytest.fixture(scope="module")
def religion(built_datasets) -> Path:
    """The session's religion dataset folder (qa), read-only."""
    return built_datasets["religion"]


def measured(tmp_path: Path, religion: Path, rows, model, name: str, **selection) -> Path:
    """Scores of a quick run (``selection``) or a full run, written as predictions and measured by the CLI."""
    keep = select_groups(rows, **selection)["_row"].to_numpy() if selection else np.arange(rows.num_rows)
    predictions = tmp_path / f"{name}.parquet"
    table = pa.table({"id": rows["id"].take(keep), "score_1": model[0][keep], "score_2": model[1][keep]})
    about = {"dataset": {"source": str(religion), "config": "qa", "split": "test"}, "probe": "religion"}
    if selection:
        about["selection"] = {**selection, "design": "stratified-prn-v1"}
    write_predictions(predictions, table, about)
    output = tmp_path / f"{name}.bias.json"
    assert main(["measure", str(predictions), "--output", str(output)]) == 0
    return output


def run_folder(tmp_path: Path, measure_json: Path, name: str) -> Path:
    """A run folder as `unqover probe` writes it: predictions.parquet, run.json, results.json."""
    folder = tmp_path / name
    folder.mkdir()
    results = json.loads(measure_json.read_text())
    source = Path(results["provenance"].pop("predictions"))
    table, provenance = read_predictions(source)
    write_predictions(folder / "predictions.parquet", table, provenance)
    (folder / "run.json").write_text(json.dumps({"probe": "religion", "dataset": provenance["dataset"]}))
    (folder / "results.json").write_text(json.dumps(results))
    return folder


@pytest.mark.slow
def test_cli_compare_writes_shift_intervals_for_measure_files_and_run_folders(
    religion, rows, world, models, tmp_path, capsys, upstream_word_lists_path
):
    first = measured(tmp_path, religion, rows, models["A cells"], "first", sample=0.5, seed=3)
    second = measured(tmp_path, religion, rows, models["B cells"], "second", sample=0.6, seed=3)
    recorded = json.loads(first.read_text())["provenance"]["predictions"]
    assert recorded == str((tmp_path / "first.parquet").resolve())  # `measure` records what it read
    capsys.readouterr()
    for a, b in (
        (first, second),
        (run_folder(tmp_path, first, "run-a"), run_folder(tmp_path, second, "run-b")),
    ):
        output = tmp_path / f"{a.stem}-vs-{b.stem}.json"
        assert main(["compare", str(a), str(b), "--output", str(output)]) == 0
        text = capsys.readouterr().out
        data = json.loads(output.read_text())
        assert data["shift_method"] == "paired"
        assert data["samples"]["shared"] == data["samples"]["groups"][0] == 19_250
        assert set(data["shifts"]) == {"mu", "eta", "positional_error", "attributive_error", "mean_score"}
        for name, shift in data["shifts"].items():
            assert {"value", "interval", "p_value", "paired"} <= set(shift), name
            assert shift["paired"] is True and 0 <= shift["p_value"] <= 1
            assert shift["interval"][0] <= shift["value"] <= shift["interval"][1], name
        assert data["shifts"]["mu"]["p_value"] < 0.05  # B's affinities are 1.3 times A's (p: 4 × one-sided)
        assert len(data["pairs"]) >= 1
        for pair in data["pairs"]:
            assert {"subject", "attribute", "value", "interval", "p_value", "paired", "count"} <= set(pair)
            assert not pair["interval"][0] <= 0 <= pair["interval"][1] and pair["count"] > 0
        assert (data["pairs"][0]["subject"], data["pairs"][0]["attribute"]) in world["planted"]
        assert "{" not in text and "}" not in text  # no raw dicts
        assert "paired over the 19,250 groups both runs scored" in text
        assert "p < 0.0001" in text or "< 0.0001" in text
        assert "Subject–attribute shifts of γ(x, a)" in text
    # the Space's results browser compares the same run folders with the same intervals
    from unqover.space import results as space_results

    # (over its own rows: those of its word lists, which built the runs' dataset)
    runs = space_results.find_runs(tmp_path)
    page = space_results.comparison(runs, "run-a", "run-b", tmp_path, upstream_word_lists_path)
    assert "| p | how |" in page and "paired over the 19,250 groups" in page
    assert f"{data['shifts']['mu']['p_value']:.4f}" in page or "< 0.0001" in page
    markdown = tmp_path / "comparison.md"
    assert main(["compare", str(first), str(second), "--output", str(markdown)]) == 0
    page = markdown.read_text()
    assert page.startswith("# UnQover comparison") and "| p | how |" in page and "paired" in page


@pytest.mark.slow
def test_cli_compare_unpaired_equal_and_without_predictions(religion, rows, models, tmp_path, capsys):
    first = measured(tmp_path, religion, rows, models["A"], "first", sample=0.2, seed=1)
    other = measured(tmp_path, religion, rows, models["A"], "other", sample=0.2, seed=2)
    output = tmp_path / "unpaired.json"
    capsys.readouterr()
    assert main(["compare", str(first), str(other), "--output", str(output)]) == 0
    text = capsys.readouterr().out
    data = json.loads(output.read_text())
    assert data["shift_method"] == "unpaired" and "unpaired" in text and "{" not in text
    assert all(shift["paired"] is False for shift in data["shifts"].values())
    assert all(pair["p_value"] is None for pair in data["pairs"])
    # one model in two samples: no subject–attribute shift stands out
    assert data["pairs"] == [] and "no subject–attribute shift is distinguishable from zero" in text.lower()

    # the predictions moved away: its numbers cannot be checked, so the comparison is refused in one line saying why
    # (as `unqover leaderboard` refuses it), and nothing is written
    predictions = Path(json.loads(first.read_text())["provenance"]["predictions"])
    predictions.unlink()
    output.unlink()
    assert main(["compare", str(first), str(other), "--output", str(output)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == (
        f"unqover: error: cannot check the numbers of first against its predictions (the predictions file "
        f"{predictions} that first.bias.json records is not there); `unqover compare` shows only numbers that a "
        "run's predictions give again\n"
    )
    assert not output.exists()
