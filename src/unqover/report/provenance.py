"""What a report says about where its numbers come from: the model (and its revision or file hash), the dataset
(and its fingerprint), the selection, the library versions and any other fact the run recorded. Every report
(UnQover, NLI, emotion, person; Markdown and HTML) has this section."""

from __future__ import annotations

import math
from collections.abc import Mapping

from unqover.format import MISSING


def _scalar(value: object) -> str | None:
    if value is None or isinstance(value, Mapping):
        return None
    if isinstance(value, list | tuple):
        if len(value) > 8 or any(isinstance(v, Mapping | list | tuple) for v in value):
            return None
        return ", ".join(str(v) for v in value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return str(value)


def _flatten(value: object, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(value, Mapping):
        out: list[tuple[str, str]] = []
        for key, item in value.items():
            out += _flatten(item, f"{prefix}.{key}" if prefix else str(key))
        return out
    text = _scalar(value)
    return [] if text is None else [(prefix, text)]


def provenance_items(provenance: Mapping) -> list[tuple[str, str]]:
    """(label, text) lines: model, dtype, dataset, fingerprint, library versions, then any other recorded facts."""
    provenance = provenance or {}
    model = provenance.get("model") if isinstance(provenance.get("model"), Mapping) else {}
    dataset = provenance.get("dataset") if isinstance(provenance.get("dataset"), Mapping) else {}
    used: set[str] = set()
    items: list[tuple[str, str]] = []

    def take(label: str, *paths: str) -> None:
        for path in paths:
            node: object = provenance
            for part in path.split("."):
                node = node.get(part) if isinstance(node, Mapping) else None
            text = _scalar(node)
            if text not in (None, ""):
                items.append((label, text))
                used.update(paths)  # the other places that may repeat it
                return

    model_id = model.get("id") or model.get("name") or provenance.get("model_id")
    if isinstance(provenance.get("model"), str):
        model_id = provenance["model"]
        used.add("model")
    if model_id:
        revision = model.get("revision") or provenance.get("revision")
        items.append(("model", f"{model_id}" + (f" @ {revision}" if revision else "")))
        used.update({"model.id", "model.name", "model_id", "model.revision", "revision"})
    take("model family", "model.family", "model.kind", "model.task")
    take("dtype", "model.dtype", "dtype", "run.dtype")
    take("batch size", "model.batch_size", "batch_size", "run.batch_size")
    take("device", "model.device", "device", "run.device")
    if dataset.get("source") or dataset.get("config"):
        parts = [str(dataset.get("source") or MISSING)]
        detail = [str(dataset[k]) for k in ("config", "split") if dataset.get(k)]
        items.append(("dataset", parts[0] + (f" ({', '.join(detail)})" if detail else "")))
        used.update({"dataset.source", "dataset.config", "dataset.split"})
    take("dataset fingerprint", "dataset.fingerprint", "fingerprint")
    for key in ("versions", "library_versions", "libraries"):
        versions = provenance.get(key)
        if isinstance(versions, Mapping) and versions:
            items.append(("library versions", ", ".join(f"{k} {v}" for k, v in versions.items())))
            used.add(key)
            break
    for path, text in _flatten(provenance):
        if path in used or any(path.startswith(u + ".") for u in used):
            continue
        items.append((path, text if len(text) <= 200 else text[:199] + "…"))
        if len(items) >= 40:
            break
    return items
