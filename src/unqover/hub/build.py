"""Write UnQover datasets as Hugging Face dataset folders: Parquet shards per config plus a dataset card.

Layout (``load_dataset(folder, config, split="test")`` reads it offline; ``unqover publish`` pushes it)::

    <root>/<bias>/README.md                                   the card, YAML ``configs:`` included
    <root>/<bias>/data/<config>/test-00000-of-00006.parquet   shards of whole subject pairs

Everything is written into a hidden staging folder beside the target and moved into place only when every
config is complete, so a failure or Ctrl-C leaves no half-written dataset behind.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from tqdm.auto import tqdm

from unqover.errors import UnqoverError
from unqover.generate.unqover import BIAS_CLASSES, ROW_SCHEMA, ProbePlan, make_plan, probe_config
from unqover.hub.card import dataset_card
from unqover.hub.folder import (  # re-exported: the names every build shares
    SPLIT,
    BuiltDataset,
    install_staged,
    refuse_existing,
    stage_folder,
    staged,
    with_identity,
)
from unqover.lexicon.wordlists import WordLists

__all__ = [
    "ROWS_PER_ROW_GROUP",
    "ROWS_PER_SHARD",
    "SPLIT",
    "BuiltDataset",
    "build_custom_dataset",
    "build_dataset",
    "check_configs",
    "install_staged",
    "stage_folder",
    "write_parquet_shards",
]

ROWS_PER_SHARD = 1_000_000
ROWS_PER_ROW_GROUP = 131_072


def check_configs(bias: str, configs: Sequence[str] | None) -> list[str]:
    """Validate config names for an UnQover bias class; ``None`` means every config."""
    if configs is None:
        return list(BIAS_CLASSES[bias])
    for config in configs:
        probe_config(bias, config)
    return list(configs)


def write_parquet_shards(
    plan: ProbePlan, folder: Path, progress: tqdm | None = None, schema: pa.Schema = ROW_SCHEMA
) -> int:
    """Write a plan's rows as ``test-XXXXX-of-YYYYY.parquet`` shards in ``folder``; return the row count.
    ``schema``: the row schema with the rows' identity in its metadata (:func:`unqover.hub.folder.with_identity`)."""
    folder.mkdir(parents=True, exist_ok=True)
    shard_paths: list[Path] = []
    writer: pq.ParquetWriter | None = None
    rows_in_shard = total = 0
    try:
        for batch in plan.batches(rows_per_batch=ROWS_PER_ROW_GROUP):
            if writer is None or rows_in_shard >= ROWS_PER_SHARD:
                if writer is not None:
                    writer.close()
                shard_paths.append(folder / f"shard-{len(shard_paths):05d}.tmp")
                writer = pq.ParquetWriter(shard_paths[-1], schema, compression="zstd")
                rows_in_shard = 0
            writer.write_batch(batch, row_group_size=ROWS_PER_ROW_GROUP)
            rows_in_shard += batch.num_rows
            total += batch.num_rows
            if progress is not None:
                progress.update(batch.num_rows)
    finally:
        if writer is not None:
            writer.close()
    for i, path in enumerate(shard_paths):
        path.rename(folder / f"{SPLIT}-{i:05d}-of-{len(shard_paths):05d}.parquet")
    return total


def build_dataset(
    word_lists: WordLists,
    bias: str,
    root: Path,
    *,
    title: str,
    summary: str,
    defects: Sequence[str],
    configs: Sequence[str] | None = None,
    overwrite: bool = False,
    progress: bool = True,
) -> BuiltDataset:
    """Generate every requested config of one UnQover bias class and write its dataset folder ``root/bias``.

    ``title``, ``summary`` and ``defects`` are the card's words for the class (see :func:`unqover.hub.card.dataset_card`).
    """
    configs = check_configs(bias, configs)
    refuse_existing(root / bias, overwrite)
    plans = {config: make_plan(word_lists, bias, config) for config in configs}
    fingerprints = {config: plan.fingerprint() for config, plan in plans.items()}
    card = dataset_card(bias, plans, fingerprints, title=title, summary=summary, defects=defects)
    return write_dataset(root, bias, plans, card, fingerprints, progress)


def write_dataset(
    root: Path, name: str, plans: dict, card: str, fingerprints: dict[str, str], progress: bool = True
) -> BuiltDataset:
    """Write the plans' rows (one Parquet config each, the rows' identity in each file's schema metadata) and
    the card into ``root/name``, atomically. The probe is ``name`` (an UnQover bias class or a custom probe)."""
    started = time.perf_counter()
    with staged(root, name) as staging:
        total = sum(plan.num_rows for plan in plans.values())
        with tqdm(total=total, unit="row", unit_scale=True, desc=name, disable=not progress) as bar:
            rows = {
                config: write_parquet_shards(
                    plan,
                    staging / "data" / config,
                    bar,
                    with_identity(ROW_SCHEMA, name, config, fingerprints[config]),
                )
                for config, plan in plans.items()
            }
        (staging / "README.md").write_text(card, encoding="utf-8")
    return BuiltDataset(root / name, rows, time.perf_counter() - started)


def build_custom_dataset(
    probe, root: Path, configs: Sequence[str] | None = None, overwrite: bool = False, progress: bool = True
) -> BuiltDataset:
    """A custom probe (``unqover.lexicon.custom_probe.CustomProbeSpec``) as a dataset folder with a generated card."""
    from unqover.generate.custom import custom_configs, custom_plan
    from unqover.hub.custom_card import custom_card

    available = custom_configs(probe)
    unknown = [c for c in configs or () if c not in available]
    if unknown:
        raise UnqoverError(f"the probe {probe.name!r} has the configs {available}, not {unknown}")
    refuse_existing(root / probe.name, overwrite)
    plans = {config: custom_plan(probe, config) for config in (configs or available)}
    fingerprints = {config: plan.fingerprint() for config, plan in plans.items()}
    return write_dataset(root, probe.name, plans, custom_card(probe, fingerprints), fingerprints, progress)
