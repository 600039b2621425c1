"""What every dataset build shares: the split, the build result and atomic staging.

A build writes into a hidden staging folder ``<root>/.<name>.building-*`` and moves ``data/`` and ``README.md``
into ``<root>/<name>`` only when everything is written, so a failure or Ctrl-C leaves no half-written dataset.
This module imports no other :mod:`unqover.hub` module: :mod:`unqover.hub.build` (the UnQover datasets and custom
probes), :mod:`unqover.hub.nli_dataset` and :mod:`unqover.hub.eec_dataset` all build on it. The hub names no
dataset: each builder takes the folder name from its caller (the probe definitions of :mod:`unqover.probes`).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from unqover import __version__
from unqover.errors import UnqoverError

SPLIT = "test"
#: where a dataset records what its rows are: the card's YAML key and the Parquet schema metadata key
IDENTITY_KEY = "unqover"


@dataclass(frozen=True)
class BuiltDataset:
    """What a build wrote: the folder, the rows per config and the wall time."""

    path: Path
    rows: dict[str, int]
    seconds: float


def card_identity(probe: str, configs: Mapping[str, tuple[int, str]]) -> dict:
    """The card's ``unqover:`` entry: the probe whose rows these are, the unqover version that built them and
    each config's rows and fingerprint (``configs``: config -> (rows, fingerprint))."""
    return {
        "probe": probe,
        "version": __version__,
        "configs": {
            config: {"rows": rows, "fingerprint": fingerprint}
            for config, (rows, fingerprint) in configs.items()
        },
    }


def card_configs(names: Iterable[str]) -> list[dict]:
    """A card's YAML ``configs:`` list: each config's Parquet shards under ``data/<config>/`` as the test split,
    the first config the default."""
    configs = []
    for i, name in enumerate(names):
        entry: dict = {"config_name": name}
        if i == 0:
            entry["default"] = True
        entry["data_files"] = [{"split": SPLIT, "path": f"data/{name}/*.parquet"}]
        configs.append(entry)
    return configs


def chosen_configs(
    configs: Sequence[str] | None, name: str, known: Sequence[str], default: Sequence[str]
) -> list[str]:
    """The configs of the dataset ``name`` to build: ``configs`` checked against ``known`` (None: ``default``)."""
    if configs is None:
        return list(default)
    unknown = [c for c in configs if c not in known]
    if unknown:
        raise UnqoverError(f"unknown {name} config {', '.join(unknown)}; choose from {', '.join(known)}")
    return list(configs)


def plans_identity(probe: str, plans: Mapping, fingerprints: Mapping[str, str]) -> dict:
    """:func:`card_identity` of a build from generation plans (config -> plan)."""
    return card_identity(
        probe, {c: (plans[c].num_rows, fingerprint) for c, fingerprint in fingerprints.items()}
    )


def with_identity(schema: pa.Schema, probe: str, config: str, fingerprint: str) -> pa.Schema:
    """``schema`` with the rows' identity (probe, config, unqover version, fingerprint) in its metadata, so
    that every Parquet file of a dataset says what it holds."""
    record = {"probe": probe, "config": config, "version": __version__, "fingerprint": fingerprint}
    return schema.with_metadata({**(schema.metadata or {}), IDENTITY_KEY: json.dumps(record)})


def write_config_table(table: pa.Table, folder: Path, probe: str, config: str, fingerprint: str) -> None:
    """One config's rows as its single Parquet shard, its identity in the schema metadata."""
    folder.mkdir(parents=True)
    table = table.replace_schema_metadata(with_identity(table.schema, probe, config, fingerprint).metadata)
    pq.write_table(table, folder / f"{SPLIT}-00000-of-00001.parquet", compression="zstd")


def refuse_existing(target: Path, overwrite: bool) -> None:
    """Raise unless ``target`` has no ``data/`` yet or ``overwrite`` allows replacing it."""
    if (target / "data").exists() and not overwrite:
        raise UnqoverError(f"{target / 'data'} already exists; pass --overwrite to replace it")


def stage_folder(root: Path, name: str) -> Path:
    """A fresh hidden staging folder ``root/.<name>.building-*`` to write a dataset into (see :func:`install_staged`)."""
    root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{name}.building-", dir=root))


def install_staged(staging: Path, target: Path) -> None:
    """Move a complete staged dataset (``data/`` and ``README.md``) into ``target``, replacing its ``data/``."""
    target.mkdir(parents=True, exist_ok=True)
    if (target / "data").exists():
        shutil.rmtree(target / "data")
    (staging / "data").rename(target / "data")
    (staging / "README.md").replace(target / "README.md")


@contextmanager
def staged(root: Path, name: str) -> Iterator[Path]:
    """A staging folder to write ``data/`` and ``README.md`` into; installed as ``root/name`` if the block succeeds.

    The staging folder is removed in every case, so a failure (Ctrl-C included) leaves ``root/name`` as it was.
    """
    staging = stage_folder(root, name)
    try:
        yield staging
        install_staged(staging, root / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
