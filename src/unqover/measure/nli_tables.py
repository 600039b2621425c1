"""The NLI measure's tables: S, ΔP, B and the gaps per occupation and per template, and a quick run's
per-occupation intervals for the full-dataset values (betting intervals, :mod:`unqover.measure.stratified`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from unqover.errors import UnqoverError
from unqover.measure.nli_instances import _Q, NliColumns, _objects, core_statistics
from unqover.measure.stratified import stratified_mean_intervals

TABLE_COLUMNS = ("count", "S", "S_margin", "delta_P", "B", "ties", "stereotype_gap", "gender_gap")


def _group_table(keys: np.ndarray, values: np.ndarray, ties: str, name: str, neutral: bool) -> pd.DataFrame:
    codes, labels = pd.factorize(keys, sort=True)
    sums = np.stack([np.bincount(codes, values[:, q], len(labels)) for q in range(values.shape[1])], axis=-1)
    stats = core_statistics(sums, ties)
    columns = [*TABLE_COLUMNS, *(("neutral_rate", "mean_neutral") if neutral else ())]
    frame = pd.DataFrame({name: np.asarray(labels, dtype=object)})
    frame["count"] = sums[:, _Q["count"]].astype(np.int64)
    for column in columns[1:]:
        frame[column] = stats[column].astype(np.int64) if column == "ties" else stats[column]
    return frame


SIGNED_COLUMNS = ("stereotype_gap", "gender_gap")
NLI_TABLE_INTERVAL_METHOD = (
    "per occupation, an interval for the mean over all its instances in the full dataset, from the source "
    "premises kept at random within its occupation x template strata: the stratified t interval with the "
    "finite-population correction where the occupation has 10 or more sampled premises, two or more per open "
    "template and a small skewness (Cochran's rule), near its stated level; elsewhere betting confidence intervals "
    "for bounded values (Waudby-Smith & Ramdas 2024) per template, combined over the templates "
    "(unqover.measure.stratified), valid at any number of sampled premises, nearly the whole range with one or "
    "two; exact when all were kept"
)


def _table_quantities(values: np.ndarray, ties: str, neutral: bool) -> dict[str, np.ndarray]:
    """The per-instance quantities in [0, 1] whose mean is each by_occupation column (signed ones as (v + 1)/2)."""
    q = {
        "S": values[:, _Q["same"]],
        "S_margin": values[:, _Q["same_margin"]],
        "delta_P": values[:, _Q["abs_diff"]],
        "stereotype_gap": (values[:, _Q["d"]] + 1) / 2,
        "gender_gap": (values[:, _Q["g"]] + 1) / 2,
    }
    if ties == "half":
        q["B"] = values[:, _Q["stereo_wins"]] + 0.5 * values[:, _Q["tie"]]
    if neutral:
        q["neutral_rate"] = values[:, _Q["neutral"]]
        q["mean_neutral"] = values[:, _Q["p_neutral"]]
    return q


def occupation_intervals(
    columns: NliColumns,
    values: np.ndarray,
    strata,
    population,
    ties: str,
    neutral: bool,
    confidence: float,
    seed: int,
) -> pd.DataFrame:
    """Per occupation of a quick run: ``<name>_low``/``<name>_high`` (percent) for its full-dataset value.

    ``strata``: each instance's stratum within its occupation (the template); ``population``: per (occupation,
    stratum) of the full dataset, (source premises, rows, most rows of one premise). A unit is a source premise
    within a stratum; its value is its rows' sum over the stratum's most rows of one premise (in [0, 1]), and the
    occupation's value is Σ_s a_s μ_s with a_s = premises_s · most_s / rows of the occupation.
    """
    occupation = columns.occupation.astype(str)
    stratum = _objects(strata, "strata", len(occupation)).astype(str)
    sizes = {(str(o), str(s)): tuple(int(v) for v in value) for (o, s), value in population.items()}
    keys = sorted(sizes)
    index = {key: k for k, key in enumerate(keys)}
    row_stratum = np.array(
        [index.get(key, -1) for key in zip(occupation, stratum, strict=True)], dtype=np.int64
    )
    if (row_stratum < 0).any():
        o, s = occupation[row_stratum < 0][0], stratum[row_stratum < 0][0]
        raise UnqoverError(f"occupation {o!r}, stratum {s!r} is not in the full dataset's population")
    occupations = sorted({o for o, _ in keys})
    stratum_occupation = np.array([occupations.index(o) for o, _ in keys], dtype=np.int64)
    premises, rows, most = np.array([sizes[key] for key in keys], dtype=np.float64).T
    weight = premises * most / np.bincount(stratum_occupation, rows, len(occupations))[stratum_occupation]
    # units: a source premise within a stratum
    unit_codes, unit_keys = pd.factorize(row_stratum * len(columns.cluster_labels) + columns.cluster)
    unit_stratum = np.asarray(unit_keys, dtype=np.int64) // len(columns.cluster_labels)
    unit_rows = np.bincount(unit_codes, minlength=len(unit_keys))
    if (unit_rows > most[unit_stratum]).any():
        raise UnqoverError(
            "a source premise has more rows in a stratum than the full dataset's population allows"
        )
    quantities = _table_quantities(values, ties, neutral)
    num_strata, num_occupations = len(keys), len(occupations)
    unit_values = [
        np.bincount(unit_codes, q, len(unit_keys)) / most[unit_stratum] for q in quantities.values()
    ]
    _, low, high = stratified_mean_intervals(
        np.concatenate(unit_values),
        np.concatenate([unit_stratum + k * num_strata for k in range(len(quantities))]),
        np.concatenate([stratum_occupation + k * num_occupations for k in range(len(quantities))]),
        np.tile(premises, len(quantities)),
        np.tile(weight, len(quantities)),
        alpha=1 - confidence,
        seed=seed,
        pool=np.repeat(np.arange(len(quantities)), num_strata),  # each quantity's strata apart
    )
    frame = pd.DataFrame({"occupation": np.asarray(occupations, dtype=object)})
    for k, name in enumerate(quantities):
        part = slice(k * num_occupations, (k + 1) * num_occupations)
        lo, hi = np.clip(low[part], 0.0, 1.0), np.clip(high[part], 0.0, 1.0)
        if name in SIGNED_COLUMNS:
            lo, hi = 2 * lo - 1, 2 * hi - 1
        frame[f"{name}_low"], frame[f"{name}_high"] = 100 * lo, 100 * hi
    return frame
