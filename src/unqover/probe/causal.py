"""Causal-LM scoring: the probability of each subject as the answer, from log-probabilities (no sampling).

Prompt (documented on the README): with a chat template, one user message
``"{context}\\n{question} Answer with the name or group from the text."`` followed by the template's generation prompt,
and the answer is the subject's surface text; without one, ``"{context}\\nQuestion: {question}\\nAnswer:"`` and the
answer is ``" " + surface``. S(subject) = exp(Σ log p(answer token | prompt, earlier answer tokens)): the
probability that the model's answer starts with the subject (no end-of-answer token is required).

Sequences are left-padded with explicit position ids, so a row's score does not depend on its batch neighbours, and
logits are computed only for the answer positions.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from unqover.probe.mlm import surfaces
from unqover.probe.models import LoadedModel
from unqover.probe.qa import char_length, text_key

INSTRUCTION = "Answer with the name or group from the text."


class CausalScorer:
    """Scores both subjects of each row with a causal language model."""

    def __init__(self, loaded: LoadedModel) -> None:
        self.loaded = loaded
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

    def length_key(self, rows: pa.Table) -> np.ndarray:
        return char_length(rows)

    def score(self, rows: pa.Table) -> np.ndarray:
        import torch

        tok = self.loaded.tokenizer
        prompts = [
            self.prompt(c, q)
            for c, q in zip(rows["context"].to_pylist(), rows["question"].to_pylist(), strict=True)
        ]
        prompt_ids = tok(prompts, add_special_tokens=not self.chat)["input_ids"]
        sequences, answer_lengths = [], []
        for k in (1, 2):
            answer_ids = tok([self.answer(s) for s in surfaces(rows, k)], add_special_tokens=False)[
                "input_ids"
            ]
            for p, a in zip(prompt_ids, answer_ids, strict=True):
                sequences.append(p + a)
                answer_lengths.append(len(a))
        width = max(len(s) for s in sequences)
        ids = torch.full((len(sequences), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for i, seq in enumerate(sequences):  # left padding: every answer ends at the last position
            ids[i, width - len(seq) :], mask[i, width - len(seq) :] = torch.tensor(seq), 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        keep = max(answer_lengths) + 1
        device = self.loaded.device
        with torch.inference_mode():
            out = self.loaded.model(
                input_ids=ids.to(device),
                attention_mask=mask.to(device),
                position_ids=positions.to(device),
                logits_to_keep=keep,
            )
        logits = out.logits[:, -keep:].float()  # position t predicts token t + 1
        log_probs = logits[:, :-1].log_softmax(-1)
        targets = ids[:, width - keep + 1 :].to(device)
        token_lp = log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # (2n, keep - 1)
        lengths = torch.tensor(answer_lengths, device=device)
        in_answer = torch.arange(keep - 1, device=device)[None, :] >= (keep - 1 - lengths)[:, None]
        total = (token_lp * in_answer).sum(-1).exp().cpu().numpy()
        return total.reshape(2, len(rows)).T.astype(np.float64)
