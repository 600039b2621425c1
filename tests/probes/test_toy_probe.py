"""A new probe is one definition module plus its registry entry: the toy probe of ``tests/helpers/toy_probe.py``, added to
the registry by the test alone, goes through ``build-datasets``, ``probe``, ``measure``, ``compare`` and the
Space's results browser without a change to any other file."""

from __future__ import annotations

import json

import numpy as np
import pytest

from toy_probe import DATASET, NAME, WORDS, ToyProbe
from unqover.cli import main
from unqover.scoring.engines import ENGINES


@pytest.fixture
def toy(monkeypatch):
    from unqover.probes import registry

    monkeypatch.setitem(registry.PROBES, NAME, ToyProbe())
    monkeypatch.setitem(ENGINES, "toy", "toy_probe:ToyEngine")  # the toy engine: one line of the registry
    return registry.PROBES[NAME]


def _lead(vowels: str, words=WORDS, scale: float = 1.0) -> float:
    share = np.array([sum(c in vowels for c in w) / len(w) for w in words])
    return float(np.mean((share - (1 - share)) * scale))


@pytest.fixture
def toy_runs(toy, tmp_path, capsys):
    """The toy dataset built by ``build-datasets`` and two runs of it (other vowel sets)."""
    assert main(["build-datasets", DATASET, "--output", str(tmp_path / "datasets"), "--quiet"]) == 0
    dataset = tmp_path / "datasets" / DATASET
    runs = []
    for name, vowels in (("a", "aeiou"), ("b", "aeiouy")):
        folder = tmp_path / "runs" / name
        argv = ["probe", f"toy:{name}", "--bias", NAME, "--dataset", str(dataset), "--output", str(folder)]
        assert main([*argv, "--toy-vowels", vowels, "--quiet"]) == 0
        runs.append(folder)
    capsys.readouterr()
    return dataset, runs


def test_the_toy_probe_is_offered_by_the_command_line(toy, capsys):
    with pytest.raises(SystemExit):
        main(["probe", "--help"])
    text = capsys.readouterr().out
    assert NAME in text and "--toy-vowels" in text
    with pytest.raises(SystemExit):
        main(["build-datasets", "--help"])
    assert DATASET in capsys.readouterr().out


def test_build_datasets_builds_the_toy_dataset(toy, tmp_path, capsys):
    from unqover.hub.load import load_rows

    assert main(["build-datasets", DATASET, "--output", str(tmp_path), "--quiet"]) == 0
    assert f"words {len(WORDS)} rows" in capsys.readouterr().out
    assert load_rows(tmp_path / DATASET, "words")["word"].to_pylist() == list(WORDS)


def test_probe_runs_the_toy_probe_with_its_own_option(toy_runs):
    _, (a, b) = toy_runs
    results = [json.loads((run / "results.json").read_text()) for run in (a, b)]
    assert results[0]["probe"] == NAME
    assert results[0]["result"]["vowel_lead"] == pytest.approx(_lead("aeiou"))
    assert results[1]["result"]["vowel_lead"] == pytest.approx(_lead("aeiouy"))
    assert (a / "report.md").read_text().startswith("# Toy probe")


def test_another_probes_option_is_refused(toy, tmp_path, capsys):
    argv = ["probe", "toy:x", "--bias", NAME, "--output", str(tmp_path / "r"), "--word-lists", str(tmp_path)]
    assert main(argv) == 2
    assert "--word-lists" in capsys.readouterr().err
    argv = ["probe", "m", "--bias", "religion", "--output", str(tmp_path / "r"), "--toy-vowels", "ae"]
    assert main(argv) == 2
    assert "--toy-vowels" in capsys.readouterr().err


def test_measure_reads_toy_predictions_with_its_measure_option(toy_runs, tmp_path, capsys):
    _, (a, _) = toy_runs
    output = tmp_path / "measured.json"
    assert main(["measure", str(a / "predictions.parquet"), "--toy-scale", "2", "--output", str(output)]) == 0
    assert f"toy vowel lead over {len(WORDS)} words" in capsys.readouterr().out
    measured = json.loads(output.read_text())
    assert measured["result"]["vowel_lead"] == pytest.approx(_lead("aeiou", scale=2.0))


def test_compare_sets_the_toy_runs_side_by_side(toy_runs, tmp_path, capsys):
    _, (a, b) = toy_runs
    output = tmp_path / "comparison.json"
    assert main(["compare", str(a), str(b), "--output", str(output)]) == 0
    assert "| vowel lead |" in capsys.readouterr().out
    shift = json.loads(output.read_text())["shifts"]["vowel lead"]["value"]
    assert shift == pytest.approx(_lead("aeiouy") - _lead("aeiou"))


def test_the_space_results_browser_shows_and_compares_toy_runs(toy_runs):
    from unqover.space import render, results

    _, (a, _) = toy_runs
    runs = results.find_runs(a.parent)
    table = results.runs_table(runs)
    assert "vowel lead" in results.columns()
    row = table.set_index("run").loc["a"]
    assert row["probe"] == NAME and row["vowel lead"] == pytest.approx(_lead("aeiou"))
    headline, _, _ = render.view(runs["a"])
    assert headline.startswith("# Toy probe")
    assert "| vowel lead |" in results.comparison(runs, "a", "b", folder=a.parent)
