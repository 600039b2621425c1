"""Validate built dataset folders, the evaluate modules and the Space, and publish them to the Hugging Face Hub.

A built folder (see :mod:`unqover.hub.build`) is a dataset card ``README.md`` whose YAML front matter lists
``configs:`` with their ``data_files`` globs, plus the Parquet shards those globs match. Publishing happens in
two steps so that nothing half-checked ever reaches the Hub:

1. :func:`plan_upload` checks the folder locally (card parses, every glob matches Parquet files that open,
   row counts equal the card's ``num_examples``, one schema per config, shard sets complete) and returns an
   :class:`UploadPlan` with the exact files to send. Files the card does not reference (editor leftovers,
   notes, stale shards outside the globs) are *not* uploaded; they are listed in ``UploadPlan.ignored`` and
   printed by ``describe()`` so the user sees them. We do not raise on them because such leftovers are
   harmless locally and the Hub repo should mirror exactly what the card describes.
2. :func:`publish` creates the dataset repo (``exist_ok=True``) and makes one commit that adds exactly the
   planned files and deletes remote ``data/`` files that are no longer part of the dataset (an older build
   with more shards would otherwise be picked up by the same globs).

Network use is bounded and never ends in a traceback: offline mode fails at once without a request, every
HTTP call gets connect/read timeouts, and Hub/transport errors become :class:`~unqover.errors.UnqoverError`
with a message that says what to do. ``main`` is the ``publish`` command line (``scripts/publish.py``).

The evaluate modules (``metrics/<name>/``) and the demo app (``space/``) are Gradio Spaces on the Hub:
:func:`plan_module` and :func:`plan_space` check them the same way (Space front matter, the module's single
``evaluate`` class, a non-empty ``requirements.txt``, Python files that parse) and return a :class:`SpacePlan`;
``evaluate.load("<namespace>/<name>")`` then resolves the module's Space. :func:`publish` takes either plan.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from unqover.errors import UnqoverError

__all__ = [
    "DEFAULT_METRICS_ROOT",
    "DEFAULT_NAMESPACE",
    "DEFAULT_ROOT",
    "DEFAULT_SPACE_FOLDER",
    "DEFAULT_SPACE_NAME",
    "DEFAULT_TIMEOUT",
    "PlannedConfig",
    "PlannedFile",
    "SpacePlan",
    "UploadPlan",
    "discover_datasets",
    "discover_modules",
    "main",
    "plan_module",
    "plan_space",
    "plan_upload",
    "publish",
    "validate_repo_id",
]

DEFAULT_ROOT = Path("datasets/unqover")
DEFAULT_METRICS_ROOT = Path("metrics")
DEFAULT_SPACE_FOLDER = Path("space")
DEFAULT_SPACE_NAME = "unqover"
DEFAULT_NAMESPACE = "unqover"
DEFAULT_TIMEOUT = 60.0
"""Seconds to wait for any single network read or write (connecting waits at most 10 s)."""

CARD = "README.md"
BUILD_HINT = "run `unqover build-datasets` first"
OFFLINE_MESSAGE = "offline mode: set HF_HUB_OFFLINE=0 and check your connection; use --dry-run to validate without uploading"
TOKEN_MESSAGE = "no Hugging Face token found: run `hf auth login`, or pass --token, or set HF_TOKEN (a token with write access)"

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?---[ \t]*(?:\n|\Z)", re.DOTALL)
_SHARD_NAME = re.compile(r"^(?P<split>.+)-(?P<index>\d{5})-of-(?P<total>\d{5})\.parquet$")
# Hub user and organisation names: letters, digits and single inner hyphens/underscores/dots (the rules
# `huggingface_hub.utils.validate_repo_id` enforces for each part of a repo id).
_REPO_PART = re.compile(r"^(?![-.])[A-Za-z0-9_.-]{1,96}(?<![-.])$")

KINDS = ("datasets", "modules", "space")
"""What ``publish --what`` selects, in the order things are published (the Space links to the others)."""
GRADIO_MAJOR = 6
"""The Gradio major version every app is written for (``sdk_version`` must be ``6.x.y``)."""
SHORT_DESCRIPTION_MAX = 60  # characters; the Hub rejects longer ones
SPACE_COLORS = frozenset({"red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray"})
EVALUATE_BASES = ("Metric", "Measurement", "Comparison")
"""Base classes ``evaluate.load`` recognises as a module's class."""
_SDK_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


# ---------------------------------------------------------------------------------------------------------
# The plan


@dataclass(frozen=True)
class PlannedFile:
    """One file to upload: where it goes in the repo, where it is on disk, and its size in bytes."""

    path_in_repo: str
    local_path: Path
    size: int


@dataclass(frozen=True)
class PlannedConfig:
    """One dataset config as the card declares it, with the rows counted in its Parquet files."""

    name: str
    rows: dict[str, int]  # split -> rows
    files: tuple[str, ...]  # paths in repo
    default: bool = False

    @property
    def num_rows(self) -> int:
        """Rows over all splits."""
        return sum(self.rows.values())


@dataclass(frozen=True)
class UploadPlan:
    """Exactly what :func:`publish` sends for one dataset folder, checked by :func:`plan_upload`."""

    repo_id: str
    folder: Path
    files: tuple[PlannedFile, ...]
    configs: tuple[PlannedConfig, ...]
    ignored: tuple[str, ...] = field(default=())  # folder-relative paths that are not uploaded
    repo_type: ClassVar[str] = "dataset"

    @property
    def total_bytes(self) -> int:
        """Bytes over all files to upload."""
        return sum(f.size for f in self.files)

    def describe(self) -> list[str]:
        """Human-readable lines: repo id, configs with row counts, every file with its size, ignored files."""
        lines = [f"dataset {self.repo_id}  (from {self.folder})"]
        lines.append(f"  configs ({len(self.configs)}):")
        for config in self.configs:
            splits = ", ".join(f"{split}: {rows:,} rows" for split, rows in config.rows.items())
            default = " (default)" if config.default else ""
            lines.append(f"    {config.name}{default}  {splits}  in {len(config.files)} file(s)")
        return lines + _file_lines(self.files, self.ignored, "not referenced by the card's configs")


@dataclass(frozen=True)
class SpacePlan:
    """Exactly what :func:`publish` sends for one Gradio Space folder: an evaluate module or the demo app."""

    repo_id: str
    folder: Path
    files: tuple[PlannedFile, ...]
    kind: str  # "evaluate module" or "space"
    sdk_version: str
    short_description: str
    details: tuple[str, ...] = ()  # summary lines for describe(): the module's class, hardware, linked repos
    ignored: tuple[str, ...] = ()  # folder-relative paths that are not uploaded (caches, hidden files)
    repo_type: ClassVar[str] = "space"

    @property
    def total_bytes(self) -> int:
        """Bytes over all files to upload."""
        return sum(f.size for f in self.files)

    def describe(self) -> list[str]:
        """Human-readable lines: repo id, what the Space runs, every file with its size, ignored files."""
        lines = [f"{self.kind} {self.repo_id}  (Gradio Space, from {self.folder})"]
        lines.append(f"  gradio {self.sdk_version}: {self.short_description}")
        lines.extend(f"  {line}" for line in self.details)
        return lines + _file_lines(self.files, self.ignored, "hidden files and Python caches")


def _file_lines(files: Sequence[PlannedFile], ignored: Sequence[str], why: str) -> list[str]:
    """The 'files to upload' and 'not uploaded' blocks of a plan's description."""
    total = sum(f.size for f in files)
    lines = [f"  files to upload ({len(files)}, {_human_bytes(total)}):"]
    width = max(len(f.path_in_repo) for f in files)
    for f in files:
        lines.append(f"    {f.path_in_repo:<{width}}  {f.size:>14,} bytes  ({_human_bytes(f.size)})")
    if ignored:
        lines.append(f"  not uploaded ({len(ignored)}, {why}):")
        lines.extend(f"    {path}" for path in ignored)
    return lines


def _human_bytes(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


# ---------------------------------------------------------------------------------------------------------
# Local validation


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


def _data_file_patterns(card: Path, config_name: str, data_files: Any) -> dict[str, list[str]]:
    """Normalize a config's ``data_files`` (string, list, split mapping or list of split/path entries)."""
    where = f"{card}: config {config_name!r}"
    if isinstance(data_files, str):
        return {"train": [data_files]}
    if isinstance(data_files, dict):
        entries = [{"split": split, "path": path} for split, path in data_files.items()]
    elif isinstance(data_files, list) and all(isinstance(item, str) for item in data_files):
        return {"train": list(data_files)}
    elif isinstance(data_files, list):
        entries = data_files
    else:
        raise UnqoverError(f"{where} has no usable data_files (got {data_files!r})")
    patterns: dict[str, list[str]] = {}
    for entry in entries:
        if not isinstance(entry, dict) or "path" not in entry:
            raise UnqoverError(f"{where}: each data_files entry needs a 'path' (got {entry!r})")
        split = str(entry.get("split", "train"))
        paths = entry["path"] if isinstance(entry["path"], list) else [entry["path"]]
        if not paths or not all(isinstance(p, str) and p for p in paths):
            raise UnqoverError(f"{where}, split {split!r}: 'path' must be a glob or a list of globs")
        patterns.setdefault(split, []).extend(paths)
    return patterns


def _is_hidden(relative: PurePosixPath) -> bool:
    """Files the Hub's data-file resolution skips: any part starting with '.' or '__'."""
    return any(part.startswith((".", "__")) for part in relative.parts)


def _match(folder: Path, card: Path, config_name: str, split: str, pattern: str) -> list[Path]:
    """Files under ``folder`` matched by one ``data_files`` glob, sorted; raise if none or if not Parquet."""
    where = f"config {config_name!r}, split {split!r}"
    pure = PurePosixPath(pattern)
    if pure.is_absolute() or ".." in pure.parts or "://" in pattern:
        raise UnqoverError(
            f"{card}: {where}: data_files path {pattern!r} must be relative to the dataset folder"
        )
    matched = sorted(
        p
        for p in folder.glob(pattern)
        if p.is_file() and not _is_hidden(PurePosixPath(p.relative_to(folder).as_posix()))
    )
    if not matched:
        raise UnqoverError(
            f"{where}: {pattern!r} matches no files in {folder}; the data is not built yet: {BUILD_HINT}"
        )
    for path in matched:
        if path.suffix != ".parquet":
            raise UnqoverError(
                f"{where}: {path} is not a Parquet file; only Parquet data files are published"
            )
    return matched


def _schema_difference(a: pa.Schema, b: pa.Schema) -> str:
    """A short description of how two Arrow schemas differ, for error messages."""
    names_a, names_b = set(a.names), set(b.names)
    if names_a != names_b:
        parts = []
        if names_b - names_a:
            parts.append(f"extra column(s) {sorted(names_b - names_a)}")
        if names_a - names_b:
            parts.append(f"missing column(s) {sorted(names_a - names_b)}")
        return ", ".join(parts)
    for f in a:
        other = b.field(f.name)
        if not f.equals(other):
            return f"column {f.name!r} is {other.type}{'' if other.nullable else ' not null'} instead of {f.type}"
    return f"column order {b.names} instead of {a.names}"


def _check_shard_sets(config_name: str, files: Sequence[Path]) -> None:
    """Files named ``<split>-XXXXX-of-YYYYY.parquet`` in one folder must form the complete set 0..YYYYY-1."""
    groups: dict[tuple[Path, str], dict[int, set[int]]] = {}
    for path in files:
        m = _SHARD_NAME.match(path.name)
        if m:
            by_total = groups.setdefault((path.parent, m["split"]), {})
            by_total.setdefault(int(m["total"]), set()).add(int(m["index"]))
    for (parent, split), by_total in groups.items():
        if len(by_total) > 1:
            raise UnqoverError(
                f"config {config_name!r}: {parent} mixes shards of different builds "
                f"({', '.join(f'of-{t:05d}' for t in sorted(by_total))}); rebuild with `unqover build-datasets --overwrite`"
            )
        ((total, indices),) = by_total.items()
        missing = sorted(set(range(total)) - indices)
        if missing or max(indices) >= total:
            names = (
                ", ".join(f"{split}-{i:05d}-of-{total:05d}.parquet" for i in missing[:5])
                or "out-of-range shards"
            )
            raise UnqoverError(
                f"config {config_name!r}: {parent} is missing shard(s) {names}; "
                "rebuild with `unqover build-datasets --overwrite`"
            )


def _card_row_counts(
    card: Path, metadata: dict[str, Any], config_names: Sequence[str]
) -> dict[str, dict[str, int]]:
    """The card's ``dataset_info`` ``num_examples`` per config and split (only those it states)."""
    info = metadata.get("dataset_info")
    if info is None:
        return {}
    entries = [info] if isinstance(info, dict) else info
    if not isinstance(entries, list):
        raise UnqoverError(f"{card}: dataset_info must be a mapping or a list of mappings")
    counts: dict[str, dict[str, int]] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            raise UnqoverError(f"{card}: dataset_info entries must be mappings (got {entry!r})")
        default_name = config_names[0] if len(config_names) == 1 else "default"
        name = str(entry.get("config_name", default_name))
        if name not in config_names:
            raise UnqoverError(f"{card}: dataset_info describes config {name!r}, which is not in configs")
        for split in entry.get("splits") or []:
            if not isinstance(split, dict) or "name" not in split:
                raise UnqoverError(f"{card}: config {name!r}: each dataset_info split needs a 'name'")
            if split.get("num_examples") is not None:
                counts.setdefault(name, {})[str(split["name"])] = int(split["num_examples"])
    return counts


def plan_upload(folder: Path, repo_id: str) -> UploadPlan:
    """Validate a built dataset folder locally and return exactly what would be uploaded to ``repo_id``.

    Raises UnqoverError naming the card, config or file on the first problem found.
    """
    folder = Path(folder)
    validate_repo_id(repo_id)
    if not folder.is_dir():
        raise UnqoverError(f"no dataset folder at {folder}; {BUILD_HINT}")
    card = folder / CARD
    metadata = read_card_metadata(card)
    configs = metadata.get("configs")
    if not isinstance(configs, list) or not configs:
        raise UnqoverError(f"{card} lists no configs (a 'configs:' list with config_name and data_files)")

    names: list[str] = []
    for entry in configs:
        if not isinstance(entry, dict) or not entry.get("config_name"):
            raise UnqoverError(f"{card}: every configs entry needs a config_name (got {entry!r})")
        name = str(entry["config_name"])
        if name in names:
            raise UnqoverError(f"{card}: config {name!r} is listed twice")
        if "data_files" not in entry:
            raise UnqoverError(f"{card}: config {name!r} has no data_files")
        names.append(name)
    if sum(bool(entry.get("default")) for entry in configs) > 1:
        raise UnqoverError(f"{card}: more than one config is marked default: true")
    expected = _card_row_counts(card, metadata, names)

    planned_configs: list[PlannedConfig] = []
    data_files: dict[Path, int] = {}  # local path -> size, in first-seen order
    for entry, name in zip(configs, names, strict=True):
        patterns = _data_file_patterns(card, name, entry["data_files"])
        rows: dict[str, int] = {}
        config_files: list[Path] = []
        first: tuple[Path, pa.Schema] | None = None
        for split, split_patterns in patterns.items():
            split_files = sorted(
                {p for pattern in split_patterns for p in _match(folder, card, name, split, pattern)}
            )
            rows[split] = 0
            for path in split_files:
                try:
                    meta = pq.read_metadata(path)
                    schema = meta.schema.to_arrow_schema()
                except (pa.ArrowException, OSError) as exc:
                    raise UnqoverError(
                        f"config {name!r}: {path} is not a readable Parquet file ({exc}); "
                        "rebuild with `unqover build-datasets --overwrite`"
                    ) from exc
                if first is None:
                    first = (path, schema)
                elif not schema.equals(first[1], check_metadata=False):
                    raise UnqoverError(
                        f"config {name!r}: {path} has a different schema from {first[0]}: "
                        f"{_schema_difference(first[1], schema)}"
                    )
                rows[split] += meta.num_rows
                config_files.append(path)
                data_files.setdefault(path, path.stat().st_size)
        _check_shard_sets(name, config_files)
        for split, count in expected.get(name, {}).items():
            if split not in rows:
                raise UnqoverError(
                    f"{card}: dataset_info lists split {split!r} of config {name!r}, which has no data_files"
                )
            if rows[split] != count:
                raise UnqoverError(
                    f"config {name!r}, split {split!r}: the Parquet files hold {rows[split]:,} rows but {card} says "
                    f"num_examples: {count:,}; rebuild with `unqover build-datasets --overwrite`"
                )
        planned_configs.append(
            PlannedConfig(
                name=name,
                rows=rows,
                files=tuple(p.relative_to(folder).as_posix() for p in config_files),
                default=bool(entry.get("default")),
            )
        )

    files = [PlannedFile(CARD, card, card.stat().st_size)]
    files += [
        PlannedFile(p.relative_to(folder).as_posix(), p, size) for p, size in sorted(data_files.items())
    ]
    planned = {f.path_in_repo for f in files}
    ignored = sorted(
        rel
        for rel in (p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
        if rel not in planned
    )
    return UploadPlan(repo_id, folder, tuple(files), tuple(planned_configs), tuple(ignored))


def discover_datasets(root: Path) -> list[Path]:
    """Dataset folders directly under ``root`` whose card declares configs (or whose card does not parse)."""
    root = Path(root)
    if not root.is_dir():
        raise UnqoverError(
            f"no datasets folder at {root}; run from the repository root, pass --root, or {BUILD_HINT}"
        )
    found = []
    for child in sorted(root.iterdir()):
        if child.name.startswith((".", "_")) or not (child / CARD).is_file():
            continue  # hidden staging folders of an ongoing build, caches
        try:
            if not read_card_metadata(child / CARD).get("configs"):
                continue
        except UnqoverError:
            pass  # keep it: plan_upload reports the broken card
        found.append(child)
    return found


# ---------------------------------------------------------------------------------------------------------
# Spaces: the evaluate modules and the demo app


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


def _evaluate_class(path: Path) -> str:
    """The one class in a module file that subclasses an evaluate module class, as ``Name(evaluate.Base)``.

    Read from the syntax tree, without importing the module (which would import the library and its
    dependencies): ``evaluate.load`` picks the module's class by its base, so there must be exactly one.
    """
    tree = _parse_python(path)
    module_names: set[str] = set()  # names bound to the evaluate package
    base_names: dict[str, str] = {}  # names bound to evaluate.Metric etc. -> the base
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            module_names.update(a.asname or a.name for a in node.names if a.name == "evaluate")
        elif isinstance(node, ast.ImportFrom) and node.module == "evaluate":
            base_names.update({a.asname or a.name: a.name for a in node.names if a.name in EVALUATE_BASES})
    found = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for base in node.bases:
            if (
                isinstance(base, ast.Attribute)
                and isinstance(base.value, ast.Name)
                and base.value.id in module_names
                and base.attr in EVALUATE_BASES
            ):
                found.append(f"{node.name}(evaluate.{base.attr})")
            elif isinstance(base, ast.Name) and base.id in base_names:
                found.append(f"{node.name}(evaluate.{base_names[base.id]})")
    if len(found) != 1:
        have = f"defines {len(found)} ({', '.join(found)})" if found else "defines none"
        raise UnqoverError(
            f"{path} must define exactly one class subclassing evaluate.Metric or evaluate.Measurement "
            f"(at module level) for evaluate.load to find; it {have}"
        )
    return found[0]


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


def _is_upload_noise(relative: PurePosixPath) -> bool:
    """Hidden files and Python caches: never part of a Space."""
    return any(part.startswith(".") or part == "__pycache__" for part in relative.parts) or (
        relative.suffix in {".pyc", ".pyo"}
    )


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


def plan_module(folder: Path, repo_id: str) -> SpacePlan:
    """Validate an evaluate module folder ``<name>/`` and return what would be uploaded as Space ``repo_id``.

    The folder needs ``<name>.py`` (exactly one evaluate module class), ``README.md`` (the card, with Space
    front matter), ``requirements.txt`` and ``app.py``; the repo's name must be the folder's name, because
    ``evaluate.load("<namespace>/<name>")`` downloads ``<name>.py`` from the Space.
    """
    folder = Path(folder)
    validate_repo_id(repo_id)
    name = folder.name
    if repo_id.split("/")[1] != name:
        raise UnqoverError(
            f"the Space of the evaluate module {name!r} must be named {name!r} (got {repo_id!r}): "
            f"evaluate.load('<namespace>/{name}') downloads {name}.py from it"
        )
    if not folder.is_dir():
        raise UnqoverError(f"no evaluate module folder at {folder}")
    missing = [f for f in (f"{name}.py", CARD, "requirements.txt", "app.py") if not (folder / f).is_file()]
    if missing:
        raise UnqoverError(
            f"evaluate module {folder} lacks {', '.join(missing)}; a module folder holds <name>.py, "
            "README.md, requirements.txt and app.py"
        )
    module_class = _evaluate_class(folder / f"{name}.py")
    meta = _space_front_matter(folder, module=True)
    _check_requirements(folder / "requirements.txt")
    _parse_python(folder / "app.py")
    files, ignored = _folder_files(folder)
    return SpacePlan(
        repo_id=repo_id,
        folder=folder,
        files=files,
        kind="evaluate module",
        sdk_version=meta["sdk_version"],
        short_description=meta["short_description"],
        details=(f'{module_class}; load with evaluate.load("{repo_id}")',),
        ignored=ignored,
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
    files, ignored = _folder_files(folder)
    details = [f"app_file: {meta['app_file']}"]
    details += [f"{key}: {meta[key]}" for key in ("suggested_hardware",) if key in meta]
    details += [f"{key}: {', '.join(meta[key])}" for key in ("datasets", "models") if key in meta]
    return SpacePlan(
        repo_id=repo_id,
        folder=folder,
        files=files,
        kind="space",
        sdk_version=meta["sdk_version"],
        short_description=meta["short_description"],
        details=tuple(details),
        ignored=ignored,
    )


def discover_modules(root: Path) -> list[Path]:
    """Evaluate module folders directly under ``root`` (every visible sub-folder; plan_module checks them)."""
    root = Path(root)
    if not root.is_dir():
        raise UnqoverError(
            f"no evaluate modules folder at {root}; run from the repository root or pass --metrics"
        )
    return [
        child for child in sorted(root.iterdir()) if child.is_dir() and not child.name.startswith((".", "_"))
    ]


# ---------------------------------------------------------------------------------------------------------
# Publishing


def _is_true(value: str | None) -> bool:
    return (value or "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def _offline() -> bool:
    """Offline as the user asked now (environment) or as huggingface_hub decided at import time.

    Only the Hub's own switches count (not ``HF_DATASETS_OFFLINE``, which is about downloads), so the
    message can name the one variable to change.
    """
    if _is_true(os.environ.get("HF_HUB_OFFLINE")) or _is_true(os.environ.get("TRANSFORMERS_OFFLINE")):
        return True
    try:
        from huggingface_hub import constants

        return bool(constants.is_offline_mode())
    except (ImportError, AttributeError):
        return False


def _transport_errors() -> tuple[type[BaseException], ...]:
    """Exception types of the HTTP stack huggingface_hub uses (httpx2 in 2.x, httpx or requests before)."""
    errors: list[type[BaseException]] = [OSError, ValueError]
    for module in ("httpx2", "httpx"):
        try:
            mod = __import__(module)
        except ImportError:
            continue
        errors += [
            getattr(mod, name) for name in ("HTTPError", "InvalidURL", "StreamError") if hasattr(mod, name)
        ]
    return tuple(errors)


@contextmanager
def _bounded_http(timeout: float) -> Iterator[None]:
    """Give huggingface_hub's shared HTTP client connect/read/write timeouts (it uses none by default).

    huggingface_hub 2.x makes most Hub API calls through one shared ``httpx2.Client`` created with
    ``timeout=None``, so an unresponsive endpoint would hang forever. We wrap the current client factory
    (keeping any user proxy/certificate setup), set a timeout on the clients it makes, and restore it after.
    """
    try:
        import huggingface_hub
        from huggingface_hub.utils import _http
    except ImportError:  # pragma: no cover - huggingface_hub is a dependency
        yield
        return
    previous = getattr(_http, "_GLOBAL_CLIENT_FACTORY", None)
    set_factory = getattr(huggingface_hub, "set_client_factory", None)
    timeout_type = None
    for module in ("httpx2", "httpx"):
        try:
            timeout_type = __import__(module).Timeout
            break
        except (ImportError, AttributeError):
            continue
    if previous is None or set_factory is None or timeout_type is None:
        yield  # an older huggingface_hub (requests-based) already sets per-request timeouts
        return

    def factory() -> Any:
        client = previous()
        client.timeout = timeout_type(timeout, connect=min(timeout, 10.0))
        return client

    set_factory(factory)
    try:
        yield
    finally:
        set_factory(previous)


def _network_error(
    exc: BaseException, plan: UploadPlan | SpacePlan, endpoint: str, timeout: float
) -> UnqoverError:
    """Turn a Hub or transport failure into one clear sentence that says what to do."""
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    if isinstance(exc, OfflineModeIsEnabled):
        return UnqoverError(OFFLINE_MESSAGE)
    first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if isinstance(exc, HfHubHTTPError):
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if status == 401:
            return UnqoverError(
                f"the Hub at {endpoint} rejected the token (HTTP 401): run `hf auth login` again, "
                "or pass --token / set HF_TOKEN to a valid token with write access"
            )
        if status == 403:
            namespace = plan.repo_id.split("/")[0]
            return UnqoverError(
                f"the token may not write to {plan.repo_id!r} (HTTP 403): use a token with write access to the "
                f"{namespace!r} namespace, or choose another with --namespace"
            )
        return UnqoverError(f"publishing {plan.repo_id} to {endpoint} failed (HTTP {status}): {first_line}")
    if "Timeout" in type(exc).__name__ or isinstance(exc, TimeoutError):
        return UnqoverError(
            f"no answer from the Hugging Face Hub at {endpoint} within {timeout:g} s while publishing "
            f"{plan.repo_id}; check your connection (or raise --timeout); use --dry-run to validate offline"
        )
    if isinstance(exc, ValueError) and not isinstance(exc, OSError):
        # e.g. the Hub's /api/validate-yaml rejecting the card: keep every line of its explanation
        return UnqoverError(f"cannot publish {plan.repo_id}: {str(exc).strip() or type(exc).__name__}")
    return UnqoverError(
        f"cannot reach the Hugging Face Hub at {endpoint} ({type(exc).__name__}: {first_line}); check your "
        "connection, HF_ENDPOINT and proxy settings; use --dry-run to validate without uploading"
    )


def _operations(plan: UploadPlan | SpacePlan, remote: Sequence[str]) -> list[Any]:
    """The commit: add every planned file, delete remote files the local folder no longer has.

    A dataset deletes stale files under ``data/`` only (older shards would match the card's globs). A Space
    mirrors its folder: every other remote file goes too (a removed helper module would otherwise still be
    imported), except the Hub's ``.gitattributes`` and other hidden files.
    """
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    planned = {f.path_in_repo for f in plan.files}
    if isinstance(plan, UploadPlan):
        stale = [path for path in remote if path.startswith("data/") and path not in planned]
    else:
        stale = [path for path in remote if path not in planned and not _is_upload_noise(PurePosixPath(path))]
    operations: list[Any] = [CommitOperationDelete(path_in_repo=path) for path in sorted(stale)]
    operations += [
        CommitOperationAdd(path_in_repo=f.path_in_repo, path_or_fileobj=str(f.local_path)) for f in plan.files
    ]
    return operations


def publish(
    plan: UploadPlan | SpacePlan,
    token: str | None = None,
    private: bool = False,
    *,
    endpoint: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    api: Any = None,
) -> str:
    """Create the Hub repo of ``plan`` (a dataset, or a Gradio Space) and commit exactly its files; return its URL.

    ``endpoint`` overrides ``HF_ENDPOINT`` (e.g. a private Hub). ``api`` replaces ``huggingface_hub.HfApi``
    (tests inject a fake). Stale remote files are deleted in the same commit (see :func:`_operations`), so
    an older build cannot leak into ``load_dataset`` or a Space. Raises UnqoverError when offline, without a
    token, or on any Hub/network failure; every HTTP call waits at most ``timeout`` s.
    """
    if _offline():
        raise UnqoverError(OFFLINE_MESSAGE)
    try:
        import huggingface_hub
    except ImportError as exc:  # pragma: no cover - huggingface_hub is a dependency
        raise UnqoverError(f"publishing needs huggingface_hub: pip install huggingface_hub ({exc})") from exc

    errors = _transport_errors()
    if token is None:
        try:
            token = huggingface_hub.get_token()
        except (*errors, RuntimeError) as exc:
            raise UnqoverError(f"could not read the Hugging Face token: {exc}; {TOKEN_MESSAGE}") from exc
    if not token:
        raise UnqoverError(TOKEN_MESSAGE)

    if api is None:
        api = huggingface_hub.HfApi(endpoint=endpoint, token=token)
    endpoint = str(getattr(api, "endpoint", None) or endpoint or "the configured endpoint")
    repo_id, repo_type = plan.repo_id, plan.repo_type
    if isinstance(plan, UploadPlan):
        rows = ", ".join(f"{c.name}: {c.num_rows:,} rows" for c in plan.configs)
        what, description = f"{len(plan.configs)} configs", f"Configs: {rows}."
        create: dict[str, Any] = {}
    else:
        what, description = plan.kind, f"{plan.short_description} (Gradio {plan.sdk_version})."
        create = {"space_sdk": "gradio"}
    try:
        from unqover import __version__
    except ImportError:  # pragma: no cover
        __version__ = "unknown"

    try:
        with _bounded_http(timeout):
            api.create_repo(
                repo_id, repo_type=repo_type, exist_ok=True, private=private, token=token, **create
            )
            remote = api.list_repo_files(repo_id, repo_type=repo_type, token=token)
            api.create_commit(
                repo_id,
                _operations(plan, remote),
                commit_message=f"Upload {repo_id} ({what}) with unqover {__version__}",
                commit_description=description,
                repo_type=repo_type,
                token=token,
            )
    except UnqoverError:
        raise
    except (*errors, RuntimeError) as exc:
        raise _network_error(exc, plan, endpoint, timeout) from exc
    base = endpoint if endpoint.startswith("http") else "https://huggingface.co"
    return f"{base.rstrip('/')}/{repo_type}s/{repo_id}"


# ---------------------------------------------------------------------------------------------------------
# Command line


def _what(value: str) -> tuple[str, ...]:
    """``--what``: a comma-separated choice of datasets, modules, space, or all; canonical order."""
    chosen = {part.strip() for part in value.split(",") if part.strip()}
    unknown = sorted(chosen - {*KINDS, "all"})
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(
            f"{value!r}: choose from {', '.join(KINDS)} or all (comma-separated, e.g. modules,space)"
        )
    return KINDS if "all" in chosen else tuple(kind for kind in KINDS if kind in chosen)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="unqover publish",
        description="Validate built dataset folders, the evaluate modules and the Space, and upload them to the "
        "Hugging Face Hub: datasets as <namespace>/<name>, each module as the Gradio Space <namespace>/<module> "
        "(so evaluate.load('<namespace>/<module>') finds it), the app as the Space <namespace>/<space name>. "
        "Everything is validated before anything is uploaded.",
    )
    parser.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="datasets under --root, modules under --metrics, or the Space's name (default: all that --what selects)",
    )
    parser.add_argument(
        "--what",
        type=_what,
        default=KINDS,
        metavar="{datasets,modules,space,all}[,...]",
        help="what to publish, comma-separated (default: all)",
    )
    parser.add_argument(
        "--root", type=Path, default=DEFAULT_ROOT, help=f"built datasets (default: {DEFAULT_ROOT})"
    )
    parser.add_argument(
        "--metrics",
        type=Path,
        default=DEFAULT_METRICS_ROOT,
        help=f"evaluate module folders (default: {DEFAULT_METRICS_ROOT})",
    )
    parser.add_argument(
        "--space",
        type=Path,
        default=DEFAULT_SPACE_FOLDER,
        help=f"the Space's folder (default: {DEFAULT_SPACE_FOLDER})",
    )
    parser.add_argument(
        "--space-name",
        default=DEFAULT_SPACE_NAME,
        help=f"the Space's repo name under --namespace (default: {DEFAULT_SPACE_NAME})",
    )
    parser.add_argument(
        "--namespace", default=DEFAULT_NAMESPACE, help=f"Hub user or org (default: {DEFAULT_NAMESPACE})"
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="validate and print what would be uploaded; upload nothing"
    )
    parser.add_argument(
        "--token", default=None, help="Hub token with write access (default: HF_TOKEN or `hf auth login`)"
    )
    parser.add_argument("--private", action="store_true", help="create new repos as private")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds per network read/write (default: {DEFAULT_TIMEOUT:g})",
    )
    return parser


def _check_name(flag: str, value: str, what: str) -> None:
    if not _REPO_PART.match(value) or "--" in value or ".." in value:
        raise UnqoverError(
            f"invalid {flag} {value!r}: {what} uses letters, digits, '-', '_' or '.', does not start or end "
            "with '-' or '.', and has no '--' or '..'"
        )


def _select(args: argparse.Namespace) -> tuple[list[tuple[str, Path]], list[str]]:
    """The (kind, folder) pairs to publish, in publishing order, and the problems found choosing them."""
    chosen: list[tuple[str, Path]] = []
    problems: list[str] = []
    if not args.names:
        finders = {
            "datasets": lambda: discover_datasets(args.root),
            "modules": lambda: discover_modules(args.metrics),
            "space": lambda: [args.space],
        }
        for kind in args.what:
            try:
                folders = finders[kind]()
            except UnqoverError as exc:
                problems.append(str(exc))
                continue
            if not folders:
                where = f"dataset folders with a card under {args.root}; {BUILD_HINT}"
                problems.append(
                    f"no {where}" if kind == "datasets" else f"no evaluate modules under {args.metrics}"
                )
            chosen += [(kind, folder) for folder in folders]
        return chosen, problems

    for name in args.names:
        matches = []
        if "datasets" in args.what and (args.root / name / CARD).is_file():
            matches.append(("datasets", args.root / name))
        if "modules" in args.what and not name.startswith((".", "_")) and (args.metrics / name).is_dir():
            matches.append(("modules", args.metrics / name))
        if "space" in args.what and name == args.space_name:
            matches.append(("space", args.space))
        if matches:
            chosen += [m for m in matches if m not in chosen]
            continue
        available = []
        if "datasets" in args.what:
            built = [p.name for p in discover_datasets(args.root)] if args.root.is_dir() else []
            available.append(f"datasets built under {args.root}: {', '.join(built) or f'none; {BUILD_HINT}'}")
        if "modules" in args.what:
            modules = [p.name for p in discover_modules(args.metrics)] if args.metrics.is_dir() else []
            available.append(f"evaluate modules under {args.metrics}: {', '.join(modules) or 'none'}")
        if "space" in args.what:
            available.append(f"the Space: {args.space_name}")
        raise UnqoverError(f"nothing named {name!r} to publish ({'; '.join(available)})")
    chosen.sort(key=lambda pair: KINDS.index(pair[0]))
    return chosen, problems


def main(argv: Sequence[str] | None = None) -> int:
    """``publish [NAME ...] [--what W] [--namespace N] [--space-name S] [--dry-run] ...``; returns the exit code.

    0 on success; 2 with the message on stderr on any UnqoverError (argparse also exits 2 on bad flags).
    """
    try:
        args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # --help (0) or a bad flag (2, argparse already printed why)
        return exc.code if isinstance(exc.code, int) else 2
    try:
        _check_name("--namespace", args.namespace, "a Hub user or organisation name")
        _check_name("--space-name", args.space_name, "a Space name")
        if args.timeout <= 0:
            raise UnqoverError("--timeout must be positive")
        chosen, problems = _select(args)
        planners = {
            "datasets": lambda folder: plan_upload(folder, f"{args.namespace}/{folder.name}"),
            "modules": lambda folder: plan_module(folder, f"{args.namespace}/{folder.name}"),
            "space": lambda folder: plan_space(folder, f"{args.namespace}/{args.space_name}"),
        }
        plans: list[UploadPlan | SpacePlan] = []
        for kind, folder in chosen:
            try:
                plans.append(planners[kind](folder))
            except UnqoverError as exc:
                label = f"Space {args.space_name}" if kind == "space" else folder.name
                problems.append(f"{label}: {exc}")
        if problems:
            raise UnqoverError("nothing was uploaded; fix these first:\n  " + "\n  ".join(problems))

        for plan in plans:
            print("\n".join(plan.describe()), flush=True)
        if args.dry_run:
            total = sum(p.total_bytes for p in plans)
            datasets = sum(isinstance(p, UploadPlan) for p in plans)
            spaces = len(plans) - datasets
            print(
                f"dry run: {datasets} dataset(s) and {spaces} Space(s), {_human_bytes(total)} validated; "
                "nothing uploaded"
            )
            return 0
        for plan in plans:
            url = publish(plan, token=args.token, private=args.private, timeout=args.timeout)
            print(f"published {plan.repo_id}: {url}", flush=True)
    except UnqoverError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
