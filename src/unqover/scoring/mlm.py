"""Masked-LM scoring: the probability of each subject at the mask, from the full-vocabulary softmax.

The input is ``context + " " + question`` with the dataset's ``[MASK]`` placeholder replaced by the tokenizer's
mask token. A subject is scored by the probability of its single token (the tokenization of ``" " + surface``,
as it would follow the space before the mask); the LM head runs only at the mask positions. Subjects that are not a
single token are left out, with their groups, by :func:`single_token_coverage`, which reports what was dropped.

``mode="paper"`` reproduces the original ``lm/predict.py``: only the 10 most probable tokens count, matched by
decoded lower-cased string (first match), any other answer gets 0, and for gendered names the probability is
max(P(name), P(she)) or max(P(name), P(he)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from unqover.errors import UnqoverError
from unqover.generate.unqover import MASK_PLACEHOLDER
from unqover.scoring.models import LoadedModel
from unqover.scoring.qa import LONGEST_CANDIDATES, char_length, check_input_length, input_limit, longest_rows

TOP_K_PAPER = 10


def masked_texts(rows: pa.Table, mask_token: str) -> list[str]:
    texts = pc.binary_join_element_wise(rows["context"], rows["question"], " ")
    return pc.replace_substring(texts, MASK_PLACEHOLDER, mask_token).to_pylist()


def surfaces(rows: pa.Table, k: int) -> list[str]:
    """Each row's subject surface text: the span of the context that names it."""
    spans = rows[f"subject_{k}_span"].to_pylist()
    return [context[a:b] for context, (a, b) in zip(rows["context"].to_pylist(), spans, strict=True)]


def _head(model):
    """The MLM head as a function of hidden states, for architectures known here; None for others."""
    kind = model.config.model_type
    if kind in ("bert", "deberta-v2") and hasattr(model, "cls"):
        return model.cls
    if kind in (
        "roberta",
        "xlm-roberta",
        "camembert",
        "mpnet",
        "roberta-prelayernorm",
        "xlm-roberta-xl",
    ) and hasattr(model, "lm_head"):
        return model.lm_head
    if kind == "distilbert":
        return lambda hidden: model.vocab_projector(
            model.vocab_layer_norm(model.activation(model.vocab_transform(hidden)))
        )
    if kind == "albert":
        return model.predictions
    return None


class _LastLayerInput(Exception):
    """Raised by a pre-hook to stop the encoder before its last layer, carrying that layer's input."""

    def __init__(self, hidden) -> None:
        super().__init__("last layer reached")
        self.hidden = hidden


def _encoder_layers(base):
    """The encoder's list of layers (BERT/RoBERTa ``encoder.layer``, DistilBERT ``transformer.layer``), or None."""
    for owner in ("encoder", "transformer"):
        layers = getattr(getattr(base, owner, None), "layer", None)
        if layers is not None and len(layers) > 0:
            return layers
    return None


def _attend(projections, here, states, key_mask, heads: int, scaling: float):
    """Multi-head attention of one query per row (``here``) over all of that row's (unpadded) ``states``: (n, D).

    ``projections``: the layer's query, key and value projections, applied to ``here``, ``states`` and ``states``.
    """
    import torch.nn.functional as F

    to_query, to_key, to_value = projections
    query, key, value = to_query(here), to_key(states), to_value(states)
    n, length, dim = key.shape
    q = query.view(n, 1, heads, dim // heads).transpose(1, 2)
    k = key.view(n, length, heads, dim // heads).transpose(1, 2)
    v = value.view(n, length, heads, dim // heads).transpose(1, 2)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=key_mask[:, None, None, :], scale=scaling)
    return out.transpose(1, 2).reshape(n, dim)


def _last_layer_at(layer, hidden, key_mask, rows_idx, positions):
    """The last encoder layer's output at the given (row, position) pairs only, or None for other layouts.

    Keys and values still come from every token, but the query, the attention output and the feed-forward block
    run at the wanted positions alone, which is all the LM head needs.
    """
    states, here, mask = hidden[rows_idx], hidden[rows_idx, positions], key_mask[rows_idx]
    attention = getattr(layer, "attention", None)
    inner = getattr(attention, "self", None)
    if inner is not None and all(hasattr(inner, n) for n in ("query", "key", "value", "num_attention_heads")):
        projections = (inner.query, inner.key, inner.value)
        scaling = inner.attention_head_size**-0.5
        context = _attend(projections, here, states, mask, inner.num_attention_heads, scaling)
        attended = attention.output(context, here)
        return layer.output(layer.intermediate(attended), attended)
    if attention is not None and all(hasattr(attention, n) for n in ("q_lin", "k_lin", "v_lin", "out_lin")):
        projections = (attention.q_lin, attention.k_lin, attention.v_lin)
        scaling = (attention.dim // attention.n_heads) ** -0.5
        context = _attend(projections, here, states, mask, attention.n_heads, scaling)
        attended = layer.sa_layer_norm(attention.out_lin(context) + here)
        return layer.output_layer_norm(layer.ffn(attended) + attended)
    return None


def mask_hidden(base, inputs: dict, rows_idx, positions):
    """Final hidden states at the given (row, position) pairs; the last layer runs at those positions only."""
    layers = _encoder_layers(base)
    if layers is not None:

        def stop(module, args, kwargs):
            raise _LastLayerInput(args[0] if args else kwargs["hidden_states"])

        handle = layers[-1].register_forward_pre_hook(stop, with_kwargs=True)
        try:
            base(**inputs)
        except _LastLayerInput as captured:
            hidden = captured.hidden
        else:  # pragma: no cover - the hook always fires
            hidden = None
        finally:
            handle.remove()
        if hidden is not None:
            out = _last_layer_at(layers[-1], hidden, inputs["attention_mask"].bool(), rows_idx, positions)
            if out is not None:
                return out
    return base(**inputs).last_hidden_state[rows_idx, positions]


def mask_logits(loaded: LoadedModel, inputs: dict, rows_idx, positions):
    """Vocabulary logits at the given (row, position) pairs, computing the last layer and LM head only there."""
    model = loaded.model
    base = getattr(model, "base_model", None)
    head = _head(model)
    if base is not None and base is not model and head is not None:
        return head(mask_hidden(base, inputs, rows_idx, positions))
    return model(**inputs).logits[rows_idx, positions]


@dataclass(frozen=True)
class Coverage:
    """Which subjects the tokenizer splits, and how many rows and groups were kept."""

    multi_token: list[str]
    rows_kept: int
    rows_total: int

    def as_dict(self) -> dict:
        return {
            "multi_token_subjects": self.multi_token,
            "rows_kept": self.rows_kept,
            "rows_total": self.rows_total,
        }


class MLMScorer:
    """Scores both subjects of each row with a masked language model."""

    def __init__(self, loaded: LoadedModel, mode: str = "default") -> None:
        if mode not in ("default", "paper"):
            raise UnqoverError(f"scoring mode must be default or paper, got {mode!r}")
        tok = loaded.tokenizer
        if tok.mask_token is None:
            raise UnqoverError(f"{loaded.model_id!r} has no mask token")
        self.loaded, self.mode, self._ids = loaded, mode, {}

    def token_id(self, surface: str) -> int | None:
        """The single token of ``" " + surface``, or None when the tokenizer splits it."""
        if surface not in self._ids:
            ids = self.loaded.tokenizer(" " + surface, add_special_tokens=False)["input_ids"]
            self._ids[surface] = ids[0] if len(ids) == 1 else None
        return self._ids[surface]

    def single_token_coverage(self, rows: pa.Table) -> tuple[pa.Table, Coverage]:
        """Drop every group (all its rows) that has a subject the tokenizer does not keep as one token."""
        one = {s: self.token_id(s) is not None for s in set(surfaces(rows, 1)) | set(surfaces(rows, 2))}
        bad_surface = [s for s, ok in one.items() if not ok]
        if not bad_surface:
            return rows, Coverage([], len(rows), len(rows))
        bad_subjects = set()
        for k in (1, 2):
            for surface, subject in zip(surfaces(rows, k), rows[f"subject_{k}"].to_pylist(), strict=True):
                if not one[surface]:
                    bad_subjects.add(subject)
        keep = pc.invert(
            pc.or_(
                pc.is_in(rows["subject_1"], pa.array(sorted(bad_subjects))),
                pc.is_in(rows["subject_2"], pa.array(sorted(bad_subjects))),
            )
        )
        kept = rows.filter(keep)
        if len(kept) == 0:
            raise UnqoverError(f"no subject pair is fully single-token for {self.loaded.model_id!r}")
        return kept, Coverage(sorted(bad_subjects), len(kept), len(rows))

    def input_key(self, rows: pa.Table) -> pa.Array:
        return (
            rows["id"]
            if self.mode == "paper"
            else pc.binary_join_element_wise(rows["context"], rows["question"], "\x1f")
        )

    def length_key(self, rows: pa.Table) -> np.ndarray:
        return np.zeros(len(rows), dtype=np.int64) if self.mode == "paper" else char_length(rows)

    def check_rows(self, rows: pa.Table) -> None:
        """The longest inputs fit the model's positions: checked before a run writes anything."""
        if rows.num_rows == 0:
            return
        tok = self.loaded.tokenizer
        ids = tok(masked_texts(longest_rows(rows, LONGEST_CANDIDATES), tok.mask_token))["input_ids"]
        self.check_length(max(len(i) for i in ids))

    def check_length(self, tokens: int) -> None:
        check_input_length(tokens, input_limit(self.loaded))

    def score(self, rows: pa.Table) -> np.ndarray:
        import torch

        tok = self.loaded.tokenizer
        enc = tok(masked_texts(rows, tok.mask_token), padding=True, return_tensors="pt")
        self.check_length(enc["input_ids"].shape[1])
        is_mask = enc["input_ids"] == tok.mask_token_id
        counts = is_mask.sum(1)
        if (counts != 1).any():
            i = int((counts != 1).nonzero()[0, 0])
            raise UnqoverError(f"row {rows['id'][i].as_py()} has {int(counts[i])} mask tokens, expected 1")
        rows_idx, positions = is_mask.nonzero(as_tuple=True)
        inputs = {k: v.to(self.loaded.device) for k, v in enc.items()}
        with torch.inference_mode():
            logits = mask_logits(
                self.loaded, inputs, rows_idx.to(self.loaded.device), positions.to(self.loaded.device)
            )
        log_probs = logits.float().log_softmax(-1).cpu()
        if self.mode == "paper":
            return self._paper(rows, log_probs.exp())
        scores = np.empty((len(rows), 2))
        for k in (1, 2):
            ids = [self.token_id(s) for s in surfaces(rows, k)]
            if any(i is None for i in ids):
                raise UnqoverError(
                    "a subject is not a single token: filter rows with single_token_coverage first"
                )
            scores[:, k - 1] = log_probs[torch.arange(len(rows)), torch.tensor(ids)].exp().numpy()
        return scores

    def _paper(self, rows: pa.Table, probs) -> np.ndarray:
        """Top-10 string matching with zero leftover, and the he/she maximum for gendered names."""
        tok = self.loaded.tokenizer
        top_p, top_i = probs.topk(TOP_K_PAPER, dim=-1)
        squeeze = any(n in self.loaded.model_id.lower() for n in ("bert-base-uncased", "bert-large-uncased"))
        scores = np.zeros((len(rows), 2))
        clusters = [
            rows[f"subject_{k}_cluster"].to_pylist()
            if f"subject_{k}_cluster" in rows.column_names
            else [None] * len(rows)
            for k in (1, 2)
        ]
        answers = [surfaces(rows, 1), surfaces(rows, 2)]
        for i in range(len(rows)):
            words = [tok.decode([t]).strip() for t in top_i[i].tolist()]
            words = [(w.replace(" ", "") if squeeze else w).lower() for w in words]
            table = {}
            for w, p in zip(words, top_p[i].tolist(), strict=True):
                table.setdefault(w, p)  # the first match wins
            for k in (0, 1):
                p = table.get(answers[k][i].lower(), 0.0)
                if clusters[k][i] == "female":
                    p = max(p, table.get("she", 0.0))
                elif clusters[k][i] == "male":
                    p = max(p, table.get("he", 0.0))
                scores[i, k] = p
        return scores
