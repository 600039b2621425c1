"""Load a Hugging Face model for probing: family from its config, device and dtype, safely.

Never runs remote code; loads safetensors weights unless the user allows pickled ones. The family decides the
scorer and the dataset config: extractive QA (``qa`` rows), masked LM (``mlm`` rows), causal LM (``qa`` rows).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

from unqover.env import HUB_ID
from unqover.errors import UnqoverError, first_line, require_models_extra
from unqover.scoring.adapters import apply_adapter, find_adapter
from unqover.scoring.gguf import (
    broken_tokenizer,
    check_gguf_name,
    find_gguf,
    gguf_record,
    is_gguf_name,
    parsed_once,
    readable_architectures,
    refuse_missing_gguf,
    require_gguf,
)
from unqover.scoring.missing_weights import check_complete, missing_refused
from unqover.scoring.precision import bfloat16_products
from unqover.scoring.requests import ANSWER_SPANS, CLASSES, CONTINUATIONS, FILL_IN, SENTENCES
from unqover.scoring.weights import hub_snapshot, weights_sha256

FAMILIES = ("qa", "mlm", "causal")
#: what a transformers model of each family (its config's architectures) answers
FAMILY_CAPABILITIES = {
    "qa": (ANSWER_SPANS,),
    "mlm": (FILL_IN, SENTENCES),
    "causal": (CONTINUATIONS, SENTENCES),
    "nli": (CLASSES,),
}
DTYPES = ("auto", "float32", "bfloat16", "float16")
DEVICES = ("auto", "cuda", "mps", "cpu")


@dataclass
class LoadedModel:
    """A model ready to score: its family, tokenizer, device, dtype and where it came from."""

    model: object
    tokenizer: object
    family: str
    model_id: str
    revision: str | None
    device: str
    dtype: str
    path: str | None = None  # a local folder, resolved (None for a Hub model: its revision says which)
    adapter: dict | None = None  # the PEFT adapter merged into the weights (``Adapter.record``)
    model_args: dict | None = None  # the ``--model-arg`` keywords given to from_pretrained
    weights_sha256: str | None = None  # a local folder's weight files (``unqover.scoring.weights``)
    gguf: dict | None = None  # a GGUF checkpoint: its file, SHA-256, quantization, architecture
    engine: str = "transformers"  # the engine that loaded it (``unqover.scoring.engines``)
    capabilities: tuple[str, ...] = ()  # what it answers (``unqover.scoring.requests``): its family's

    def __post_init__(self) -> None:
        self.capabilities = self.capabilities or FAMILY_CAPABILITIES[self.family]

    def provenance(self) -> dict:
        return {
            **model_record(self.model_id, self.revision, self.family, self.dtype, self.device),
            **({"path": self.path} if self.path else {}),
            **({"weights_sha256": self.weights_sha256} if self.weights_sha256 else {}),
            **({"gguf": self.gguf} if self.gguf else {}),
            **loading_record(self.adapter, self.model_args),
        }


def model_record(model_id: str, revision: str | None, family: str, dtype: str, device: str) -> dict:
    """The keys every loaded model's provenance starts with, in this order (the predictions file records them)."""
    return {"id": model_id, "revision": revision, "family": family, "dtype": dtype, "device": device}


def loading_record(adapter: dict | None, model_args: dict | None) -> dict:
    """The ``adapter`` and ``model_args`` of a model's provenance and run identity, only where given (a run
    without them records what it always did)."""
    return {
        **({"adapter": adapter} if adapter else {}),
        **({"model_args": dict(model_args)} if model_args else {}),
    }


def detect_family(architectures: list[str] | None, model_type: str | None) -> str:
    """The scoring family from the config's ``architectures`` (e.g. ``BertForQuestionAnswering`` -> ``qa``)."""
    for name in architectures or []:
        if name.endswith("ForQuestionAnswering"):
            return "qa"
        if name.endswith("ForMaskedLM"):
            return "mlm"
        if name.endswith(("ForCausalLM", "LMHeadModel")):
            return "causal"
    found = ", ".join(architectures or []) or "none"
    raise UnqoverError(
        f"unsupported model (architectures: {found}, model_type: {model_type}): unqover scores extractive "
        "question answering (…ForQuestionAnswering), masked LMs (…ForMaskedLM) and causal LMs (…ForCausalLM)"
    )


#: the family of sequence classifiers (``…ForSequenceClassification``): the probes that score NLI models take it
CLASSIFIER_FAMILY = "nli"


def family_of(config) -> str:
    """The model family of a transformers config: ``nli`` for sequence classifiers, else the family its
    ``architectures`` name (``qa``, ``mlm``, ``causal``); an unsupported model is an error."""
    architectures = getattr(config, "architectures", None) or []
    if any(a.endswith("ForSequenceClassification") for a in architectures):
        return CLASSIFIER_FAMILY
    return detect_family(architectures, getattr(config, "model_type", None))


def choose_device(device: str = "auto") -> str:
    import torch

    if device not in DEVICES:
        raise UnqoverError(f"device must be one of {DEVICES}, got {device!r}")
    if device == "auto":
        if torch.cuda.is_available():
            return "cuda"
        mps = getattr(torch.backends, "mps", None)
        return "mps" if mps is not None and mps.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise UnqoverError("--device cuda was asked for but no CUDA GPU is available")
    mps = getattr(torch.backends, "mps", None)
    if device == "mps" and not (mps is not None and mps.is_available()):
        raise UnqoverError("--device mps was asked for but no Apple GPU (MPS) is available")
    return device


def choose_dtype(dtype: str, device: str) -> str:
    """fp32 on CPU by default (the reference); bf16 on GPUs that support it, else fp16."""
    import torch

    if dtype not in DTYPES:
        raise UnqoverError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    if dtype != "auto":
        return dtype
    if device == "cuda":
        return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
    return "float16" if device == "mps" else "float32"


#: what to do when a Hub model cannot be fetched here
OFFLINE_MODEL_HINT = (
    "offline, give a local model folder instead (config.json, weights and tokenizer, e.g. from "
    "`hf download {model} --local-dir DIR` on a machine with network)"
)


@dataclass(frozen=True)
class ModelSource:
    """Where a model comes from (a local folder or a Hub id, and the GGUF file in it where the model is one), and
    its safe loaders with one clear error each.

    Every loader passes ``trust_remote_code=False``; weights are safetensors unless ``allow_pickle``, which allows
    pickled (.bin) weights too and never forbids safetensors (a folder with both loads its safetensors). A GGUF
    checkpoint (``gguf_file``) is read by transformers itself, config, tokenizer and weights from the one file
    (:mod:`unqover.scoring.gguf`).
    """

    model_id: str
    location: str
    revision: str | None = None
    token: str | None = None
    gguf_file: str | None = None  # the GGUF file inside ``location`` (a folder or Hub repo)

    @property
    def path(self) -> str | None:
        """The resolved local folder (symlinks followed), or its GGUF file; None for a Hub model."""
        local = Path(self.location).expanduser()
        if not local.is_dir():
            return None
        return str((local / self.gguf_file).resolve()) if self.gguf_file else str(local.resolve())

    @property
    def options(self) -> dict:
        gguf = {"gguf_file": self.gguf_file} if self.gguf_file else {}
        return {"revision": self.revision, "token": self.token, "trust_remote_code": False, **gguf}

    def gguf_path(self) -> Path | None:
        """The GGUF file on this machine: the local one, or a Hub file in the cache once it is downloaded."""
        if self.gguf_file is None:
            return None
        if self.path is not None:
            return Path(self.path)
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(self.location, self.gguf_file, revision=self.revision)
        return Path(found) if isinstance(found, str) else None

    def gguf(self) -> dict | None:
        """What a run records of the GGUF file (:func:`unqover.scoring.gguf.gguf_record`); None for other models."""
        path = self.gguf_path()
        return None if path is None else gguf_record(path)

    def config(self):
        require_models_extra()
        if self.gguf_file is not None:
            return self._gguf_config()
        return self._config()

    def _gguf_config(self):
        """The config transformers builds from the GGUF file's metadata (read once per file in a process), with
        ``architectures`` set to the causal LM class of its model type: unqover scores GGUF causal LMs only."""
        import copy

        from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

        require_gguf()
        path = self.gguf_path()
        if path is not None:  # a local file (or one in the Hub cache): checked before transformers reads it
            gguf_record(path)
            stat = path.stat()
            config = copy.deepcopy(_gguf_config(self, str(path), (stat.st_size, stat.st_mtime_ns)))
        else:
            config = self._config()
            if (
                path := self.gguf_path()
            ) is not None:  # a Hub file, downloaded for its config: checked as a local one
                gguf_record(path)
        causal = MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(config.model_type)
        if causal is None:
            raise UnqoverError(
                f"cannot score the GGUF model {self.model_id!r}: it is a {config.model_type} model, and unqover "
                "scores GGUF checkpoints of causal LMs only (Llama, Mistral, Qwen, Gemma, Phi-3, ...)"
            )
        config.architectures = [causal]
        return config

    def _config(self):
        import transformers

        from unqover.env import hub_unreachable, quiet_hub_logs

        why = None if self.path is not None else hub_unreachable()
        if why is not None and why != "offline mode":  # not tried: the libraries would retry for 30-50 s
            raise UnqoverError(
                f"cannot load model {self.model_id!r}: it is no local folder, and the Hugging Face Hub cannot be "
                f"reached ({why}); {OFFLINE_MODEL_HINT.format(model=self.model_id)}"
            )
        try:
            with quiet_hub_logs():
                return transformers.AutoConfig.from_pretrained(self.location, **self.options)
        except (OSError, ValueError) as err:
            self._refuse_custom_code(err)
            self._refuse_gguf(err)
            if self.path is not None:  # a local folder whose config transformers cannot read
                raise UnqoverError(
                    f"cannot read the config of the model folder {self.model_id}: {first_line(err)}"
                ) from err
            from unqover.env import offline

            hint = (
                f"; {OFFLINE_MODEL_HINT.format(model=self.model_id)}"
                if offline() or "offline" in str(err).lower() or "connect" in str(err).lower()
                else ""
            )
            raise UnqoverError(
                f"cannot load model {self.model_id!r}: it is no local folder, and the Hub gave: {first_line(err).rstrip('.')}"
                + hint
            ) from err

    def _refuse_gguf(self, err: Exception) -> None:
        """One line for a GGUF file transformers cannot read: an architecture it has no reader for, or bytes it
        cannot parse."""
        if self.gguf_file is None:
            return
        message = first_line(err)
        if "not supported" in message and "architecture" in message.lower():
            raise UnqoverError(
                f"cannot load the GGUF file {self.gguf_file}: {message.rstrip('.')}; transformers reads GGUF files "
                f"of these architectures: {', '.join(readable_architectures())}"
            ) from err
        raise UnqoverError(f"cannot load the GGUF file {self.gguf_file}: {message}") from err

    def _refuse_custom_code(self, err: Exception) -> None:
        """One line for a model that needs its own code (``auto_map`` in its config) to load: unqover never runs
        it (every loader passes ``trust_remote_code=False``), so say so and what to do instead."""
        import json

        if "custom code" not in str(err) and "trust_remote_code" not in str(err):
            return
        auto_map, model_type = None, None
        if self.path is not None:
            try:
                record = json.loads((Path(self.path) / "config.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                record = None
            if isinstance(record, dict):
                auto_map, model_type = record.get("auto_map"), record.get("model_type")
        what = (
            f"config.json's auto_map names {', '.join(sorted(auto_map))}"
            if isinstance(auto_map, dict)
            else "its config has an auto_map"
        )
        kind = f" for model_type {model_type!r}, which transformers does not ship" if model_type else ""
        raise UnqoverError(
            f"cannot load model {self.model_id!r}: it needs custom code ({what}{kind}), and unqover never runs a "
            "model's own code (no trust_remote_code); use a model of an architecture transformers ships (BERT, "
            "RoBERTa, GPT-2, Llama, ...), or convert this one to such an architecture"
        ) from err

    def tokenizer(self):
        import transformers

        try:
            return transformers.AutoTokenizer.from_pretrained(self.location, **self.options)
        except (OSError, ValueError, TypeError, KeyError) as err:
            raise UnqoverError(f"cannot load the tokenizer of {self.model_id!r}: {first_line(err)}") from err
        # the tokenizers library's own errors are plain Exceptions (a merge naming a token off the vocabulary)
        except Exception as err:
            if type(err) is not Exception:
                raise
            if self.gguf_file is not None:
                raise broken_tokenizer(self.gguf_file, err) from err
            raise UnqoverError(f"cannot load the tokenizer of {self.model_id!r}: {first_line(err)}") from err

    def weights(
        self,
        auto_class,
        dtype: str,
        allow_pickle: bool,
        model_args: dict | None = None,
        fresh_head: bool = False,
        **kwargs,
    ):
        """The weights; ``model_args`` (``--model-arg``) are more keywords for ``from_pretrained``, and an error
        that they can cause (a keyword the model does not take, a value it refuses, a library it needs) is
        refused in one line naming them. A weight the checkpoint lacks is refused (scores of random weights are
        not the model's), unless ``fresh_head``: a base checkpoint given a new head to train."""
        import pickle

        import torch

        try:
            from huggingface_hub.errors import StrictDataclassError
        except ImportError:  # an older huggingface_hub: configs take any value
            StrictDataclassError = ()

        model_args = dict(model_args or {})
        check_model_args(model_args)
        check_switches(model_args)
        # what the checkpoint lacks (refused: transformers would fill it with random numbers), unless asked by hand
        info = {} if "output_loading_info" in model_args or fresh_head else {"output_loading_info": True}
        try:
            with missing_refused() if info else contextlib.nullcontext():
                model = auto_class.from_pretrained(
                    self.location,
                    dtype=getattr(torch, dtype),
                    # --allow-pickle allows .bin weights besides safetensors (None: safetensors when there are any)
                    use_safetensors=None if allow_pickle else True,
                    **info,
                    **kwargs,
                    **model_args,
                    **self.options,
                )
            if info:
                model, loading_info = model
                check_complete(self.model_id, model, loading_info)
            if model_args and not isinstance(model, torch.nn.Module):  # e.g. output_loading_info=true
                raise TypeError(f"from_pretrained then gives a {type(model).__name__}, not a model")
            return model
        except (TypeError, ImportError, KeyError, AttributeError) as err:
            if not model_args:
                raise
            raise UnqoverError(unusable_model_args(model_args, err)) from err
        except StrictDataclassError as err:  # a config field of another type (--model-arg n_layer=abc)
            raise UnqoverError(unusable_model_args(model_args, err.__cause__ or err)) from err
        except pickle.UnpicklingError as err:
            # torch's weights-only unpickler refused it: the file holds more than tensors (or is no pickle)
            raise UnqoverError(
                f"cannot load the weights of {self.model_id!r}: its pickled (.bin) weights hold more than tensors "
                "or are corrupt, and were refused by torch's safe loader (such a file can run code when loaded); use "
                "safetensors weights from a source you trust"
            ) from err
        except (RuntimeError, EOFError) as err:  # a truncated or corrupt weights file, mismatched shapes
            raise UnqoverError(f"cannot load the weights of {self.model_id!r}: {first_line(err)}") from err
        except (OSError, ValueError) as err:
            if model_args and not isinstance(err, OSError):
                raise UnqoverError(unusable_model_args(model_args, err)) from err
            hint = (
                ""
                if allow_pickle or self.gguf_file
                else " (only safetensors weights are loaded; pass --allow-pickle to trust .bin files)"
            )
            raise UnqoverError(
                f"cannot load the weights of {self.model_id!r}: {first_line(err)}{hint}"
            ) from err


def check_model_args(model_args: dict) -> None:
    """Keywords unqover sets itself cannot be given (the command line refuses them with the option to use)."""
    if "trust_remote_code" in model_args:
        raise UnqoverError(
            "--model-arg trust_remote_code cannot be used: unqover never runs a model's own code"
        )
    taken = sorted(
        set(model_args) & {"revision", "token", "dtype", "torch_dtype", "use_safetensors", "device_map"}
    )
    if taken:
        raise UnqoverError(f"--model-arg {taken[0]} cannot be used: unqover sets it (see its own options)")


def check_switches(model_args: dict) -> None:
    """A keyword that ``from_pretrained`` declares a switch (``bool``) takes true or false: anything else is
    refused in one line before the weights load (transformers would read any text as true)."""
    import inspect
    import types
    import typing

    from transformers import PreTrainedModel

    declared = inspect.signature(PreTrainedModel.from_pretrained).parameters
    for key, value in model_args.items():
        kind = declared[key].annotation if key in declared else None
        options = set(typing.get_args(kind)) if isinstance(kind, types.UnionType) else {kind}
        if bool in options and options <= {bool, type(None)} and not isinstance(value, bool):
            if value is None and type(None) in options:
                continue
            raise UnqoverError(
                f"--model-arg {arg_text(key, value)} cannot be used: {key} takes true or false"
            )


def unusable_model_args(model_args: dict, err: BaseException) -> str:
    """``--model-arg KEY=VALUE cannot be used: <reason>``, naming the keys the error names (else all)."""
    message = str(err)
    named = [key for key in model_args if re.search(rf"\b{re.escape(key)}\b", message)] or list(model_args)
    given = " ".join(
        f"--model-arg {arg_text(key, value)}" for key, value in model_args.items() if key in named
    )
    return f"{given} cannot be used: {first_line(err).rstrip('.')}"


def arg_text(key: str, value) -> str:
    """``KEY=VALUE`` as the user wrote it (text as is, anything else as JSON)."""
    import json

    return f"{key}={value if isinstance(value, str) else json.dumps(value)}"


@functools.lru_cache(maxsize=4)
def _gguf_config(source: ModelSource, path: str, stamp: tuple[int, int]):
    """A GGUF file's config, built once per file (size, modification time) in a process: transformers parses the
    whole header, tokenizer included, for it (seconds for a real model)."""
    return source._config()


def model_source(
    model_id: str, revision: str | None = None, token: str | None = None, gguf_file: str | None = None
) -> ModelSource:
    """A local folder or GGUF file when ``model_id`` is one, else a Hub id; ``gguf_file`` names the GGUF file
    inside a folder or Hub repo (:func:`unqover.scoring.gguf.find_gguf`). A path-like id that does not exist is
    an error."""
    if not model_id or not isinstance(model_id, str):
        raise UnqoverError("a model id or folder is needed")
    local = Path(model_id).expanduser()
    found = find_gguf(local, gguf_file)
    if found is not None:
        return ModelSource(model_id, str(found[0]), revision, token, gguf_file=found[1])
    if local.is_dir():
        return ModelSource(model_id, str(local), revision, token)
    if looks_like_path(model_id):  # refused at once: never tried on the Hub (40 s offline)
        what = "GGUF file" if is_gguf_name(model_id) else "model folder"
        raise UnqoverError(f"no {what} {model_id} (it looks like a path, not a Hub id OWNER/NAME)")
    refuse_missing_gguf(model_id, gguf_file)
    if gguf_file is not None:
        check_gguf_name(gguf_file)
    return ModelSource(model_id, model_id, revision, token, gguf_file=gguf_file)


#: A Hub model id: ``name`` or ``owner/name`` of letters, digits, '-', '_', '.' (no '--' or '..').


def is_hub_id(text: str) -> bool:
    """Whether ``text`` can name a model on the Hub (anything else can only be a local folder)."""
    return bool(HUB_ID.fullmatch(text)) and "--" not in text and ".." not in text and not text.endswith(".")


def looks_like_path(text: str) -> bool:
    """Whether a model argument is meant as a local folder: it starts with ``.``, ``/`` or ``~``, ends with a
    separator, holds an OS separator other than ``/``, has more than one ``/``, or its first part is a local folder
    (``tiny/qa`` where ``tiny/`` exists), or it cannot be a Hub id at all. ``owner/name`` stays a Hub id."""
    separators = {sep for sep in (os.sep, os.altsep) if sep and sep != "/"}
    if text.startswith((".", "/", "~")) or text.endswith(("/", *separators)) or text.count("/") > 1:
        return True
    if any(sep in text for sep in separators):
        return True
    first, slash, _ = text.partition("/")
    return (bool(slash) and Path(first).is_dir()) or not is_hub_id(text)


def load_model(
    model_id: str,
    *,
    revision: str | None = None,
    device: str = "auto",
    dtype: str = "auto",
    token: str | None = None,
    allow_pickle: bool = False,
    adapter: str | None = None,
    model_args: dict | None = None,
    gguf_file: str | None = None,
) -> LoadedModel:
    """Load config, tokenizer and model of a Hub id, a local folder or a GGUF file (``gguf_file``: the one in a
    folder or Hub repo), with one clear error per failure; ``model_args`` go to the model's ``from_pretrained``,
    and a PEFT ``adapter`` (a folder or Hub id) is merged into the weights (:mod:`unqover.scoring.adapters`)."""
    require_models_extra()
    import transformers

    check_model_args(model_args or {})
    source = model_source(model_id, revision, token, gguf_file)
    found = find_adapter(adapter, token=token, allow_pickle=allow_pickle) if adapter is not None else None
    with parsed_once() if source.gguf_file else contextlib.nullcontext():
        config = source.config()
        family = detect_family(getattr(config, "architectures", None), getattr(config, "model_type", None))
        tokenizer = source.tokenizer()
        if family == "qa" and not getattr(tokenizer, "is_fast", False):
            raise UnqoverError(
                f"{model_id!r} has no fast tokenizer: QA scoring needs character offsets (a tokenizer.json or a "
                "tokenizer class with a fast version)"
            )
        device = choose_device(device)
        dtype = choose_dtype(dtype, device)
        bf16_products = dtype == "bfloat16" and device == "cpu" and family == "causal"
        auto = {
            "qa": transformers.AutoModelForQuestionAnswering,
            "mlm": transformers.AutoModelForMaskedLM,
            "causal": transformers.AutoModelForCausalLM,
        }[family]
        # a GGUF file's config is built from the same header the weights are read from: not parsed twice
        given = {"config": config} if source.gguf_file and not model_args else {}
        model = source.weights(auto, "float32" if bf16_products else dtype, allow_pickle, model_args, **given)
    if found is not None:
        model = apply_adapter(model, found, model_id)
    device = place_model(model, device)
    if bf16_products and device == "cpu":
        bfloat16_products(model)
    gguf = source.gguf()
    commit = getattr(config, "_commit_hash", None) or hub_commit(source)
    return LoadedModel(
        model,
        tokenizer,
        family,
        model_id,
        revision or commit,
        device,
        dtype,
        source.path,
        adapter=None if found is None else found.record(),
        model_args=dict(model_args) if model_args else None,
        weights_sha256=gguf["sha256"] if gguf else weights_sha256(source.path),
        gguf=gguf,
    )


def hub_commit(source: ModelSource) -> str | None:
    """The commit a Hub model's files were loaded from (the Hub-cache snapshot of its config.json), so that a
    run records the revision it measured even where transformers does not report it; None for a local folder
    or a file outside the cache."""
    if source.path is not None:
        return None
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(
            source.location, source.gguf_file or "config.json", revision=source.revision
        )
    except Exception:  # an id or revision the cache cannot name: nothing to record
        return None
    snapshot = hub_snapshot(Path(found).parent) if isinstance(found, str) else None
    return None if snapshot is None else snapshot[1]


def place_model(model, device: str) -> str:
    """Move the model to ``device`` for scoring; a model that transformers placed itself (quantized weights,
    e.g. ``--model-arg quantization_config=...``) stays where it is. Returns where it is. A GGUF checkpoint read
    into ordinary (dequantized) weights moves like any model."""
    quantizer = getattr(model, "hf_quantizer", None)
    dequantized = getattr(
        getattr(quantizer, "quantization_config", None), "quant_method", None
    ) == "gguf" and not (getattr(quantizer, "packed_modules", None))
    quantized = getattr(model, "is_quantized", False) and not dequantized
    if quantized or getattr(model, "hf_device_map", None):
        model.eval()
        return str(getattr(model, "device", device))
    model.to(device).eval()
    return device
