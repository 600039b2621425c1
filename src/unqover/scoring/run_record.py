"""Two run records (``run.json``, a results file's provenance) compared by what they measured, not by where its
files lay: a model by the SHA-256 of its weights (a GGUF file's, a local folder's weight files') where both record
it, generated rows by the SHA-256 of their word lists. The same bytes under another file name, or a run folder
moved to another machine, are the same run; a record that lacks a hash (an older run) is compared as it was
written."""

from __future__ import annotations

import copy
from collections.abc import Mapping

from unqover.lexicon.identity import CHECKSUMS_KEY

#: what a model record says beside its content that changes the numbers
MODEL_SETTINGS = ("family", "adapter", "model_args")


def model_content(model: object) -> str | None:
    """The SHA-256 a model record gives of its weights: a GGUF file's, else a local folder's weight files'
    (``weights_sha256``); None for a Hub model without it or a record that has neither."""
    if not isinstance(model, Mapping):
        return None
    gguf = model.get("gguf")
    digest = (gguf.get("sha256") if isinstance(gguf, Mapping) else None) or model.get("weights_sha256")
    return digest if isinstance(digest, str) and digest else None


def model_key(model: object) -> str | None:
    """A model record's identity as text: its content and the settings that change its numbers (adapter,
    model arguments), or None when it records no content."""
    content = model_content(model)
    if content is None:
        return None
    assert isinstance(model, Mapping)
    extra = [f"{key}={model[key]!r}" for key in ("adapter", "model_args") if model.get(key)]
    return " ".join([f"sha256:{content}", *extra])


def _generator(record: dict) -> dict | None:
    dataset = record.get("dataset")
    generator = dataset.get("generator") if isinstance(dataset, dict) else None
    return generator if isinstance(generator, dict) else None


def comparable(a: Mapping, b: Mapping) -> tuple[dict, dict]:
    """``a`` and ``b`` as they are compared: where both record a model's content, its content and settings stand
    for the model (its name and path left out); where both record their word lists' checksums, those stand for
    the folder. A hash that only one records is left out (an older record is compared as it was written)."""
    a, b = copy.deepcopy(dict(a)), copy.deepcopy(dict(b))
    models = a.get("model"), b.get("model")
    if model_content(models[0]) and model_content(models[1]):
        for record, model in zip((a, b), models, strict=True):
            record["model"] = {
                "content": model_content(model),
                **{key: model[key] for key in MODEL_SETTINGS if key in model},
            }
    else:
        for model in models:
            if isinstance(model, dict):
                model.pop("weights_sha256", None)
    generators = _generator(a), _generator(b)
    if all(g is not None and CHECKSUMS_KEY in g for g in generators):
        for record, generator in zip((a, b), generators, strict=True):
            generator.pop("word_lists", None)
            if str(record["dataset"].get("source", "")).startswith("generated from "):
                record["dataset"]["source"] = "generated"
    else:
        for generator in generators:
            if generator is not None:
                generator.pop(CHECKSUMS_KEY, None)
    return a, b
