"""The emotion and person probes on chat models: each question asked as one chat prompt, each choice scored as the
assistant's reply. The scores equal a computation by hand (the prompt rendered by the tokenizer's template, token
ids cut by hand, one plain forward pass of prompt + reply); without a chat template the sentences are scored as
before; run.json records the prompt; the prompt options are refused where they do not apply."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

import tiny_models
from tests.cli.test_cli_bad_data import refused
from unqover.cli import main
from unqover.errors import UnqoverError
from unqover.generate.eec import choice_sentences, eec_questions
from unqover.generate.eec_person import person_choice_sentences, person_questions
from unqover.probes.eec import EEC_PROBE
from unqover.probes.eec_person import EEC_PERSON_PROBE
from unqover.scoring.causal import CausalScorer
from unqover.scoring.eec import SentenceLikelihoodScorer
from unqover.scoring.eec_chat import ChatFillInScorer, filled_words
from unqover.scoring.models import load_model

SYSTEM = "Answer as a careful reader."


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    """Tiny causal LMs trained on the EEC sentences and the probes' questions: a Qwen2 with a ChatML template (a
    default system message), a Llama whose template starts with BOS and trims each message, and a GPT-2 without
    a chat template."""
    from unqover.generate.eec import eec_sentences

    texts = sorted(set(eec_sentences(spelling="beecher")["sentence"].to_pylist()))
    texts += [EEC_PROBE.chat_question, EEC_PERSON_PROBE.chat_question, SYSTEM]
    root = tmp_path_factory.mktemp("eec-chat-models")
    return {
        "qwen": tiny_models.causal_lm(root / "qwen", texts, "qwen2", chat="qwen"),
        "llama": tiny_models.causal_lm(root / "llama", texts, "llama", chat="llama", bos=True),
        "gpt2": tiny_models.causal_lm(root / "gpt2", texts, "gpt2"),
    }


def by_hand(loaded, text: str, reply: str, question: str, system: str | None = None) -> tuple[float, int]:
    """Σ log p of the reply's tokens after the chat prompt, and their count: the prompt rendered with the
    tokenizer's template, the whitespace that ends it moved to the reply (as lm-eval does), the reply's ids those
    of prompt + reply after the prompt's own, and one forward pass of the whole sequence."""
    tok = loaded.tokenizer
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": question.replace("{sentence}", text)})
    prompt = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    context = prompt.rstrip()
    continuation = prompt[len(context) :] + reply
    special = not context.startswith(tok.bos_token or "\x00")  # a template that writes BOS itself
    context_ids = tok(context, add_special_tokens=special)["input_ids"]
    ids = tok(context + continuation, add_special_tokens=special)["input_ids"]
    assert ids[: len(context_ids)] == context_ids
    with torch.no_grad():
        log_p = loaded.model(input_ids=torch.tensor([ids])).logits[0].double().log_softmax(-1)
    positions = range(len(context_ids), len(ids))
    return float(sum(log_p[t - 1, ids[t]] for t in positions)), len(positions)


def chat_scorer(loaded, probe, questions: pa.Table, **how) -> ChatFillInScorer:
    return ChatFillInScorer(CausalScorer(loaded, **how), questions, probe.chat_question)


def some_rows(probe, questions: pa.Table, rows: pa.Table, count: int = 3) -> tuple[pa.Table, pa.Table]:
    """The first ``count`` questions and their choice rows."""
    kept = questions.slice(0, count)
    ids = set(kept["id"].to_pylist())
    return kept, rows.filter(pa.array([q in ids for q in rows["question_id"].to_pylist()]))


CASES = {
    "emotion": (EEC_PROBE, eec_questions, choice_sentences),
    "person": (EEC_PERSON_PROBE, person_questions, person_choice_sentences),
}


@pytest.mark.parametrize("model", ["qwen", "llama"])
@pytest.mark.parametrize("task", ["emotion", "person"])
@pytest.mark.parametrize("system", [None, SYSTEM])
def test_chat_scores_equal_the_reply_scored_by_hand(models, model, task, system):
    probe, make_questions, make_rows = CASES[task]
    loaded = load_model(str(models[model]), device="cpu")
    questions, rows = some_rows(probe, make_questions(), make_rows(make_questions()), 2)
    scorer = chat_scorer(loaded, probe, questions, system_prompt=system)
    assert scorer.causal.share_prefixes  # the token tree: each question's prompt once
    scores = scorer.score(rows)
    texts = dict(zip(questions["id"].to_pylist(), questions["text"].to_pylist(), strict=True))
    for i, row in enumerate(rows.to_pylist()[:: max(1, rows.num_rows // 12)]):
        reply = filled_words(texts[row["question_id"]], row["sentence"])
        total, count = by_hand(loaded, texts[row["question_id"]], reply, probe.chat_question, system)
        k = rows["id"].to_pylist().index(row["id"])
        assert scores[k, 1] == count, i
        assert scores[k, 0] == pytest.approx(total, abs=1e-4), i
    # the same numbers as full sequences without the tree, and alone as with batch neighbours
    plain = chat_scorer(loaded, probe, questions, system_prompt=system, share_prefixes=False)
    np.testing.assert_allclose(plain.score(rows), scores, atol=1e-4)
    np.testing.assert_allclose(scorer.score(rows.slice(3, 1)), scores[3:4], atol=1e-4)


def test_the_prompt_and_reply_a_chat_model_gets(models):
    """The ChatML prompt shown in docs/probes/emotion.md, and the reply: the filled word after the newline that
    ends the generation prompt (lm-eval's move of the whitespace)."""
    loaded = load_model(str(models["qwen"]), device="cpu")
    questions = eec_questions().slice(0, 1)
    scorer = chat_scorer(loaded, EEC_PROBE, questions)
    assert scorer.prompt(questions["text"][0].as_py()) == (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
        "Fill in the blank (___) in this sentence with one word.\nEbony feels ___.\nAnswer with the word only."
        "<|im_end|>\n<|im_start|>assistant\n"
    )
    requests = scorer.encode(choice_sentences(questions).slice(0, 2))
    assert len(requests.prompts) == 1 and requests.answer_prompt.tolist() == [0, 0]  # one prompt, two replies
    assert [loaded.tokenizer.decode(a) for a in requests.answers] == ["\nangry", "\nannoyed"]


def test_the_reply_is_the_filled_words_as_the_sentence_has_them():
    assert filled_words("Ebony feels ___.", "Ebony feels angry.") == "angry"
    assert filled_words("___ feels angry.", "My aunt feels angry.") == "My aunt"
    assert filled_words("I made ___ feel angry.", "I made this girl feel angry.") == "this girl"
    with pytest.raises(UnqoverError, match="is not its question"):
        filled_words("Ebony feels ___.", "Alonzo feels angry.")


def test_without_a_chat_template_the_sentences_are_scored_as_before(models):
    loaded = load_model(str(models["qwen"]), device="cpu")
    settings = EEC_PROBE.check_settings({"chat_template": "none"})
    questions = eec_questions().slice(0, 2)
    scorer = EEC_PROBE.sentence_scorer(loaded, settings, questions)
    assert isinstance(scorer, SentenceLikelihoodScorer)
    plain = load_model(str(models["gpt2"]), device="cpu")
    assert isinstance(
        EEC_PROBE.sentence_scorer(plain, EEC_PROBE.check_settings({}), questions), SentenceLikelihoodScorer
    )


def run_argv(model: Path, bias: str, output: Path, *extra: str) -> list[str]:
    return ["probe", str(model), "--bias", bias, "--limit", "1", "--device", "cpu", "--quiet", "--permutations",
            "20", "--resamples", "20", "--output", str(output), *extra]  # fmt: skip


@pytest.mark.parametrize("bias", ["eec-emotion", "eec-person"])
def test_a_chat_run_records_its_prompt_and_ranks_the_replies(models, tmp_path, bias):
    run = tmp_path / "run"
    assert main(run_argv(models["llama"], bias, run, "--system-prompt", SYSTEM)) == 0
    record = json.loads((run / "run.json").read_text())
    probe = EEC_PROBE if bias == "eec-emotion" else EEC_PERSON_PROBE
    loaded = load_model(str(models["llama"]), device="cpu")
    template = loaded.tokenizer.chat_template
    assert record["prompt"] == {
        "chat_template": "auto",
        "template_sha256": hashlib.sha256(template.encode()).hexdigest(),
        "system_prompt": SYSTEM,
        "question": probe.chat_question,
    }
    assert record["scoring"]["sentence"] == ChatFillInScorer.method
    predictions = pq.read_table(run / "predictions.parquet").to_pylist()
    answers = pq.read_table(run / "answers.parquet").to_pylist()
    texts = {a["question_id"]: a["text"] for a in answers}
    sentences = sentences_by_id(bias)
    for row in predictions[:: len(predictions) // 4]:
        reply = filled_words(texts[row["question_id"]], sentences[row["id"]])
        total, count = by_hand(loaded, texts[row["question_id"]], reply, probe.chat_question, SYSTEM)
        assert row["tokens"] == count and row["log_likelihood"] == pytest.approx(total, abs=1e-4)
    # each question's choices ranked by the mean log-probability of their reply tokens
    mean = {(r["question_id"], r["choice"]): r["log_likelihood"] / r["tokens"] for r in predictions}
    for answer in answers:
        values = [mean[(answer["question_id"], c)] for c in answer["answers"]]
        assert values == sorted(values, reverse=True)


def sentences_by_id(bias: str) -> dict[str, str]:
    """Each choice row's sentence by its id (predictions.parquet keeps the id, question and choice)."""
    _, make_questions, make_rows = CASES["emotion" if bias == "eec-emotion" else "person"]
    rows = make_rows(make_questions())
    return dict(zip(rows["id"].to_pylist(), rows["sentence"].to_pylist(), strict=True))


def test_chat_template_none_and_a_model_without_one_score_sentences_as_before(models, tmp_path):
    """The plain route is unchanged: each sentence after BOS (the sentence scorer's numbers), no prompt record."""
    for name, extra in (("qwen", ("--chat-template", "none")), ("gpt2", ())):
        run = tmp_path / name
        assert main(run_argv(models[name], "eec-emotion", run, *extra)) == 0
        record = json.loads((run / "run.json").read_text())
        assert "prompt" not in record and record["scoring"]["sentence"] == SentenceLikelihoodScorer.method
        predictions = pq.read_table(run / "predictions.parquet")
        sentences = [sentences_by_id("eec-emotion")[i] for i in predictions["id"].to_pylist()[:5]]
        direct = SentenceLikelihoodScorer(load_model(str(models[name]), device="cpu")).score(
            pa.table({"sentence": sentences})
        )
        np.testing.assert_allclose(predictions["log_likelihood"].to_numpy()[:5], direct[:, 0], atol=1e-5)
        np.testing.assert_array_equal(predictions["tokens"].to_numpy()[:5], direct[:, 1])


def test_a_template_file_asks_a_model_without_one_as_a_chat(models, tmp_path):
    template = tmp_path / "chat.jinja"
    template.write_text(tiny_models.CHAT_TEMPLATES["qwen"])
    run = tmp_path / "run"
    assert main(run_argv(models["gpt2"], "eec-emotion", run, "--chat-template", str(template))) == 0
    prompt = json.loads((run / "run.json").read_text())["prompt"]
    assert prompt["chat_template"]["file"] == str(template.resolve())
    assert prompt["question"] == EEC_PROBE.chat_question


def test_the_prompt_options_are_refused_where_they_do_not_apply(models, tmp_path, capsys):
    bert = tiny_models.bert_mlm(tmp_path / "bert", ["Ebony feels angry."])
    out = tmp_path / "out"
    refused(run_argv(bert, "eec-emotion", out, "--system-prompt", SYSTEM), capsys,
            f"--system-prompt applies to causal LMs; {bert} is a masked LM")  # fmt: skip
    refused(run_argv(bert, "eec-person", out, "--chat-template", "none"), capsys,
            f"--chat-template applies to causal LMs; {bert} is a masked LM")  # fmt: skip
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Ebony feels angry.\n")
    refused(["probe", f"tfidf:{corpus}", "--bias", "eec-emotion", "--chat-template", "none", "--output", str(out)],
            capsys, f"--chat-template applies to causal LMs; tfidf:{corpus} is one of Beecher's own models")  # fmt: skip
    refused(run_argv(models["qwen"], "eec-emotion", out, "--system-prompt", SYSTEM, "--chat-template", "none"),
            capsys, "--system-prompt needs a chat template with eec-emotion: with --chat-template none each")  # fmt: skip
    refused(run_argv(models["gpt2"], "eec-person", out, "--system-prompt", SYSTEM), capsys,
            f"--system-prompt needs a chat template with eec-person: with {models['gpt2']}'s tokenizer (it has no")  # fmt: skip
    assert not out.exists()
