"""A run's plan before it is scored: ``unqover probe ... --plan-only`` (rows, inputs and the tokens of the token
tree, from the tokenizer alone) counts the tokens the run then runs, and a run says its plan before it starts;
``--shards`` refused without ``--ray``, and with what a run split into shard tasks cannot be."""

from __future__ import annotations

import json
import re

import pytest

from unqover.cli import main


@pytest.fixture(scope="module")
def causal_model(tmp_path_factory, religion_tables):
    import tiny_models

    rows = religion_tables["qa"]
    texts = sorted(set(rows["context"].to_pylist()) | set(rows["question"].to_pylist()))
    return tiny_models.gpt2(tmp_path_factory.mktemp("plan-models") / "gpt2", texts)


def _argv(model, word_lists, *extra) -> list[str]:
    return [
        *("probe", str(model), "--bias", "religion", "--word-lists", str(word_lists), "--limit", "100"),
        *("--seed", "1", "--device", "cpu", "--batch-size", "16", *extra),
    ]


def test_shards_without_ray_is_refused_in_one_line(causal_model, upstream_word_lists_path, tmp_path, capsys):
    assert (
        main(_argv(causal_model, upstream_word_lists_path, "--shards", "2", "--output", str(tmp_path))) == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("unqover: error: --shards splits a run into tasks on a Ray cluster: add --ray")
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (("--shard", "0/2"), "--shard I/N scores one shard here"),
        (("--precision", "0.5"), "--precision runs its rounds in one process"),
    ],
)
def test_what_a_run_in_shard_tasks_cannot_be_is_refused_before_the_cluster(
    causal_model, upstream_word_lists_path, tmp_path, capsys, extra, said
):
    argv = _argv(causal_model, upstream_word_lists_path, "--ray", "127.0.0.1:9", "--shards", "2", *extra)
    assert main([*argv, "--output", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"unqover: error: {said}") and err.count("\n") == 1
    assert not (tmp_path / "run").exists()


PLAN = re.compile(
    r"(\d[\d,]*) rows, (\d[\d,]*) model inputs, (\d[\d,]*) tokens with the token tree \([\d.]+ per row; counted on "
    r"every batch of 16 inputs\)"
)


@pytest.mark.slow
def test_the_plan_counts_the_tokens_the_run_runs(causal_model, upstream_word_lists_path, tmp_path, capsys):
    assert main(_argv(causal_model, upstream_word_lists_path, "--plan-only")) == 0
    printed = capsys.readouterr().out
    planned = PLAN.search(printed)
    assert planned and printed.startswith(f"Plan of religion on {causal_model}: "), printed
    assert not (tmp_path / "run").exists()

    run = tmp_path / "run"
    assert main(_argv(causal_model, upstream_word_lists_path, "--output", str(run))) == 0
    said = [
        line for line in capsys.readouterr().err.splitlines() if line.startswith("unqover: the run's plan: ")
    ]
    assert len(said) == 1 and PLAN.search(said[0]).groups() == planned.groups()  # said before it starts
    record = json.loads((run / "results.json").read_text())["provenance"]["throughput"]
    assert f"{record['tokens']:,}" == planned[3]  # the tokens the engine counted running the run
    assert planned[1] == "400"

    assert main(_argv(causal_model, upstream_word_lists_path, "--output", str(run), "--plan-only")) == 0
    rate = record["tokens_per_second"]
    assert (
        f"at the {round(rate):,} tokens/s measured here" in capsys.readouterr().out
    )  # an earlier run's rate
