"""What every publishing plan shares: messages, Hub repo ids, card front matter, planned files."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from unqover.errors import UnqoverError

CARD = "README.md"
BUILD_HINT = "run `unqover build-datasets` first"
OFFLINE_MESSAGE = "offline mode: set HF_HUB_OFFLINE=0 and check your connection; use --dry-run to validate without uploading"
TOKEN_MESSAGE = "no Hugging Face token found: run `hf auth login`, or pass --token, or set HF_TOKEN (a token with write access)"

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?---[ \t]*(?:\n|\Z)", re.DOTALL)
# Hub user and organisation names: letters, digits and single inner hyphens/underscores/dots (the rules
# `huggingface_hub.utils.validate_repo_id` enforces for each part of a repo id).
_REPO_PART = re.compile(r"^(?![-.])[A-Za-z0-9_.-]{1,96}(?<![-.])$")


@dataclass(frozen=True)
class PlannedFile:
    """One file to upload: where it goes in the repo, where it is on disk, and its size in bytes."""

    path_in_repo: str
    local_path: Path
    size: int


def is_repo_name(value: str) -> bool:
    """Whether ``value`` is a valid Hub user, organisation or repo name (one part of a repo id)."""
    return bool(_REPO_PART.match(value)) and "--" not in value and ".." not in value


def validate_repo_id(repo_id: str) -> str:
    """Return ``repo_id`` if it is ``namespace/name`` under the Hub's naming rules, else raise UnqoverError."""
    parts = repo_id.split("/")
    if len(parts) != 2:
        raise UnqoverError(f"invalid repo id {repo_id!r}: expected '<namespace>/<name>'")
    for kind, part in zip(("namespace", "name"), parts, strict=True):
        if not _REPO_PART.match(part) or "--" in part or ".." in part or part.endswith(".git"):
            raise UnqoverError(
                f"invalid {kind} {part!r} in repo id {repo_id!r}: use letters, digits, '-', '_' or '.' "
                "(at most 96 characters, not starting or ending with '-' or '.', no '--' or '..')"
            )
    return repo_id


def read_card_metadata(card: Path, what: str = "dataset card") -> dict[str, Any]:
    """Parse the YAML front matter of a card (``what`` names it in errors); raise UnqoverError if it is broken."""
    try:
        text = card.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        hint = BUILD_HINT if what == "dataset card" else "every Space needs a README.md with front matter"
        raise UnqoverError(f"no {what} at {card}; {hint}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UnqoverError(f"cannot read {what} {card}: {exc}") from exc
    match = _FRONT_MATTER.match(text.replace("\r\n", "\n"))
    if match is None:
        raise UnqoverError(f"{card} has no YAML front matter (a block between '---' lines at the top)")
    try:
        metadata = yaml.safe_load(match.group(1) or "")
    except yaml.YAMLError as exc:
        raise UnqoverError(f"the YAML front matter of {card} does not parse: {exc}") from exc
    if not isinstance(metadata, dict):
        raise UnqoverError(f"the YAML front matter of {card} is not a mapping of keys to values")
    return metadata


def _is_upload_noise(relative: PurePosixPath) -> bool:
    """Hidden files and Python caches: never part of a Space."""
    return any(part.startswith(".") or part == "__pycache__" for part in relative.parts) or (
        relative.suffix in {".pyc", ".pyo"}
    )
