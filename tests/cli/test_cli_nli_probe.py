"""`unqover probe MODEL --bias nli-gender` end to end on a tiny local NLI model (synthetic premises, offline)."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

import tiny_models
from unqover.cli import main
from unqover.generate.nli import nli_rows, synthetic_premises
from unqover.measure.nli import nli_gender_bias
from unqover.scoring.nli import NLIScorer, load_nli_model


@pytest.fixture(scope="module")
def nli_model(tmp_path_factory):
    rows = nli_rows(synthetic_premises(), family="main")
    texts = sorted(
        set(rows["premise"].to_pylist())
        | set(rows["hypothesis_female"].to_pylist())
        | set(rows["hypothesis_male"].to_pylist())
    )
    folder = tmp_path_factory.mktemp("nli") / "tiny-nli"
    return tiny_models.bert_nli(folder, texts, ["contradiction", "neutral", "entailment"]), rows


@pytest.mark.slow
def test_nli_probe_end_to_end(nli_model, tmp_path, capsys):
    model, rows = nli_model
    out = tmp_path / "run"
    assert (
        main(
            [
                "probe",
                str(model),
                "--bias",
                "nli-gender",
                "--output",
                str(out),
                "--quiet",
                "--resamples",
                "50",
                "--batch-size",
                "64",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert (
        f"NLI gender-occupation bias: {rows.num_rows:,} instances" in printed
        and "by occupation gender" in printed
    )
    assert {p.name for p in out.iterdir()} >= {
        "run.json",
        "predictions.parquet",
        "results.json",
        "report.md",
        "report.html",
        "neutral",
    }
    predictions = pq.read_table(out / "predictions.parquet")
    assert predictions["id"].to_pylist() == rows["id"].to_pylist()
    # the stored scores are P_e of the female (score_1) and male (score_2) hypotheses, straight from the scorer
    scorer = NLIScorer(load_nli_model(str(model)))
    sample = rows.slice(0, 20)
    expected = scorer.score_pairs(sample["premise"].to_pylist(), sample["hypothesis_female"].to_pylist())[
        "p_entail"
    ]
    assert np.abs(predictions["score_1"].to_numpy()[:20] - expected).max() < 1e-6
    results = json.loads((out / "results.json").read_text())
    assert results["provenance"]["labels"] == {"contradiction": 0, "neutral": 1, "entailment": 2}
    direct = nli_gender_bias(
        predictions["score_1"].to_numpy(), predictions["score_2"].to_numpy(), rows["occupation_gender"].to_pylist(),
        rows["cluster"].to_pylist(), occupation=rows["occupation"].to_pylist(), template_id=rows["template_id"].to_pylist(),
        n_resamples=0,
    )  # fmt: skip
    assert results["result"]["B"] == pytest.approx(direct.B) and results["result"][
        "delta_P"
    ] == pytest.approx(direct.delta_P)
    assert results["result"]["neutral_rate"] is not None
    page = (out / "report.html").read_text()
    assert "<table>" in page and "<svg" in page  # tables and the occupation chart
    assert 'src="http' not in page and 'href="http' not in page  # self-contained
    assert (
        "| by occupation" not in (out / "report.md").read_text()
        and "| occupation | label |" in (out / "report.md").read_text()
    )


def test_nli_probe_errors(nli_model, tmp_path, capsys):
    model, _ = nli_model
    assert main(["probe", str(model), "--bias", "nli-gender", "--sample", "0.5", "--quiet"]) == 2
    assert "--sample do(es) not apply to the nli-gender probe" in capsys.readouterr().err
    generic = tiny_models.bert_nli(tmp_path / "generic", ["a b"], ["LABEL_0", "LABEL_1", "LABEL_2"])
    assert (
        main(["probe", str(generic), "--bias", "nli-gender", "--output", str(tmp_path / "r"), "--quiet"]) == 2
    )
    assert "LABEL" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["probe", str(generic), "--bias", "nli-gender", "--label-map", "not json"])


@pytest.mark.slow
def test_label_map_makes_generic_models_usable(nli_model, tmp_path):
    _, rows = nli_model
    texts = [
        *rows["premise"].to_pylist()[:50],
        *rows["hypothesis_female"].to_pylist()[:3],
        *rows["hypothesis_male"].to_pylist()[:3],
    ]
    generic = tiny_models.bert_nli(tmp_path / "generic", texts, ["LABEL_0", "LABEL_1", "LABEL_2"])
    label_map = '{"entailment": 0, "neutral": 1, "contradiction": 2}'
    out = tmp_path / "run"
    assert (
        main(
            [
                "probe",
                str(generic),
                "--bias",
                "nli-gender",
                "--label-map",
                label_map,
                "--output",
                str(out),
                "--quiet",
                "--resamples",
                "0",
            ]
        )
        == 0
    )
    provenance = json.loads((out / "results.json").read_text())["provenance"]
    assert provenance["labels"] == {"entailment": 0, "neutral": 1, "contradiction": 2}
    assert provenance["model"]["label_source"] == "label_map"


def test_compare_refuses_nli_results(tmp_path, capsys):
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"provenance": {}, "result": {"S": 50.0, "B": 60.0}}))
    assert main(["compare", str(results), str(results)]) == 2
    assert "not an UnQover probe result" in capsys.readouterr().err
