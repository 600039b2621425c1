"""``unqover sample``: the row ids a quick run of an UnQover-style dataset would score, for scoring elsewhere.

The same seeded, stratified selection of whole groups as ``unqover probe --limit`` (``unqover.scoring.sampling``),
written as a predictions-shaped file of ids whose provenance records the selection and the dataset, so that
``unqover measure`` recognises the sample and estimates the full-dataset values.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from unqover.errors import UnqoverError


@dataclass(frozen=True)
class WrittenSample:
    """What ``write_sample`` wrote: the file, its rows and groups, and the dataset's groups."""

    path: Path
    rows: int
    groups: int
    of: int
    probe: str | None = None  # the probe whose rows they are, as the dataset records it


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
    from unqover.probes.unqover_rows import ROW_COLUMNS
    from unqover.scoring.sampling import DESIGN, describe_selection, select_groups

    check_writable(output, folder=False)
    probe = sampled_probe(dataset)
    rows = load_rows(dataset, config, split, columns=ROW_COLUMNS)
    kept = select_groups(rows, limit=groups, sample=fraction, seed=seed)
    counts, total = describe_selection(kept), describe_selection(rows)
    about = {
        **({"probe": probe} if probe else {}),
        "selection": {"design": DESIGN, "seed": seed, "groups": counts["groups"], "of": total["groups"]},
        "dataset": {"source": source_name(dataset), "config": config, "split": split},
    }
    write_predictions(output, kept.select(["id"]), about, schema=SAMPLE_IDS_SCHEMA)
    return WrittenSample(output, counts["rows"], counts["groups"], total["groups"], probe)


def sampled_probe(dataset: str) -> str | None:
    """The probe whose rows ``dataset`` holds, refused unless its rows are drawn in groups (an UnQover bias class
    or a custom probe); None for a Hub dataset whose card does not say."""
    from unqover.probes.base import REGISTERED
    from unqover.probes.row_identity import known_rows_probe
    from unqover.probes.unqover import UnqoverProbe

    found = known_rows_probe(dataset)
    reader = REGISTERED.get(found) if found else None
    if reader is not None and not isinstance(reader, UnqoverProbe):
        unqover = [name for name, probe in REGISTERED.items() if isinstance(probe, UnqoverProbe)]
        raise UnqoverError(
            f"{dataset} holds rows of the {found} probe: `unqover sample` draws groups of the rows of "
            f"{', '.join(unqover)} or a custom probe"
        )
    return found
