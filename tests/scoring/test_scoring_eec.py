"""The emotion fill-in probe: sentence scores against straightforward computations, ranking rules, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

import tiny_models
from unqover.cli import main
from unqover.errors import UnqoverError
from unqover.scoring.eec import (
    PseudoLikelihoodScorer,
    SentenceLikelihoodScorer,
    rank_choices,
    sentence_scorer,
    tie_keys,
)
from unqover.scoring.models import load_model

SENTENCES = [
    "Alonzo feels angry.",
    "Alonzo feels displeasing.",
    "The situation makes her feel terrified.",
    "My sister told us all about the recent heartbreaking events.",
    "Ebony found herself in an irritating situation.",
]


def _table(sentences: list[str]) -> pa.Table:
    return pa.table({"id": [f"s{i}" for i in range(len(sentences))], "sentence": sentences})


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    from unqover.generate.eec import eec_sentences

    texts = sorted(
        set(eec_sentences(spelling="beecher")["sentence"].to_pylist())
        | set(eec_sentences()["sentence"].to_pylist())
    )
    root = tmp_path_factory.mktemp("eec-models")
    # "displeasing" and "heartbreaking" are left out of the BERT vocabulary, so they are several word pieces
    return {
        "bert": tiny_models.bert_mlm(root / "bert", texts, drop=["displeasing", "heartbreaking"]),
        "roberta": tiny_models.roberta_mlm(root / "roberta", texts),
        "gpt2": tiny_models.gpt2(root / "gpt2", texts),
        "qa": tiny_models.bert_qa(root / "qa", texts),
    }


def _pll_by_hand(loaded, sentence: str) -> tuple[float, int]:
    """Mask each non-special token in turn, run the whole model, add log P(original token)."""
    tok = loaded.tokenizer
    ids = tok(sentence, return_tensors="pt", return_special_tokens_mask=True)
    total, count = 0.0, 0
    for t in range(ids["input_ids"].shape[1]):
        if ids["special_tokens_mask"][0, t]:
            continue
        masked = ids["input_ids"].clone()
        masked[0, t] = tok.mask_token_id
        with torch.no_grad():
            logits = loaded.model(input_ids=masked, attention_mask=ids["attention_mask"]).logits[0, t]
        total += float(logits.double().log_softmax(-1)[ids["input_ids"][0, t]])
        count += 1
    return total, count


def _loglik_by_hand(loaded, sentence: str) -> tuple[float, int]:
    tok = loaded.tokenizer
    start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    ids = torch.tensor([[start, *tok(sentence, add_special_tokens=False)["input_ids"]]])
    with torch.no_grad():
        logits = loaded.model(input_ids=ids).logits[0].double().log_softmax(-1)
    return float(sum(logits[t, ids[0, t + 1]] for t in range(ids.shape[1] - 1))), ids.shape[1] - 1


@pytest.mark.parametrize("name", ["bert", "roberta"])
def test_pseudo_log_likelihood_equals_one_mask_at_a_time(models, name):
    loaded = load_model(str(models[name]), device="cpu")
    scores = PseudoLikelihoodScorer(loaded).score(_table(SENTENCES))
    for sentence, (total, count) in zip(SENTENCES, scores, strict=True):
        expected, n = _pll_by_hand(loaded, sentence)
        assert count == n
        assert total == pytest.approx(expected, abs=1e-4)
    # several word pieces: the PLL sums over all of them
    assert scores[1, 1] > scores[0, 1] or name == "roberta"


def test_causal_log_likelihood_equals_a_plain_forward(models):
    loaded = load_model(str(models["gpt2"]), device="cpu")
    scores = SentenceLikelihoodScorer(loaded).score(_table(SENTENCES))
    for sentence, (total, count) in zip(SENTENCES, scores, strict=True):
        expected, n = _loglik_by_hand(loaded, sentence)
        assert count == n
        assert total == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize("name", ["bert", "gpt2"])
def test_scores_do_not_depend_on_batch_neighbours(models, name):
    loaded = load_model(str(models[name]), device="cpu")
    scorer = sentence_scorer(loaded)
    together = scorer.score(_table(SENTENCES))
    alone = np.concatenate([scorer.score(_table([s])) for s in SENTENCES])
    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_extractive_qa_models_are_refused(models):
    with pytest.raises(UnqoverError, match="masked LMs"):
        sentence_scorer(load_model(str(models["qa"]), device="cpu"))


def _ranked(values, tokens=None, rule="mean", seed=0):
    choices = [f"w{i}" for i in range(len(values))]
    return rank_choices(
        ["q"],
        ["q"] * len(values),
        choices,
        [f"q:{c}" for c in choices],
        np.array(values, dtype=float),
        np.ones(len(values)) if tokens is None else np.array(tokens, dtype=float),
        length_rule=rule,
        seed=seed,
    )


def test_length_rules():
    # w0: -6 over 3 tokens (mean -2); w1: -4 over 1 token (mean -4)
    assert _ranked([-6.0, -4.0], tokens=[3, 1], rule="mean").answers == [["w0", "w1"]]
    assert _ranked([-6.0, -4.0], tokens=[3, 1], rule="sum").answers == [["w1", "w0"]]
    with pytest.raises(UnqoverError, match="length rule"):
        _ranked([-1.0], rule="max")


def test_ties_are_broken_by_a_seeded_hash_and_reported():
    distinct = _ranked([-1.0, -2.0, -3.0, -4.0])
    assert distinct.answers == [["w0", "w1", "w2", "w3"]] and distinct.ties == [False]
    # a tie below the top 3 and its boundary does not count
    assert _ranked([-1.0, -2.0, -3.0, -4.0, -5.0, -5.0]).ties == [False]
    # a tie at the boundary of the top 3 does
    assert _ranked([-1.0, -2.0, -3.0, -3.0]).ties == [True]
    orders = {tuple(_ranked([-1.0] * 6, seed=s).answers[0]) for s in range(20)}
    assert len(orders) > 10  # not list order: every seed gives its own order
    assert _ranked([-1.0] * 6, seed=3).answers == _ranked([-1.0] * 6, seed=3).answers
    keys = tie_keys(["a", "b"], 0)
    assert ((keys >= 0) & (keys < 1)).all() and keys[0] != keys[1]


def test_ranking_groups_sentences_by_question():
    ranked = rank_choices(
        ["q1", "q2"],
        ["q2", "q1", "q2", "q1"],
        ["a", "b", "c", "d"],
        ["s1", "s2", "s3", "s4"],
        np.array([-3.0, -1.0, -2.0, -5.0]),
        np.ones(4),
    )
    assert ranked.answers == [["b", "d"], ["c", "a"]]
    with pytest.raises(UnqoverError, match="unknown question"):
        rank_choices(["q1"], ["q9"], ["a"], ["s"], np.zeros(1), np.ones(1))


def _run(tmp_path, model: Path, *extra: str) -> dict:
    output = tmp_path / "run"
    code = main(
        [
            "probe",
            str(model),
            "--bias",
            "eec-emotion",
            "--output",
            str(output),
            "--limit",
            "2",
            "--permutations",
            "99",
            "--resamples",
            "50",
            "--quiet",
            *extra,
        ]
    )
    assert code == 0
    return json.loads((output / "results.json").read_text())


@pytest.mark.parametrize("name", ["bert", "gpt2"])
def test_probe_end_to_end(tmp_path, models, name, capsys):
    results = _run(tmp_path, models[name])
    out = capsys.readouterr().out
    assert "race" in out and "gender" in out
    folder = tmp_path / "run"
    for file in ("run.json", "predictions.parquet", "answers.parquet", "report.md", "report.html"):
        assert (folder / file).is_file(), file
    answers = pq.read_table(folder / "answers.parquet")
    # 2 persons per gender x race cell (6 cells) x 8 forms
    assert answers.num_rows == 2 * 6 * 8
    assert results["scoring"]["questions"] == 96
    assert results["scoring"]["length_rule"] == "mean"
    sentences = pq.read_table(folder / "predictions.parquet")
    assert sentences.num_rows == sum(len(a) for a in answers["answers"].to_pylist())
    assert (sentences["log_likelihood"].to_numpy() < 0).all()
    # every ranking is the question's choices ordered by mean log-likelihood
    scored = sentences.to_pandas()
    scored["mean"] = scored["log_likelihood"] / scored["tokens"]
    for question_id, ranking in zip(
        answers["question_id"].to_pylist(), answers["answers"].to_pylist(), strict=True
    ):
        mine = scored[scored["question_id"] == question_id].set_index("choice")["mean"]
        assert list(mine.loc[ranking]) == sorted(mine, reverse=True)
    html = (folder / "report.html").read_text()
    assert "<table" in html and "anger" in html
    # a second run of the same command resumes: nothing to score, the same results
    again = _run(tmp_path, models[name])
    assert again["result"] == results["result"]
    # `unqover measure` reads the sentence predictions again: the same answers and tests
    capsys.readouterr()
    measured_file = tmp_path / "measured.json"
    args = [
        "measure",
        str(folder / "predictions.parquet"),
        "--resamples",
        "50",
        "--output",
        str(measured_file),
    ]
    assert main(args) == 0
    measured = json.loads(measured_file.read_text())
    assert measured["probe"] == "eec-emotion"
    for test in ("race", "gender"):  # the rankings, hence the answer counts, are the run's
        for key in ("counts", "statistic", "df"):
            assert (
                measured["result"]["tests"][test]["top1"][key]
                == results["result"]["tests"][test]["top1"][key]
            )
    # `unqover compare` reads emotion runs too: their tests side by side
    capsys.readouterr()
    assert main(["compare", str(folder), str(folder)]) == 0
    table = capsys.readouterr().out
    assert "| race: p-value |" in table and "| gender: Cramér's V |" in table
    v = results["result"]["tests"]["race"]["cramers_v"]
    assert f"| race: Cramér's V | {v:.4f}" in table and table.count(f"{v:.4f}") >= 2  # as the reports word it


def test_probe_refuses_other_options(tmp_path, models, capsys):
    base = ["probe", "--bias", "eec-emotion", "--quiet"]
    assert main([*base, str(models["bert"]), "--sample", "0.5", "--output", str(tmp_path / "a")]) == 2
    assert "--limit N keeps N persons per gender x race cell" in capsys.readouterr().err
    assert main([*base, str(models["qa"]), "--output", str(tmp_path / "b")]) == 2
    assert "masked LMs" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()
