"""What every Gradio Space shares, the evaluate modules' and the demo app's: front matter, requirements, files.

The Hub builds a Space from its ``README.md`` front matter, so a wrong key fails only after the upload, on the
Space's page; everything here is checked locally first and summed up in a :class:`SpacePlan`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from unqover.errors import UnqoverError
from unqover.hub.publish.common import (
    _REPO_PART,
    CARD,
    PlannedFile,
    _is_upload_noise,
    read_card_metadata,
    validate_repo_id,
)

GRADIO_MAJOR = 6
"""The Gradio major version every app is written for (``sdk_version`` must be ``6.x.y``)."""
SHORT_DESCRIPTION_MAX = 60  # characters; the Hub rejects longer ones
SPACE_COLORS = frozenset({"red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray"})
_SDK_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


@dataclass(frozen=True)
class SpacePlan:
    """Exactly what :func:`publish` sends for one Gradio Space folder: an evaluate module or the demo app."""

    repo_id: str
    folder: Path
    files: tuple[PlannedFile, ...]
    kind: str  # "evaluate module" or "space"
    sdk_version: str
    short_description: str
    details: tuple[str, ...] = ()  # summary lines: the module's class, hardware, linked repos
    ignored: tuple[str, ...] = ()  # folder-relative paths that are not uploaded (caches, hidden files)
    repo_type: ClassVar[str] = "space"
    ignored_reason: ClassVar[str] = "hidden files and Python caches"

    @property
    def total_bytes(self) -> int:
        """Bytes over all files to upload."""
        return sum(f.size for f in self.files)

    @classmethod
    def from_folder(
        cls, repo_id: str, folder: Path, kind: str, meta: Mapping[str, Any], details: Sequence[str]
    ) -> SpacePlan:
        """The plan that sends every file of a checked ``folder`` (``meta``: its Space front matter)."""
        files, ignored = _folder_files(folder)
        sdk_version, short_description = meta["sdk_version"], meta["short_description"]
        return cls(repo_id, folder, files, kind, sdk_version, short_description, tuple(details), ignored)


def _space_hardware() -> frozenset[str]:
    """The ``suggested_hardware`` values the Hub accepts (huggingface_hub's list, or a copy of it)."""
    try:
        from huggingface_hub import SpaceHardware

        return frozenset(h.value for h in SpaceHardware)
    except ImportError:  # pragma: no cover - huggingface_hub is a dependency
        return frozenset(
            {"cpu-basic", "cpu-upgrade", "zero-a10g", "t4-small", "t4-medium", "l4x1", "a10g-small"}
        )


def _repo_list(card: Path, key: str, value: Any) -> list[str]:
    """A front-matter list of Hub repo ids (``name`` or ``namespace/name``), checked."""
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise UnqoverError(f"{card}: '{key}' must be a list of Hub repo ids (got {value!r})")
    for repo_id in value:
        if "/" in repo_id:
            try:
                validate_repo_id(repo_id)
            except UnqoverError as exc:
                raise UnqoverError(f"{card}: '{key}': {exc}") from None
        elif not _REPO_PART.match(repo_id):
            raise UnqoverError(f"{card}: '{key}' lists {repo_id!r}, which is not a Hub repo id")
    return list(value)


def _space_front_matter(folder: Path, *, module: bool) -> dict[str, Any]:
    """Read and check the Space front matter of ``folder/README.md``; return it.

    The Hub builds a Space from these keys, so a wrong one fails only after the upload, on the Space's page:
    ``sdk: gradio``, a quoted ``sdk_version`` of Gradio 6, an ``app_file`` that exists (``app.py`` for modules),
    a ``short_description`` of at most 60 characters, ``tags`` (with ``evaluate`` for modules so the Hub lists
    them as evaluate modules), and if present the colours, ``suggested_hardware``, ``datasets`` and ``models``.
    """
    card = folder / CARD
    meta = read_card_metadata(card, "Space card")
    where = f"{card}:"
    if meta.get("sdk") != "gradio":
        raise UnqoverError(f"{where} the front matter needs 'sdk: gradio' (got {meta.get('sdk')!r})")
    version = meta.get("sdk_version")
    match = _SDK_VERSION.match(version) if isinstance(version, str) else None
    if match is None:
        raise UnqoverError(
            f"{where} 'sdk_version' must be a full Gradio version such as \"{GRADIO_MAJOR}.31.0\" "
            f"(got {version!r}; quote it so YAML keeps it a string)"
        )
    if int(match[1]) != GRADIO_MAJOR:
        raise UnqoverError(
            f"{where} sdk_version {version} is not Gradio {GRADIO_MAJOR}; the apps use the Gradio "
            f"{GRADIO_MAJOR} API, so set sdk_version to the {GRADIO_MAJOR}.x release they were tested with"
        )
    app_file = meta.get("app_file")
    if module and app_file != "app.py":
        raise UnqoverError(f"{where} an evaluate module's Space needs 'app_file: app.py' (got {app_file!r})")
    if not isinstance(app_file, str) or not app_file.endswith(".py"):
        raise UnqoverError(f"{where} 'app_file' must name the app's Python file (got {app_file!r})")
    app = PurePosixPath(app_file)
    if app.is_absolute() or ".." in app.parts or not (folder / app).is_file():
        raise UnqoverError(f"{where} app_file {app_file!r} is not a file in {folder}")
    short = meta.get("short_description")
    if not isinstance(short, str) or not short.strip():
        raise UnqoverError(
            f"{where} the front matter needs a 'short_description' (one line, at most 60 characters)"
        )
    if len(short) > SHORT_DESCRIPTION_MAX:
        raise UnqoverError(
            f"{where} short_description has {len(short)} characters; the Hub allows at most "
            f"{SHORT_DESCRIPTION_MAX}: shorten {short!r}"
        )
    tags = meta.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise UnqoverError(f"{where} 'tags' must be a list of strings (got {tags!r})")
    if module and "evaluate" not in tags:
        raise UnqoverError(f"{where} an evaluate module's tags must include 'evaluate' (got {tags!r})")
    for key in ("colorFrom", "colorTo"):
        if key in meta and meta[key] not in SPACE_COLORS:
            raise UnqoverError(f"{where} {key} must be one of {sorted(SPACE_COLORS)} (got {meta[key]!r})")
    if "hardware" in meta:
        raise UnqoverError(
            f"{where} there is no 'hardware' key in Space front matter; use 'suggested_hardware'"
        )
    if "suggested_hardware" in meta:
        allowed = _space_hardware()
        if meta["suggested_hardware"] not in allowed:
            raise UnqoverError(
                f"{where} suggested_hardware {meta['suggested_hardware']!r} is not one of {sorted(allowed)}"
            )
    for key in ("datasets", "models"):
        if key in meta:
            _repo_list(card, key, meta[key])
    return meta


def _parse_python(path: Path) -> ast.Module:
    """Parse a Python file of a Space (it runs on the Hub, so a syntax error must be caught here)."""
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except FileNotFoundError:
        raise UnqoverError(f"missing {path}") from None
    except SyntaxError as exc:
        raise UnqoverError(f"{path} does not parse: {exc.msg} (line {exc.lineno})") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise UnqoverError(f"cannot read {path}: {exc}") from exc


def _check_requirements(path: Path) -> list[str]:
    """The requirement lines of a Space's ``requirements.txt``: present, non-empty, each one parsing."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UnqoverError(
            f"missing {path}: list what the Space installs (the Hub adds only gradio)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UnqoverError(f"cannot read {path}: {exc}") from exc
    lines = [line.split(" #")[0].strip() for line in text.splitlines()]
    requirements = [line for line in lines if line and not line.startswith("#")]
    if not requirements:
        raise UnqoverError(f"{path} is empty: list what the Space installs (the Hub adds only gradio)")
    for line in requirements:
        if line.startswith("-"):
            continue  # pip options such as --extra-index-url
        try:
            Requirement(line)
        except InvalidRequirement as exc:
            raise UnqoverError(f"{path}: {line!r} is not a valid requirement ({exc})") from exc
    return requirements


def _folder_files(folder: Path) -> tuple[tuple[PlannedFile, ...], tuple[str, ...]]:
    """Every file under a Space folder to upload (card first), and the ones left out."""
    files, ignored = [], []
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        relative = PurePosixPath(path.relative_to(folder).as_posix())
        if _is_upload_noise(relative):
            ignored.append(str(relative))
        else:
            files.append(PlannedFile(str(relative), path, path.stat().st_size))
    files.sort(key=lambda f: (f.path_in_repo != CARD, f.path_in_repo))
    return tuple(files), tuple(ignored)
