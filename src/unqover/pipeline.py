"""Workflows that join files and math: measure a predictions file against the dataset it scored."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from unqover.errors import UnqoverError
from unqover.generate.ids import match_ids
from unqover.hub.load import load_rows
from unqover.measure.unqover import UnqoverBias, unqover_bias
from unqover.predictions import read_predictions

ROW_COLUMNS = (
    "id",
    "subject_1",
    "subject_2",
    "subject_1_cluster",
    "subject_2_cluster",
    "template_id",
    "attribute",
    "attribute_type",
    "polarity",
)


def measure_predictions(
    predictions: str | Path,
    dataset: str | Path | None = None,
    config: str | None = None,
    split: str | None = None,
    **options,
) -> tuple[UnqoverBias, dict]:
    """Join a predictions file to its dataset rows by ``id`` and measure; returns the result and provenance.

    The dataset, config and split default to those recorded in the file's provenance. ``options`` go to
    :func:`unqover.measure.unqover.unqover_bias` (mode, drop_incomplete, n_resamples, confidence, seed).
    """
    scores, provenance = read_predictions(predictions)
    recorded = provenance.get("dataset", {})
    dataset = dataset or recorded.get("source")
    config = config or recorded.get("config")
    split = split or recorded.get("split") or "test"
    if not dataset or not config:
        raise UnqoverError(f"{predictions} does not record its dataset; pass --dataset and --config")
    rows = load_rows(dataset, config, split, columns=ROW_COLUMNS)
    position = match_ids(rows["id"], scores["id"])
    matched = position >= 0
    if matched.sum() < scores.num_rows:
        unknown = np.setdiff1d(np.arange(scores.num_rows), position[matched])
        raise UnqoverError(
            f"{len(unknown)} prediction ids are not in {dataset} ({config}/{split}), e.g. "
            f"{scores['id'][int(unknown[0])].as_py()!r}: were they made on another dataset?"
        )
    if not matched.all():
        rows = rows.filter(pa.array(matched))
        position = position[matched]
    score_1 = scores["score_1"].to_numpy()[position]
    score_2 = scores["score_2"].to_numpy()[position]
    result = unqover_bias(rows, score_1, score_2, **options)
    provenance = {
        **provenance,
        "dataset": {**recorded, "source": str(dataset), "config": config, "split": split},
    }
    return result, provenance
