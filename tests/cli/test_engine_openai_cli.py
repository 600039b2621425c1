"""``unqover probe MODEL --engine openai --base-url URL`` end to end, offline, against a real local server
(``tests/helpers/completions_server.py``: ``/v1/completions`` with echo and logprobs from the same tiny GPT-2): the
run's predictions equal the default (transformers) engine's within 1e-4 in log S and its results the same numbers;
the same command again resumes (it asks the server nothing and leaves the same files); run.json, the predictions
and the results record the engine, the base URL and what the server reports, never the API key; what the engine
cannot serve is refused in one line before anything is written.

The engine itself (its requests, retries, refusals): tests/scoring/test_engine_openai.py.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import tiny_models
from completions_server import CompletionsServer, serving
from tests.cli.test_cli_bad_data import files, refused
from unqover.cli import main
from unqover.predictions import read_predictions
from unqover.scoring.causal import INSTRUCTION

GROUPS = 30  # a quick run: δ and ε are measured (μ and η need 1,375 groups and are declined in both runs)
KEY = "sk-unqover-cli-test-9876543210"


@pytest.fixture(scope="module")
def model(tmp_path_factory, religion_tables) -> Path:
    """A tiny GPT-2 with a tokenizer trained on the religion rows' words."""
    religion = religion_tables["qa"]
    texts = sorted(set(religion["context"].to_pylist()[:400]) | set(religion["question"].to_pylist()[:400]))
    return tiny_models.causal_lm(
        tmp_path_factory.mktemp("openai-cli") / "gpt2", [*texts, INSTRUCTION], "gpt2"
    )


@pytest.fixture(scope="module")
def server(model) -> Iterator[CompletionsServer]:
    """The tiny GPT-2 served under its folder's path (as ``vllm serve FOLDER`` names it), with an API key."""
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", KEY)
    with serving(model, api_key=KEY) as running:
        yield running
    mp.undo()


def probe_argv(model: Path, lists: Path, output: Path, *extra: str, groups: int = GROUPS) -> list[str]:
    return ["probe", str(model), "--bias", "religion", "--limit", str(groups), "--word-lists", str(lists),
            "--resamples", "50", "--quiet", "--output", str(output), *extra]  # fmt: skip


def served_argv(
    model: Path, lists: Path, output: Path, url: str, *extra: str, groups: int = GROUPS
) -> list[str]:
    return probe_argv(model, lists, output, "--engine", "openai", "--base-url", url, *extra, groups=groups)


@pytest.fixture(scope="module")
def default_run(model, upstream_word_lists_path, tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("default-engine") / "run"
    assert main(probe_argv(model, upstream_word_lists_path, run)) == 0
    return run


@pytest.fixture(scope="module")
def served_run(model, server, upstream_word_lists_path, tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("openai-engine") / "run"
    before = server.prompts_seen
    assert main(served_argv(model, upstream_word_lists_path, run, server.url, "--concurrency", "3")) == 0
    assert server.prompts_seen - before == 2 * 4 * GROUPS  # both subjects of every row, asked of the server
    return run


def scores(run: Path) -> pa.Table:
    table, _ = read_predictions(run / "predictions.parquet")
    return table.select(["id", "score_1", "score_2"]).sort_by("id")


def test_the_served_run_scores_as_the_default_engine(default_run, served_run):
    ours, theirs = scores(served_run), scores(default_run)
    assert ours["id"].equals(theirs["id"]) and ours.num_rows == 4 * GROUPS
    for column in ("score_1", "score_2"):
        log_ours, log_theirs = np.log(ours[column].to_numpy()), np.log(theirs[column].to_numpy())
        assert np.abs(log_ours - log_theirs).max() <= 1e-4, column
        assert log_theirs.std() > 0.1, column  # the scores spread: equal numbers are not an accident


def test_the_served_run_measures_the_same_numbers(default_run, served_run):
    """Every number of the results within 1e-4 of its size plus 1e-4 of the mean answer score (a γ is a difference
    of scores, so its error is on the scale of the scores); everything else (declines, counts, words) equal."""
    ours = json.loads((served_run / "results.json").read_text())["result"]
    theirs = json.loads((default_run / "results.json").read_text())["result"]
    assert theirs["positional_error"] is not None and theirs["attributive_error"] is not None
    scale = theirs["mean_score"]
    # the subjects' ranks follow γ(x), whose ties at ≈0 may order either way: compared by subject below
    by_subject = [
        {r["subject"]: r["gamma"] for r in result.pop("subject_gamma")} for result in (ours, theirs)
    ]
    assert_close(by_subject[0], by_subject[1], scale, "subject_gamma")
    assert_close(ours, theirs, scale, "result")


def assert_close(ours, theirs, scale: float, where: str) -> None:
    """The same structure; numbers within 1e-4·(|value| + scale), anything else equal."""
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and ours.keys() == theirs.keys(), where
        for key in theirs:
            assert_close(ours[key], theirs[key], scale, f"{where}.{key}")
    elif isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), where
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            assert_close(a, b, scale, f"{where}[{i}]")
    elif isinstance(theirs, float) and not isinstance(theirs, bool):
        assert isinstance(ours, (int, float)), where
        assert math.isclose(ours, theirs, rel_tol=1e-4, abs_tol=1e-4 * scale) or ours == theirs, (
            where,
            ours,
            theirs,
        )
    else:
        assert ours == theirs, (where, ours, theirs)


def test_the_same_command_again_resumes_without_asking_the_server(
    model, server, upstream_word_lists_path, tmp_path
):
    """The run again: nothing is asked of the server, and the same files come out (the same scores, run.json,
    results and model record; a rerun rewrites the timings)."""
    run = tmp_path / "run"
    argv = served_argv(model, upstream_word_lists_path, run, server.url)
    assert main(argv) == 0
    first = finished(run)
    asked = server.prompts_seen
    assert main(argv) == 0
    assert server.prompts_seen == asked  # nothing scored again
    again = finished(run)
    assert again["files"] == first["files"]
    assert again["scores"].equals(first["scores"])
    for key in ("run.json", "result", "model"):
        assert again[key] == first[key], key


def finished(run: Path) -> dict:
    """What a finished run holds, less what a rerun rewrites (timings)."""
    _, about = read_predictions(run / "predictions.parquet")
    return {
        "files": sorted(str(path.relative_to(run)) for path in files(run)),
        "scores": scores(run),
        "run.json": (run / "run.json").read_text(),
        "result": json.loads((run / "results.json").read_text())["result"],
        "model": about["model"],
    }


def test_the_run_records_the_server_and_never_the_key(model, server, served_run):
    report = {"id": str(model), "root": str(model), "owned_by": "unqover-tests", "max_model_len": 256}
    run_json = json.loads((served_run / "run.json").read_text())
    _, about = read_predictions(served_run / "predictions.parquet")
    results = json.loads((served_run / "results.json").read_text())
    for record in (run_json["model"], about["model"], results["provenance"]["model"]):
        assert record["engine"] == "openai"
        assert record["served_at"] == server.url
        assert record["server"] == report
        assert record["id"] == str(model) and record["family"] == "causal"
    assert {f"Bearer {KEY}"} == {a for a in server.authorizations if a}  # the key reached the server
    for path in files(served_run):
        if path.is_file():
            data = path.read_bytes()
            assert KEY.encode() not in data and b"OPENAI_API_KEY" not in data, path


def test_another_server_into_the_same_run_folder_is_refused(
    model, server, served_run, upstream_word_lists_path, tmp_path, capsys
):
    """The base URL is part of the run's identity: the same model served elsewhere is another run."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(served_run, run)
    with serving(model, api_key=KEY) as elsewhere:
        refused(
            served_argv(model, upstream_word_lists_path, run, elsewhere.url),
            capsys,
            "served_at",
        )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ((), "the openai engine needs --base-url URL"),
        (("--base-url", "localhost:8000/v1"), "--base-url 'localhost:8000/v1' is not an http(s) URL"),
        (
            ("--base-url", "http://127.0.0.1:9/v1", "--dtype", "bfloat16"),
            "--dtype bfloat16 cannot apply to the openai engine",
        ),
        (
            ("--base-url", "http://127.0.0.1:9/v1", "--adapter", "lora"),
            "--adapter cannot apply to the openai engine",
        ),
    ],
)
def test_what_the_engine_cannot_serve_is_refused_before_anything_is_written(
    model, upstream_word_lists_path, tmp_path, capsys, extra, message
):
    run = tmp_path / "run"
    argv = probe_argv(model, upstream_word_lists_path, run, "--engine", "openai", *extra)
    refused(argv, capsys, message)
    assert not run.exists()


def test_a_probe_that_asks_for_no_continuations_is_refused(model, server, tmp_path, capsys):
    run = tmp_path / "run"
    argv = ["probe", str(model), "--bias", "eec-emotion", "--engine", "openai", "--base-url", server.url,
            "--limit", "1", "--quiet", "--output", str(run)]  # fmt: skip
    refused(
        argv,
        capsys,
        "the openai engine answers continuation log-likelihoods (causal LMs) only; the eec-emotion",
    )
    assert not run.exists()


def test_the_nli_probe_asks_a_served_model_by_its_prompt(model, server, tmp_path, capsys):
    """The NLI probe asks a causal LM for the label words' log-likelihoods: a served model answers them."""
    run = tmp_path / "run"
    argv = ["probe", str(model), "--bias", "nli-gender", "--engine", "openai", "--base-url", server.url,
            "--limit", "1", "--quiet", "--output", str(run)]  # fmt: skip
    assert main(argv) == 0
    recorded = json.loads((run / "run.json").read_text())
    assert (
        recorded["model"]["engine"] == "openai" and recorded["prompt"]["label_words"]["entailment"] == "True"
    )


def test_a_model_the_server_does_not_serve_is_refused(
    model, server, upstream_word_lists_path, tmp_path, capsys
):
    run = tmp_path / "run"
    argv = served_argv(model, upstream_word_lists_path, run, server.url, "--tokenizer", str(model))
    argv[1] = "gpt2-large"
    refused(argv, capsys, f"the server at {server.url} does not serve 'gpt2-large': it serves '{model}'")
    assert not (run / "predictions.parquet").exists()


@pytest.mark.slow
def test_a_quick_run_large_enough_for_mu_and_eta_measures_them_as_the_default_engine(
    model, server, upstream_word_lists_path, tmp_path
):
    """1,375 groups (5,500 rows, 11,000 continuations asked of the server): μ, η, δ, ε, their intervals and every
    other number of the results as the default engine's."""
    runs = {name: tmp_path / name for name in ("default", "served")}
    lists = upstream_word_lists_path
    assert main(probe_argv(model, lists, runs["default"], groups=1375)) == 0
    assert main(served_argv(model, lists, runs["served"], server.url, "--concurrency", "4", groups=1375)) == 0
    ours, theirs = (
        json.loads((runs[k] / "results.json").read_text())["result"] for k in ("served", "default")
    )
    for name in ("mu", "eta", "positional_error", "attributive_error"):
        assert theirs[name] is not None and abs(ours[name] - theirs[name]) <= 1e-4, name
        assert np.abs(np.subtract(ours["intervals"][name], theirs["intervals"][name])).max() <= 1e-4, name
    scale = theirs["mean_score"]
    by_subject = [
        {r["subject"]: r["gamma"] for r in result.pop("subject_gamma")} for result in (ours, theirs)
    ]
    assert_close(by_subject[0], by_subject[1], scale, "subject_gamma")
    assert_close(ours, theirs, scale, "result")
