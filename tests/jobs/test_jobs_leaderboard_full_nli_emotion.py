"""`unqover leaderboard` over full runs (exact values), mixed full and quick runs, and the NLI and emotion probes.

UnQover runs are made as `unqover compare`'s tests make them (tests/jobs/test_compare_shifts.py): synthetic models'
scores over the religion rows, measured by the command line. A and C share their affinities (equal in expectation,
other row noise); B's are stronger, with a first-mention bonus (more biased). A full run scores every group: its
value is the model's exact value on the dataset, the value a quick run estimates.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from tests.jobs.test_compare_shifts import full_values, measured, models, religion, rows, world  # noqa: F401
from tests.jobs.test_leaderboard import refused
from unqover.cli import main
from unqover.jobs.compare import leaderboard
from unqover.predictions import write_predictions
from unqover.probes.base import Ranking
from unqover.results import selection_text

pytestmark = pytest.mark.slow

SAMPLE = {"sample": 0.3, "seed": 3}


def full_run(tmp: Path, religion: Path, rows, model, name: str, model_id: str | None = None) -> Path:  # noqa: F811
    """A full run's scores written as predictions (recording ``model_id``, when given) and measured by the
    command line (no bootstrap: a full run's bootstrap interval is not what the leaderboard ranks)."""
    predictions = tmp / f"{name}.parquet"
    table = pa.table({"id": rows["id"], "score_1": model[0], "score_2": model[1]})
    about = {"dataset": {"source": str(religion), "config": "qa", "split": "test"}, "probe": "religion"}
    write_predictions(predictions, table, about | ({"model": {"id": model_id}} if model_id else {}))
    output = tmp / f"{name}.bias.json"
    assert main(["measure", str(predictions), "--resamples", "0", "--output", str(output)]) == 0
    return output


@pytest.fixture(scope="module")
def full_runs(tmp_path_factory, religion, rows, models) -> dict[str, Path]:  # noqa: F811
    """Full runs of A, B and C; another model with A's scores (an exact tie); and a copy of A's results under
    another name (the same run)."""
    tmp = tmp_path_factory.mktemp("full-board")
    out = {name: full_run(tmp, religion, rows, models[name], name) for name in ("A", "B", "C")}
    out["tiny/a-twin"] = full_run(tmp, religion, rows, models["A"], "A twin", model_id="tiny/a-twin")
    out["A copy"] = tmp / "A copy.bias.json"
    out["A copy"].write_text(out["A"].read_text())
    return out


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory, religion, rows, models) -> dict[str, Path]:  # noqa: F811
    tmp = tmp_path_factory.mktemp("quick-board")
    return {name: measured(tmp, religion, rows, models[name], name, **SAMPLE) for name in ("A", "B", "C")}


def test_full_runs_have_exact_values_and_exact_pairs(full_runs, rows, models):  # noqa: F811
    """A full run's interval is its value; two full runs are told apart whenever their values differ (p-value 0,
    a degenerate interval), and a run tied with another (another model with the same scores) is never told apart
    from it."""
    paths = [full_runs[name] for name in ("A", "B", "C", "tiny/a-twin")]
    board = leaderboard(paths)
    truth = {name: full_values(rows, models[name]).mu for name in ("A", "B", "C")}
    truth["tiny/a-twin"] = truth["A"]
    by_name = {m["name"]: m for m in board["models"]}
    for name, value in truth.items():
        model = by_name[name]
        assert model["value"] == pytest.approx(value, abs=1e-12)
        assert model["interval"] == [model["value"], model["value"]]
        assert model["groups"] == 38_500
        tied = name in ("A", "tiny/a-twin")
        assert model["rank_interval"] == [model["rank"], model["rank"] + (1 if tied else 0)]
    assert by_name["A"]["rank"] == by_name["tiny/a-twin"]["rank"]  # a tie shares its rank
    pairs = {(p["less_biased"], p["more_biased"]): p for p in board["distinguishable"]}
    assert len(pairs) == 5 and ("A", "tiny/a-twin") not in pairs and ("tiny/a-twin", "A") not in pairs
    for (less, more), pair in pairs.items():
        assert pair["p_value"] == 0.0
        assert pair["difference"] == pytest.approx(truth[more] - truth[less]) and pair["difference"] > 0
        assert pair["interval"] == [pair["difference"], pair["difference"]]
    assert "full run's value is exact" in board["method"]


def test_a_full_run_among_quick_runs(full_runs, quick_runs, rows, models):  # noqa: F811
    """Quick A and C, full B, ranked by η: B's value is exact, A's and C's intervals hold at 1 − α/3 and cover
    their full values; B is told apart from both, with the difference of the quick estimate and B's exact value.
    (By μ, whose sampling intervals are wider, the same runs are not told apart: no pair is forced.)"""
    board = leaderboard([quick_runs["A"], full_runs["B"], quick_runs["C"]], metric="eta")
    # each row is labelled with the selection that tells a quick run from the full one (unqover.results.run_settings)
    label = {m["name"]: Path(m["run"]).name.removesuffix(".bias.json") for m in board["models"]}
    assert {name.split(", ", 1)[1] for name in label} == {"all rows", selection_text(SAMPLE)}
    by_name = {label[m["name"]]: m for m in board["models"]}
    exact = json.loads(full_runs["B"].read_text())["result"]["eta"]
    assert by_name["B"]["interval"] == [exact, exact] and by_name["B"]["rank"] == 3
    for name in ("A", "C"):
        low, high = by_name[name]["interval"]
        assert low <= full_values(rows, models[name]).eta <= high
        assert by_name[name]["groups"] < 38_500
    pairs = {(label[p["less_biased"]], label[p["more_biased"]]): p for p in board["distinguishable"]}
    assert set(pairs) == {("A", "B"), ("C", "B")}
    for (less, _), pair in pairs.items():
        assert pair["difference"] == pytest.approx(exact - by_name[less]["value"])
        low, high = pair["interval"]
        assert 0 < low <= pair["difference"] <= high and pair["p_value"] < 0.05
    by_mu = leaderboard([quick_runs["A"], full_runs["B"], quick_runs["C"]])
    assert by_mu["distinguishable"] == [] and [label[m["name"]] for m in by_mu["models"]][-1] == "B"


@pytest.fixture(scope="module")
def quick_a(quick_runs, rows) -> tuple:  # noqa: F811
    """Quick run A's groups over the whole dataset: (paired scores, mask of the groups it scored)."""
    from unqover.measure.shifts import paired_runs
    from unqover.probes.unqover_rows import scores_over

    result = json.loads(quick_runs["A"].read_text())
    scored = scores_over(rows, [Path(result["provenance"]["predictions"])], "religion")
    return paired_runs(rows, scored, [result["result"]], ["A"], "default")[0]


@pytest.mark.parametrize("metric", ["mu", "eta", "positional_error", "attributive_error"])
def test_the_test_against_an_exact_value_inverts_the_interval(quick_a, metric):
    """sample_p_value(v) < α exactly when the quick run's interval at 1 − α excludes v (α = 0.01)."""
    from unqover.measure.leaderboard import sample_headline, sample_p_value

    paired, observed = quick_a
    low, high = sample_headline(paired, observed, confidence=0.99, seed=0)[metric].interval
    for value, outside in (
        (low - 1e-4, True),
        (low + 1e-4, False),
        (high - 1e-4, False),
        (high + 1e-4, True),
    ):
        if 0 <= value <= 1:
            p = sample_p_value(paired, observed, metric, value, seed=0)
            assert (p < 0.01) == outside, (value, p)


# --- NLI ----------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nli_models(tmp_path_factory) -> list[Path]:
    """Two tiny NLI models (seeds 0 and 1) that know the synthetic NLI rows' words."""
    import tiny_models
    from unqover.generate.nli import nli_rows, synthetic_premises

    table = nli_rows(synthetic_premises(), family="main")
    texts = sorted(
        set(table["premise"].to_pylist())
        | set(table["hypothesis_female"].to_pylist())
        | set(table["hypothesis_male"].to_pylist())
    )
    tmp = tmp_path_factory.mktemp("nli-models")
    labels = ["contradiction", "neutral", "entailment"]
    return [tiny_models.bert_nli(tmp / f"nli-{seed}", texts, labels, seed=seed) for seed in (0, 1)]


def sweep(folders: list, probe: str, output: Path, *extra: str) -> int:
    """`unqover probe M1 M2 --bias PROBE ...` into ``output``: the sweep's exit status."""
    argv = ["probe", *map(str, folders), "--bias", probe, "--output", str(output), "--quiet", *extra]
    return main(argv)


@pytest.fixture(scope="module")
def nli_sweeps(tmp_path_factory, nli_models) -> dict[str, Path]:
    """Sweeps of the two tiny NLI models: quick runs of one seeded sample, and full runs."""
    tmp = tmp_path_factory.mktemp("nli-sweeps")
    assert (
        sweep(nli_models, "nli-gender", tmp / "quick", "--limit", "3", "--seed", "7", "--resamples", "200")
        == 0
    )
    assert sweep(nli_models, "nli-gender", tmp / "full", "--resamples", "0") == 0
    return {"quick": tmp / "quick", "full": tmp / "full"}


def test_nli_sweep_writes_a_leaderboard_of_quick_runs(nli_sweeps, nli_models):
    folder = nli_sweeps["quick"]
    board = json.loads((folder / "leaderboard-nli-gender.json").read_text())
    assert (board["probe"], board["metric"], board["confidence"]) == ("nli-gender", "delta_P", 0.95)
    assert (folder / "leaderboard-nli-gender.md").is_file() and (
        folder / "leaderboard-nli-gender.html"
    ).is_file()
    for model in board["models"]:
        own = json.loads(Path(model["run"], "results.json").read_text())["result"]
        assert model["value"] == pytest.approx(own["delta_P"])
        low, high = own["intervals"]["delta_P"]  # the run's own 95% interval, same premises
        assert model["interval"][0] <= low and high <= model["interval"][1]  # at 1 − α/2: wider
        assert model["groups"] == own["num_clusters"] < 40
        assert model["rank_interval"][0] <= model["rank"] <= model["rank_interval"][1]


def test_nli_pairs_are_paired_on_one_sample_and_exact_for_full_runs(nli_sweeps, nli_models):
    from unqover.measure.leaderboard import bonferroni_confidence
    from unqover.probes.registry import PROBES

    quick = [nli_sweeps["quick"] / m.name / "nli-gender" for m in nli_models]
    full = [nli_sweeps["full"] / m.name / "nli-gender" for m in nli_models]
    runs = [json.loads((f / "results.json").read_text()) for f in (*quick, *full)]
    probe = PROBES["nli-gender"]
    level = bonferroni_confidence(0.95, 6)
    numbers, shifts = probe.results.leaderboard_numbers(
        Ranking(runs, [*quick, *full], list("abcd"), "delta_P", level, level)
    )
    assert shifts[0, 1]["method"] == "paired"  # two quick runs of one seeded sample
    assert shifts[2, 3]["method"] == "exact" and shifts[2, 3]["interval"][0] == shifts[2, 3]["interval"][1]
    assert shifts[0, 2]["method"] == "exact-vs-sample"
    for k in (2, 3):  # a full run's value is exact
        assert numbers[k]["interval"] == [numbers[k]["value"]] * 2 and numbers[k]["groups"] == 40
        assert numbers[k]["value"] == pytest.approx(runs[k]["result"]["delta_P"])
    for (i, j), shift in shifts.items():
        assert shift["value"] == pytest.approx(numbers[j]["value"] - numbers[i]["value"])
        if shift["interval"] is not None:
            assert shift["interval"][0] <= shift["value"] <= shift["interval"][1]
            assert (shift["p_value"] < 1 - level) == (not shift["interval"][0] <= 0 <= shift["interval"][1])
    # a quick run's full-dataset value (the full run of the same model) lies in its simultaneous interval
    for quick_k, full_k in ((0, 2), (1, 3)):
        low, high = numbers[quick_k]["interval"]
        assert low <= numbers[full_k]["value"] <= high


def test_nli_quick_runs_of_other_samples_are_compared_unpaired(nli_sweeps, nli_models, tmp_path):
    """A quick run of another seed keeps other premises: its pair with the sweep's run is unpaired."""
    other = tmp_path / "other-seed"
    argv = ["probe", str(nli_models[0]), "--bias", "nli-gender", "--limit", "3", "--seed", "8"]
    assert main([*argv, "--resamples", "200", "--output", str(other), "--quiet"]) == 0
    output = tmp_path / "board.json"
    quick = nli_sweeps["quick"] / nli_models[1].name / "nli-gender"
    assert main(["leaderboard", str(other), str(quick), "--metric", "B", "--output", str(output)]) == 0
    board = json.loads(output.read_text())
    assert board["metric"] == "B" and "premises" in board["method"]
    for model in board["models"]:
        assert model["interval"][0] <= model["value"] <= model["interval"][1]
    from unqover.probes.registry import PROBES

    runs = [json.loads((f / "results.json").read_text()) for f in (other, quick)]
    _, shifts = PROBES["nli-gender"].results.leaderboard_numbers(
        Ranking(runs, [other, quick], ["a", "b"], "B", 0.975, 0.95)
    )
    assert shifts[0, 1]["method"] == "unpaired" and shifts[0, 1]["paired"] is False


def test_nli_refuses_s_and_names_the_metrics(nli_sweeps, nli_models, capsys):
    runs = [str(nli_sweeps["full"] / m.name / "nli-gender") for m in nli_models]
    assert "S rises as bias falls: rank by delta_P or B" in refused([*runs, "--metric", "S"], capsys)
    assert main(["leaderboard", *runs, "--metric", "B"]) == 0


# --- emotion ------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def emotion_sweeps(tmp_path_factory) -> dict[str, Path]:
    """Sweeps of two tiny TF-IDF models (Beecher's kind, over 300 EEC sentences each): full runs and quick runs."""
    import random

    from unqover.generate.eec import eec_sentences

    tmp = tmp_path_factory.mktemp("emotion-sweeps")
    sentences = sorted(set(eec_sentences(spelling="beecher")["sentence"].to_pylist()))
    corpora = []
    for seed in (0, 1):
        corpora.append(tmp / f"corpus{seed}.txt")
        corpora[-1].write_text("\n".join(random.Random(seed).sample(sentences, 300)) + "\n", encoding="utf-8")
    tfidf = [f"tfidf:{c}" for c in corpora]
    fast = ("--permutations", "99", "--resamples", "50")
    assert sweep(tfidf, "eec-emotion", tmp / "full", *fast) == 0
    assert sweep(tfidf, "eec-emotion", tmp / "quick", "--limit", "2", *fast) == 0
    return {"full": tmp / "full", "quick": tmp / "quick"}


def test_emotion_sweep_ranks_full_runs_by_exact_cramers_v(emotion_sweeps):
    folder = emotion_sweeps["full"]
    board = json.loads((folder / "leaderboard-eec-emotion.json").read_text())
    assert (board["probe"], board["metric"]) == ("eec-emotion", "gender: Cramér's V")
    values = []
    for model in board["models"]:
        own = json.loads(Path(model["run"], "results.json").read_text())["result"]
        value = own["tests"]["gender"]["cramers_v"]
        assert model["value"] == value and model["interval"] == [value, value] and model["groups"] == 60
        assert model["rank_interval"] == [model["rank"], model["rank"]]
        values.append(value)
    assert values[0] < values[1]
    (pair,) = board["distinguishable"]
    assert pair["p_value"] == 0 and pair["difference"] == pytest.approx(values[1] - values[0])
    runs = [str(Path(m["run"])) for m in board["models"]]
    assert main(["leaderboard", *runs, "--metric", "race: Cramér's V"]) == 0


def test_emotion_refuses_quick_runs_and_p_values(emotion_sweeps, capsys):
    index = (emotion_sweeps["quick"] / "index.html").read_text()
    assert not (emotion_sweeps["quick"] / "leaderboard-eec-emotion.json").exists()
    assert "is a quick run" in index and "ranks full runs" in index
    runs = [str(p.parent) for p in sorted(emotion_sweeps["full"].glob("*/eec-emotion/results.json"))]
    assert "a p-value says whether there is bias, not how much" in refused(
        [*runs, "--metric", "gender: p-value"], capsys
    )
