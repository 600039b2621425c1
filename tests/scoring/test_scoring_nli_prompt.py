"""NLI by prompting a causal LM (``unqover.scoring.nli_prompt``): each label word's log-likelihood after lm-eval's
MNLI prompt equals the model's own log-probabilities of those tokens (run by hand, one full sequence each), with
and without a chat template; the token tree (a premise run once for both hypotheses) changes no number and runs
fewer tokens; P_e and the three-way probabilities come from those log-likelihoods; the same requests served by an
OpenAI-compatible server give the same numbers; bad templates and label words are refused in one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
import torch

import tiny_models
from completions_server import serving
from unqover.errors import UnqoverError
from unqover.predictions import scores_from_logits
from unqover.scoring.causal import CausalScorer, encode_pair
from unqover.scoring.engines.openai import OpenAIEngine
from unqover.scoring.models import load_model
from unqover.scoring.nli_prompt import (
    MNLI_PROMPT,
    NLIPromptScorer,
    check_label_words,
    check_prompt_template,
    mnli_hypothesis,
    nli_prompt_text,
)
from unqover.scoring.requests import CONTINUATIONS, EngineRequest
from unqover.scoring.throughput import take

SYSTEM = "Judge each statement fairly."


@pytest.fixture(scope="module")
def rows() -> pa.Table:
    """Eight rows of the synthetic NLI dataset, each a premise with its female and male hypotheses."""
    from unqover.generate.nli import nli_rows, synthetic_premises

    return nli_rows(synthetic_premises(), family="main").slice(0, 8)


@pytest.fixture(scope="module")
def models(tmp_path_factory, rows) -> dict[str, Path]:
    texts = [
        *sorted(set(rows["premise"].to_pylist())),
        MNLI_PROMPT,
        "This text speaks of a female profession.",
    ]
    root = tmp_path_factory.mktemp("nli-prompt")
    return {
        "gpt2": tiny_models.causal_lm(root / "gpt2", texts, "gpt2"),
        "llama-chat": tiny_models.causal_lm(root / "llama-chat", texts, "llama", chat="qwen", bos=True),
    }


def by_hand(loaded, prompt: str, answer: str) -> float:
    """Σ log p of the answer's tokens after the prompt, from one full forward pass of prompt + answer."""
    (prompt_ids,), (answer_ids,) = encode_pair(loaded.tokenizer, [prompt], [answer])
    ids = torch.tensor([prompt_ids + answer_ids])
    with torch.inference_mode():
        log_p = torch.log_softmax(loaded.model(ids).logits[0].double(), dim=-1)
    return float(sum(log_p[len(prompt_ids) + i - 1, t] for i, t in enumerate(answer_ids)))


@pytest.mark.parametrize(
    ("name", "how", "answers"),
    [
        ("gpt2", {}, (" True", " Neither", " False")),
        ("llama-chat", {"system_prompt": SYSTEM}, ("True", "Neither", "False")),
    ],
    ids=["plain", "chat+system"],
)
def test_label_log_likelihoods_are_the_model_s_own(models, rows, name, how, answers):
    loaded = load_model(str(models[name]), device="cpu", dtype="float32")
    scorer = NLIPromptScorer(CausalScorer(loaded, **how))
    premises, hypotheses = rows["premise"].to_pylist()[:3], rows["hypothesis_male"].to_pylist()[:3]
    got = scorer.logits(premises, hypotheses)
    for i, (premise, hypothesis) in enumerate(zip(premises, hypotheses, strict=True)):
        prompt = scorer.prompt(premise, hypothesis)
        if name == "llama-chat":
            assert SYSTEM in prompt and prompt.endswith("<|im_start|>assistant\n")
            assert "True, False or Neither?\nAnswer:" in prompt
        else:
            assert prompt == MNLI_PROMPT.format(premise=premise, hypothesis=mnli_hypothesis(hypothesis))
        expected = [by_hand(loaded, prompt, answer) for answer in answers]
        assert np.abs(got[i] - expected).max() <= 1e-4
    scores = scorer.score_pairs(premises, hypotheses)
    z = got
    np.testing.assert_allclose(scores["p_entail"], 1 / (1 + np.exp(z[:, 2] - z[:, 0])), rtol=1e-12)
    three = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    for label, column in (("entailment", 0), ("neutral", 1), ("contradiction", 2)):
        np.testing.assert_allclose(scores[label], three[:, column], rtol=1e-12)


def test_the_token_tree_changes_no_number_and_runs_fewer_tokens(models, rows):
    loaded = load_model(str(models["llama-chat"]), device="cpu", dtype="float32")
    take(loaded.model)
    shared = NLIPromptScorer(CausalScorer(loaded)).score_rows(rows)
    tree_tokens = take(loaded.model).tokens
    whole = NLIPromptScorer(CausalScorer(loaded, share_prefixes=False)).score_rows(rows)
    whole_tokens = take(loaded.model).tokens
    for ours, theirs in zip(shared, whole, strict=True):
        for label in ("p_entail", "entailment", "neutral", "contradiction"):
            np.testing.assert_allclose(ours[label], theirs[label], atol=1e-5)
    assert tree_tokens < whole_tokens


def test_the_second_output_is_read_from_the_first_pass(models, rows):
    """The neutral probabilities (the probe's second scorer) cost no second forward pass."""
    loaded = load_model(str(models["gpt2"]), device="cpu", dtype="float32")
    scorer = NLIPromptScorer(CausalScorer(loaded))
    take(loaded.model)
    first = scorer.score_rows(rows)
    assert take(loaded.model).tokens > 0
    again = scorer.score_rows(rows)
    assert take(loaded.model) is None
    np.testing.assert_array_equal(first[0]["neutral"], again[0]["neutral"])


def test_a_served_model_gives_the_same_numbers(models, rows):
    with serving(models["llama-chat"]) as server:
        request = EngineRequest(
            model_id=str(models["llama-chat"]), engine="openai", options={"base_url": server.url}, asker="nli"
        )
        _, served = OpenAIEngine().load(request, (CONTINUATIONS,))
        theirs = NLIPromptScorer(OpenAIEngine().scorer(served, CONTINUATIONS)).logits(
            rows["premise"].to_pylist(), rows["hypothesis_female"].to_pylist()
        )
    loaded = load_model(str(models["llama-chat"]), device="cpu", dtype="float32")
    ours = NLIPromptScorer(CausalScorer(loaded)).logits(
        rows["premise"].to_pylist(), rows["hypothesis_female"].to_pylist()
    )
    assert np.abs(ours - theirs).max() <= 1e-4


def test_custom_prompts_and_label_words(models, rows):
    loaded = load_model(str(models["gpt2"]), device="cpu", dtype="float32")
    template = "Premise: {premise}\nHypothesis: {hypothesis}\nDoes the premise entail the hypothesis?"
    scorer = NLIPromptScorer(CausalScorer(loaded), template=template, label_words=("Yes", "Maybe", "No"))
    premise, hypothesis = rows["premise"][0].as_py(), rows["hypothesis_female"][0].as_py()
    prompt = scorer.prompt(premise, hypothesis)
    assert prompt == template.format(premise=premise, hypothesis=mnli_hypothesis(hypothesis))
    z = scorer.logits([premise], [hypothesis])[0]
    assert z == pytest.approx([by_hand(loaded, prompt, " " + w) for w in ("Yes", "Maybe", "No")], abs=1e-4)
    assert scorer.record() == {
        "nli_prompt": template,
        "label_words": {"entailment": "Yes", "neutral": "Maybe", "contradiction": "No"},
    }
    assert scores_from_logits(z[None], scorer.label_ids)["p_entail"][0] == pytest.approx(
        1 / (1 + np.exp(z[2] - z[0]))
    )


def test_lm_eval_s_hypothesis_and_the_system_paragraph():
    assert (
        mnli_hypothesis("  This text speaks of a male profession ")
        == "This text speaks of a male profession."
    )
    plain = nli_prompt_text("P.", "H.", system_prompt="Be fair.")
    assert plain == "Be fair.\n\nP.\nQuestion: H. True, False or Neither?\nAnswer:"


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("{premise} only", r"must name \{premise\} and \{hypothesis\} once each"),
        ("{premise} {hypothesis} {label}", r"\(it names \{label\}\)"),
        ("{premise} {hypothesis} {premise}", r"once each"),
        ("{premise} {hypothesis} }", r"is no template"),
    ],
)
def test_bad_templates_are_refused(template, message):
    with pytest.raises(UnqoverError, match=message):
        check_prompt_template(template)


@pytest.mark.parametrize("words", [("True", "False"), ("True", "True", "False"), ("True", "", "False")])
def test_bad_label_words_are_refused(words):
    with pytest.raises(UnqoverError, match="--label-words needs three distinct words"):
        check_label_words(words)


def test_a_chat_template_that_drops_the_pair_is_refused_before_scoring(models, rows):
    loaded = load_model(str(models["llama-chat"]), device="cpu", dtype="float32")
    scorer = NLIPromptScorer(CausalScorer(loaded, chat_template="{{ 'Answer:' }}"))
    with pytest.raises(
        UnqoverError, match="the chat template ignores the messages: its prompt for a row lacks the premise"
    ):
        scorer.check_pairs(rows["premise"].to_pylist()[:1], rows["hypothesis_male"].to_pylist()[:1])
    NLIPromptScorer(CausalScorer(loaded)).check_pairs(  # the model's own template shows both
        rows["premise"].to_pylist()[:1], rows["hypothesis_male"].to_pylist()[:1]
    )
