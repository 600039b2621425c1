"""A run folder's record of what it is (``run.json``): read, checked and claimed before anything is scored, so
that a second command resumes the same run and never mixes in another's scores."""

from __future__ import annotations

import json
from pathlib import Path

from unqover.errors import UnqoverError, first_line
from unqover.files import check_writable, write_json_atomic
from unqover.scoring.run_record import comparable


def read_manifest(folder: Path) -> dict | None:
    """A run folder's run.json (None when there is none), or one clear error when it is unreadable."""
    manifest = folder / "run.json"
    if not manifest.is_file():
        return None
    try:
        existing = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise _not_resumable(folder, f"{manifest} is unreadable ({first_line(err)})") from None
    if not isinstance(existing, dict):
        raise _not_resumable(folder, f"{manifest} is not a run record")
    return existing


def _not_resumable(folder: Path, why: str) -> UnqoverError:
    """The error of a run folder whose run.json cannot be read (``why``), with what to do instead."""
    return UnqoverError(
        f"{why}, so {folder} cannot be resumed: remove that folder or choose another --output"
    )


def check_run_folder(folder: Path) -> None:
    """What can be checked of a run folder before anything is loaded: that it can be written, and that it is
    new, empty or an unqover run folder with a readable run.json."""
    manifest = read_manifest(folder)
    check_writable(folder, folder=True)
    if manifest is None and folder.is_dir() and any(folder.iterdir()):
        raise UnqoverError(f"{folder} exists and is not an unqover run folder; choose another --output")


def differing_fields(a: dict, b: dict) -> list[str]:
    """The fields two run records differ in: a record's one differing field is named (``model.adapter``,
    ``prompt.system_prompt``), a record that differs in more is named whole (``model``)."""
    out = []
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        if x == y:
            continue
        inner = (
            [k for k in sorted(set(x) | set(y)) if x.get(k) != y.get(k)]
            if isinstance(x, dict) and isinstance(y, dict)
            else []
        )
        out.append(f"{key}.{inner[0]}" if len(inner) == 1 else key)
    return out


def another_run(folder: Path, differing: list[str]) -> str:
    """The one line refusing a run folder that holds a run differing in the fields ``differing``."""
    return (
        f"{folder} holds another run (it differs in {', '.join(differing)}); choose another --output or remove "
        "that folder"
    )


def claim(folder: Path, identity: dict) -> None:
    """Record what this run is, or refuse a folder that holds a different run."""
    existing = read_manifest(folder)
    if existing is None and folder.exists() and any(not _being_written(p) for p in folder.iterdir()):
        # another shard's process may have claimed the folder since it was read (shards start together on Ray)
        existing = read_manifest(folder)
        if existing is None:
            raise UnqoverError(f"{folder} exists and is not an unqover run folder; choose another --output")
    if existing is not None:
        differing = differing_fields(*comparable(existing, identity))  # the same model's bytes: the same run
        if differing:
            raise UnqoverError(another_run(folder, differing))
        return
    folder.mkdir(parents=True, exist_ok=True)
    write_json_atomic(folder / "run.json", identity)


def _being_written(path: Path) -> bool:
    """A run.json that another process is writing right now (:func:`unqover.files.atomic_path`'s temporary)."""
    return path.name.startswith(".run.json.") and path.name.endswith(".tmp")


def holds_this_run(folder: Path, identity: dict) -> bool:
    """Whether ``folder`` holds scores of the run ``identity`` (what an interrupted run keeps for its resume)."""
    from unqover.scoring.shard_files import holds_scores

    try:
        existing = read_manifest(folder)
    except UnqoverError:
        return False
    return (
        existing is not None
        and not differing_fields(*comparable(existing, identity))
        and holds_scores(folder)
    )
