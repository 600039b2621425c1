"""NLI scoring (Sharma, Dey & Sinha 2021): P_e = sigmoid(z_e − z_c) of a premise/hypothesis pair.

The premise is the first segment, the hypothesis the second. The neutral logit is dropped and the softmax runs
over {entailment, contradiction} only, as the paper does: ``P_e = exp(z_e) / (exp(z_e) + exp(z_c))``. The raw
softmax over all of the model's labels is returned as well.

Label ids differ between checkpoints (``roberta-large-mnli`` puts contradiction at 0, most ``run_glue``
fine-tunes put entailment at 0, ``cross-encoder/nli-*`` put neutral last), so they are read by name from the
config's ``id2label`` and never by position. Configs that only say ``LABEL_0``…``LABEL_k`` are refused unless the
user passes an explicit ``label_map``. Models loaded here never run remote code and load safetensors weights
unless the user allows pickled ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from unqover.errors import UnqoverError
from unqover.scoring.adapters import apply_adapter, find_adapter
from unqover.scoring.models import (
    check_model_args,
    choose_device,
    choose_dtype,
    loading_record,
    model_record,
    model_source,
    place_model,
)
from unqover.scoring.requests import CLASSES
from unqover.scoring.weights import weights_sha256

LABELS = ("entailment", "neutral", "contradiction")
# spellings seen in configs: ENTAILMENT, entailment, Entailed; CONTRADICTION, Contradict; NEUTRAL
_PREFIXES = {"entail": "entailment", "contradict": "contradiction", "neutral": "neutral"}
_GENERIC = re.compile(r"label_?\d+")
_NOT_ENTAILED = re.compile(r"(not|non)[ _-]?entail")


def _canonical(name: str) -> str | None:
    """``entailment``/``neutral``/``contradiction`` for a config label name, None for anything else."""
    text = str(name).strip().lower()
    for prefix, label in _PREFIXES.items():
        if text.startswith(prefix):
            return label
    return None


def nli_label_ids(id2label: dict, label_map: dict[str, int] | None = None) -> dict[str, int]:
    """The ids of ``entailment``, ``contradiction`` and (when the model has it) ``neutral``, read by name.

    ``id2label`` is the model config's (keys may be strings such as ``"0"``). Names are matched
    case-insensitively by prefix (``entail…``, ``contradict…``, ``neutral…``). An explicit ``label_map`` (e.g.
    ``{"entailment": 0, "neutral": 1, "contradiction": 2}``) is used instead of the names when given; it is
    validated against the number of labels. Raises UnqoverError for generic ``LABEL_k`` names without a
    ``label_map``, for entailment/not-entailment models (they have no contradiction logit) and for ambiguous or
    missing labels.
    """
    try:
        names = {int(k): str(v) for k, v in (id2label or {}).items()}
    except (TypeError, ValueError) as err:
        raise UnqoverError(f"the model's id2label has ids that are not integers: {id2label!r}") from err
    n = len(names)
    if n < 2:
        raise UnqoverError(f"an NLI model needs at least 2 labels, its config lists {n}: {id2label!r}")
    if label_map is not None:
        return _checked_map(label_map, n)
    shown = ", ".join(f"{i}={names[i]}" for i in sorted(names))
    if all(_GENERIC.fullmatch(v.strip().lower()) for v in names.values()):
        raise UnqoverError(
            f"the model's labels are generic ({shown}), so which id is entailment cannot be read from its config; "
            'pass an explicit label map, e.g. {"entailment": 0, "neutral": 1, "contradiction": 2} '
            "(check the model card: the order differs between checkpoints)"
        )
    if any(_NOT_ENTAILED.match(v.strip().lower()) for v in names.values()):
        raise UnqoverError(
            f"the model has labels {shown}: an entailment/not-entailment model has no contradiction logit, and "
            "the NLI probe needs one (use a 3-way MNLI/SNLI model)"
        )
    found: dict[str, int] = {}
    for i in sorted(names):
        label = _canonical(names[i])
        if label is None:
            continue
        if label in found:
            raise UnqoverError(f"the model's labels name {label} twice ({shown}); pass an explicit label map")
        found[label] = i
    missing = [label for label in ("entailment", "contradiction") if label not in found]
    if missing:
        raise UnqoverError(
            f"no {' or '.join(missing)} label among the model's labels ({shown}); an NLI model with "
            "entailment and contradiction labels is needed, or pass an explicit label map"
        )
    return {label: found[label] for label in LABELS if label in found}


def _checked_map(label_map: dict, n: int) -> dict[str, int]:
    if not isinstance(label_map, dict):
        raise UnqoverError(f"the label map must be a dict of label name to id, got {label_map!r}")
    out: dict[str, int] = {}
    for key, value in label_map.items():
        label = str(key).strip().lower()
        if label not in LABELS:
            raise UnqoverError(f"label map keys must be among {LABELS}, got {key!r}")
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise UnqoverError(f"label map id of {key!r} must be an integer, got {value!r}")
        if not 0 <= int(value) < n:
            raise UnqoverError(f"label map id {value} of {key!r} is out of range: the model has {n} labels")
        if label in out:
            raise UnqoverError(f"the label map names {label} twice")
        out[label] = int(value)
    for label in ("entailment", "contradiction"):
        if label not in out:
            raise UnqoverError(f"the label map needs an id for {label}, got {label_map!r}")
    if len(set(out.values())) != len(out):
        raise UnqoverError(f"the label map gives two labels the same id: {label_map!r}")
    return {label: out[label] for label in LABELS if label in out}


@dataclass
class LoadedNLIModel:
    """A sequence-classification NLI model ready to score, with its label ids and where it came from."""

    model: object
    tokenizer: object
    label_ids: dict[str, int]
    model_id: str
    revision: str | None
    device: str
    dtype: str
    label_source: str = "config"  # "config" (read by name from id2label) or "label_map" (given by the user)
    family: ClassVar[str] = "nli"
    id2label: dict[int, str] = field(default_factory=dict)
    path: str | None = None  # a local folder, resolved (None for a Hub model)
    adapter: dict | None = None  # the PEFT adapter merged into the weights
    model_args: dict | None = None  # the ``--model-arg`` keywords given to from_pretrained
    weights_sha256: str | None = None  # a local folder's weight files (``unqover.scoring.weights``)
    engine: str = "transformers"  # the engine that loaded it (``unqover.scoring.engines``)
    capabilities: tuple[str, ...] = (CLASSES,)  # what it answers (``unqover.scoring.requests``)

    def provenance(self) -> dict:
        return {
            **model_record(self.model_id, self.revision, "nli", self.dtype, self.device),
            "label_ids": dict(self.label_ids),
            "label_source": self.label_source,
            "id2label": {str(k): v for k, v in self.id2label.items()},
            **({"path": self.path} if self.path else {}),
            **({"weights_sha256": self.weights_sha256} if self.weights_sha256 else {}),
            **loading_record(self.adapter, self.model_args),
        }


def load_nli_model(
    model_id: str,
    *,
    revision: str | None = None,
    device: str = "auto",
    dtype: str = "auto",
    token: str | None = None,
    allow_pickle: bool = False,
    label_map: dict[str, int] | None = None,
    adapter: str | None = None,
    model_args: dict | None = None,
) -> LoadedNLIModel:
    """Load config, tokenizer and ``…ForSequenceClassification`` model of a Hub id or a local folder (with
    ``model_args`` for ``from_pretrained`` and a PEFT ``adapter`` merged in, as :func:`load_model`)."""
    import transformers

    check_model_args(model_args or {})
    source = model_source(model_id, revision, token)
    found = find_adapter(adapter, token=token, allow_pickle=allow_pickle) if adapter is not None else None
    config = source.config()
    architectures = getattr(config, "architectures", None) or []
    if architectures and not any(a.endswith("ForSequenceClassification") for a in architectures):
        raise UnqoverError(
            f"{model_id!r} is not a sequence classifier (architectures: {', '.join(architectures)}): the NLI "
            "probe needs an NLI model (…ForSequenceClassification fine-tuned on MNLI/SNLI)"
        )
    id2label = {int(k): str(v) for k, v in (getattr(config, "id2label", None) or {}).items()}
    label_ids = nli_label_ids(id2label, label_map)
    tokenizer = source.tokenizer()
    device = choose_device(device)
    dtype = choose_dtype(dtype, device)
    model = source.weights(transformers.AutoModelForSequenceClassification, dtype, allow_pickle, model_args)
    if found is not None:
        model = apply_adapter(model, found, model_id)
    device = place_model(model, device)
    commit = getattr(config, "_commit_hash", None)
    return LoadedNLIModel(
        model,
        tokenizer,
        label_ids,
        model_id,
        revision or commit,
        device,
        dtype,
        label_source="config" if label_map is None else "label_map",
        id2label=id2label,
        path=source.path,
        adapter=None if found is None else found.record(),
        model_args=dict(model_args) if model_args else None,
        weights_sha256=weights_sha256(source.path),
    )


def entailment_from_logits(logits: np.ndarray, label_ids: dict[str, int]) -> np.ndarray:
    """``P_e = sigmoid(z_e − z_c)`` per row of ``logits`` (N, labels), in float64; the neutral logit is dropped."""
    z = np.asarray(logits, dtype=np.float64)
    diff = z[:, label_ids["entailment"]] - z[:, label_ids["contradiction"]]
    return np.exp(-np.logaddexp(0.0, -diff))  # sigmoid, stable for large |diff|


class NLIScorer:
    """Scores premise/hypothesis pairs with an NLI model; a pair's scores do not depend on its batch."""

    def __init__(self, loaded: LoadedNLIModel, batch_size: int = 32) -> None:
        if batch_size < 1:
            raise UnqoverError(f"batch size must be at least 1, got {batch_size}")
        self.loaded, self.batch_size = loaded, batch_size
        self.max_length = getattr(loaded.model.config, "max_position_embeddings", None) or 512

    def check_pairs(self, premises: list[str], hypotheses: list[str]) -> None:
        """The pairs fit the model's positions (a run checks its longest before it writes anything)."""
        ids = self.loaded.tokenizer(list(premises), list(hypotheses))["input_ids"]
        self.check_length(max((len(i) for i in ids), default=0))

    def check_length(self, tokens: int) -> None:
        if tokens > self.max_length:
            raise UnqoverError(
                f"a pair is {tokens} tokens, more than the model's {self.max_length}; the rows are too long for "
                "this model: use one with more positions"
            )

    def logits(self, premises: list[str], hypotheses: list[str]) -> np.ndarray:
        """The model's logits (N, labels) as float32, premise as the first segment, in batches with padding."""
        import torch

        premises, hypotheses = list(premises), list(hypotheses)
        if len(premises) != len(hypotheses):
            raise UnqoverError(
                f"{len(premises)} premises but {len(hypotheses)} hypotheses: give one of each per pair"
            )
        n_labels = int(self.loaded.model.config.num_labels)
        out = np.empty((len(premises), n_labels), dtype=np.float32)
        tok = self.loaded.tokenizer
        for lo in range(0, len(premises), self.batch_size):
            hi = lo + self.batch_size
            enc = tok(premises[lo:hi], hypotheses[lo:hi], padding=True, return_tensors="pt")
            self.check_length(enc["input_ids"].shape[1])
            inputs = {k: v.to(self.loaded.device) for k, v in enc.items()}
            with torch.inference_mode():
                logits = self.loaded.model(**inputs).logits
            out[lo:hi] = logits.float().cpu().numpy()
        return out

    def score_pairs(self, premises: list[str], hypotheses: list[str]) -> dict[str, np.ndarray]:
        """``p_entail`` (paper's P_e) and, per NLI label of the model, its probability under the full softmax."""
        return scores_from_logits(self.logits(premises, hypotheses), self.loaded.label_ids)


def scores_from_logits(logits: np.ndarray, label_ids: dict[str, int]) -> dict[str, np.ndarray]:
    """``p_entail`` (P_e = sigmoid(z_e − z_c)) and each label's probability under the softmax over every column of
    ``logits`` (N, labels), in float64."""
    result = {"p_entail": entailment_from_logits(logits, label_ids)}
    z = np.asarray(logits, dtype=np.float64)
    log_p = z - np.logaddexp.reduce(z, axis=1, keepdims=True) if len(z) else z
    for label, i in label_ids.items():
        result[label] = np.exp(log_p[:, i])
    return result
