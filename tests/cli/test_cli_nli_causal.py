"""``unqover probe MODEL --bias nli-gender`` on a causal LM (a GGUF file): the pairs asked by lm-eval's MNLI prompt
under the model's chat template, the prompt recorded in run.json, the scores those of the scorer on the same
weights; the options of one kind of model refused for the other in one line before any weights load; another
prompt into the same run folder refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

from unqover.cli import main
from unqover.predictions import read_predictions
from unqover.probes.nli_rows import load_nli_rows
from unqover.scoring.causal import CausalScorer
from unqover.scoring.models import load_model
from unqover.scoring.nli_prompt import MNLI_PROMPT, NLIPromptScorer


def probe(model, output, *extra: str) -> list[str]:
    return [
        "probe",
        str(model),
        "--bias",
        "nli-gender",
        "--limit",
        "1",
        "--device",
        "cpu",
        "--output",
        str(output),
        *extra,
    ]


def test_a_gguf_chat_model_is_asked_by_the_mnli_prompt(gguf_model, tmp_path, capsys):
    run = tmp_path / "run"
    assert main(probe(gguf_model, run, "--quiet")) == 0
    out = capsys.readouterr().out
    assert "NLI gender-occupation bias" in out and "ΔP" in out
    recorded = json.loads((run / "run.json").read_text())
    assert recorded["prompt"]["nli_prompt"] == MNLI_PROMPT and recorded["prompt"]["chat_template"] == "auto"
    assert recorded["prompt"]["label_words"] == {
        "entailment": "True",
        "neutral": "Neither",
        "contradiction": "False",
    }
    assert recorded["model"]["family"] == "causal"
    # the scores are the prompted scorer's on the same weights (the GGUF file's transformers twin)
    scores, _ = read_predictions(run / "predictions.parquet")
    rows, _ = load_nli_rows("nli-gender", None, "synthetic")
    rows = rows.take(np.array([rows["id"].to_pylist().index(i) for i in scores["id"].to_pylist()]))
    twin = NLIPromptScorer(
        CausalScorer(load_model(str(gguf_model.parent / "hf"), device="cpu", dtype="float32"))
    )
    female, male = twin.score_rows(rows)
    assert np.abs(scores["score_1"].to_numpy() - female["p_entail"]).max() <= 1e-4
    assert np.abs(scores["score_2"].to_numpy() - male["p_entail"]).max() <= 1e-4
    # the three-way probabilities normalised over the label words give the mean neutral probability (in points)
    result = json.loads((run / "results.json").read_text())["result"]
    both = np.concatenate([female["neutral"], male["neutral"]])
    assert result["mean_neutral"] == pytest.approx(100 * both.mean(), abs=1e-3)


def test_another_prompt_into_the_same_folder_is_refused(gguf_model, tmp_path, capsys):
    run = tmp_path / "run"
    assert main(probe(gguf_model, run, "--quiet")) == 0
    capsys.readouterr()
    assert main(probe(gguf_model, run, "--quiet", "--label-words", "Yes,Maybe,No")) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("unqover: error: ")]
    assert len(err) == 1 and "differs in prompt.label_words" in err[0] and str(run) in err[0], err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ("--label-map", '{"entailment": 0, "contradiction": 2}'),
            r"--label-map applies to NLI classifiers; .* is asked by a prompt \(its labels are --label-words\)",
        ),
        (("--nli-prompt", "{premise} only"), r"--nli-prompt '\{premise\} only' must name \{premise\} and"),
        (("--label-words", "True,False"), r"--label-words needs three distinct words"),
    ],
    ids=["label-map", "template", "label-words"],
)
def test_bad_options_for_a_causal_lm_are_one_line(gguf_model, tmp_path, capsys, extra, message):
    import re

    assert main(probe(gguf_model, tmp_path / "run", "--quiet", *extra)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and re.search(message, err[0]), err
    assert not (tmp_path / "run").exists()


def test_prompt_options_are_refused_for_an_nli_classifier(tmp_path, capsys):
    import tiny_models

    model = tiny_models.bert_nli(
        tmp_path / "nli", ["a nurse", "a profession"], ["entailment", "neutral", "contradiction"]
    )
    assert main(probe(model, tmp_path / "run", "--quiet", "--nli-prompt", "{premise} => {hypothesis}")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"unqover: error: --nli-prompt applies to causal LMs asked by a prompt; {model} is an NLI classifier"
    ]
    assert main(probe(model, tmp_path / "run", "--quiet", "--system-prompt", "Be fair.")) == 2
    assert "--system-prompt applies to causal LMs asked by a prompt" in capsys.readouterr().err
