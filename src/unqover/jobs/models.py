"""Models as the surfaces see them: where a model comes from, its family, what it answers (its capabilities,
which a probe's ``wants`` ask for), which probes score that family, and the model loaded the way a probe's runs
load it.

The family of a model is read from its config (``unqover.scoring.models``; sequence classifiers are NLI models).
Which loader a model gets (an NLI classifier or a QA / masked / causal LM) is the probe definitions' choice: a
model is loaded by a probe that scores its family, through the engine that serves it. Nothing here names a
probe.
"""

from __future__ import annotations

from pathlib import Path

from unqover.errors import UnqoverError
from unqover.probes.base import ProbeDefinition, RunOptions

# the surfaces (the Space) reach the model side through this module; both import no torch
from unqover.scoring.engines import ENGINES, engine_for, engine_options, engines_help
from unqover.scoring.gguf import gguf_parameters, gguf_record, is_gguf_name
from unqover.scoring.models import (
    CLASSIFIER_FAMILY,
    FAMILY_CAPABILITIES,
    ModelSource,
    family_of,
    is_hub_id,
    model_source,
)
from unqover.scoring.requests import EngineRequest, first_wanted

__all__ = [
    "CLASSIFIER_FAMILY",
    "ENGINES",
    "ModelSource",
    "engine_options",
    "engines_help",
    "families_answering",
    "family_of",
    "first_wanted",
    "gguf_parameters",
    "gguf_record",
    "hub_source",
    "is_gguf_name",
    "is_hub_id",
    "load_model_for",
    "model_capabilities",
    "model_family",
    "model_source",
    "probes_scoring",
    "scored_model",
]


def hub_source(model_id: str, revision: str | None = None, token: str | None = None) -> ModelSource:
    """The Hub model ``model_id`` (its ``config()``, ``location``), never a local folder: no disk is looked at, and
    a failure names the Hub only. For a server that accepts Hub ids only (the Space); ``model_id`` must pass
    :func:`is_hub_id`."""
    if not is_hub_id(model_id):
        raise UnqoverError(f"{model_id!r} is no Hub model id (owner/name)")
    return ModelSource(model_id, model_id, revision, token)


def model_family(model_id: str, revision: str | None = None, token: str | None = None) -> str:
    """The family of a Hub id or local folder, from its config alone (no weights are loaded)."""
    return family_of(model_source(model_id, revision, token).config())


def model_capabilities(
    model_id: str, revision: str | None = None, token: str | None = None
) -> tuple[str, ...] | None:
    """What a model answers (``unqover.scoring.requests``: continuations, answer spans, ...), as the engine that
    serves it knows before it loads (as ``unqover probe`` checks a model against a probe's ``wants``); None where
    only loading tells."""
    request = EngineRequest(model_id, revision=revision, token=token)
    return engine_for(request).capabilities_of(request)


def families_answering(wants: tuple[str, ...] | list[str]) -> list[str]:
    """The model families (``qa``, ``mlm``, ``causal``, ``nli``) whose models answer one of ``wants`` (a probe's
    requests), in the probe's order of preference, for the messages that say which models a probe takes."""
    answered = {family: first_wanted(has, wants) for family, has in FAMILY_CAPABILITIES.items()}
    return sorted((f for f, asked in answered.items() if asked), key=lambda f: list(wants).index(answered[f]))


def scored_model(predictions: str | Path) -> object:
    """The model a predictions file records it was scored by (its provenance's ``model``; None: none recorded),
    read from the file's metadata alone."""
    from unqover.predictions import read_provenance

    return (read_provenance(Path(predictions)) or {}).get("model")


def probes_scoring(family: str) -> list[str]:
    """The probes that score models of ``family``, in registry order."""
    from unqover.probes.registry import PROBES

    return [name for name, probe in PROBES.items() if family in probe.families]


def load_model_for(
    probe: ProbeDefinition | str | None,
    model_id: str,
    *,
    revision: str | None = None,
    token: str | None = None,
    device: str = "auto",
):
    """The model loaded as ``probe``'s runs load it (its engine, with the definition's default settings):
    an NLI classifier for a probe of NLI models, a QA / masked / causal LM for the others. ``probe`` is a
    definition or a probe's name; None: the first probe (registry order) that scores the model's family."""
    from unqover.probes.registry import get_probe

    if probe is None:
        family = model_family(model_id, revision, token)
        scoring = probes_scoring(family)
        if not scoring:
            raise UnqoverError(f"no probe scores {family} models such as {model_id!r}")
        probe = scoring[0]
    from unqover.jobs.run import checked_engine
    from unqover.scoring.engines import load_for

    definition = probe if isinstance(probe, ProbeDefinition) else get_probe(probe)
    run = RunOptions(revision=revision, token=token, device=device, progress=False)
    engine, request = checked_engine(model_id, definition, run, definition.check_settings({}))
    return load_for(engine, request, definition.wants)[1]
