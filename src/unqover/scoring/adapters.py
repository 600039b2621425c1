"""PEFT adapters (LoRA and the like) merged into a loaded model: ``unqover probe MODEL --adapter PATH_OR_ID``.

The adapter is a local folder or a Hub id (``owner/name``, optionally ``owner/name@REVISION``) holding
``adapter_config.json`` and ``adapter_model.safetensors`` (``adapter_model.bin`` only with ``--allow-pickle``).
It is applied with ``peft.PeftModel.from_pretrained`` and merged into the base weights (``merge_and_unload``):
the merged model gives the adapted model's numbers within float tolerance and scores as fast as the base model.
No code of the adapter's runs (no ``trust_remote_code``). What was applied is recorded (:meth:`Adapter.record`):
the id given, the resolved folder of a local adapter, the Hub commit, the base model it was made for and a
sha256 of its config and weights, so that a resumed run with another adapter is refused.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from unqover.errors import UnqoverError, first_line

ADAPTER_CONFIG = "adapter_config.json"
SAFE_WEIGHTS = "adapter_model.safetensors"
PICKLE_WEIGHTS = "adapter_model.bin"
#: a Hub repository id with its owner, ``owner/name`` (``unqover.env.HUB_ID`` with the owner required)
HUB_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}")
PICKLE_HINT = f"only {SAFE_WEIGHTS} is loaded; pass --allow-pickle to trust {PICKLE_WEIGHTS}"


@dataclass(frozen=True)
class Adapter:
    """An adapter found on disk: the id given, its folder, weights file, Hub commit (None when local)."""

    given: str
    folder: Path
    weights: str
    revision: str | None
    local: bool
    config: dict

    @property
    def base_model(self) -> str | None:
        return self.config.get("base_model_name_or_path")

    def fingerprint(self) -> str:
        """sha256 of the config's bytes, then the weights' bytes."""
        digest = hashlib.sha256()
        for name in (ADAPTER_CONFIG, self.weights):
            with open(self.folder / name, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
        return digest.hexdigest()

    def record(self) -> dict:
        return {
            "id": self.given,
            **({"path": str(self.folder)} if self.local else {}),
            "revision": self.revision,
            "base_model": self.base_model,
            "peft_type": self.config.get("peft_type"),
            "sha256": self.fingerprint(),
        }


def find_adapter(adapter: str, *, token: str | None = None, allow_pickle: bool = False) -> Adapter:
    """The adapter's folder, config and weights: a local folder, else a Hub id (its two files downloaded)."""
    if not adapter or not isinstance(adapter, str):
        raise UnqoverError("--adapter needs a folder or a Hub id")
    local = Path(adapter).expanduser()
    if local.is_dir():
        folder = local.resolve()
        if not (folder / ADAPTER_CONFIG).is_file():
            raise UnqoverError(f"--adapter {adapter} is no PEFT adapter folder: it has no {ADAPTER_CONFIG}")
        if (folder / SAFE_WEIGHTS).is_file():
            weights = SAFE_WEIGHTS
        elif allow_pickle and (folder / PICKLE_WEIGHTS).is_file():
            weights = PICKLE_WEIGHTS
        else:
            found = (folder / PICKLE_WEIGHTS).is_file()
            raise UnqoverError(
                f"--adapter {adapter} has no {SAFE_WEIGHTS}"
                + (f" ({PICKLE_HINT})" if found else ": is it a PEFT adapter folder?")
            )
        return Adapter(adapter, folder, weights, None, True, _read_config(folder / ADAPTER_CONFIG, adapter))
    if local.exists():
        raise UnqoverError(f"--adapter {adapter} is a file: an adapter is a folder or a Hub id")
    repo, _, revision = adapter.partition("@")
    if adapter.startswith((".", "/", "~")) or not HUB_REPO.fullmatch(repo) or ".." in repo or "/" not in repo:
        raise UnqoverError(f"--adapter folder not found: {adapter}")
    return _hub_adapter(adapter, repo, revision or None, token, allow_pickle)


def _read_config(path: Path, adapter: str) -> dict:
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise UnqoverError(
            f"--adapter {adapter}: {ADAPTER_CONFIG} cannot be read: {first_line(err)}"
        ) from None
    if not isinstance(config, dict) or "peft_type" not in config:
        raise UnqoverError(f"--adapter {adapter}: {ADAPTER_CONFIG} is no PEFT adapter config (no peft_type)")
    return config


def _hub_adapter(adapter: str, repo: str, revision: str | None, token, allow_pickle: bool) -> Adapter:
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError

    def download(name: str) -> Path:
        return Path(hf_hub_download(repo, name, revision=revision, token=token))

    try:
        config_path = download(ADAPTER_CONFIG)
        try:
            weights_path = download(SAFE_WEIGHTS)
        except EntryNotFoundError:
            if not allow_pickle:
                raise UnqoverError(f"--adapter {adapter} has no {SAFE_WEIGHTS} ({PICKLE_HINT})") from None
            weights_path = download(PICKLE_WEIGHTS)
    except UnqoverError:
        raise
    except Exception as err:  # offline, not found, gated: huggingface_hub's errors (OSError, HTTP errors)
        raise UnqoverError(
            f"cannot load the adapter {adapter!r}: it is no local folder, and the Hub gave: {first_line(err)}"
        ) from None
    folder = config_path.parent
    if weights_path.parent != folder:  # both files of one snapshot (one commit)
        raise UnqoverError(f"cannot load the adapter {adapter!r}: its files come from different revisions")
    return Adapter(adapter, folder, weights_path.name, folder.name, False, _read_config(config_path, adapter))


def apply_adapter(model, adapter: Adapter, model_id: str):
    """The model with the adapter merged into its weights (``merge_and_unload``)."""
    try:
        import peft
    except ImportError:
        raise UnqoverError("--adapter needs PEFT: pip install 'unqover[peft]'") from None
    base = adapter.base_model
    made_for = f"it was made for {base!r} (its base_model_name_or_path)" if base else "it names no base model"
    try:
        wrapped = peft.PeftModel.from_pretrained(model, str(adapter.folder), is_trainable=False)
    except (RuntimeError, ValueError, KeyError, TypeError, AttributeError, IndexError) as err:
        raise UnqoverError(
            f"the adapter {adapter.given} does not fit {model_id}: {made_for}; {_reason(err)}"
        ) from None
    try:
        merge = wrapped.merge_and_unload
    except AttributeError:  # prompt tuning and the like add inputs, not weights
        raise UnqoverError(
            f"the adapter {adapter.given} ({adapter.config.get('peft_type')}) cannot be merged into the model's "
            "weights: unqover applies adapters that merge, such as LoRA"
        ) from None
    try:
        merged = merge()
    except (RuntimeError, ValueError, TypeError, AttributeError) as err:
        raise UnqoverError(
            f"the adapter {adapter.given} cannot be merged into {model_id}: {_reason(err)}"
        ) from None
    return merged.eval()


def _reason(err: Exception) -> str:
    """The telling line of an error: a state dict's first size mismatch, else the first line."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    mismatch = next((line for line in lines if line.startswith("size mismatch")), None)
    return (mismatch or first_line(err)).rstrip(".")
