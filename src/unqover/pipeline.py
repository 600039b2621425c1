"""Workflows that join files and math: measure a predictions file against the dataset it scored.

Predictions may cover the whole dataset (a full run) or some of its groups (a quick run, or ids written by
``unqover sample`` and scored elsewhere): then the result estimates the full-dataset values, with intervals from
the sampling of groups (``unqover.measure.sampled``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from unqover.errors import UnqoverError
from unqover.generate.ids import match_ids
from unqover.hub.load import load_rows
from unqover.measure.unqover import UnqoverBias, unqover_bias
from unqover.predictions import read_predictions
from unqover.probe.sampling import DESIGN, budget, check_design, find_groups, selected_groups

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
    score_1 = np.zeros(rows.num_rows)
    score_2 = np.zeros(rows.num_rows)
    score_1[matched] = scores["score_1"].to_numpy()[position[matched]]
    score_2[matched] = scores["score_2"].to_numpy()[position[matched]]
    observed, sample_info = None, None
    if not matched.all():
        observed = matched
        sample_info = describe_sample(rows, matched, provenance.get("selection") or {})
    result = unqover_bias(rows, score_1, score_2, observed=observed, sample_info=sample_info, **options)
    provenance = {
        **provenance,
        "dataset": {**recorded, "source": str(dataset), "config": config, "split": split},
    }
    return result, provenance


def describe_sample(rows: pa.Table, observed: np.ndarray, selection: dict) -> dict:
    """How the scored rows were drawn: this project's design with a known seed (checked exactly), or a subset
    whose strata at least hold their proportional shares (the design's property for any seed)."""
    groups = find_groups(rows)
    kept = np.zeros(groups.num_groups, dtype=bool)
    kept[groups.row_group[observed]] = True
    seed = selection.get("seed")
    if (
        isinstance(seed, int)
        and not isinstance(seed, bool)
        and seed >= 0
        and selection.get("design") == DESIGN
    ):
        exact = selected_groups(groups, budget(groups.num_groups, int(kept.sum())), seed)
        if np.array_equal(exact, kept):
            return {"design": DESIGN, "seed": seed, "matches_design": True}
    check = check_design(groups, kept)
    info = {"design": DESIGN if check.matches else "unknown", "seed": None, "matches_design": check.matches}
    if not check.matches:
        info["warning"] = (
            "the scored groups are not spread over the (template, attribute) strata as a random sample of this "
            f"size would be ({check.worst_stratum}); the intervals assume an equal-probability random sample "
            "(`unqover sample` writes one)"
        )
    return info
