"""Causal LMs with shared prefixes: every score equals a plain forward of its full sequence, for GPT-2-, Llama-,
Qwen2- and Mistral-style tiny models, with and without chat templates, at any batch size and neighbours; and
the sharing really happens (one pass per context's prefix, one per prompt, answers from the cache)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

import tiny_models
from unqover.cli import main
from unqover.generate.custom import custom_rows
from unqover.generate.unqover import make_plan
from unqover.lexicon.custom import read_probe_file
from unqover.scoring.causal import INSTRUCTION, CausalScorer, encode_pair
from unqover.scoring.mlm import surfaces
from unqover.scoring.models import load_model
from unqover.scoring.run_plan import plan_chunks
from unqover.scoring.runner import run_shard
from unqover.scoring.shared_prefix import (
    ROW_TOKENS,
    _balanced_rows,
    _parts,
    answer_log_probs,
    cache_kind,
    shared_prefix_lengths,
)

#: (architecture, chat template, tokenizer adds BOS, sliding window)
MODELS = {
    "gpt2": ("gpt2", None, False, None),
    "gpt2-chat": ("gpt2", "qwen", False, None),
    "llama": ("llama", None, True, None),
    "llama-chat": ("llama", "llama", False, None),
    "qwen2": ("qwen2", None, False, None),
    "qwen2-chat": ("qwen2", "qwen", False, None),
    "mistral-window-8": ("mistral", None, False, 8),
}

PROBE = """\
name: porch
subjects:
  cats: [Tom, Felix]
  dogs: [Rex, Buddy, Maximilian]
attributes:
  - {positive: was very lazy, negated: was never lazy}
  - {positive: chased the mailman, negated: never chased the mailman}
  - {positive: ate the cake, negated: did not eat the cake}
templates:
  - {context: "{subject_1} sat next to {subject_2} on the porch.", question: "Who {attribute}?"}
  - {context: "On a long and rainy afternoon, {subject_1} slept beside {subject_2}.", question: "Who {attribute}?"}
"""


@pytest.fixture(scope="module")
def rows(word_lists) -> pa.Table:
    """Religion rows of several contexts, each asked many questions, in a shuffled order (so batches mix
    contexts of different lengths), plus a few contexts asked once."""
    plan = make_plan(word_lists, "religion", "qa")
    table = pa.Table.from_batches([next(plan.batches(pairs_per_batch=2))])
    contexts = np.array(table["context"].to_pylist())
    distinct = list(dict.fromkeys(contexts))
    many = np.concatenate([np.flatnonzero(contexts == c)[:24] for c in distinct[:3]])
    once = [int(np.flatnonzero(contexts == c)[0]) for c in distinct[3:8]]
    order = np.random.default_rng(0).permutation(np.concatenate([many, once]))
    return table.take(pa.array(order))


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory, rows) -> dict[str, Path]:
    texts = sorted(set(rows["context"].to_pylist()) | set(rows["question"].to_pylist()))
    probe_rows = custom_rows(read_probe_file(_write(tmp_path_factory.mktemp("probe"), PROBE)), "qa")
    texts += sorted(set(probe_rows["context"].to_pylist()) | set(probe_rows["question"].to_pylist()))
    texts = [t.replace("Hindu", "").replace("Maximilian", "") for t in texts]  # two multi-token answers
    root = tmp_path_factory.mktemp("causal")
    return {
        name: tiny_models.causal_lm(root / name, texts, arch, chat=chat, bos=bos, sliding_window=window)
        for name, (arch, chat, bos, window) in MODELS.items()
    }


def _write(folder: Path, text: str) -> Path:
    path = folder / "porch.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def plain_log_s(loaded, rows: pa.Table) -> np.ndarray:
    """log S of both subjects, one unpadded forward of prompt + answer at a time (the documented prompt)."""
    tok = loaded.tokenizer
    chat = bool(tok.chat_template)
    out = np.zeros((rows.num_rows, 2))
    for i, row in enumerate(rows.to_pylist()):
        if chat:
            message = [{"role": "user", "content": f"{row['context']}\n{row['question']} {INSTRUCTION}"}]
            text = tok.apply_chat_template(message, tokenize=False, add_generation_prompt=True)
        else:
            text = f"{row['context']}\nQuestion: {row['question']}\nAnswer:"
        # lm-evaluation-harness's encoding: trailing whitespace moves to the answer, the whole text is tokenized
        # once, special tokens unless the text starts with the BOS token's text
        stripped = text.rstrip()
        bos = tok.decode(tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id)
        special = not stripped.startswith(bos)
        prompt = tok(stripped, add_special_tokens=special)["input_ids"]
        for k in (1, 2):
            start, end = row[f"subject_{k}_span"]
            surface = row["context"][start:end]
            whole = text + (surface if chat else " " + surface)
            answer = tok(whole, add_special_tokens=special)["input_ids"][len(prompt) :]
            with torch.no_grad():
                log_probs = loaded.model(torch.tensor([prompt + answer])).logits[0].log_softmax(-1)
            out[i, k - 1] = sum(float(log_probs[len(prompt) - 1 + j, t]) for j, t in enumerate(answer))
    return out


def score_in_batches(scorer, rows: pa.Table, size: int) -> np.ndarray:
    return np.concatenate([scorer.score(rows.slice(i, size)) for i in range(0, rows.num_rows, size)])


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
@pytest.mark.parametrize("name", list(MODELS))
def test_scores_equal_a_plain_forward_of_each_full_sequence(model_dirs, rows, name, attention):
    loaded = load_model(str(model_dirs[name]), device="cpu", dtype="float32")
    loaded.model.set_attn_implementation(attention)
    scorer = CausalScorer(loaded)
    assert scorer.share_prefixes
    expected = plain_log_s(loaded, rows)
    answers = [
        loaded.tokenizer(" " + s, add_special_tokens=False)["input_ids"] for s in ("Maximilian", "Hindu")
    ]
    assert max(len(a) for a in answers) > 1  # multi-token answers have branches of their own
    for size in (len(rows), 16, 5, 1):
        got = np.log(score_in_batches(scorer, rows, size))
        assert np.abs(got - expected).max() <= 1e-4, (name, attention, size)
    whole = scorer.score(rows)
    reversed_rows = rows.take(pa.array(np.arange(rows.num_rows)[::-1]))
    assert np.abs(np.log(scorer.score(reversed_rows)[::-1]) - np.log(whole)).max() <= 1e-5


def _input_shapes(loaded, fn) -> list[tuple[int, int]]:
    """(batch, width) of every forward pass the model runs during ``fn()``."""
    shapes = []
    embeddings = loaded.model.get_input_embeddings()
    handle = embeddings.register_forward_hook(lambda _m, args, _out: shapes.append(tuple(args[0].shape)))
    try:
        fn()
    finally:
        handle.remove()
    return shapes


@pytest.mark.parametrize("name", ["gpt2", "llama-chat", "qwen2-chat"])
def test_one_packed_pass_runs_each_shared_token_once(model_dirs, rows, name):
    """One forward pass per batch; it runs the tokens every prompt shares once per packed row, each context's
    shared prefix once, each prompt's rest once and each long answer's tokens but the last once: far fewer than
    the plain sequences, and within a little padding of the tree's own token count."""
    loaded = load_model(str(model_dirs[name]), device="cpu", dtype="float32")
    scorer = CausalScorer(loaded)
    tok = loaded.tokenizer
    texts = [
        scorer.prompt(c, q)
        for c, q in zip(rows["context"].to_pylist(), rows["question"].to_pylist(), strict=True)
    ]
    answer_texts = [scorer.answer(s) for k in (1, 2) for s in surfaces(rows, k)]
    prompts, answers = encode_pair(tok, texts * 2, answer_texts)
    prompts = prompts[: rows.num_rows]
    shapes = _input_shapes(loaded, lambda: scorer.score(rows))
    assert len(shapes) == 1
    (packed_rows, width) = shapes[0]
    groups = np.unique(rows["context"].to_pylist(), return_inverse=True)[1]
    shared = shared_prefix_lengths(prompts, groups)
    root = min(shared)
    tree = (
        packed_rows * root
        + sum(shared[np.flatnonzero(groups == g)[0]] - root for g in set(groups.tolist()))
        + sum(len(p) - k for p, k in zip(prompts, shared, strict=True))
        + sum(max(len(a) - 1, 0) for a in answers)
    )
    assert tree <= packed_rows * width <= 1.25 * tree + width
    plain_tokens = sum(len(prompts[i % len(prompts)]) + len(a) for i, a in enumerate(answers))
    assert packed_rows * width < plain_tokens / 2


def test_a_large_group_is_packed_in_parts_of_a_row_each():
    """A context asked many questions is cut into parts, each with a copy of its prefix, so that no row (and no
    attention over it) grows with the group."""
    rows = list(range(140))
    parts = _parts(rows, 14, [27] * 140, [[1, 2]] * 280, {i: [i, 140 + i] for i in rows})
    assert [i for part in parts for i in part] == rows
    assert all(14 + 29 * len(part) <= ROW_TOKENS for part in parts) and len(parts) == -(-140 // 8)


def test_packed_rows_balance_their_tokens():
    sizes = [300, 120, 110, 100, 90, 80, 20, 5]
    rows = _balanced_rows(sizes, head=24)
    assert sorted(u for r in rows for u in r) == list(range(len(sizes)))
    loads = [sum(sizes[u] for u in r) for r in rows]
    # rows as wide as the largest unit (300 > 256 - 24): three of them, each within one unit of the others
    assert len(rows) == 3 and max(loads) == 300 and max(loads) - min(loads) <= 100


def test_prefix_lengths_stop_short_of_every_prompt():
    prompts = [[1, 2, 3, 4], [1, 2, 3, 5, 6], [1, 2, 3], [7, 8], [9]]
    groups = np.array([0, 0, 0, 1, 2])
    # group 0 shares [1, 2, 3] but its shortest prompt must keep a token; one-member groups keep one token
    assert shared_prefix_lengths(prompts, groups) == [2, 2, 2, 1, 0]
    assert shared_prefix_lengths([[1, 2], [3, 4]], np.array([0, 0])) == [0, 0]


def test_a_sliding_window_narrower_than_the_batch_runs_full_sequences(model_dirs, rows):
    loaded = load_model(str(model_dirs["mistral-window-8"]), device="cpu", dtype="float32")
    scorer = CausalScorer(loaded)
    assert scorer.sliding_window == 8
    shapes = _input_shapes(loaded, lambda: scorer.score(rows.slice(0, 8)))
    assert len(shapes) == 1 and shapes[0][0] == 16  # both answers of 8 rows as full sequences


def test_models_without_an_attention_cache_run_full_sequences():
    class Recurrent(torch.nn.Module):
        def forward(self, **_):
            return SimpleNamespace(cache=SimpleNamespace(conv_states=[]), logits=torch.zeros(1, 1, 3))

    assert cache_kind(Recurrent(), "cpu") == (False, None)


def test_empty_answers_score_one_and_groups_of_none_share_nothing(model_dirs):
    loaded = load_model(str(model_dirs["llama"]), device="cpu", dtype="float32")
    prompts = [[1, 5, 6, 7], [1, 5, 6, 8, 9]]
    answers = [[10, 11], [], [12]]
    kwargs = {"pad_id": 0, "device": "cpu"}
    shared = answer_log_probs(
        loaded.model, prompts, answers, np.array([0, 0, 1]), groups=np.array([0, 0]), **kwargs
    )
    full = answer_log_probs(loaded.model, prompts, answers, np.array([0, 0, 1]), groups=None, **kwargs)
    assert shared[1] == 0.0 and full[1] == 0.0
    np.testing.assert_allclose(shared, full, atol=1e-5)


def test_bfloat16_keeps_the_softmax_in_float32(model_dirs, rows):
    fp32 = CausalScorer(load_model(str(model_dirs["qwen2"]), device="cpu", dtype="float32")).score(rows)
    loaded = load_model(str(model_dirs["qwen2"]), device="cpu", dtype="bfloat16")
    shared, full = CausalScorer(loaded).score(rows), CausalScorer(loaded, share_prefixes=False).score(rows)
    assert shared.dtype == np.float64 and np.isfinite(np.log(shared)).all()
    # bf16 rounds the hidden states (not the softmax): close to fp32, and sharing changes only the rounding
    assert np.abs(np.log(shared) - np.log(fp32)).max() < 0.5
    assert np.abs(np.log(shared) - np.log(full)).max() < 0.5


@pytest.mark.parametrize("name", ["gpt2", "llama", "qwen2", "mistral-window-8"])
def test_bfloat16_on_a_cpu_runs_the_products_in_bf16_and_the_residual_stream_in_float32(
    model_dirs, rows, name
):
    from transformers.pytorch_utils import Conv1D

    loaded = load_model(str(model_dirs[name]), device="cpu", dtype="bfloat16")
    model, head = loaded.model, loaded.model.get_output_embeddings()
    products = [m for m in model.modules() if type(m) in (torch.nn.Linear, Conv1D) and m is not head]
    assert products and all(p.dtype == torch.bfloat16 for m in products for p in m.parameters())
    in_products = {id(p) for m in products for p in m.parameters()}
    rest = [p for p in model.parameters() if id(p) not in in_products]
    assert rest and all(p.dtype == torch.float32 for p in rest)  # embeddings, norms, output head
    assert loaded.dtype == "bfloat16"

    ids = torch.tensor([[1, 5, 6, 7, 8]])
    with torch.no_grad():
        out = model(input_ids=ids, output_hidden_states=True)
    assert all(h.dtype == torch.float32 for h in out.hidden_states) and out.logits.dtype == torch.float32

    fp32 = np.log(CausalScorer(load_model(str(model_dirs[name]), device="cpu", dtype="float32")).score(rows))
    gap = np.abs(np.log(CausalScorer(loaded).score(rows)) - fp32)
    assert 0 < gap.mean() < 0.05  # bf16 products, not fp32 ones; close to fp32


def test_the_runner_keeps_each_context_together(model_dirs, rows):
    scorer = CausalScorer(load_model(str(model_dirs["gpt2"]), device="cpu", dtype="float32"))
    plan = plan_chunks(rows, scorer, chunk_rows=1000)
    contexts = np.array(rows["context"].to_pylist())[plan.representative]
    runs = 1 + np.count_nonzero(contexts[1:] != contexts[:-1])
    assert runs == len(set(contexts))  # each context's rows are consecutive
    lengths = np.array([len(c) for c in contexts])
    assert (np.diff(lengths) <= 0).all()  # longest contexts first
    shuffled = rows.take(pa.array(np.random.default_rng(1).permutation(rows.num_rows)))
    again = plan_chunks(shuffled, scorer, chunk_rows=1000)
    assert (
        shuffled["id"]
        .take(pa.array(again.representative))
        .equals(rows["id"].take(pa.array(plan.representative)))
    )


def test_shards_and_resume_give_the_same_scores(model_dirs, rows, tmp_path):
    scorer = CausalScorer(load_model(str(model_dirs["llama-chat"]), device="cpu", dtype="float32"))
    whole = run_shard(rows, scorer, tmp_path / "whole", batch_size=8, chunk_rows=20, progress=False)
    parts = [
        run_shard(
            rows, scorer, tmp_path / "sharded", batch_size=8, chunk_rows=20, shard=(i, 3), progress=False
        )
        for i in range(3)
    ]
    # a resumed run rescores a lost chunk with the same batches: the same scores exactly
    lost = sorted((tmp_path / "whole").rglob("chunk-*.parquet"))[1]
    lost.unlink()
    resumed = run_shard(rows, scorer, tmp_path / "whole", batch_size=8, chunk_rows=20, progress=False)
    assert lost.exists() and resumed.equals(whole)
    merged = pa.concat_tables(parts)
    by_id = dict(zip(merged["id"].to_pylist(), merged["score_1"].to_pylist(), strict=True))
    np.testing.assert_allclose(
        [by_id[i] for i in whole["id"].to_pylist()], whole["score_1"].to_numpy(), rtol=1e-5
    )


def test_a_custom_probe_scored_end_to_end_equals_the_plain_computation(model_dirs, tmp_path, capsys):
    """What the issue's check does: ``unqover probe`` on a probe file whose contexts are each asked many
    questions; every predicted log S equals the plain full-sequence computation within 1e-4."""
    path = _write(tmp_path, PROBE)
    rows = custom_rows(read_probe_file(path), "qa")
    contexts = rows["context"].to_pylist()
    assert set(contexts.count(c) for c in contexts) == {6}  # 3 attributes x 2 polarities
    for name in ("gpt2", "llama-chat"):
        out = tmp_path / name
        args = ["probe", str(model_dirs[name]), "--probe", str(path), "--output", str(out), "--quiet"]
        assert main([*args, "--resamples", "0", "--batch-size", "9"]) == 0
        predictions = pq.read_table(out / "predictions.parquet")
        by_id = {r["id"]: (r["score_1"], r["score_2"]) for r in predictions.to_pylist()}
        got = np.log([by_id[i] for i in rows["id"].to_pylist()])
        expected = plain_log_s(load_model(str(model_dirs[name]), device="cpu", dtype="float32"), rows)
        assert np.abs(got - expected).max() <= 1e-4
        assert json.loads((out / "results.json").read_text())["probe"] == "porch"
