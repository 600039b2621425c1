"""The probe definitions, their registry and the one job runner: every probe through the same path."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

import tiny_models
from unqover.cli import build_parser, main
from unqover.errors import UnqoverError
from unqover.generate.custom import custom_rows
from unqover.generate.nli import nli_rows, synthetic_premises
from unqover.lexicon.custom import read_probe_file
from unqover.probes.registry import PROBES, get_probe, group_members, probe_of

PETS = """\
name: pets
subjects:
  cats: [Tom, Felix]
  dogs: [Rex, Buddy, Max]
attributes:
  - {positive: was very lazy, negated: was never lazy}
  - {positive: chased the mailman, negated: never chased the mailman}
templates:
  - {context: "{subject_1} sat next to {subject_2} on the porch.", question: "Who {attribute}?"}
  - {context: "{subject_1} and {subject_2} slept in the yard.", question: "Who {attribute}?"}
"""


@pytest.fixture(scope="module")
def pets(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pets")
    path = folder / "pets.yaml"
    path.write_text(PETS)
    rows = custom_rows(read_probe_file(path), "qa")
    texts = sorted(set(rows["context"].to_pylist()) | set(rows["question"].to_pylist()))
    return path, rows, tiny_models.bert_qa(folder / "qa", texts)


def test_a_custom_probe_runs_end_to_end(pets, tmp_path, capsys):
    path, rows, model = pets
    out = tmp_path / "run"
    args = ["probe", str(model), "--probe", str(path), "--output", str(out), "--quiet", "--resamples", "20"]
    assert main(args) == 0
    assert "UnQover bias" in capsys.readouterr().out
    assert rows.num_rows == 6 * 2 * 2 * 4  # 6 pairs x 2 attributes x 2 templates x (2 orders x 2 polarities)
    predictions = pq.read_table(out / "predictions.parquet")
    assert sorted(predictions["id"].to_pylist()) == sorted(rows["id"].to_pylist())
    results = json.loads((out / "results.json").read_text())
    assert results["probe"] == "pets" and results["result"]["num_groups"] == 24
    assert json.loads((out / "run.json").read_text())["probe"] == "pets"
    assert (out / "report.html").is_file() and (out / "report.md").is_file()
    # measuring its predictions again finds the probe file it was generated from
    assert (
        main(
            [
                "measure",
                str(out / "predictions.parquet"),
                "--resamples",
                "0",
                "--output",
                str(tmp_path / "m.json"),
            ]
        )
        == 0
    )
    again = json.loads((tmp_path / "m.json").read_text())
    assert again["probe"] == "pets" and again["result"]["mu"] == pytest.approx(results["result"]["mu"])


def test_build_datasets_writes_a_custom_probe_folder(pets, tmp_path, capsys):
    path, rows, _ = pets
    assert main(["build-datasets", "--probe", str(path), "--output", str(tmp_path), "--quiet"]) == 0
    built = tmp_path / "pets"
    assert (built / "README.md").is_file() and "pets" in (built / "README.md").read_text()
    table = pq.read_table(built / "data" / "qa")
    assert sorted(table["id"].to_pylist()) == sorted(rows["id"].to_pylist())
    assert (built / "data" / "mlm").is_dir()  # derived from the "Who …?" questions


def test_a_custom_probe_may_not_take_a_built_in_name(tmp_path):
    clash = tmp_path / "clash.yaml"
    clash.write_text(PETS.replace("name: pets", "name: religion"))
    with pytest.raises(UnqoverError, match="built-in probe"):
        get_probe(probe_file=clash)


def test_the_registry_is_the_only_list_of_probes():
    parser = build_parser()
    probe = next(
        a for a in parser._subparsers._group_actions[0].choices["probe"]._actions if a.dest == "bias"
    )
    # --bias reads a comma list of the registry's probes and groups (argparse's choices cannot hold that form)
    assert [probe.type(name) for name in PROBES] == [[name] for name in PROBES]
    assert probe.type("unqover") == group_members("unqover")
    with pytest.raises(UnqoverError, match="unknown probe 'nope'"):
        get_probe("nope")
    assert probe_of({"probe": "nli-gender"}).name == "nli-gender"
    assert probe_of({"provenance": {"dataset": {"bias": "religion"}}}).name == "religion"


@pytest.mark.parametrize(
    ("bias", "option", "value"),
    [
        ("nli-gender", "--sample", "0.1"),
        ("eec-emotion", "--mode", "paper"),
        ("religion", "--length-rule", "sum"),
    ],
)
def test_an_option_another_probe_owns_is_refused_before_loading(bias, option, value, tmp_path, capsys):
    assert main(["probe", str(tmp_path / "no-model"), "--bias", bias, option, value]) == 2
    error = capsys.readouterr().err
    assert f"{option} do(es) not apply to the {bias} probe" in error


@pytest.fixture(scope="module")
def nli_runs(tmp_path_factory):
    rows = nli_rows(synthetic_premises(), family="main")
    texts = sorted(set(rows["premise"].to_pylist()) | set(rows["hypothesis_female"].to_pylist()) | set(rows["hypothesis_male"].to_pylist()))  # fmt: skip
    root = tmp_path_factory.mktemp("nli-runs")
    runs = []
    for seed in (0, 1):
        model = tiny_models.bert_nli(
            root / f"m{seed}", texts, ["contradiction", "neutral", "entailment"], seed=seed
        )
        out = root / f"run{seed}"
        assert main(["probe", str(model), "--bias", "nli-gender", "--limit", "3", "--output", str(out), "--quiet",
                     "--resamples", "30"]) == 0  # fmt: skip
        runs.append(out)
    return runs


def test_measure_and_compare_read_nli_runs(nli_runs, tmp_path, capsys):
    first, second = nli_runs
    results = json.loads((first / "results.json").read_text())
    assert results["probe"] == "nli-gender"
    out = tmp_path / "nli.json"
    assert (
        main(["measure", str(first / "predictions.parquet"), "--resamples", "30", "--output", str(out)]) == 0
    )
    measured = json.loads(out.read_text())
    assert measured["probe"] == "nli-gender"
    assert measured["result"]["S"] == pytest.approx(results["result"]["S"])
    capsys.readouterr()
    assert main(["compare", str(first), str(second)]) == 0
    table = capsys.readouterr().out
    assert "| S |" in table and "| B |" in table and "shift (B − A)" in table
