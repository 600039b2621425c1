"""Emotion fill-in scoring (Beecher): rank each question's emotion words by how likely a language model finds
the filled-in sentence.

Many EEC emotion words are several subword tokens ("displeasing"), so a single-mask fill-in cannot rank them.
Every choice is scored as a whole sentence instead (one row of ``choice_sentences`` per choice):

- masked LM: the pseudo-log-likelihood (Salazar et al., 2020), PLL(s) = Σ_t log P(w_t | s with w_t masked), over
  every token of the sentence that is not a special token; one masked copy per token, the LM head run only at
  the masked position;
- causal LM: the log-likelihood log P(s) = Σ_t log P(w_t | w_<t), with the tokenizer's BOS token (or its EOS token
  when it has no BOS, as GPT-2) before the sentence so that its first token is scored too.

A scorer returns two columns per sentence: the summed log-probability (≤ 0) and the number of tokens it sums.
:func:`rank_choices` turns them into each question's ranked answers under a documented length rule and tie rule.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from unqover.errors import UnqoverError
from unqover.scoring.choices import LENGTH_RULES
from unqover.scoring.mlm import mask_logits
from unqover.scoring.models import LoadedModel
from unqover.scoring.padding import pad_sequences

#: ``mean`` ranks by log-probability per token, so long (multi-token) words are not penalised for their length;
#: ``sum`` ranks by the sentence's total log-probability.

#: Column ranges of a sentence score: summed log-probability, and the token count behind it.
SENTENCE_BOUNDS = ((-np.inf, 0.0), (1.0, np.inf))


class _SentenceScorer:
    """What the sentence scorers share: a row is its ``sentence`` (the runner's input key and length bucket), and
    its score is a sentence score (:data:`SENTENCE_BOUNDS`)."""

    score_bounds = SENTENCE_BOUNDS

    def input_key(self, rows: pa.Table) -> pa.Array:
        return rows["sentence"]

    def length_key(self, rows: pa.Table) -> np.ndarray:
        return pc.utf8_length(rows["sentence"]).to_numpy().astype(np.int64)


class PseudoLikelihoodScorer(_SentenceScorer):
    """Masked-LM pseudo-log-likelihood of every sentence (``sentence`` column)."""

    method = "masked-LM pseudo-log-likelihood"

    def __init__(self, loaded: LoadedModel) -> None:
        if loaded.tokenizer.mask_token_id is None:
            raise UnqoverError(f"{loaded.model_id}: the tokenizer has no mask token, so it cannot score PLL")
        self.loaded = loaded

    def score(self, rows: pa.Table) -> np.ndarray:
        import torch

        tok = self.loaded.tokenizer
        encoded = tok(
            rows["sentence"].to_pylist(),
            padding=True,
            return_tensors="pt",
            return_special_tokens_mask=True,
        )
        ids, attention = encoded["input_ids"], encoded["attention_mask"]
        scored = (attention == 1) & (encoded["special_tokens_mask"] == 0)
        sentence, position = scored.nonzero(as_tuple=True)  # one masked copy per scored token
        copies = ids[sentence].clone()
        copies[torch.arange(len(sentence)), position] = tok.mask_token_id
        device = self.loaded.device
        inputs = {"input_ids": copies.to(device), "attention_mask": attention[sentence].to(device)}
        with torch.inference_mode():
            logits = mask_logits(
                self.loaded, inputs, torch.arange(len(sentence), device=device), position.to(device)
            )
            log_probs = logits.float().log_softmax(-1)
            token_lp = log_probs.gather(-1, ids[sentence, position].to(device).unsqueeze(-1)).squeeze(-1)
        totals = np.zeros(len(rows), dtype=np.float64)
        np.add.at(totals, sentence.numpy(), token_lp.double().cpu().numpy())
        counts = scored.sum(-1).numpy().astype(np.float64)
        return _checked(np.stack([np.minimum(totals, 0.0), counts], axis=1), rows)


class SentenceLikelihoodScorer(_SentenceScorer):
    """Causal-LM log-likelihood of every sentence (``sentence`` column)."""

    method = "causal-LM log-likelihood"

    def __init__(self, loaded: LoadedModel) -> None:
        tok = loaded.tokenizer
        self.loaded = loaded
        self.start_id = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        if self.start_id is None:
            raise UnqoverError(
                f"{loaded.model_id}: the tokenizer has neither a BOS nor an EOS token to start a sentence with"
            )
        self.pad_id = tok.pad_token_id if tok.pad_token_id is not None else self.start_id

    def score(self, rows: pa.Table) -> np.ndarray:
        import torch

        tok = self.loaded.tokenizer
        pieces = tok(rows["sentence"].to_pylist(), add_special_tokens=False)["input_ids"]
        # right padding: positions count from 0 as in training
        ids, mask = pad_sequences([[self.start_id, *p] for p in pieces], self.pad_id)
        device = self.loaded.device
        with torch.inference_mode():
            logits = self.loaded.model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits
            log_probs = logits[:, :-1].float().log_softmax(-1)  # position t predicts token t + 1
            token_lp = log_probs.gather(-1, ids[:, 1:].to(device).unsqueeze(-1)).squeeze(-1)
            token_lp = token_lp * mask[:, 1:].to(device)
        totals = token_lp.double().sum(-1).cpu().numpy()
        counts = mask[:, 1:].sum(-1).numpy().astype(np.float64)
        return _checked(np.stack([np.minimum(totals, 0.0), counts], axis=1), rows)


def _checked(scores: np.ndarray, rows: pa.Table) -> np.ndarray:
    empty = scores[:, 1] < 1
    if empty.any():
        i = int(np.argmax(empty))
        raise UnqoverError(f"sentence {rows['sentence'][i].as_py()!r} has no token to score")
    return scores


def sentence_scorer(loaded: LoadedModel):
    """The scorer for a model family: PLL for masked LMs, log-likelihood for causal LMs."""
    if loaded.family == "mlm":
        return PseudoLikelihoodScorer(loaded)
    if loaded.family == "causal":
        return SentenceLikelihoodScorer(loaded)
    raise UnqoverError(
        f"{loaded.model_id} is an extractive QA model; the emotion fill-in probe scores sentences with masked LMs "
        "(…ForMaskedLM) and causal LMs (…ForCausalLM)"
    )


def tie_keys(sentence_ids: list[str], seed: int) -> np.ndarray:
    """A uniform random number per sentence from a hash of (seed, id): the same on every machine and in any order."""
    return np.array(
        [
            int.from_bytes(hashlib.blake2b(f"{seed}:{s}".encode(), digest_size=8).digest(), "big") / 2.0**64
            for s in sentence_ids
        ]
    )


@dataclass(frozen=True)
class RankedChoices:
    """Each question's choices, best first, and whether a tie touched its top-k."""

    question_id: list[str]
    answers: list[list[str]]
    ties: list[bool]

    def tie_rate(self) -> float:
        return float(np.mean(self.ties)) if self.ties else float("nan")


def rank_choices(
    question_ids: list[str],
    sentence_question: list[str],
    sentence_choice: list[str],
    sentence_id: list[str],
    log_likelihood: np.ndarray,
    tokens: np.ndarray,
    *,
    length_rule: str = "mean",
    top_k: int = 3,
    seed: int = 0,
) -> RankedChoices:
    """Rank every question's choices by sentence score, best first.

    Length rule: ``mean`` = log-likelihood / tokens, ``sum`` = log-likelihood. Tie rule: choices whose scores are
    exactly equal are ordered by :func:`tie_keys` (seeded, reproducible, independent of row order) — never by list
    position, which would always favour the same emotion; a question counts as tied when two equal scores meet
    in its top ``top_k``, or at its boundary.
    """
    if length_rule not in LENGTH_RULES:
        raise UnqoverError(f"length rule must be one of {', '.join(LENGTH_RULES)}, got {length_rule!r}")
    n = len(sentence_question)
    if not (len(sentence_choice) == len(sentence_id) == len(log_likelihood) == len(tokens) == n):
        raise UnqoverError("sentence columns and scores differ in length")
    value = np.asarray(log_likelihood, dtype=np.float64)
    if length_rule == "mean":
        value = value / np.asarray(tokens, dtype=np.float64)
    keys = tie_keys(sentence_id, seed)
    position = {q: i for i, q in enumerate(question_ids)}
    owner = np.array([position.get(q, -1) for q in sentence_question], dtype=np.int64)
    if (owner < 0).any():
        raise UnqoverError(
            f"scored sentence of unknown question {sentence_question[int(np.argmax(owner < 0))]}"
        )
    order = np.lexsort((keys, -value, owner))  # by question, then best score, then the tie key
    starts = np.searchsorted(owner[order], np.arange(len(question_ids) + 1))
    answers, ties = [], []
    for q in range(len(question_ids)):
        members = order[starts[q] : starts[q + 1]]
        if len(members) == 0:
            raise UnqoverError(f"question {question_ids[q]} has no scored choices")
        answers.append([sentence_choice[i] for i in members])
        head = value[members[: top_k + 1]]
        ties.append(bool(len(head) > 1 and (np.diff(head) == 0).any()))
    return RankedChoices(list(question_ids), answers, ties)
