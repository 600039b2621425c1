"""Extractive-QA scoring: S(subject) = sqrt(p_start · p_end) of the subject's span in the context.

Default: the question and context are encoded as the tokenizer's pair; the softmax runs over the row's real
tokens only (padding masked), so a row's score does not depend on its batch neighbours. The span's first token is
the context token holding the subject's first character, its last token the one holding its last character.

``mode="paper"`` reproduces the original ``qa_hf/predict.py``: ``[BOS] question [EOS] context [EOS]`` with the
context tokenised alone, only ``input_ids`` and ``attention_mask`` passed, the softmax over the whole padded row
(batches of 100 in dataset order), and the article/quantifier (start) and suffix (end) maximum heuristics.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from unqover.errors import UnqoverError
from unqover.scoring.models import LoadedModel
from unqover.scoring.padding import pad_sequences

BERT_QUANTIFIERS = ("a", "an", "the", "some", "few", "several")
GROUP_WORDS = (("a", "group", "of"), ("a", "team", "of"), ("a", "couple", "of"))
SUFFIXES = [
    "man",
    "woman",
    "boy",
    "girl",
    "child",
    "kid",
    "person",
    "folk",
    "people",
    "couple",
    "men",
    "women",
    "boys",
    "girls",
    "children",
    "kids",
    "persons",
    "folks",
    "city",
    "country",
    "cities",
    "countries",
]


def text_key(rows: pa.Table) -> pa.Array:
    """Context and question joined: equal keys are equal model inputs."""
    return pc.binary_join_element_wise(rows["question"], rows["context"], "\x1f")


def char_length(rows: pa.Table) -> np.ndarray:
    return (pc.utf8_length(rows["context"]).to_numpy() + pc.utf8_length(rows["question"]).to_numpy()).astype(
        np.int64
    )


#: how many of the rows longest in characters are encoded to find the longest input in tokens
LONGEST_CANDIDATES = 16


def longest_rows(rows: pa.Table, count: int) -> pa.Table:
    """The ``count`` rows whose context, question and longer subject are the longest in characters: the rows
    whose inputs a run checks against the model's positions before it writes anything."""

    def span(k: int) -> np.ndarray:
        ends = [pc.list_element(rows[f"subject_{k}_span"], i).to_numpy(zero_copy_only=False) for i in (0, 1)]
        return ends[1].astype(np.int64) - ends[0]

    total = char_length(rows) + np.maximum(span(1), span(2))
    if len(total) <= count:
        return rows
    return rows.take(np.argpartition(-total, count - 1)[:count])


def input_limit(loaded: LoadedModel) -> int | None:
    """The most tokens an input may have: the model's positions, or its tokenizer's ``model_max_length`` where
    that is smaller (RoBERTa takes 512 of its 514 positions); None when neither says."""
    limits = (
        getattr(loaded.model.config, "max_position_embeddings", None),
        getattr(loaded.tokenizer, "model_max_length", None),
    )
    return min((n for n in limits if isinstance(n, int) and 0 < n < 1_000_000), default=None)


def check_input_length(tokens: int, limit: int | None) -> None:
    """Refuse an input longer than the model takes (it would fail inside the model), in one line."""
    if limit is not None and tokens > limit:
        raise UnqoverError(
            f"an input is {tokens} tokens, more than the model's {limit}; the rows are too long for this model: "
            "use one with more positions"
        )


def _spans(rows: pa.Table, k: int) -> np.ndarray:
    return np.array(rows[f"subject_{k}_span"].to_pylist(), dtype=np.int64).reshape(-1, 2)


def span_tokens(
    offsets: np.ndarray, in_context: np.ndarray, spans: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """First and last token of each character span, among the context tokens of each row.

    ``offsets`` (B, L, 2) are character offsets into the context, ``in_context`` (B, L) marks context tokens.
    """
    starts = in_context & (offsets[..., 1] > spans[:, :1])
    ends = in_context & (offsets[..., 0] < spans[:, 1:]) & (offsets[..., 1] > offsets[..., 0])
    if not (starts.any(axis=1) & ends.any(axis=1)).all():
        raise UnqoverError("a subject span lies outside the tokenised context")
    first = starts.argmax(axis=1)
    last = ends.shape[1] - 1 - ends[:, ::-1].argmax(axis=1)
    return first, last


class QAScorer:
    """Scores both subjects of each row with an extractive-QA model."""

    def __init__(self, loaded: LoadedModel, mode: str = "default") -> None:
        if mode not in ("default", "paper"):
            raise UnqoverError(f"scoring mode must be default or paper, got {mode!r}")
        self.loaded, self.mode = loaded, mode
        self.max_length = input_limit(loaded) or 512
        if mode == "paper":
            self._paper = _PaperRules(loaded)

    def input_key(self, rows: pa.Table) -> pa.Array:
        return rows["id"] if self.mode == "paper" else text_key(rows)

    def length_key(self, rows: pa.Table) -> np.ndarray:
        # paper mode keeps dataset order (its batches of 100 are part of what it reproduces)
        return np.zeros(len(rows), dtype=np.int64) if self.mode == "paper" else char_length(rows)

    def check_rows(self, rows: pa.Table) -> None:
        """The longest inputs fit the model's positions: checked before a run writes anything."""
        if self.mode == "paper" or rows.num_rows == 0:
            return
        longest = longest_rows(rows, LONGEST_CANDIDATES)
        ids = self.loaded.tokenizer(longest["question"].to_pylist(), longest["context"].to_pylist())[
            "input_ids"
        ]
        self.check_length(max(len(i) for i in ids))

    def check_length(self, tokens: int) -> None:
        check_input_length(tokens, self.max_length)

    def score(self, rows: pa.Table) -> np.ndarray:
        if self.mode == "paper":
            return self._paper.score(rows)
        import torch

        tok = self.loaded.tokenizer
        enc = tok(
            rows["question"].to_pylist(),
            rows["context"].to_pylist(),
            padding=True,
            return_offsets_mapping=True,
            return_tensors="np",
        )
        self.check_length(enc["input_ids"].shape[1])
        in_context = np.array([[s == 1 for s in enc.sequence_ids(i)] for i in range(len(rows))])
        offsets = enc["offset_mapping"]
        positions = [span_tokens(offsets, in_context, _spans(rows, k)) for k in (1, 2)]
        inputs = {
            k: torch.as_tensor(v, device=self.loaded.device) for k, v in enc.items() if k != "offset_mapping"
        }
        with torch.inference_mode():
            out = self.loaded.model(**inputs)
        pad = inputs["attention_mask"] == 0
        log_start = out.start_logits.float().masked_fill(pad, float("-inf")).log_softmax(-1).cpu().numpy()
        log_end = out.end_logits.float().masked_fill(pad, float("-inf")).log_softmax(-1).cpu().numpy()
        b = np.arange(len(rows))
        return np.stack(
            [np.exp(0.5 * (log_start[b, first] + log_end[b, last])) for first, last in positions], axis=1
        )


class _PaperRules:
    """The original predictor's input layout, unmasked softmax and span heuristics."""

    def __init__(self, loaded: LoadedModel) -> None:
        tok = loaded.tokenizer
        name = loaded.model_id.lower()
        if "roberta" in name:
            self.family = "roberta"
        elif "bert" in name:
            self.family = "bert"
        else:
            raise UnqoverError(
                "paper scoring reproduces the original's rules for model names with 'roberta' or 'bert'"
            )
        self.loaded = loaded
        bos = tok.bos_token if tok.bos_token is not None else tok.cls_token
        eos = tok.eos_token if tok.bos_token is not None else tok.sep_token
        self.bos, self.eos = tok.convert_tokens_to_ids(bos), tok.convert_tokens_to_ids(eos)
        prefix = "Ġ" if self.family == "roberta" else ""
        cased = [w.capitalize() for w in BERT_QUANTIFIERS] if self.family == "roberta" else []
        self.quantifiers = {prefix + w for w in (*BERT_QUANTIFIERS, *cased)}
        self.groups = [tuple(prefix + w for w in g) for g in GROUP_WORDS]
        self.groups += (
            [(prefix + "A", *g[1:]) for g in self.groups]
            if self.family == "roberta"
            else [("A", "couple", "of")]
        )
        self.suffixes = {prefix + w for w in SUFFIXES} | {"."}

    def score(self, rows: pa.Table) -> np.ndarray:
        import torch

        tok = self.loaded.tokenizer
        questions, contexts = rows["question"].to_pylist(), rows["context"].to_pylist()
        context_enc = tok(
            [c.strip() for c in contexts], add_special_tokens=False, return_offsets_mapping=True
        )
        sequences, spans = [], []
        for i, (question, context) in enumerate(zip(questions, contexts, strict=True)):
            q_ids = tok.convert_tokens_to_ids(tok.tokenize(question.strip()))
            c_ids, c_offsets = (
                context_enc["input_ids"][i],
                np.array(context_enc["offset_mapping"][i]).reshape(-1, 2),
            )
            shift = len(q_ids) + 2
            sequences.append([self.bos, *q_ids, self.eos, *c_ids, self.eos])
            row_spans = []
            lead = len(context) - len(context.lstrip())
            for k in (1, 2):
                start, end = (np.array(rows[f"subject_{k}_span"][i].as_py()) - lead).tolist()
                row_spans.append(
                    (_paper_token(c_offsets, start) + shift, _paper_token(c_offsets, end) - 1 + shift)
                )
            spans.append((row_spans, [tok.convert_ids_to_tokens(t) for t in c_ids], shift))
        ids, mask = pad_sequences(sequences, tok.pad_token_id or 0)
        with torch.inference_mode():
            out = self.loaded.model(
                input_ids=ids.to(self.loaded.device), attention_mask=mask.to(self.loaded.device)
            )
        p_start = out.start_logits.float().softmax(-1).cpu().numpy()
        p_end = out.end_logits.float().softmax(-1).cpu().numpy()
        scores = np.empty((len(rows), 2))
        for i, (row_spans, tokens, shift) in enumerate(spans):
            for k, (first, last) in enumerate(row_spans):
                scores[i, k] = np.sqrt(
                    self._start(p_start[i], first, tokens, shift) * self._end(p_end[i], last, tokens, shift)
                )
        return scores

    def _start(self, p: np.ndarray, i: int, tokens: list[str], shift: int) -> float:
        ps = p[i]
        j = i - shift  # index among context tokens
        if j >= 1 and tokens[j - 1] in self.quantifiers:
            ps = max(ps, p[i - 1])
        if j >= 3 and tuple(tokens[j - 3 : j]) in self.groups:
            ps = max(ps, p[i - 3 : i + 1].max())
        return float(ps)

    def _end(self, p: np.ndarray, i: int, tokens: list[str], shift: int) -> float:
        pe = p[i]
        j = i - shift
        if j + 1 < len(tokens) and tokens[j + 1] in self.suffixes:
            pe = max(pe, p[i + 1])
        return float(pe)


def _paper_token(offsets: np.ndarray, char: int) -> int:
    """The original's char-to-token map: each token's span widened left over the whitespace before it."""
    starts = np.concatenate([[0], offsets[:-1, 1]])
    return int(np.searchsorted(starts, char, side="right") - 1)
