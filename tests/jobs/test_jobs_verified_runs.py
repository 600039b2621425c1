"""Every surface that ranks, compares or publishes runs checks their numbers against their predictions, and tells
runs apart by what they hold (`unqover.jobs.compare`): an edited number, a results file beside another run's
predictions, or a copy of a run is refused in one line naming both values (or both runs).

UnQover runs are the full and quick runs of tests/jobs/test_jobs_leaderboard_full_nli_emotion.py (synthetic
models' scores over the religion rows, measured by the command line); the emotion runs are its TF-IDF sweep.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.jobs.test_compare_shifts import measured, models, religion, rows, run_folder, world  # noqa: F401
from tests.jobs.test_jobs_leaderboard_full_nli_emotion import emotion_sweeps, full_run, full_runs  # noqa: F401
from tests.jobs.test_leaderboard import refused
from unqover.cli import main
from unqover.format import fmt
from unqover.jobs.compare import leaderboard

pytestmark = pytest.mark.slow


def _edited(run: Path, tmp_path: Path, edit, name: str = "edited") -> Path:
    """A copy of the measure JSON ``run`` (its predictions recorded) with ``edit`` applied to its data."""
    data = json.loads(run.read_text())
    edit(data)
    path = tmp_path / f"{name}.bias.json"
    path.write_text(json.dumps(data))
    return path


def _error(capsys, prefix: str = "unqover: error: ") -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(prefix), err
    return err.removeprefix(prefix)


def test_an_edited_full_run_value_is_refused_naming_both_values(full_runs, tmp_path, capsys):  # noqa: F811
    truth = json.loads(full_runs["A"].read_text())["result"]["mu"]
    edited = _edited(full_runs["A"], tmp_path, lambda d: d["result"].update(mu=0.5))
    err = refused([str(edited), str(full_runs["B"])], capsys)
    assert (
        err == f"unqover: error: the predictions of {edited} give mu {fmt(truth)}, but its results say 0.5000"
    )
    positional = json.loads(full_runs["A"].read_text())["result"]["positional_error"]
    nudged = _edited(
        full_runs["A"], tmp_path, lambda d: d["result"].update(positional_error=positional + 1e-5)
    )
    err = refused([str(nudged), str(full_runs["B"])], capsys)  # as many digits as it takes to tell them apart
    assert (
        f"give positional_error {fmt(positional, 6)}, but its results say {fmt(positional + 1e-5, 6)}" in err
    )


def test_an_edited_quick_run_interval_is_refused(tmp_path, religion, rows, models, capsys):  # noqa: F811
    quick = measured(tmp_path, religion, rows, models["A"], "quick-a", sample=0.3, seed=3)
    other = measured(tmp_path, religion, rows, models["B"], "quick-b", sample=0.3, seed=3)
    low, high = json.loads(quick.read_text())["result"]["intervals"]["eta"]
    edited = _edited(quick, tmp_path, lambda d: d["result"]["intervals"].update(eta=[low, high / 2]))
    err = refused([str(edited), str(other)], capsys)
    assert "give the interval of eta [" in err and "but its results say [" in err


def test_a_results_file_beside_another_runs_predictions_is_refused(
    full_runs,  # noqa: F811
    tmp_path,
    religion,  # noqa: F811
    rows,  # noqa: F811
    models,  # noqa: F811
    capsys,
):
    """B's results.json copied into a run folder holding A's predictions: B's numbers are not A's; and where both
    record a model, results naming another model than the one that scored are refused."""
    a, b = run_folder(tmp_path, full_runs["A"], "run-a"), run_folder(tmp_path, full_runs["B"], "run-b")
    borrowed = tmp_path / "borrowed"
    borrowed.mkdir()
    shutil.copy(a / "predictions.parquet", borrowed / "predictions.parquet")
    shutil.copy(b / "results.json", borrowed / "results.json")
    err = refused([str(borrowed), str(full_runs["C"])], capsys)
    mu = {k: json.loads(full_runs[k].read_text())["result"]["mu"] for k in "AB"}
    assert (
        err
        == f"unqover: error: the predictions of {borrowed} give mu {fmt(mu['A'])}, but its results say {fmt(mu['B'])}"
    )
    twin = full_runs["tiny/a-twin"]  # scored by tiny/a-twin: results naming another model are refused
    other = _edited(twin, tmp_path, lambda d: d["provenance"].update(model={"id": "tiny/b"}), "other-model")
    err = refused([str(other), str(full_runs["B"])], capsys)
    assert (
        err
        == f"unqover: error: the results of {other} name the model tiny/b, but its predictions were scored by tiny/a-twin"
    )


def test_a_copied_run_is_the_same_run(full_runs, tmp_path, capsys):  # noqa: F811
    a = run_folder(tmp_path, full_runs["A"], "run-a")
    copy = tmp_path / "run-a-copy"
    shutil.copytree(a, copy)
    err = refused([str(a), str(copy), str(full_runs["B"])], capsys)
    assert err == (
        f"unqover: error: {copy} is the same run as {a} (the same model and predictions): give each run once"
    )
    err = refused([str(full_runs["A"]), str(full_runs["A copy"])], capsys)
    assert f"{full_runs['A copy']} is the same run as {full_runs['A']}" in err
    # another model with the same scores is another run (an exact tie)
    board = leaderboard([full_runs["A"], full_runs["tiny/a-twin"]])
    assert len({m["rank"] for m in board["models"]}) == 1


def test_compare_refuses_an_edited_value(full_runs, tmp_path, capsys):  # noqa: F811
    truth = json.loads(full_runs["A"].read_text())["result"]["eta"]
    edited = _edited(full_runs["A"], tmp_path, lambda d: d["result"].update(eta=0.9))
    assert main(["compare", str(edited), str(full_runs["B"]), "--name-a", "A"]) == 2
    err = _error(capsys)
    assert err == f"the predictions of A give eta {fmt(truth)}, but its results say 0.9000"
    assert main(["compare", str(full_runs["A"]), str(full_runs["B"])]) == 0


def test_publish_results_refuses_an_edited_value_and_a_borrowed_model(full_runs, tmp_path, capsys):  # noqa: F811
    twin = full_runs["tiny/a-twin"]
    truth = json.loads(twin.read_text())["result"]["attributive_error"]
    edited = _edited(twin, tmp_path, lambda d: d["result"].update(attributive_error=0.01))
    argv = [
        "--model-repo",
        "tiny/a-twin",
        "--dataset-id",
        "unqover/religion",
        "--output",
        str(tmp_path / "o"),
    ]
    assert main(["publish-results", str(edited), *argv]) == 2
    err = _error(capsys)
    assert (
        err == f"the predictions of {edited} give attributive_error {fmt(truth)}, but its results say 0.0100"
    )
    other = _edited(twin, tmp_path, lambda d: d["provenance"].update(model={"id": "tiny/b"}), "other")
    assert main(["publish-results", str(other), *argv[:1], "tiny/b", *argv[2:]]) == 2
    assert "name the model tiny/b, but its predictions were scored by tiny/a-twin" in _error(capsys)
    assert not (tmp_path / "o").exists()


def test_an_edited_cramers_v_is_refused(emotion_sweeps, tmp_path, capsys):  # noqa: F811
    runs = sorted(p.parent for p in emotion_sweeps["full"].glob("*/eec-emotion/results.json"))
    edited = tmp_path / "edited"
    shutil.copytree(runs[0], edited)
    data = json.loads((edited / "results.json").read_text())
    truth = data["result"]["tests"]["gender"]["cramers_v"]
    data["result"]["tests"]["gender"]["cramers_v"] = 0.0
    (edited / "results.json").write_text(json.dumps(data))
    err = refused([str(edited), str(runs[1])], capsys)
    assert err == (
        f"unqover: error: the predictions of {edited} give gender: Cramér's V {fmt(truth)}, but its results say "
        f"{fmt(0.0)}"
    )
