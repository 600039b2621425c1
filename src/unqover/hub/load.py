"""Load probe rows from a local dataset folder (Parquet + card) or from the Hub, as one Arrow table."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from unqover.errors import UnqoverError

#: A Hub dataset id: ``name`` or ``owner/name`` of letters, digits, '-', '_', '.'.
HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}(/[A-Za-z0-9][A-Za-z0-9_.-]{0,95})?")


def _card_configs(folder: Path) -> list[dict]:
    card = folder / "README.md"
    if not card.is_file():
        raise UnqoverError(f"{folder} has no README.md dataset card")
    text = card.read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        raise UnqoverError(f"{card} has no YAML header")
    return yaml.safe_load(text.split("---\n", 2)[1]).get("configs", [])


def local_data_files(folder: Path, config: str, split: str = "test") -> list[Path]:
    """The Parquet files of one config and split, as the card's ``configs:`` name them."""
    configs = {c["config_name"]: c for c in _card_configs(folder)}
    if config not in configs:
        raise UnqoverError(f"{folder} has no config {config!r}; it has {', '.join(configs) or 'none'}")
    patterns = [f["path"] for f in configs[config]["data_files"] if f.get("split") == split]
    if not patterns:
        raise UnqoverError(f"config {config!r} of {folder} has no split {split!r}")
    files = sorted(
        {p for pattern in patterns for p in folder.glob(pattern if isinstance(pattern, str) else pattern[0])}
    )
    if not files:
        raise UnqoverError(f"no data for {config!r} in {folder}: build it first (unqover build-datasets)")
    return files


def source_name(source: str | Path) -> str:
    """How provenance names a dataset: a local folder as its absolute path (so it is found again from any
    working directory), anything else (a Hub id) as given."""
    folder = Path(source)
    return str(folder.resolve()) if folder.is_dir() else str(source)


def load_rows(
    source: str | Path, config: str, split: str = "test", columns: Sequence[str] | None = None
) -> pa.Table:
    """Rows of a dataset config: a local folder is read directly; anything else goes to ``datasets`` (Hub).

    ``columns`` selects the columns to read, skipping those the dataset does not have.
    """
    folder = Path(source)
    if folder.is_dir():
        files = local_data_files(folder, config, split)
        present = pq.read_schema(files[0]).names
        return pq.read_table(files, columns=[c for c in columns if c in present] if columns else None)
    text = str(source)
    if folder.exists():
        raise UnqoverError(
            f"dataset {text} is a file: a dataset is a folder (README.md card + data/) or a Hub id"
        )
    if text.startswith((".", "/", "~")) or not HUB_ID.fullmatch(text) or "--" in text or ".." in text:
        raise UnqoverError(f"dataset folder not found: {text}")
    from datasets import load_dataset

    try:
        dataset = load_dataset(text, config, split=split)
    except Exception as err:  # datasets raises many types (offline, not found, bad config)
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        parent = folder.parent
        if str(parent) not in ("", ".") and parent.is_dir():
            raise UnqoverError(
                f"dataset folder not found: {text} (the folder {parent} holds no {folder.name!r}), and it is no "
                f"dataset on the Hub either ({reason})"
            ) from err
        raise UnqoverError(f"could not load dataset {text!r} config {config!r}: {reason}") from err
    table = dataset.data.table
    return table.select([c for c in columns if c in table.column_names]) if columns else table
