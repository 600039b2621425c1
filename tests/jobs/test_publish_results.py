"""`unqover publish-results`: a run's headline numbers as the Hub's `.eval_results/*.yaml` files of the model,
written locally (--output) or in a pull request (huggingface_hub's create_commit, replaced here: no network)."""

from __future__ import annotations

import copy
import datetime
import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from unqover.cli import main
from unqover.format import fmt
from unqover.jobs.lm_eval_tasks import task_names
from unqover.predictions import write_predictions
from unqover.probes.registry import PROBES
from unqover.scoring.sampling import select_groups

REPO_ROOT = Path(__file__).resolve().parents[2]
HEADLINE = ("mu", "eta", "positional_error", "attributive_error")


@pytest.fixture(scope="module")
def religion(built_datasets) -> Path:
    """The session's religion dataset folder (qa), read-only."""
    return built_datasets["religion"]


def _measure(folder: Path, religion: Path, name: str, **selection) -> Path:
    rows = pq.read_table(sorted((religion / "data" / "qa").glob("*.parquet")))
    rows = rows.append_column("_row", pa.array(np.arange(rows.num_rows)))
    keep = select_groups(rows, **selection)["_row"].to_numpy() if selection else np.arange(rows.num_rows)
    rng = np.random.default_rng(7)
    scores = rng.random((2, rows.num_rows)) * np.linspace(0.8, 1.0, rows.num_rows)
    table = pa.table({"id": rows["id"].take(keep), "score_1": scores[0][keep], "score_2": scores[1][keep]})
    about = {"dataset": {"source": str(religion), "config": "qa", "split": "test"}, "probe": "religion"}
    about["model"] = {"id": "me/model", "revision": "0" * 40, "family": "qa"}
    if selection:
        about["selection"] = {**selection, "design": "stratified-prn-v1"}
    predictions = folder / f"{name}.parquet"
    write_predictions(predictions, table, about)
    output = folder / f"{name}.bias.json"
    assert main(["measure", str(predictions), "--output", str(output), "--resamples", "20"]) == 0
    return output


@pytest.fixture(scope="module")
def full_run(tmp_path_factory, religion) -> Path:
    return _measure(tmp_path_factory.mktemp("full"), religion, "full")


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory, religion) -> Path:
    return _measure(tmp_path_factory.mktemp("quick"), religion, "quick", sample=0.3, seed=3)


def _files(folder: Path) -> dict[str, list]:
    return {
        p.name: yaml.safe_load(p.read_text(encoding="utf-8"))
        for p in sorted((folder / ".eval_results").glob("*.yaml"))
    }


def _edited(tmp_path: Path, run: Path, edit) -> Path:
    data = json.loads(run.read_text())
    edit(data)
    path = tmp_path / f"edited-{len(list(tmp_path.glob('edited-*')))}.json"
    path.write_text(json.dumps(data))
    return path


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("unqover: error: ")
    return err


def test_output_writes_one_file_per_headline_number_with_the_runs_numbers(full_run, tmp_path, capsys):
    assert (
        main(["publish-results", str(full_run), "--model-repo", "me/model", "--output", str(tmp_path)]) == 0
    )
    results = json.loads(full_run.read_text())
    result = results["result"]
    files = _files(tmp_path)
    assert sorted(files) == sorted(f"unqover_religion_{name}.yaml" for name in HEADLINE)
    date = datetime.datetime.fromtimestamp(full_run.stat().st_mtime, tz=datetime.timezone.utc).date()
    for name in HEADLINE:
        [entry] = files[f"unqover_religion_{name}.yaml"]
        assert set(entry) == {"dataset", "value", "date", "source", "notes"}
        assert entry["dataset"] == {"id": "unqover/religion", "task_id": "unqover_religion"}
        assert entry["value"] == result[name]  # the raw number, not a rounded one
        assert entry["date"] == date.isoformat()  # a string, as the Hub's format asks
        assert entry["source"]["url"] == "https://huggingface.co/datasets/unqover/religion"
        assert entry["source"]["name"].startswith("unqover ")
        low, high = result["intervals"][name]
        assert entry["notes"].startswith(f"{name}; 95% interval [")
        assert "config qa, split test" in entry["notes"]
        assert "quick run" not in entry["notes"]
        assert math.isfinite(low) and math.isfinite(high)
    out = capsys.readouterr().out
    assert f"wrote {tmp_path / '.eval_results' / 'unqover_religion_mu.yaml'}" in out


def test_the_files_parse_as_the_hubs_format(full_run, tmp_path):
    huggingface_hub = pytest.importorskip("huggingface_hub")
    parse = getattr(huggingface_hub, "parse_eval_result_entries", None)
    if parse is None:
        pytest.skip("this huggingface_hub has no eval-results parser")
    assert (
        main(["publish-results", str(full_run), "--model-repo", "me/model", "--output", str(tmp_path)]) == 0
    )
    for entries in _files(tmp_path).values():
        [parsed] = parse(entries)
        assert (parsed.dataset_id, parsed.task_id) == ("unqover/religion", "unqover_religion")
        assert parsed.source_url and parsed.notes and parsed.date


def test_a_run_folder_is_read_like_its_results_file(full_run, tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "results.json").write_text(full_run.read_text())
    (folder / "run.json").write_text(json.dumps({"probe": "religion"}))
    assert (
        main(["publish-results", str(full_run), "--model-repo", "me/model", "--output", str(tmp_path / "a")])
        == 0
    )
    assert (
        main(["publish-results", str(folder), "--model-repo", "me/model", "--output", str(tmp_path / "b")])
        == 0
    )
    a, b = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert [[e["value"] for e in entries] for entries in a.values()] == [
        [e["value"] for e in entries] for entries in b.values()
    ]


def test_a_quick_run_is_the_sample_task_and_both_task_ids_are_the_lm_eval_tasks_and_in_the_card(
    full_run, quick_run, tmp_path
):
    argv = ["publish-results", str(full_run), str(quick_run), "--model-repo", "me/model"]
    assert main([*argv, "--output", str(tmp_path)]) == 0
    files = _files(tmp_path)
    assert len(files) == 8
    selections = [json.loads(run.read_text())["provenance"]["selection"] for run in (full_run, quick_run)]
    assert selections[0] == {"kind": "full"}
    assert selections[1] == {"sample": 0.3, "seed": 3, "design": "stratified-prn-v1", "kind": "design"}
    quick = json.loads(quick_run.read_text())["result"]
    [entry] = files["unqover_religion_sample_mu.yaml"]
    assert entry["dataset"]["task_id"] == "unqover_religion_sample"
    assert entry["value"] == quick["mu"]
    assert "quick run" in entry["notes"]
    card = (REPO_ROOT / "datasets" / "unqover" / "religion" / "README.md").read_text(encoding="utf-8")
    for probe in PROBES.values():
        names = task_names(probe)
        folder = "eec-emotion" if probe.name == "eec-person" else probe.name
        text = (REPO_ROOT / "datasets" / "unqover" / folder / "README.md").read_text(encoding="utf-8")
        assert f"`{names['full']}`" in text and f"`{names['sample']}`" in text, probe.name
    assert "unqover publish-results" in card


def test_two_runs_of_one_task_are_refused(full_run, tmp_path, capsys):
    argv = [
        "publish-results",
        str(full_run),
        str(full_run),
        "--model-repo",
        "me/model",
        "--output",
        str(tmp_path),
    ]
    assert main(argv) == 2
    assert "two runs give unqover_religion mu" in _error(capsys)
    assert not (tmp_path / ".eval_results").exists()


def test_missing_numbers_are_left_out_with_a_note(full_run, religion, tmp_path, capsys):
    small = _measure(tmp_path, religion, "small", limit=400, seed=7)  # too few groups for μ and η: declined
    argv = ["publish-results", str(small), "--model-repo", "me/model", "--output", str(tmp_path / "o")]
    assert main(argv) == 0
    files = _files(tmp_path / "o")
    assert (
        "unqover_religion_sample_eta.yaml" not in files
        and "unqover_religion_sample_positional_error.yaml" in files
    )
    out = capsys.readouterr().out
    assert f"{small}: eta is missing" in out and f"{small}: mu is missing" in out

    def drop_eta(data):
        data["result"]["eta"] = None

    edited = _edited(tmp_path, full_run, drop_eta)  # a value the run did not decline is no missing value
    argv = ["publish-results", str(edited), "--model-repo", "me/model", "--output", str(tmp_path / "e")]
    assert main(argv) == 2
    eta = json.loads(full_run.read_text())["result"]["eta"]
    assert f"the predictions of {edited} give eta {fmt(eta)}, but its results say no value" in _error(capsys)
    assert not (tmp_path / "e").exists()

    def drop_all(data):
        for name in HEADLINE:
            data["result"][name] = None

    edited = _edited(tmp_path, full_run, drop_all)
    assert (
        main(["publish-results", str(edited), "--model-repo", "me/model", "--output", str(tmp_path / "p")])
        == 2
    )
    assert "holds no headline number to publish" in _error(capsys)


@pytest.mark.parametrize(
    ("source", "expected"),
    [("unqover/religion", "unqover/religion"), ("someone/religion-copy", "someone/religion-copy")],
)
def test_a_run_on_a_hub_dataset_names_it(full_run, tmp_path, source, expected):
    def on_hub(data):
        data["provenance"]["dataset"]["source"] = source

    edited = _edited(tmp_path, full_run, on_hub)
    assert main(["publish-results", str(edited), "--model-repo", "me/model", "--output", str(tmp_path)]) == 0
    assert {e[0]["dataset"]["id"] for e in _files(tmp_path).values()} == {expected}


def test_rows_that_are_no_hub_dataset_are_refused_unless_named(full_run, tmp_path, religion, capsys):
    other = tmp_path / "religion"  # a folder of the right name whose card is no build of the Hub dataset
    other.mkdir()
    (other / "README.md").write_text("# my own rows\n")
    for source in (f"generated from {tmp_path}", str(other)):

        def local(data, source=source):
            data["provenance"]["dataset"]["source"] = source

        edited = _edited(tmp_path, full_run, local)
        argv = ["publish-results", str(edited), "--model-repo", "me/model", "--output", str(tmp_path / "o")]
        assert main(argv) == 2
        assert "--dataset-id OWNER/NAME" in _error(capsys)
        assert main([*argv, "--dataset-id", "me/my-religion"]) == 0
        assert {e[0]["dataset"]["id"] for e in _files(tmp_path / "o").values()} == {"me/my-religion"}


def test_bad_inputs_are_refused_in_one_line(full_run, tmp_path, capsys):
    def other_model(data):
        data["provenance"]["model"] = {"id": "someone/else", "family": "qa"}

    cases = [
        (["--model-repo", "model"], "invalid repo id 'model'"),
        (["--model-repo", "me/model", "--dataset-id", "religion"], "invalid repo id 'religion'"),
        (["--model-repo", "me/model", "--source-url", "ftp://x"], "no http(s) URL"),
    ]
    for extra, message in cases:
        assert main(["publish-results", str(full_run), *extra, "--output", str(tmp_path)]) == 2
        assert message in _error(capsys)
    missing = tmp_path / "nowhere.json"
    assert main(["publish-results", str(missing), "--model-repo", "me/model", "--output", str(tmp_path)]) == 2
    assert "not found" in _error(capsys)
    not_results = tmp_path / "not-results.json"
    not_results.write_text(json.dumps({"hello": 1}))
    assert (
        main(["publish-results", str(not_results), "--model-repo", "me/model", "--output", str(tmp_path)])
        == 2
    )
    _error(capsys)
    edited = _edited(tmp_path, full_run, other_model)
    assert main(["publish-results", str(edited), "--model-repo", "me/model", "--output", str(tmp_path)]) == 2
    assert "was measured on someone/else, not me/model" in _error(capsys)
    # the results name someone/else, but me/model scored the predictions: not published as someone/else's
    assert (
        main(["publish-results", str(edited), "--model-repo", "someone/else", "--output", str(tmp_path)]) == 2
    )
    assert (
        f"the results of {edited} name the model someone/else, but its predictions were scored by me/model @ "
        f"{'0' * 40}" in _error(capsys)
    )
    assert not list(tmp_path.glob(".eval_results/*"))


def _online(monkeypatch, tmp_path):
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")


def recorded_commits(monkeypatch, repo: str) -> list[dict]:
    """The Hub's ``create_commit`` replaced: each call's arguments are recorded, and it answers with pull request 1
    on ``repo``."""
    import huggingface_hub

    calls = []

    def create_commit(self, **kwargs):
        calls.append(copy.copy(kwargs))
        return huggingface_hub.CommitInfo(
            commit_url=f"https://huggingface.co/{repo}/commit/abc",
            commit_message=kwargs["commit_message"],
            commit_description=kwargs.get("commit_description", ""),
            oid="abc",
            pr_url=f"https://huggingface.co/{repo}/discussions/1",
        )

    monkeypatch.setattr(huggingface_hub.HfApi, "create_commit", create_commit)
    return calls


def test_without_output_a_pull_request_adds_the_same_files(full_run, tmp_path, monkeypatch, capsys):

    assert (
        main(["publish-results", str(full_run), "--model-repo", "me/model", "--output", str(tmp_path)]) == 0
    )
    local = {
        f".eval_results/{p.name}": p.read_bytes() for p in sorted((tmp_path / ".eval_results").glob("*.yaml"))
    }
    capsys.readouterr()
    _online(monkeypatch, tmp_path)
    calls = recorded_commits(monkeypatch, "me/model")
    assert main(["publish-results", str(full_run), "--model-repo", "me/model"]) == 0
    [call] = calls
    assert call["repo_id"] == "me/model" and call["repo_type"] == "model" and call["create_pr"] is True
    sent = {op.path_in_repo: op.path_or_fileobj for op in call["operations"]}
    assert sent == local
    assert "https://huggingface.co/me/model/discussions/1" in capsys.readouterr().out


def test_pull_request_failures_are_one_line(full_run, tmp_path, monkeypatch, capsys):
    import huggingface_hub

    argv = ["publish-results", str(full_run), "--model-repo", "me/model"]
    assert main(argv) == 2  # the tests run offline
    assert "offline mode" in _error(capsys)
    _online(monkeypatch, tmp_path)

    def unreachable(self, **kwargs):
        raise OSError("connection refused")

    monkeypatch.setattr(huggingface_hub.HfApi, "create_commit", unreachable)
    assert main(argv) == 2
    assert "could not open a pull request on me/model" in _error(capsys)
