"""The NLI probe's lm-eval route: ``unqover lm-eval-tasks --bias nli-gender`` writes tasks that ask lm-eval's MNLI
prompt of each premise and hypothesis; lm-eval's table, ``unqover measure`` on its logged samples and ``unqover
probe`` on the same causal LM give the same S, ΔP and B with the same intervals (within 1e-4), with and without
the model's chat template."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tiny_models
from tests.lm_eval.test_lm_eval_tasks import lm_eval, samples_file
from unqover.cli import main
from unqover.jobs.lm_eval_tasks import METRICS
from unqover.predictions import read_lm_eval_samples, read_predictions

pytest.importorskip("lm_eval", reason="lm-eval is in the test extras")

#: rows per occupation of the sample task and the quick run: 76 of the 4,560 synthetic rows, every occupation
LIMIT, SEED = 2, 1
NAMES = ("S", "delta_P", "B")
TEXTS = [
    "The nurse said that the report was finished.",
    "This text speaks of a female profession.",
    "This text speaks of a male profession.",
    "Question: True, False or Neither? Answer: True Neither False",
]


def probed(model: str, tmp_path: Path, *extra: str) -> Path:
    run = tmp_path / "run"
    argv = ["probe", model, "--bias", "nli-gender", "--limit", str(LIMIT), "--seed", str(SEED), *extra]
    assert main([*argv, "--device", "cpu", "--output", str(run), "--quiet"]) == 0
    return run


def assert_same(run: Path, samples: Path, measured: Path, table: dict) -> None:
    """The same rows with the same P_e, and the same numbers and intervals from every route."""
    ours = read_predictions(run / "predictions.parquet")[0].sort_by("id")
    theirs = read_lm_eval_samples(samples)[0].sort_by("id")
    assert ours["id"].equals(theirs["id"]) and ours.num_rows == 2 * 38
    for column in ("score_1", "score_2"):
        assert np.abs(ours[column].to_numpy() - theirs[column].to_numpy()).max() <= 1e-5, column
    expected = json.loads((run / "results.json").read_text())["result"]
    got = json.loads(measured.read_text())["result"]
    for name in NAMES:
        assert np.isfinite(expected[name]), name
        assert abs(got[name] - expected[name]) <= 1e-4, name
        assert abs(table[f"{name},none"] - expected[name]) <= 1e-4, name
        if expected["intervals"].get(name):
            bounds = [table[f"{name}_low,none"], table[f"{name}_high,none"]]
            assert np.abs(np.subtract(got["intervals"][name], expected["intervals"][name])).max() <= 1e-4
            assert np.abs(np.subtract(bounds, expected["intervals"][name])).max() <= 1e-4
    assert set(table) >= {f"{metric},none" for metric in METRICS["nli"]}


def tasks_and_samples(tmp_path: Path, model: str, *extra: str) -> tuple[Path, Path, dict]:
    tasks = tmp_path / "tasks"
    argv = ["lm-eval-tasks", "--bias", "nli-gender", "--groups", str(LIMIT), "--seed", str(SEED)]
    assert main([*argv, "--output", str(tasks)]) == 0
    name = "unqover_nli_gender_sample"
    table = lm_eval(tasks, model, name, tmp_path / "out", *extra)["results"][name]
    samples = samples_file(tmp_path / "out")
    measured = tmp_path / "measured.json"
    assert main(["measure", str(samples), "--output", str(measured)]) == 0
    return samples, measured, table


@pytest.mark.lm_eval
def test_plain_prompts_give_the_probe_s_numbers(tmp_path, capsys):
    model = tiny_models.causal_lm(tmp_path / "gpt2", TEXTS, "gpt2")
    samples, measured, table = tasks_and_samples(tmp_path, str(model))
    run = probed(str(model), tmp_path)
    assert_same(run, samples, measured, table)
    logged = json.loads(samples.read_text().splitlines()[0])
    context, continuation = logged["arguments"]["gen_args_0"].values()
    assert context.endswith("True, False or Neither?\nAnswer:") and continuation == " True"
    provenance = read_lm_eval_samples(samples)[1]
    assert provenance["selection"]["limit"] == LIMIT and provenance["selection"]["seed"] == SEED


@pytest.mark.lm_eval
def test_a_gguf_chat_model_under_the_chat_template_gives_the_probe_s_numbers(gguf_model, tmp_path):
    """lm-eval's --apply_chat_template asks what `unqover probe` asks a chat model by default (the label word
    right after the template's generation prompt)."""
    model = f"{gguf_model.parent},gguf_file={gguf_model.name}"
    samples, measured, table = tasks_and_samples(tmp_path, model, "--apply_chat_template")
    run = probed(str(gguf_model), tmp_path)
    assert_same(run, samples, measured, table)
    record = json.loads((run / "run.json").read_text())["prompt"]
    assert record["chat_template"] == "auto" and record["template_sha256"]
    logged = json.loads(samples.read_text().splitlines()[0])
    context, continuation = logged["arguments"]["gen_args_0"].values()
    assert "<|im_start|>assistant" in context and continuation == "True"
