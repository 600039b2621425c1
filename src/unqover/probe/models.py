"""Load a Hugging Face model for probing: family from its config, device and dtype, safely.

Never runs remote code; loads safetensors weights unless the user allows pickled ones. The family decides the
scorer and the dataset config: extractive QA (``qa`` rows), masked LM (``mlm`` rows), causal LM (``qa`` rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from unqover.errors import UnqoverError

FAMILIES = ("qa", "mlm", "causal")
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

    def provenance(self) -> dict:
        return {
            "id": self.model_id,
            "revision": self.revision,
            "family": self.family,
            "dtype": self.dtype,
            "device": self.device,
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


def load_model(
    model_id: str,
    *,
    revision: str | None = None,
    device: str = "auto",
    dtype: str = "auto",
    token: str | None = None,
    allow_pickle: bool = False,
) -> LoadedModel:
    """Load config, tokenizer and model of a Hub id or a local folder, with one clear error per failure."""
    import torch
    import transformers

    if not model_id or not isinstance(model_id, str):
        raise UnqoverError("a model id or folder is needed")
    local = Path(model_id).expanduser()
    if local.is_dir():
        source = str(local)
    elif model_id.startswith((".", "/", "~")) or model_id.count("/") > 1:
        raise UnqoverError(f"model folder not found: {model_id}")
    else:
        source = model_id  # a Hub id
    common = {"revision": revision, "token": token, "trust_remote_code": False}
    try:
        config = transformers.AutoConfig.from_pretrained(source, **common)
    except (OSError, ValueError) as err:
        raise UnqoverError(f"cannot load model {model_id!r}: {_first_line(err)}") from err
    family = detect_family(getattr(config, "architectures", None), getattr(config, "model_type", None))
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(source, **common)
    except (OSError, ValueError, TypeError) as err:
        raise UnqoverError(f"cannot load the tokenizer of {model_id!r}: {_first_line(err)}") from err
    if family == "qa" and not getattr(tokenizer, "is_fast", False):
        raise UnqoverError(
            f"{model_id!r} has no fast tokenizer: QA scoring needs character offsets (a tokenizer.json or a "
            "tokenizer class with a fast version)"
        )
    device = choose_device(device)
    dtype = choose_dtype(dtype, device)
    auto = {
        "qa": transformers.AutoModelForQuestionAnswering,
        "mlm": transformers.AutoModelForMaskedLM,
        "causal": transformers.AutoModelForCausalLM,
    }[family]
    try:
        model = auto.from_pretrained(
            source, dtype=getattr(torch, dtype), use_safetensors=not allow_pickle, **common
        )
    except (OSError, ValueError) as err:
        hint = (
            ""
            if allow_pickle
            else " (only safetensors weights are loaded; pass --allow-pickle to trust .bin files)"
        )
        raise UnqoverError(f"cannot load the weights of {model_id!r}: {_first_line(err)}{hint}") from err
    model.to(device).eval()
    commit = getattr(config, "_commit_hash", None)
    return LoadedModel(model, tokenizer, family, model_id, revision or commit, device, dtype)


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
