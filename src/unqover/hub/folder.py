"""What every dataset build shares: the split, the build result and atomic staging.

A build writes into a hidden staging folder ``<root>/.<name>.building-*`` and moves ``data/`` and ``README.md``
into ``<root>/<name>`` only when everything is written, so a failure or Ctrl-C leaves no half-written dataset.
This module imports no other :mod:`unqover.hub` module: :mod:`unqover.hub.build` (the UnQover datasets and custom
probes), :mod:`unqover.hub.nli_dataset` and :mod:`unqover.hub.eec_dataset` all build on it. The hub names no
dataset: each builder takes the folder name from its caller (the probe definitions of :mod:`unqover.probes`).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from unqover.errors import UnqoverError

SPLIT = "test"


@dataclass(frozen=True)
class BuiltDataset:
    """What a build wrote: the folder, the rows per config and the wall time."""

    path: Path
    rows: dict[str, int]
    seconds: float


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
