"""A run's folder checked before its model loads: a folder that holds another run is refused at once, not after
minutes of loading.

What ``run.json`` will record is known in part before the model loads: the probe, the model (a local file or
folder by the SHA-256 of its weights, hashed once and cached for the load: :mod:`unqover.scoring.weights`; a Hub
model by its id), the dtype given, the prompt options and the selection. Where the folder (``--output``, else the
default folder, whose name needs the model's family: read from its config, for a local model) holds a run that
differs in any of these, the run is refused with :func:`unqover.scoring.run_folder.another_run`'s line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from unqover.errors import UnqoverError
from unqover.probes.base import ProbeDefinition, RunOptions
from unqover.scoring.engines.base import Engine
from unqover.scoring.requests import EngineRequest
from unqover.scoring.run_folder import another_run, differing_fields, read_manifest
from unqover.scoring.run_record import model_content


def check_folder_before_load(
    engine: Engine, request: EngineRequest, probe: ProbeDefinition, run: RunOptions, settings: dict,
    name: str | None, default_output: Callable,
) -> None:  # fmt: skip
    """Refuse a run whose folder holds another run, as far as that can be told before the model loads (a model
    whose ``engine`` reads its files here: :meth:`~unqover.scoring.engines.base.Engine.local_source`): ``--output``,
    else the default folder ``default_output(model_id, name)``, where ``name`` is its last part as known before
    the load (the probe's ``planned_output_name``; None: not known, nothing checked)."""
    model_id = request.model_id
    try:
        source = engine.local_source(request)
    except UnqoverError:  # refused with its own line where the model is looked at
        return
    if source is None:
        return
    folder = run.output or (None if name is None else default_output(model_id, name))
    if folder is None:
        return
    existing = read_manifest(folder)
    if existing is None:
        return
    planned, recorded = planned_record(probe, run, settings, source), {}
    for key, value in list(planned.items()):
        known = existing.get(key)
        if isinstance(value, dict) and isinstance(known, Mapping):
            recorded[key] = {k: known.get(k) for k in value if k in known}
            planned[key] = {k: v for k, v in value.items() if k in known}
        elif key in existing:
            recorded[key] = known
        else:
            planned.pop(key)
    if isinstance(existing.get("model"), Mapping):
        planned["model"], recorded["model"] = "same", "same"
        if _other_model(existing["model"], source, model_id):
            planned["model"] = "other"
    differing = differing_fields(recorded, planned)
    if differing:
        raise UnqoverError(another_run(Path(folder), differing))


def planned_name(
    engine: Engine, request: EngineRequest, probe: ProbeDefinition, run: RunOptions, settings: dict
) -> str | None:
    """The default run folder's last part as known before the model loads (None: ``--output`` given, or not
    known: :func:`planned_capabilities`)."""
    capabilities = planned_capabilities(engine, request) if run.output is None else None
    return (
        None
        if capabilities is None
        else probe.planned_output_name(capabilities, request.model_id, run, settings)
    )


def planned_capabilities(engine: Engine, request: EngineRequest) -> tuple[str, ...] | None:
    """What a local model answers, read from its config before it loads (the default run folder's name depends
    on it); None for a model that is not a local file or folder (a Hub model's config may need the network:
    checked once it loads) or one refused with its own line when it loads."""
    try:  # a GGUF file is scored as a causal LM, or refused when it loads: its header need not be parsed here
        source = engine.local_source(request)
        if source is None or source.path is None:
            return None
        return engine.capabilities_of(request)
    except (UnqoverError, OSError, ValueError):
        return None


def planned_record(probe: ProbeDefinition, run: RunOptions, settings: dict, source) -> dict[str, Any]:
    """What run.json will record that is known before the model loads (the model is compared apart)."""
    record: dict[str, Any] = {"probe": probe.name}
    dtype = run.dtype if run.dtype != "auto" else "float32" if run.device == "cpu" else None
    if dtype is not None:
        record["dtype"] = dtype
    if "system_prompt" in settings:
        template = settings.get("template_file")
        chosen = (
            {"file": template["file"], "sha256": template["sha256"]}
            if template
            else settings["chat_template"]
        )
        record["prompt"] = {"system_prompt": settings["system_prompt"], "chat_template": chosen}
    selection = getattr(probe, "selection", None)
    if callable(selection):
        record["selection"] = selection(run, settings)
    return record


def _other_model(recorded: Mapping, source, model_id: str) -> bool:
    """Whether the model run.json records is not the one given: by content where both can say it (a local file
    or folder's SHA-256), else by the local path or the Hub id."""
    from unqover.scoring.weights import file_sha256, weights_sha256

    if source.path is None:  # a Hub model (a GGUF file in a Hub repo records its file and SHA-256 too)
        gguf = recorded.get("gguf") if isinstance(recorded.get("gguf"), Mapping) else {}
        named = Path(source.gguf_file).name if source.gguf_file else None
        return recorded.get("id") != model_id or "path" in recorded or gguf.get("file") != named
    content = file_sha256(Path(source.path)) if source.gguf_file else weights_sha256(source.path)
    if content is not None and model_content(recorded) is not None:
        return content != model_content(recorded)
    return recorded.get("path") != source.path
