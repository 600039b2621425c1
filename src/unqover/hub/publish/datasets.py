"""Dataset repos: check a built dataset folder (card, globs, Parquet files, row counts) and plan its upload.

A built folder (see :mod:`unqover.hub.build`) is a dataset card ``README.md`` whose YAML front matter lists
``configs:`` with their ``data_files`` globs, plus the Parquet shards those globs match. :func:`plan_upload` checks
the folder locally (card parses, every glob matches Parquet files that open, row counts equal the card's
``num_examples``, one schema per config, shard sets complete) and returns an :class:`UploadPlan` with the exact files
to send. Files the card does not reference (editor leftovers, notes, stale shards outside the globs) are *not*
uploaded; they are listed in ``UploadPlan.ignored`` and printed by ``unqover publish`` so the user sees them. We do not
raise on them because such leftovers are harmless locally and the Hub repo should mirror exactly what the card
describes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.parquet as pq

from unqover.errors import UnqoverError
from unqover.hub.publish.common import (
    BUILD_HINT,
    CARD,
    PlannedFile,
    read_card_metadata,
    validate_repo_id,
)

_SHARD_NAME = re.compile(r"^(?P<split>.+)-(?P<index>\d{5})-of-(?P<total>\d{5})\.parquet$")


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
    ignored_reason: ClassVar[str] = "not referenced by the card's configs"

    @property
    def total_bytes(self) -> int:
        """Bytes over all files to upload."""
        return sum(f.size for f in self.files)


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
