"""Quick runs end to end: `unqover sample` -> scores elsewhere -> `unqover measure`, and `probe --precision` rounds."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from unqover.cli import main
from unqover.measure.unqover import unqover_bias
from unqover.scoring.sampling import DESIGN, select_groups

HEADLINE = ("positional_error", "attributive_error", "mu", "eta")


def planted(rows: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """Deterministic scores with a subject x attribute association, a first-mention effect and noise per row."""

    def unit(text: str) -> float:
        return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little") / 2**64

    def score(subject: str, attribute: str, polarity: str, row_id: str, k: int, first: bool) -> float:
        affinity = (unit(subject + "|" + attribute) - 0.5) * 3
        noise = (unit(f"{row_id}|{k}") - 0.5) * 2
        logit = affinity * (1 if polarity == "positive" else -0.6) + (0.4 if first else 0) + noise
        return 1 / (1 + np.exp(-logit))

    columns = [rows[c].to_pylist() for c in ("id", "subject_1", "subject_2", "attribute", "polarity")]
    s1, s2 = [], []
    for row_id, a, b, attribute, polarity in zip(*columns, strict=True):
        s1.append(score(a, attribute, polarity, row_id, 1, True))
        s2.append(score(b, attribute, polarity, row_id, 2, False))
    return np.array(s1), np.array(s2)


@pytest.fixture(scope="module")
def religion(built_datasets) -> Path:
    """The session's religion dataset folder (qa), read-only."""
    return built_datasets["religion"]


@pytest.fixture(scope="module")
def religion_rows(religion_tables) -> pa.Table:
    return religion_tables["qa"]


@pytest.mark.slow
def test_sample_then_measure_estimates_the_full_dataset(religion, religion_rows, tmp_path, capsys):
    ids_file = tmp_path / "ids.parquet"
    assert (
        main(
            [
                "sample",
                str(religion),
                "--config",
                "qa",
                "--groups",
                "7700",
                "--seed",
                "4",
                "--output",
                str(ids_file),
            ]
        )
        == 0
    )
    assert "of 7,700 of 38,500 groups" in capsys.readouterr().out
    ids, about = read_predictions_ids(ids_file)
    assert about["selection"] == {"design": DESIGN, "seed": 4, "groups": 7700, "of": 38500}
    expected = select_groups(religion_rows, limit=7700, seed=4)["id"].to_pylist()
    assert sorted(ids) == sorted(expected)  # the same selection as `unqover probe --limit 7700 --seed 4`

    # scored on "another stack": a plain Parquet file without provenance
    s1, s2 = planted(religion_rows)
    position = {row_id: i for i, row_id in enumerate(religion_rows["id"].to_pylist())}
    take = [position[i] for i in ids]
    predictions = tmp_path / "predictions.parquet"
    pq.write_table(pa.table({"id": ids, "score_1": s1[take], "score_2": s2[take]}), predictions)
    out = tmp_path / "estimate.json"
    args = [
        "measure",
        str(predictions),
        "--bias",
        "religion",
        "--dataset",
        str(religion),
        "--config",
        "qa",
        "--output",
        str(out),
    ]
    assert main(args) == 0
    result = json.loads(out.read_text())["result"]
    full = unqover_bias(religion_rows, s1, s2, n_resamples=0)
    assert result["sample"]["groups"] == 7700 and result["sample"]["of"] == 38500
    assert result["sample"]["matches_design"] is True and result["interval_kind"] == "sampling"
    assert result["declined"] == {}
    for name in HEADLINE:
        low, high = result["intervals"][name]
        assert low <= result[name] <= high, name  # the value printed is the interval's estimate
        assert low <= getattr(full, name) <= high, (name, getattr(full, name), low, high)
        assert high - low < 0.25


def read_predictions_ids(path: Path) -> tuple[list[str], dict]:
    table = pq.read_table(path)
    return table["id"].to_pylist(), json.loads(table.schema.metadata[b"unqover"])


@pytest.mark.slow
def test_a_subset_that_is_not_a_random_sample_is_flagged(religion, religion_rows, tmp_path):
    first = religion_rows.filter(pa.compute.equal(religion_rows["template_id"], 0))  # one template, whole
    s1, s2 = planted(first)
    predictions = tmp_path / "first.parquet"
    pq.write_table(pa.table({"id": first["id"], "score_1": s1, "score_2": s2}), predictions)
    out = tmp_path / "first.json"
    assert (
        main(
            [
                "measure",
                str(predictions),
                "--bias",
                "religion",
                "--dataset",
                str(religion),
                "--config",
                "qa",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    sample = json.loads(out.read_text())["result"]["sample"]
    assert sample["matches_design"] is False and "equal-probability random sample" in sample["warning"]


@pytest.mark.slow
def test_small_budgets_decline_mu_and_eta_with_the_budget_needed(religion_rows):
    kept = select_groups(religion_rows, limit=500, seed=0)
    observed = np.isin(
        religion_rows["id"].to_numpy(zero_copy_only=False), kept["id"].to_numpy(zero_copy_only=False)
    )
    s1, s2 = planted(religion_rows)
    result = unqover_bias(religion_rows, s1, s2, observed=observed).to_dict()
    for name in ("mu", "eta"):
        assert result[name] is None and name not in result["intervals"]
        assert result["declined"][name]["groups_needed"] > 500
        assert "too few" in result["declined"][name]["reason"]
    for name in ("positional_error", "attributive_error"):
        assert result[name] is not None and name not in result["declined"]


class PlantedScorer:
    """A scorer without a model: the planted scores, counting the rows it scored."""

    def __init__(self):
        self.rows_scored = 0

    def score(self, rows: pa.Table) -> np.ndarray:
        self.rows_scored += rows.num_rows
        return np.stack(planted(rows), axis=1)

    def length_key(self, rows: pa.Table) -> np.ndarray:
        return np.zeros(rows.num_rows, dtype=np.int64)

    def input_key(self, rows: pa.Table) -> pa.Array:
        return rows["id"]


def rounds(rows: pa.Table, folder: Path, scorer, target: float, seed: int, max_rows=None):
    """Precision rounds on ``rows`` with the UnQover measure (what `probe --precision` runs)."""
    from unqover.probes.base import RunOptions
    from unqover.probes.unqover_rounds import score_in_rounds
    from unqover.probes.unqover_rows import measure_scores

    run = RunOptions(seed=seed, progress=True, resamples=0)
    identity = {"probe": "religion", "selection": {"precision": target, "seed": seed, "design": DESIGN}}
    info = {"seed": seed, "design": DESIGN, "matches_design": True}

    def measure(scores):
        return measure_scores(rows, scores, resamples=0, seed=seed, sample_info=info)

    settings = {"max_rows": max_rows, "max_seconds": None}
    kept, scores, stopped = score_in_rounds(rows, scorer, folder, identity, run, target, settings, measure)
    return kept, scores, stopped, measure(scores)


@pytest.mark.slow
def test_precision_rounds_stop_at_the_target_and_resume_without_rescoring(religion_rows, tmp_path, capsys):
    scorer = PlantedScorer()
    kept, scores, stopped, result = rounds(religion_rows, tmp_path / "run", scorer, 0.2, seed=1)
    printed = capsys.readouterr().out
    assert "round 0: 1,000 of 38,500 groups" in printed and "μ declined" in printed
    assert "round 1:" in printed and "target met: every headline interval is at most 0.2000 wide" in printed
    assert stopped["stopped"] == "every headline interval is at most 0.2000 wide" and stopped["target_met"]
    assert all(high - low <= 0.2 for low, high in (result.intervals[n] for n in HEADLINE))
    scored_groups = result.sample["groups"]
    assert stopped["groups"] == scored_groups and kept.num_rows == 4 * scored_groups
    assert scorer.rows_scored == 4 * scored_groups  # each round scores only the groups it adds
    # the groups scored are the design's sample of that size (nested rounds)
    expected = select_groups(religion_rows, limit=scored_groups, seed=1)["id"].to_pylist()
    assert sorted(scores["id"].to_pylist()) == sorted(expected)

    again = PlantedScorer()
    *_, rerun = rounds(religion_rows, tmp_path / "run", again, 0.2, seed=1)
    assert again.rows_scored == 0 and rerun.to_dict() == result.to_dict()


@pytest.mark.slow
def test_precision_rounds_that_reach_the_whole_dataset_give_the_full_run(religion_rows, tmp_path, capsys):
    *_, result = rounds(religion_rows, tmp_path / "run", PlantedScorer(), 0.001, seed=2)
    assert "target met: every headline interval is at most 0.0010 wide (the whole dataset is scored" in (
        capsys.readouterr().out
    )
    full = unqover_bias(religion_rows, *planted(religion_rows), n_resamples=0)
    assert result.sample is None
    for name in HEADLINE:
        assert getattr(result, name) == pytest.approx(getattr(full, name), abs=1e-12)


def test_precision_rounds_stop_at_max_rows(religion_rows, tmp_path, capsys):
    _, _, stopped, result = rounds(
        religion_rows, tmp_path / "run", PlantedScorer(), 0.001, seed=3, max_rows=8000
    )
    assert stopped["stopped"] == "--max-rows 8,000 reached" and result.sample["groups"] == 2000
    assert not stopped["target_met"] and "; stopped: --max-rows 8,000 reached" in capsys.readouterr().out


def test_precision_options_are_checked_before_anything_loads(tmp_path, capsys):
    base = ["probe", str(tmp_path / "no-model"), "--bias", "religion", "--precision"]
    assert main([*base, "0.02", "--limit", "10"]) == 2
    assert "leave out --limit" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*base, "1.5"])
    assert "an interval width in (0, 1)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["probe", "m", "--bias", "religion", "--limit", "abc"])
    assert "expected a whole number, got 'abc'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["probe", "m", "--bias", "religion", "--seed", "-1"])
    assert "must be >= 0" in capsys.readouterr().err


@pytest.mark.slow
def test_a_quick_run_of_a_custom_probe_scores_and_measures_the_same_as_from_every_row(tmp_path, capsys):
    """A quick run of a custom probe makes its sample's rows only (the other groups are counted): it scores exactly
    the rows that sampling every made row keeps, `unqover measure` of its predictions gives its numbers again, and
    measuring them against every row gives them too (to 1e-12: sums of weights in another order)."""
    import tiny_models
    from tests.probes.test_custom_probe import CROWD
    from unqover.generate.custom import custom_rows
    from unqover.lexicon.custom import read_probe_file
    from unqover.probes.unqover_rows import measure_scores

    probe_file = tmp_path / "crowd.yaml"
    probe_file.write_text(CROWD, encoding="utf-8")
    rows = custom_rows(read_probe_file(probe_file), "qa")
    texts = sorted(set(rows["context"].to_pylist()) | set(rows["question"].to_pylist()))
    model = tiny_models.bert_qa(tmp_path / "qa", texts)
    run = tmp_path / "run"
    argv = ["probe", str(model), "--probe", str(probe_file), "--limit", "40", "--seed", "3"]
    assert main([*argv, "--resamples", "0", "--output", str(run)]) == 0
    assert (
        f"{probe_file}: making the rows of a sample of 40 groups of its 216 (qa)\n" in capsys.readouterr().err
    )
    scored = pq.read_table(run / "predictions.parquet")
    assert scored["id"].to_pylist() == select_groups(rows, limit=40, seed=3)["id"].to_pylist()
    measured = tmp_path / "measured.json"
    again_argv = ["measure", str(run / "predictions.parquet"), "--resamples", "0", "--output", str(measured)]
    assert main(again_argv) == 0
    ran, again = (json.loads(path.read_text())["result"] for path in (run / "results.json", measured))
    for name in ("mu", "eta", "positional_error", "attributive_error"):
        assert ran[name] == again[name], name
    assert isinstance(ran["positional_error"], float)  # estimated, not declined
    assert ran["intervals"] == again["intervals"]
    every_row = measure_scores(rows, scored, resamples=0, seed=3, sample_info={}).to_dict()
    for name in ("mu", "eta", "positional_error", "attributive_error"):
        assert every_row[name] == pytest.approx(ran[name], rel=1e-12, abs=1e-12), name
        assert every_row["intervals"][name] == pytest.approx(ran["intervals"][name], rel=1e-12, abs=1e-12), (
            name
        )
