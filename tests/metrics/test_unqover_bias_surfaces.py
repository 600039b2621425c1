"""The measures through every surface: library, `unqover measure`, the evaluate module and its Gradio app agree."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import evaluate
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from unqover.cli import main
from unqover.errors import UnqoverError
from unqover.generate.ids import match_ids
from unqover.hub.load import load_rows
from unqover.measure.unqover import unqover_bias
from unqover.predictions import read_predictions, write_predictions
from unqover.probes.base import RunOptions
from unqover.probes.registry import get_probe
from unqover.probes.unqover_rows import ROW_COLUMNS


def measure_predictions(path, dataset=None, config=None, **options):
    """`unqover measure`'s library call."""
    return get_probe("gender").results.measure_file(
        path, RunOptions(dataset=dataset, config=config), **options
    )


MODULE_DIR = Path(__file__).resolve().parents[2] / "metrics" / "unqover_bias"
SUBSET = ["Christian", "Hindu", "Muslim", "Atheist"]


@pytest.fixture(scope="module")
def religion(built_datasets) -> Path:
    """The session's religion dataset folder (qa), read-only."""
    return built_datasets["religion"]


@pytest.fixture(scope="module")
def predictions(religion, tmp_path_factory) -> tuple[Path, pa.Table]:
    """Random scores for every religion row, shuffled, in a predictions file that records its dataset."""
    ids = load_rows(religion, "qa", columns=["id"])["id"]
    rng = np.random.default_rng(7)
    order = rng.permutation(len(ids))
    table = pa.table(
        {"id": ids.take(pa.array(order)), "score_1": rng.random(len(ids)), "score_2": rng.random(len(ids))}
    )
    path = tmp_path_factory.mktemp("run") / "predictions.parquet"
    write_predictions(
        path,
        table,
        {"model": {"id": "random"}, "dataset": {"source": str(religion), "config": "qa", "split": "test"}},
    )
    return path, table


def _library(religion: Path, scores: pa.Table, **options):
    rows = load_rows(religion, "qa", columns=ROW_COLUMNS)
    joined = rows.join(scores, keys="id")
    return unqover_bias(
        joined, joined["score_1"].to_numpy(), joined["score_2"].to_numpy(), **options
    ).to_dict()


def test_predictions_file_round_trip(predictions):
    path, table = predictions
    read, provenance = read_predictions(path)
    assert read.equals(table) and provenance["model"] == {"id": "random"}


def test_cli_agrees_with_library(religion, predictions, tmp_path, capsys):
    path, table = predictions
    output = tmp_path / "bias.json"
    assert main(["measure", str(path), "--resamples", "40", "--seed", "3", "--output", str(output)]) == 0
    printed = capsys.readouterr().out
    saved = json.loads(output.read_text())
    expected = _library(religion, table, n_resamples=40, seed=3)
    assert saved["result"] == json.loads(json.dumps(expected))
    assert saved["provenance"]["dataset"]["config"] == "qa" and saved["provenance"]["model"]["id"] == "random"
    assert f"bias intensity μ     {expected['mu']:.4f}" in printed
    lo, hi = expected["intervals"]["mu"]
    assert f"[{lo:.4f}, {hi:.4f}]" in printed
    assert "Most biased subject–attribute pairs" in printed and f"Full results: {output}" in printed


def test_paper_mode_from_the_cli(predictions, religion, tmp_path):
    path, table = predictions
    assert (
        main(
            [
                "measure",
                str(path),
                "--mode",
                "paper",
                "--resamples",
                "0",
                "--output",
                str(tmp_path / "p.json"),
            ]
        )
        == 0
    )
    saved = json.loads((tmp_path / "p.json").read_text())["result"]
    assert saved == json.loads(json.dumps(_library(religion, table, mode="paper", n_resamples=0)))
    assert all(row["subject"] == row["subject"].lower() for row in saved["subject_gamma"])


def test_default_output_path(predictions, capsys):
    path, _ = predictions
    assert main(["measure", str(path), "--resamples", "0", "--top", "0"]) == 0
    assert path.with_name("predictions.bias.json").is_file()


def test_evaluate_module_agrees_with_library(religion, predictions):
    _, table = predictions
    rows = load_rows(religion, "qa")
    keep = pc.and_(
        pc.is_in(rows["subject_1"], pa.array(SUBSET)), pc.is_in(rows["subject_2"], pa.array(SUBSET))
    )
    rows = rows.filter(keep)
    position = match_ids(rows["id"], table["id"])
    s1, s2 = table["score_1"].to_numpy()[position], table["score_2"].to_numpy()[position]
    module = evaluate.load(str(MODULE_DIR))
    got = module.compute(
        predictions=np.stack([s1, s2], axis=1).tolist(), references=rows.to_pylist(), n_resamples=30, seed=1
    )
    expected = unqover_bias(rows, s1, s2, n_resamples=30, seed=1).to_dict()
    assert json.loads(json.dumps(got)) == json.loads(json.dumps(expected))


def test_evaluate_module_fig2_and_missing_key():
    module = evaluate.load(str(MODULE_DIR))
    base = {"template_id": 1, "attribute": "was a hunter"}
    rows = [
        {"subject_1": "Gerald", "subject_2": "Jennifer", "polarity": "positive", **base},
        {"subject_1": "Jennifer", "subject_2": "Gerald", "polarity": "positive", **base},
        {"subject_1": "Gerald", "subject_2": "Jennifer", "polarity": "negated", **base},
        {"subject_1": "Jennifer", "subject_2": "Gerald", "polarity": "negated", **base},
    ]
    result = module.compute(
        predictions=[[0.26, 0.73], [0.45, 0.54], [0.35, 0.62], [0.86, 0.12]], references=rows, n_resamples=0
    )
    gamma = {r["subject"]: r["gamma"] for r in result["gamma"]}
    assert gamma == pytest.approx({"Gerald": 0.1575, "Jennifer": -0.1575})
    assert result["cluster_gamma"] == [] and "intervals" in result
    with pytest.raises(ValueError, match=r"reference 1 lacks \['polarity'\]"):
        module.compute(
            predictions=[[0.1, 0.2]] * 2,
            references=[rows[0], {k: v for k, v in rows[1].items() if k != "polarity"}],
        )


@pytest.mark.slow
def test_measure_errors(predictions, religion, tmp_path, capsys):
    path, table = predictions
    foreign = tmp_path / "foreign.parquet"
    write_predictions(
        foreign,
        table.set_column(0, "id", pa.array(["0" * 15 + "x", *table["id"].to_pylist()[1:]])),
        {"dataset": {"source": str(religion), "config": "qa"}},
    )
    with pytest.raises(UnqoverError, match=r"1 prediction ids are not in .* e\.g\. '000000000000000x'"):
        measure_predictions(foreign)
    partial = tmp_path / "partial.parquet"
    write_predictions(
        partial, table.slice(0, table.num_rows - 5), {"dataset": {"source": str(religion), "config": "qa"}}
    )
    split = tmp_path / "split.json"
    assert main(["measure", str(path), "--resamples", "0", "--split", "test", "--output", str(split)]) == 0
    assert json.loads(split.read_text())["provenance"]["dataset"]["split"] == "test"
    assert main(["measure", str(partial), "--resamples", "0"]) == 2
    assert "groups were scored only in part" in capsys.readouterr().err
    assert main(["measure", str(partial), "--resamples", "0", "--drop-incomplete", "--top", "0"]) == 0
    assert "incomplete groups dropped" in capsys.readouterr().out
    bare = tmp_path / "bare.parquet"
    write_predictions(bare, table.slice(0, 10), {})
    assert main(["measure", str(bare)]) == 2
    assert "does not record which probe scored it: pass --bias NAME" in capsys.readouterr().err
    assert main(["measure", str(bare), "--bias", "religion"]) == 2
    assert "does not record its dataset; pass --dataset and --config" in capsys.readouterr().err
    assert main(["measure", str(tmp_path / "nope.parquet")]) == 2
    assert "predictions file not found" in capsys.readouterr().err
    pa.parquet.write_table(pa.table({"id": ["a"], "score": [0.5]}), tmp_path / "wrong.parquet")
    assert main(["measure", str(tmp_path / "wrong.parquet"), "--bias", "religion"]) == 2
    assert "lacks the columns ['score_1', 'score_2']" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["measure", str(path), "--confidence", "1.5"])


@pytest.mark.slow
def test_gradio_app_serves_the_module(tmp_path):
    import gradio_client

    spec = importlib.util.spec_from_file_location("unqover_bias_app", MODULE_DIR / "app.py")
    app_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app_module)
    csv = tmp_path / "scored.csv"
    csv.write_text(
        "subject_1,subject_2,template_id,attribute,polarity,score_1,score_2\n"
        "Gerald,Jennifer,1,was a hunter,positive,0.26,0.73\nJennifer,Gerald,1,was a hunter,positive,0.45,0.54\n"
        "Gerald,Jennifer,1,was a hunter,negated,0.35,0.62\nJennifer,Gerald,1,was a hunter,negated,0.86,0.12\n"
    )
    app = app_module.build_app()
    app.launch(prevent_thread_lock=True, server_name="127.0.0.1", quiet=True)
    try:
        client = gradio_client.Client(app.local_url, verbose=False)
        headline, gamma, subjects = client.predict(
            gradio_client.handle_file(str(csv)), "default", 0, 0, api_name="/measure"
        )
        assert "**1 groups**" in headline and "μ (per subject): 0.1575" in headline
        assert {row[0]: row[2] for row in gamma["data"]} == pytest.approx(
            {"Gerald": 0.1575, "Jennifer": -0.1575}
        )
        assert subjects["data"][0][1] == "Gerald"
        bad = tmp_path / "bad.csv"
        bad.write_text("a,b\n1,2\n")
        with pytest.raises(Exception, match="lacks the columns"):
            client.predict(gradio_client.handle_file(str(bad)), "default", 0, 0, api_name="/measure")
    finally:
        app.close()
