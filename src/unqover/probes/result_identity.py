"""Whose and what a result is: the model it measured and the rows it was computed from.

results.json (``unqover probe``'s and ``unqover measure``'s) records, in its ``provenance``:

- ``model``: the Hub id and revision, or the local folder (``path``) and a SHA-256 of its weight files
  (``weights_sha256``), the adapter merged into it (id and revision, or folder, and a SHA-256), and the
  ``--model-arg`` keywords; measured from lm-eval's logged samples, the model lm-eval's results file names
  (:func:`lm_eval_model`), with lm-eval's model arguments as they were given.
- ``selection``: which rows, its ``kind`` one of ``full`` (every row), ``design`` (the probe's seeded sample
  design, with its seed and size) or ``subset`` (part of the rows that matches no design, with ``why``). A record
  is made by :func:`full_selection`, :func:`design_selection` or :func:`subset_selection`, and decided for a
  run by :func:`run_selection` and for measured predictions by :func:`measured_selection`.

``unqover publish-results`` reads them back (:mod:`unqover.jobs.publish_results`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: a selection's ``kind``: every row, the probe's seeded quick-run design, or part of the rows that matches no design
KIND_FULL, KIND_DESIGN, KIND_SUBSET = "full", "design", "subset"
SELECTION_KINDS = (KIND_FULL, KIND_DESIGN, KIND_SUBSET)
#: a selection's keys that say the probe's own quick-run design drew it
QUICK_RUN_KEYS = ("limit", "sample", "precision", "design")


def full_selection(selection: Mapping | None = None) -> dict:
    """Every row of the dataset (``selection``: what else the run recorded of it, kept)."""
    return {**_plain(selection), "kind": KIND_FULL}


def design_selection(selection: Mapping) -> dict:
    """The probe's seeded quick-run design drew the rows: ``selection`` holds its seed and size (limit, sample,
    precision or groups)."""
    return {**_plain(selection), "kind": KIND_DESIGN}


def subset_selection(why: str, selection: Mapping | None = None) -> dict:
    """Part of the rows that matches no seeded design, and why in words (e.g. ``"lm-eval --limit 600 kept the
    first 600 documents"``): its numbers are estimates from those rows, published only as a sample's."""
    return {**_plain(selection), "kind": KIND_SUBSET, "why": str(why)}


def _plain(selection: Mapping | None) -> dict:
    """A recorded selection without an earlier decision (its kind and why)."""
    return {k: v for k, v in (selection or {}).items() if k not in ("kind", "why")}


def _seed(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def is_quick_run(selection: Mapping | None) -> bool:
    """Whether a job's recorded selection is a quick run's (a limit, sample fraction, precision or design)."""
    return isinstance(selection, Mapping) and any(selection.get(k) is not None for k in QUICK_RUN_KEYS)


def run_selection(selection: Mapping | None) -> dict:
    """The selection of a run ``unqover probe`` scored: every row, or the probe's seeded design (which the
    job drew itself)."""
    return design_selection(selection) if is_quick_run(selection) else full_selection(selection)


def measured_selection(probe: Any, result: Mapping, recorded: Mapping | None) -> dict:
    """The selection of predictions ``unqover measure`` measured (``recorded``: what their provenance says):
    every row when the result is no quick run's (the probe's ``results.quick_run_line``); else the seeded design when
    the rows are its draw (the result's ``sample`` says so where the probe checks it exactly), else a subset."""
    recorded = recorded if isinstance(recorded, Mapping) else {}
    if probe.results.quick_run_line(result) is None:
        return full_selection(recorded)
    if recorded.get("kind") == KIND_SUBSET:  # decided where the rows were cut (e.g. lm-eval's limit)
        return subset_selection(str(recorded.get("why") or "part of the rows"), recorded)
    sample = result.get("sample") if isinstance(result.get("sample"), Mapping) else None
    seed = _seed(recorded.get("seed"))
    if sample is not None:  # the UnQover probes check the groups against the design's draw of the seed
        if sample.get("matches_design") and _seed(sample.get("seed")) is not None:
            return design_selection({**recorded, "seed": sample["seed"], "design": sample.get("design")})
        if not is_quick_run(recorded) or seed is None:
            why = "the predictions record no seeded selection"
        else:
            why = f"its groups are not those the design draws with seed {seed}"
        if sample.get("matches_design") is False:
            why += "; its strata are not the design's proportional shares"
        return subset_selection(why, recorded)
    if is_quick_run(recorded) and seed is not None:
        return design_selection(recorded)
    return subset_selection("the predictions record no seeded selection", recorded)


def selection_kind(provenance: Mapping) -> tuple[str, str | None] | None:
    """(kind, why) of a recorded selection; None when it records none (results of an older unqover)."""
    selection = provenance.get("selection")
    if not isinstance(selection, Mapping) or selection.get("kind") not in SELECTION_KINDS:
        return None
    why = selection.get("why")
    return selection["kind"], why if isinstance(why, str) else None


def lm_eval_arguments(model_args: object) -> dict[str, str]:
    """lm-eval's ``model_args`` as keywords: its ``key=value,key=value`` text, or the mapping it logged."""
    if isinstance(model_args, Mapping):
        return {str(k): str(v) for k, v in model_args.items() if v is not None}
    if not isinstance(model_args, str):
        return {}
    pairs = (part.split("=", 1) for part in model_args.split(",") if "=" in part)
    return {key.strip(): value.strip() for key, value in pairs}


def lm_eval_model(lm_eval: Mapping) -> dict | None:
    """The model lm-eval scored, from the model arguments its results file records: ``pretrained`` (a Hub id,
    or a local folder with the SHA-256 of its weights, or of its ``gguf_file``), ``revision`` and a ``peft``
    adapter (or ``delta`` weights); None when its results file was not found or names no ``pretrained``."""
    from unqover.scoring.weights import weights_sha256

    arguments = lm_eval_arguments(lm_eval.get("model_args"))
    pretrained = arguments.get("pretrained")
    if not pretrained:
        return None
    model: dict[str, Any] = {"id": pretrained, "revision": _lm_eval_revision(lm_eval, arguments)}
    local = Path(pretrained).expanduser()
    gguf_file = arguments.get("gguf_file")
    if gguf_file and (local / gguf_file).is_file():  # a GGUF checkpoint: recorded as ``unqover probe`` does
        from unqover.scoring.gguf import gguf_record

        model["path"] = str((local / gguf_file).resolve())
        model["gguf"] = gguf_record(local / gguf_file)
        model["weights_sha256"] = model["gguf"]["sha256"]
    elif local.is_dir():
        model["path"] = str(local.resolve())
        model["weights_sha256"] = weights_sha256(local)
    for key in ("peft", "delta"):  # a PEFT adapter, or delta weights added to the pretrained ones
        if arguments.get(key):
            model["adapter"] = {"id": arguments[key], "revision": None, "lm_eval_argument": key}
    return {**model, "lm_eval_model": lm_eval.get("model"), "lm_eval_model_args": lm_eval.get("model_args")}


def _lm_eval_revision(lm_eval: Mapping, arguments: Mapping[str, str]) -> str | None:
    """The revision of the model lm-eval scored: the commit its results file records (``model_sha``, which lm-eval
    resolves on the Hub), else the revision it was asked for (``revision=`` of its model arguments, or the
    ``model_revision`` it records, ``main`` by default); None where it records none."""
    for value in (lm_eval.get("model_sha"), arguments.get("revision"), lm_eval.get("model_revision")):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None
