"""Every option a command takes reaches its job as typed. The command functions of ``unqover.cli`` build their
jobs' arguments one by one (``RunOptions(dtype=args.dtype, ...)``): an option dropped there, or renamed on one side
alone, would leave the job at its default, silently ignoring what was typed. Each test gives every option a value
other than its default and checks each argument the job receives; a job that gains a parameter fails here until
the test gives it too."""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from unqover.cli import main
from unqover.jobs.compare import compare_files, leaderboard
from unqover.jobs.lm_eval_tasks import write_task_folders
from unqover.jobs.measuring import measure_predictions
from unqover.jobs.publish import PublishRequest
from unqover.jobs.publish_results import publish_results
from unqover.jobs.sample import write_sample
from unqover.probes.base import RunOptions
from unqover.probes.registry import get_probe

#: RunOptions' fields that no option of ``unqover probe`` sets (a sweep sets ``threads``; the others are fixed)
NOT_OPTIONS = {"chunk_rows", "checkpoint_seconds", "threads"}


class Called(Exception):
    """Raised by a job stand-in once it has recorded its arguments: the command does nothing more."""


def record(monkeypatch: pytest.MonkeyPatch, target: str, job: Callable) -> dict[str, Any]:
    """Replace ``target`` (``module.name``) by a stand-in that records the arguments it is called with, by
    ``job``'s parameter names, into the dict returned, then raises :class:`Called`."""
    received: dict[str, Any] = {}

    def stand_in(*args: Any, **kwargs: Any) -> None:
        received.update(inspect.signature(job).bind(*args, **kwargs).arguments)
        raise Called

    monkeypatch.setattr(target, stand_in)
    return received


def record_word_lists(monkeypatch: pytest.MonkeyPatch, target: str) -> list:
    """Replace ``reading_with`` at ``target`` by one that records the ``--word-lists`` it is given."""
    given: list = []

    @contextlib.contextmanager
    def reading_with(word_lists: Path | None) -> Iterator[None]:
        given.append(word_lists)
        yield

    monkeypatch.setattr(target, reading_with)
    return given


def run_command(argv: list[str]) -> None:
    with pytest.raises(Called):
        main(argv)


def not_defaults(values: dict[str, Any], job: Callable) -> None:
    """The test's own check: each value it gives differs from the job's default (else a dropped option passes)."""
    parameters = inspect.signature(job).parameters
    for name, value in values.items():
        default = parameters[name].default if name in parameters else inspect.Parameter.empty
        assert value != default, f"give --{name.replace('_', '-')} another value than its default"


def test_every_option_of_probe_reaches_run_options(monkeypatch, tmp_path):
    """``unqover probe``: each RunOptions field that an option sets holds what was typed."""
    received = record(monkeypatch, "unqover.jobs.run.run_probe", lambda model, probe, run: None)
    monkeypatch.setattr("unqover.jobs.run.quiet_libraries", lambda: None)
    expected = {
        "dataset": "someone/probe-rows",
        "config": "mlm",
        "output": tmp_path / "run",
        "batch_size": 7,
        "device": "cpu",
        "dtype": "bfloat16",
        "shard": (1, 3),
        "limit": 12,
        "seed": 5,
        "resamples": 9,
        "progress": False,
        "revision": "v2",
        "token": "hf_typed",
        "allow_pickle": True,
        "adapter": "someone/adapter",
        "model_args": {"attn_implementation": "sdpa", "trust": 1},
        "gguf_file": "model.Q4.gguf",
        "engine": "transformers",
    }
    argv = [
        "probe", "some-model", "--bias", "religion", "--dataset", "someone/probe-rows", "--config", "mlm",
        "--output", str(tmp_path / "run"), "--batch-size", "7", "--device", "cpu", "--dtype", "bfloat16",
        "--shard", "1/3", "--limit", "12", "--seed", "5", "--resamples", "9", "--quiet", "--revision", "v2",
        "--token", "hf_typed", "--allow-pickle", "--adapter", "someone/adapter", "--model-arg",
        "attn_implementation=sdpa", "--model-arg", "trust=1", "--gguf-file", "model.Q4.gguf",
        "--system-prompt", "Be fair.", "--engine", "transformers", "--base-url", "http://localhost:8000/v1",
    ]  # fmt: skip
    before = time.monotonic()
    run_command(argv)
    assert received["model"] == "some-model" and received["probe"] is get_probe("religion")
    run = received["run"]
    fields = {field.name for field in dataclasses.fields(RunOptions)}
    assert fields == {*expected, *NOT_OPTIONS, "started", "settings", "engine_options", "quick"}, (
        "a new RunOptions field: give it"
    )
    defaults = RunOptions()
    for name, value in expected.items():
        assert value != getattr(defaults, name), (
            f"give --{name.replace('_', '-')} another value than its default"
        )
        assert getattr(run, name) == value, f"--{name.replace('_', '-')} did not reach RunOptions.{name}"
    for name in NOT_OPTIONS:
        assert getattr(run, name) == getattr(defaults, name), name
    assert before <= run.started <= time.monotonic()  # --max-time counts from the command's start
    assert run.settings["system_prompt"] == "Be fair."  # the probe's own options, by their declarations
    assert run.engine_options["base_url"] == "http://localhost:8000/v1"  # the engines' own, alike
    assert all(value is None for name, value in run.engine_options.items() if name != "base_url")
    assert all(value is None for name, value in run.settings.items() if name != "system_prompt")
    assert run.quick is False
    run_command(["probe", "some-model", "--bias", "religion", "--quick"])  # --quick goes without --limit
    assert received["run"].quick is True and received["run"].limit is None


def test_every_option_of_measure_reaches_the_job(monkeypatch, tmp_path):
    received = record(monkeypatch, "unqover.jobs.measuring.measure_predictions", measure_predictions)
    word_lists = record_word_lists(monkeypatch, "unqover.cli.reading_with")
    predictions, output = tmp_path / "predictions.parquet", tmp_path / "results.json"
    run_command(
        ["measure", str(predictions), "--bias", "gender", "--dataset", "someone/rows", "--config", "mlm",
         "--split", "dev", "--resamples", "9", "--seed", "5", "--output", str(output), "--word-lists", "lists",
         "--mode", "paper"]
    )  # fmt: skip
    expected = {"predictions": predictions, "output": output, "bias": "gender", "split": "dev"}
    not_defaults(expected, measure_predictions)
    assert {name: received.pop(name) for name in expected} == expected
    run, given = received.pop("run"), received.pop("given")
    assert received == {"probe_file": None}  # --probe FILE excludes --bias
    assert (run.dataset, run.config, run.resamples, run.seed) == ("someone/rows", "mlm", 9, 5)
    assert given["mode"] == "paper"
    assert word_lists == [Path("lists")]
    run_command(["measure", str(predictions), "--probe", "custom.yaml"])
    assert (received["probe_file"], received["bias"]) == (Path("custom.yaml"), None)


def test_every_option_of_sample_reaches_the_job(monkeypatch, tmp_path):
    received = record(monkeypatch, "unqover.jobs.sample.write_sample", write_sample)
    output = tmp_path / "ids.parquet"
    common = ["sample", "someone/rows", "--config", "mlm", "--split", "dev", "--seed", "5", "--output"]
    common.append(str(output))
    expected = {"dataset": "someone/rows", "config": "mlm", "split": "dev", "seed": 5, "output": output}
    run_command([*common, "--groups", "3"])
    assert received == {**expected, "groups": 3, "fraction": None}
    not_defaults({**expected, "groups": 3}, write_sample)
    received.clear()
    run_command([*common, "--fraction", "0.25"])
    assert received == {**expected, "groups": None, "fraction": 0.25}


def test_every_option_of_lm_eval_tasks_reaches_the_job(monkeypatch, tmp_path):
    received = record(monkeypatch, "unqover.jobs.lm_eval_tasks.write_task_folders", write_task_folders)
    output = tmp_path / "tasks"
    run_command(
        ["lm-eval-tasks", "--bias", "religion,gender", "--dataset", "someone/rows", "--word-lists", "lists",
         "--groups", "3", "--seed", "5", "--output", str(output)]
    )  # fmt: skip
    expected = {
        "bias": ["religion", "gender"],
        "output": output,
        "dataset": "someone/rows",
        "word_lists": Path("lists"),
        "groups": 3,
        "seed": 5,
    }
    not_defaults(expected, write_task_folders)
    assert received == expected


def test_every_option_of_publish_results_reaches_the_job(monkeypatch, tmp_path):
    received = record(monkeypatch, "unqover.jobs.publish_results.publish_results", publish_results)
    word_lists = record_word_lists(monkeypatch, "unqover.cli.reading_with")
    run_command(
        ["publish-results", "run-a", "run-b", "--model-repo", "someone/model", "--output", str(tmp_path),
         "--dataset-id", "someone/rows", "--source-url", "https://example.org/runs", "--token", "hf_typed",
         "--word-lists", "lists"]
    )  # fmt: skip
    expected = {
        "runs": [Path("run-a"), Path("run-b")],
        "model_repo": "someone/model",
        "output": tmp_path,
        "dataset_id": "someone/rows",
        "source_url": "https://example.org/runs",
        "token": "hf_typed",
    }
    not_defaults(expected, publish_results)
    assert received == expected
    assert word_lists == [Path("lists")]


def record_printing(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Replace ``print_and_write`` by one that records its ``output`` and ``word_lists`` and makes the result."""
    given: dict[str, Any] = {}

    def print_and_write(output, what, make, word_lists=None) -> int:
        given.update(output=output, word_lists=word_lists)
        make()
        return 0

    monkeypatch.setattr("unqover.jobs.compare.print_and_write", print_and_write)
    return given


def test_every_option_of_compare_reaches_the_job(monkeypatch, tmp_path):
    received = record(monkeypatch, "unqover.jobs.compare.compare_files", compare_files)
    printing = record_printing(monkeypatch)
    output = tmp_path / "comparison.json"
    run_command(
        ["compare", "run-a", "run-b", "--top", "3", "--output", str(output), "--name-a", "before", "--name-b",
         "after", "--word-lists", "lists"]
    )  # fmt: skip
    expected = {
        "run_a": Path("run-a"),
        "run_b": Path("run-b"),
        "name_a": "before",
        "name_b": "after",
        "top": 3,
    }
    not_defaults(expected, compare_files)
    assert received == expected
    assert printing == {"output": output, "word_lists": Path("lists")}


def test_every_option_of_leaderboard_reaches_the_job(monkeypatch, tmp_path):
    received = record(monkeypatch, "unqover.jobs.compare.leaderboard", leaderboard)
    printing = record_printing(monkeypatch)
    output = tmp_path / "board.html"
    run_command(
        ["leaderboard", "run-a", "run-b", "--metric", "eta", "--confidence", "0.9", "--output", str(output),
         "--word-lists", "lists"]
    )  # fmt: skip
    expected = {"paths": [Path("run-a"), Path("run-b")], "metric": "eta", "confidence": 0.9}
    not_defaults(expected, leaderboard)
    assert received == expected
    assert printing == {"output": output, "word_lists": Path("lists")}


def test_every_option_of_publish_reaches_the_job(monkeypatch, tmp_path):
    received = record(monkeypatch, "unqover.jobs.publish.publish_chosen", lambda request: None)
    run_command(
        ["publish", "gender", "demo", "--what", "space,datasets", "--root", "built", "--metrics", "modules",
         "--space", "app", "--space-name", "demo", "--namespace", "someone", "--dry-run", "--token", "hf_typed",
         "--private", "--timeout", "5"]
    )  # fmt: skip
    expected = PublishRequest(
        names=["gender", "demo"],
        what=("datasets", "space"),
        root=Path("built"),
        metrics=Path("modules"),
        space=Path("app"),
        space_name="demo",
        namespace="someone",
        dry_run=True,
        token="hf_typed",
        private=True,
        timeout=5.0,
    )
    assert received == {"request": expected}
    with pytest.raises(Called):
        main(["publish"])
    defaults = received["request"]
    for field in dataclasses.fields(PublishRequest):  # each value above is another than the default
        assert getattr(expected, field.name) != getattr(defaults, field.name), field.name
