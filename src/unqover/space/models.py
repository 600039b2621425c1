"""Which models the Space accepts: a curated list plus any Hub id that passes the checks (and a folder on the
server where its operator allows local models).

A model must answer one of the requests a probe ``wants`` (its capabilities, as the engine that serves it knows
them before it loads: QA models answer spans, masked LMs fill-ins and sentences, causal LMs continuations and
sentences, NLI classifiers classes), ship safetensors weights or be a GGUF file on the server (never pickles,
never remote code) and stay under a parameter budget that fits one GPU call. Parameters are counted from
safetensors metadata or a GGUF file's tensor table, so nothing is downloaded or loaded to check a model. A model on
the server is named by :func:`unqover.space.local.local_label` in every message, never by its path.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import struct
from dataclasses import dataclass
from pathlib import Path

from unqover.errors import UnqoverError, first_line
from unqover.format import fmt_size
from unqover.jobs.explore import explorable
from unqover.jobs.models import (
    families_answering,
    family_of,
    first_wanted,
    gguf_parameters,
    gguf_record,
    hub_source,
    is_hub_id,
    model_capabilities,
    model_source,
)
from unqover.probes.registry import PROBES
from unqover.space import inputs
from unqover.space.local import local_label, on_disk

CURATED_MODELS = (
    "distilbert/distilbert-base-cased-distilled-squad",
    "deepset/roberta-base-squad2",
    "google-bert/bert-base-uncased",
    "FacebookAI/roberta-large-mnli",
    "openai-community/gpt2",
)
_log = logging.getLogger(__name__)
BIASES = tuple(PROBES)
#: the probes whose dataset rows the explorer offers (registry order)
EXPLORABLE = tuple(explorable())
MAX_PARAMETERS = 1_500_000_000
#: each model family in words, for the messages that say which models a choice needs
FAMILY_HINTS = {
    "nli": "an NLI classifier (e.g. FacebookAI/roberta-large-mnli)",
    "qa": "a QA model",
    "mlm": "a masked LM",
    "causal": "a causal LM",
}


@dataclass(frozen=True)
class ModelCheck:
    """A model that passed the checks: its family, size, the revision that keys cached results, and its name on
    the page (a Hub id; a model on the server by its name, marked local)."""

    model_id: str
    family: str
    parameters: int
    revision: str
    local: bool
    name: str = ""
    #: what the model answers (``unqover.jobs.models.model_capabilities``), which a probe's ``wants`` ask for;
    #: None where only loading tells (the run refuses it then)
    capabilities: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", local_label(self.model_id) if self.local else self.model_id)


def header_parameters(path: Path) -> int:
    """Parameter count from one safetensors file's JSON header (the first 8 bytes give its length)."""
    with path.open("rb") as handle:
        (size,) = struct.unpack("<Q", handle.read(8))
        if size > 100_000_000:
            raise UnqoverError(f"{path} is not a safetensors file (header of {size} bytes)")
        header = json.loads(handle.read(size))
    return sum(math.prod(t["shape"]) for name, t in header.items() if name != "__metadata__")


def local_parameters(folder: Path, name: str | None = None) -> int:
    """Parameter count of a model folder's safetensors files; ``name``: the folder in the message (default: its
    own name, marked local)."""
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise UnqoverError(
            f"{name or local_label(str(folder))} has no .safetensors weights: the Space loads safetensors or GGUF "
            "files only"
        )
    return sum(header_parameters(f) for f in files)


def hub_parameters(model_id: str, revision: str | None, token: str | None) -> int:
    """Parameter count from the Hub's safetensors metadata, with one clear message per failure."""
    from huggingface_hub import get_safetensors_metadata
    from huggingface_hub.errors import (
        GatedRepoError,
        NotASafetensorsRepoError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    try:
        meta = get_safetensors_metadata(model_id, revision=revision, token=token or None)
    except GatedRepoError as err:
        raise UnqoverError(gated_message(model_id)) from err
    except RevisionNotFoundError as err:
        raise UnqoverError(f"{model_id!r} has no revision {revision!r}") from err
    except RepositoryNotFoundError as err:
        raise UnqoverError(
            f"model {model_id!r} not found on the Hub (check the id; private models need a token)"
        ) from err
    except NotASafetensorsRepoError as err:
        raise UnqoverError(
            f"{model_id!r} has no safetensors weights: the Space loads safetensors only"
        ) from err
    except Exception as err:  # network errors come from several libraries
        raise UnqoverError(f"cannot read the weights metadata of {model_id!r}: {first_line(err)}") from err
    return int(sum(meta.parameter_count.values()))


def gated_message(model_id: str) -> str:
    return (
        f"{model_id!r} is a gated model: accept its licence on its Hub page and give the Space a token "
        "(an HF_TOKEN secret), or choose another model"
    )


def folder_revision(folder: Path) -> str:
    """A stand-in for a commit hash of a local folder: names, sizes and modification times of its files."""
    digest = hashlib.blake2b(digest_size=8)
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        stat = path.stat()
        digest.update(f"{path.relative_to(folder)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return "local-" + digest.hexdigest()


#: the refusal of a model that is not a Hub id, on a Space that accepts Hub ids only: one message for every such
#: input, whether or not a folder of that name exists on the server
HUB_ONLY = (
    "this Space probes models from the Hugging Face Hub: type a Hub model id such as openai-community/gpt2 "
    "(owner/name), or choose one from the list"
)


def check_live_model(
    model_id: str,
    *,
    revision: str | None = None,
    token: str | None = None,
    max_parameters: int = MAX_PARAMETERS,
    local_models: bool = False,
) -> ModelCheck:
    """Check a model before any weights are loaded: family, safetensors, size; else UnqoverError.

    ``local_models``: a folder on this machine may be given (the operator's choice); otherwise only a Hub id is
    accepted, and any other input gets one message, so that a refusal does not tell whether a path exists."""
    model_id = inputs.text(model_id, "model id", inputs.MAX_MODEL_CHARS)
    if not model_id:
        raise UnqoverError("choose a model from the list or type a Hub id such as openai-community/gpt2")
    if not local_models:
        return _check_hub_model(model_id, revision, token, max_parameters)
    source = model_source(model_id, revision, token)
    local = source.path is not None
    # the name a run of it shows (unqover.space.local.shown_record): a GGUF checkpoint by its file's name
    name = local_label(source.gguf_file or model_id) if local else model_id
    config = (
        source.config()
    )  # a GGUF file's header is checked first (whole, with a tokenizer; causal LMs only)
    family = family_of(config)
    if source.gguf_file is not None and local:
        # the file's content names it (as a run records it): the same bytes under another name are one model
        parameters = gguf_parameters(source.path)
        resolved = "sha256-" + gguf_record(source.path)["sha256"][:32]
    elif local:
        parameters = local_parameters(Path(source.location), name)
        resolved = folder_revision(Path(source.location))
    else:
        parameters = hub_parameters(model_id, revision, token)
        resolved = revision or getattr(config, "_commit_hash", None) or "main"
    _check_size(name, parameters, max_parameters, local)
    capabilities = model_capabilities(model_id, revision, token)
    return ModelCheck(model_id, family, parameters, resolved, local, name, capabilities)


def _check_hub_model(
    model_id: str, revision: str | None, token: str | None, max_parameters: int
) -> ModelCheck:
    """A Hub model only. The Hub is asked first, so a miss reads the same for every id; an id that a folder on the
    server would shadow (the loaders read an existing folder first) is refused with the message of any non-Hub id."""
    if not is_hub_id(model_id):
        raise UnqoverError(HUB_ONLY)
    parameters = hub_parameters(model_id, revision, token)
    if Path(model_id).exists():
        raise UnqoverError(HUB_ONLY)
    _check_size(model_id, parameters, max_parameters)
    config = hub_source(model_id, revision, token).config()
    resolved = revision or getattr(config, "_commit_hash", None) or "main"
    capabilities = model_capabilities(model_id, revision, token)
    return ModelCheck(model_id, family_of(config), parameters, resolved, False, capabilities=capabilities)


def _check_size(model_id: str, parameters: int, max_parameters: int, local: bool = False) -> None:
    """Refuse a model over the Space's size budget (``model_id``: its name on the page)."""
    if parameters > max_parameters:
        run = "`unqover probe`" if local else f"`unqover probe {model_id}`"
        raise UnqoverError(
            f"{model_id!r} has {fmt_size(parameters)} parameters; the Space probes models up to "
            f"{fmt_size(max_parameters)} in one GPU call. Run {run} on your own machine"
        )


def check_pair(check: ModelCheck, bias: str) -> None:
    """Refuse a bias class whose probe asks for nothing the model answers (its ``wants``, the model's
    capabilities), naming the models it takes."""
    if bias not in PROBES:
        raise UnqoverError(f"unknown bias class {bias!r}; choose from {', '.join(BIASES)}")
    wants = PROBES[bias].wants
    if not answers(check.capabilities, wants):
        raise UnqoverError(f"{check.name!r} is a {check.family} model; {bias} needs {wanted(wants)}")


def answers(capabilities: tuple[str, ...] | None, wants: tuple[str, ...]) -> bool:
    """Whether a model answers one of a probe's ``wants`` (None: not known before it is checked, so offered)."""
    return capabilities is None or first_wanted(capabilities, wants) is not None


def server_capabilities(model: str) -> tuple[str, ...] | None:
    """What a model of the server's list answers, read before it loads (a GGUF file: a causal LM; a folder: from
    its config), so that a probe is offered the models that answer it; None for a Hub id (the page asks the Hub
    nothing until a model is chosen) and for a model whose config cannot be read (offered: its check says why)."""
    if not on_disk(model):
        return None
    try:
        return model_capabilities(model)
    except (UnqoverError, OSError, ValueError) as err:
        _log.warning(
            "UNQOVER_SPACE_MODELS: %s is offered for every probe: %s", local_label(model), first_line(err)
        )
        return None


def wanted(wants) -> str:
    """``a QA model, a masked LM or a causal LM``: the model families that answer one of a probe's ``wants``, in
    words."""
    families = families_answering(wants)
    words = [FAMILY_HINTS[family] for family in families if family in FAMILY_HINTS] or ["another model"]
    return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else words[0]
