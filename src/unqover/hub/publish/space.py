"""The demo app (``space/``) as the Gradio Space ``<namespace>/<space name>``."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from unqover.errors import UnqoverError
from unqover.hub.publish.common import _is_upload_noise, validate_repo_id
from unqover.hub.publish.space_card import (
    SpacePlan,
    _check_requirements,
    _parse_python,
    _space_front_matter,
)


def plan_space(folder: Path, repo_id: str) -> SpacePlan:
    """Validate the demo app's folder (app, README with Space front matter, requirements) for Space ``repo_id``."""
    folder = Path(folder)
    validate_repo_id(repo_id)
    if not folder.is_dir():
        raise UnqoverError(f"no Space folder at {folder}; run from the repository root or pass --space")
    meta = _space_front_matter(folder, module=False)
    _check_requirements(folder / "requirements.txt")
    for path in sorted(folder.rglob("*.py")):
        if not _is_upload_noise(PurePosixPath(path.relative_to(folder).as_posix())):
            _parse_python(path)
    details = [f"app_file: {meta['app_file']}"]
    details += [f"{key}: {meta[key]}" for key in ("suggested_hardware",) if key in meta]
    details += [f"{key}: {', '.join(meta[key])}" for key in ("datasets", "models") if key in meta]
    return SpacePlan.from_folder(repo_id, folder, "space", meta, details)
