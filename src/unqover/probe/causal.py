"""Causal-LM scoring: the probability of each subject as the answer, from log-probabilities (no sampling).

Prompt (documented on the README): with a chat template, one user message
``"{context}\\n{question} Answer with the name or group from the text."`` followed by the template's generation prompt,
and the answer is the subject's surface text; without one, ``"{context}\\nQuestion: {question}\\nAnswer:"`` and the
answer is ``" " + surface``. S(subject) = exp(Σ log p(answer token | prompt, earlier answer tokens)): the
probability that the model's answer starts with the subject (no end-of-answer token is required).

The prompt and answers are tokenized separately and concatenated, exactly as a plain forward of each full sequence
would see them; the computation is then shared where the sequences share tokens (:mod:`unqover.probe.shared_prefix`):
rows with the same context share their prompts' common token prefix, each prompt is run once, and only the answer
tokens are run per subject. The runner keeps a context's rows together (``group_key``) so that batches share.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from unqover.probe.mlm import surfaces
from unqover.probe.models import LoadedModel
from unqover.probe.qa import text_key
from unqover.probe.shared_prefix import answer_log_probs, cache_kind

INSTRUCTION = "Answer with the name or group from the text."


class CausalScorer:
    """Scores both subjects of each row with a causal language model.

    ``share_prefixes=False`` runs every prompt + answer as one full sequence (the computation the shared one
    must equal; kept for benchmarks and comparisons).
    """

    def __init__(self, loaded: LoadedModel, *, share_prefixes: bool = True) -> None:
        self.loaded = loaded
        shareable, self.sliding_window = (
            cache_kind(loaded.model, loaded.device) if share_prefixes else (False, None)
        )
        self.share_prefixes = share_prefixes and shareable
        tok = loaded.tokenizer
        self.chat = bool(getattr(tok, "chat_template", None))
        self.pad_id = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        if self.pad_id is None:
            self.pad_id = 0

    def prompt(self, context: str, question: str) -> str:
        if self.chat:
            message = [{"role": "user", "content": f"{context}\n{question} {INSTRUCTION}"}]
            return self.loaded.tokenizer.apply_chat_template(
                message, tokenize=False, add_generation_prompt=True
            )
        return f"{context}\nQuestion: {question}\nAnswer:"

    def answer(self, surface: str) -> str:
        return surface if self.chat else " " + surface

    def input_key(self, rows: pa.Table) -> pa.Array:
        return text_key(rows)

    def group_key(self, rows: pa.Table) -> pa.Array:
        """The context: rows with one context share the start of their prompts."""
        return rows["context"]

    def length_key(self, rows: pa.Table) -> np.ndarray:
        """Characters of the context, so that a context's rows sort (and batch) together."""
        return pc.utf8_length(rows["context"]).to_numpy(zero_copy_only=False).astype(np.int64)

    def score(self, rows: pa.Table) -> np.ndarray:
        tok = self.loaded.tokenizer
        contexts = rows["context"].to_pylist()
        prompts = [self.prompt(c, q) for c, q in zip(contexts, rows["question"].to_pylist(), strict=True)]
        prompt_ids = tok(prompts, add_special_tokens=not self.chat)["input_ids"]
        answers = [
            tok([self.answer(s) for s in surfaces(rows, k)], add_special_tokens=False)["input_ids"]
            for k in (1, 2)
        ]
        n = len(prompt_ids)
        groups = np.unique(contexts, return_inverse=True)[1] if self.share_prefixes else None
        log_s = answer_log_probs(
            self.loaded.model,
            prompt_ids,
            answers[0] + answers[1],
            np.tile(np.arange(n), 2),
            groups=groups,
            pad_id=self.pad_id,
            device=self.loaded.device,
            sliding_window=self.sliding_window,
        )
        return np.exp(log_s).reshape(2, n).T
