"""``unqover sample``: the row ids a quick run of an UnQover-style dataset would score, for scoring elsewhere.

The same seeded, stratified selection of whole groups as ``unqover probe --limit`` (``unqover.probe.sampling``),
written as a predictions-shaped file of ids whose provenance records the selection and the dataset, so that
``unqover measure`` recognises the sample and estimates the full-dataset values.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class WrittenSample:
    """What ``write_sample`` wrote: the file, its rows and groups, and the dataset's groups."""

    path: Path
    rows: int
    groups: int
    of: int


def write_sample(
    dataset: str,
    config: str,
    split: str,
    *,
    groups: int | None,
    fraction: float | None,
    seed: int,
    output: Path,
) -> WrittenSample:
    """Select ``groups`` groups (or a ``fraction`` of them) of the dataset's rows with ``seed`` and write their
    ids to ``output``."""
    from unqover.files import check_writable
    from unqover.hub.load import load_rows, source_name
    from unqover.predictions import SAMPLE_IDS_SCHEMA, write_predictions
    from unqover.probe.sampling import DESIGN, describe_selection, select_groups
    from unqover.probes.unqover_rows import ROW_COLUMNS

    check_writable(output, folder=False)
    rows = load_rows(dataset, config, split, columns=ROW_COLUMNS)
    kept = select_groups(rows, limit=groups, sample=fraction, seed=seed)
    counts, total = describe_selection(kept), describe_selection(rows)
    about = {
        "selection": {"design": DESIGN, "seed": seed, "groups": counts["groups"], "of": total["groups"]},
        "dataset": {"source": source_name(dataset), "config": config, "split": split},
    }
    write_predictions(output, kept.select(["id"]), about, schema=SAMPLE_IDS_SCHEMA)
    return WrittenSample(output, counts["rows"], counts["groups"], total["groups"])
