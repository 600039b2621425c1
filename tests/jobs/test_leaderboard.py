"""`unqover leaderboard`: three quick runs of religion on one seeded sample, ranked with simultaneous intervals,
rank intervals and Holm-corrected pairs; and its refusals, one line each.

The runs are made as `unqover compare`'s tests make them (tests/jobs/test_compare_shifts.py): synthetic models'
scores over the religion rows, written as predictions and measured by the command line. A and C share their
affinities (equal in expectation, other row noise); B's are stronger, with a first-mention bonus (more biased).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.jobs.test_compare_shifts import measured, models, religion, rows, run_folder, world  # noqa: F401
from unqover.cli import main
from unqover.jobs.compare import leaderboard

pytestmark = pytest.mark.slow

SAMPLE = {"sample": 0.3, "seed": 3}
METRICS = ("mu", "eta", "positional_error", "attributive_error")


@pytest.fixture(scope="module")
def runs(tmp_path_factory, religion, rows, models) -> dict[str, Path]:  # noqa: F811
    """Quick runs of A, B and C on the same seeded sample: A and C as measure JSONs, B as a run folder whose
    provenance records its model."""
    tmp = tmp_path_factory.mktemp("leaderboard")
    out = {name: measured(tmp, religion, rows, models[name], name, **SAMPLE) for name in ("A", "B", "C")}
    folder = run_folder(tmp, out["B"], "run-b")
    results = json.loads((folder / "results.json").read_text())
    results["provenance"]["model"] = {"id": "tiny/model-b"}
    (folder / "results.json").write_text(json.dumps(results))
    out["B"] = folder
    return out


@pytest.fixture(scope="module")
def board(runs) -> dict:
    return leaderboard([runs["A"], runs["B"], runs["C"]])


def test_json_has_exactly_the_schema(board, runs, tmp_path, capsys):
    output = tmp_path / "board.json"
    assert main(["leaderboard", str(runs["A"]), str(runs["B"]), str(runs["C"]), "--output", str(output)]) == 0
    written = json.loads(output.read_text())
    assert set(written) == {"probe", "metric", "confidence", "models", "distinguishable", "method"}
    assert written["probe"] == "religion" and written["metric"] == "mu" and written["confidence"] == 0.95
    assert len(written["models"]) == 3
    for model in written["models"]:
        assert set(model) == {"name", "run", "value", "interval", "rank", "rank_interval", "groups"}
        assert len(model["interval"]) == 2 and len(model["rank_interval"]) == 2
    for pair in written["distinguishable"]:
        assert set(pair) == {"less_biased", "more_biased", "difference", "interval", "p_value"}
    names = {m["name"]: m["run"] for m in written["models"]}
    assert names == {"A": str(runs["A"]), "tiny/model-b": str(runs["B"]), "C": str(runs["C"])}
    text = capsys.readouterr().out
    assert "tiny/model-b" in text and "Distinguishable pairs" in text


def test_simultaneous_intervals_are_wider_than_the_runs_own(board, runs):
    """Same values as the runs' own estimates; intervals at 1 − α/3 contain the runs' 95% ones."""
    for model in board["models"]:
        own = json.loads(
            Path(model["run"], "results.json").read_text()
            if Path(model["run"]).is_dir()
            else Path(model["run"]).read_text()
        )["result"]
        low, high = own["intervals"]["mu"]
        assert model["value"] == pytest.approx(own["interval_estimates"]["mu"])
        assert model["interval"][0] < low and model["interval"][1] > high
        assert model["groups"] == own["sample"]["groups"]


def test_ranks_lie_in_rank_intervals_and_the_more_biased_model_is_told_apart(board):
    by_name = {m["name"]: m for m in board["models"]}
    for model in board["models"]:
        best, worst = model["rank_interval"]
        assert 1 <= best <= model["rank"] <= worst <= 3
    assert by_name["tiny/model-b"]["rank"] == 3 and by_name["tiny/model-b"]["rank_interval"][1] == 3
    assert board["models"][-1]["name"] == "tiny/model-b"  # least biased first
    pairs = {(p["less_biased"], p["more_biased"]) for p in board["distinguishable"]}
    assert pairs == {("A", "tiny/model-b"), ("C", "tiny/model-b")}  # A and C are equal in expectation
    for pair in board["distinguishable"]:
        low, high = pair["interval"]
        # Holm's step-down can tell apart a pair whose interval (at the Bonferroni level α/3) just touches 0
        assert low <= pair["difference"] <= high and high > 0 and pair["p_value"] < 0.05


@pytest.mark.parametrize("metric", METRICS[1:])
def test_other_metrics(runs, metric):
    other = leaderboard([runs["A"], runs["B"], runs["C"]], metric=metric)
    assert other["metric"] == metric
    for model in other["models"]:
        assert model["interval"][0] <= model["value"] <= model["interval"][1]
        assert model["rank_interval"][0] <= model["rank"] <= model["rank_interval"][1]


def test_separated_intervals_give_exact_ranks(runs):
    """B's first-mention bonus lowers its positional error well apart from A's and C's."""
    board = leaderboard([runs["A"], runs["B"], runs["C"]], metric="positional_error")
    first = board["models"][0]
    assert first["name"] == "tiny/model-b" and first["rank"] == 1 and first["rank_interval"] == [1, 1]
    assert [m["rank_interval"] for m in board["models"][1:]] == [[2, 3], [2, 3]]


def test_a_lower_confidence_narrows_the_intervals(board, runs):
    lower = leaderboard([runs["A"], runs["B"], runs["C"]], confidence=0.8)
    wide = {m["name"]: m["interval"] for m in board["models"]}
    for model in lower["models"]:
        assert wide[model["name"]][0] < model["interval"][0] and model["interval"][1] < wide[model["name"]][1]


def test_markdown_output(runs, tmp_path):
    output = tmp_path / "board.md"
    assert main(["leaderboard", str(runs["A"]), str(runs["B"]), "--output", str(output)]) == 0
    text = output.read_text()
    assert text.startswith("# Leaderboard: religion, mu") and "| rank | rank interval |" in text
    assert "A < tiny/model-b" in text


def refused(argv: list[str], capsys) -> str:
    assert main(["leaderboard", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("unqover: error: ") and "Traceback" not in err
    return err


def test_refusals(runs, tmp_path, capsys):
    a, b = str(runs["A"]), str(runs["B"])
    assert "at least 2 runs" in refused([a], capsys)
    assert "given twice" in refused([a, b, a], capsys)
    assert "given twice" in refused([b, str(Path(b) / "results.json")], capsys)
    assert "not a headline number" in refused([a, b, "--metric", "gamma"], capsys)
    assert "strictly between 0 and 1" in refused([a, b, "--confidence", "1.5"], capsys)
    other_probe = json.loads(runs["A"].read_text())
    other_probe["provenance"]["probe"] = other_probe["probe"] = "ethnicity"
    moved = tmp_path / "ethnicity.bias.json"
    moved.write_text(json.dumps(other_probe))
    assert "different probes" in refused([a, str(moved)], capsys)
    other_config = json.loads(runs["C"].read_text())
    other_config["provenance"]["dataset"]["config"] = "mlm"
    moved = tmp_path / "mlm.bias.json"
    moved.write_text(json.dumps(other_config))
    assert "different dataset configs" in refused([a, str(moved)], capsys)
    other_dataset = json.loads(runs["C"].read_text())
    other_dataset["provenance"]["dataset"].update(source=str(tmp_path / "elsewhere"), fingerprint="other")
    moved = tmp_path / "elsewhere.bias.json"
    moved.write_text(json.dumps(other_dataset))
    assert "different datasets" in refused([a, str(moved)], capsys)


def test_full_runs_and_probes_without_recomputable_intervals_are_refused(runs, tmp_path, capsys):
    """A run that claims to be full but whose predictions cover a sample, and an NLI run's recorded 95% interval
    without its predictions: refused, never shown as simultaneous (full runs: test_jobs_leaderboard_full_nli_emotion)."""
    full = json.loads(runs["A"].read_text())
    del full["result"]["sample"]
    path = tmp_path / "full.bias.json"
    path.write_text(json.dumps(full))
    sample = json.loads(runs["A"].read_text())["result"]["sample"]
    assert refused([str(path), str(runs["C"])], capsys) == (
        f"unqover: error: the predictions of {path} give sample {sample['groups']:,} of {sample['of']:,} groups, "
        "but its results say no value"
    )
    nli = []
    for k, s in enumerate((40.0, 55.0)):
        path = tmp_path / f"nli{k}.json"
        result = {"S": s, "delta_P": 1.0, "B": 50.0, "intervals": {"S": [s - 5, s + 5]}}
        path.write_text(
            json.dumps({"probe": "nli-gender", "provenance": {"probe": "nli-gender"}, "result": result})
        )
        nli.append(str(path))
    assert "does not record its predictions file" in refused(nli, capsys)  # its value is read from them
