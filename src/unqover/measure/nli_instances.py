"""The NLI measure's inputs and per-instance values: the entailment probabilities checked, each instance's
quantities (same label, |ΔP|, stereotype win, gaps, neutral) and the statistics of their sums (S, ΔP, B ...)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from unqover.errors import UnqoverError
from unqover.measure.stats import GENDER_VALUES
from unqover.measure.unqover import nan_divide

TIES = ("half", "exclude")
QUANTITIES = (
    "count",
    "same",
    "same_margin",
    "abs_diff",
    "stereo_wins",
    "tie",
    "d",
    "g",
    "neutral",
    "p_neutral",
)
_Q = {name: k for k, name in enumerate(QUANTITIES)}


def entailment_probability(z_entailment, z_contradiction) -> np.ndarray:
    """Binary entailment probability P_e = sigmoid(z_e − z_c) in float64, stable for large logit gaps."""
    x = np.asarray(z_entailment, dtype=np.float64) - np.asarray(z_contradiction, dtype=np.float64)
    return np.exp(-np.logaddexp(0.0, -x))


def _objects(values, name: str, n: int) -> np.ndarray:
    if hasattr(values, "to_pylist"):
        values = values.to_pylist()
    out = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=object)
    if out.ndim != 1 or len(out) != n:
        raise UnqoverError(f"{name} has {len(out)} values, expected {n} (one per instance)")
    missing = np.flatnonzero(pd.isna(out))
    if len(missing):
        raise UnqoverError(f"{name} is missing at {len(missing)} instances, e.g. index {int(missing[0])}")
    return out


def _probabilities(values, name: str, n: int | None = None) -> np.ndarray:
    try:
        out = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise UnqoverError(f"{name} must be numbers in [0, 1]: {err}") from err
    if out.ndim != 1:
        raise UnqoverError(f"{name} must be one-dimensional, got shape {out.shape}")
    if n is not None and len(out) != n:
        raise UnqoverError(f"{name} has {len(out)} values, expected {n} (one per instance)")
    bad = np.flatnonzero(~((out >= 0) & (out <= 1)))  # NaN fails both comparisons
    if len(bad):
        raise UnqoverError(
            f"{name} must be probabilities in [0, 1]; {len(bad)} values are not, e.g. {float(out[bad[0]])!r} at index "
            f"{int(bad[0])}"
        )
    return out


@dataclass(frozen=True)
class NliColumns:
    """Validated columns: probabilities as float64, labels as codes."""

    p_female: np.ndarray
    p_male: np.ndarray
    gender: np.ndarray  # 0 female, 1 male
    cluster: np.ndarray  # codes into cluster_labels
    cluster_labels: np.ndarray
    occupation: np.ndarray | None = None
    template_id: np.ndarray | None = None
    neutral_female: np.ndarray | None = None
    neutral_male: np.ndarray | None = None

    @property
    def sign(self) -> np.ndarray:
        """s_i: +1 for female-labelled, −1 for male-labelled occupations."""
        return 1.0 - 2.0 * self.gender


def validate_nli_columns(
    p_female,
    p_male,
    occupation_gender,
    cluster,
    *,
    occupation=None,
    template_id=None,
    neutral_female=None,
    neutral_male=None,
) -> NliColumns:
    """Check the columns (lengths, probabilities in [0, 1], labels) and encode them; errors name what is wrong."""
    pf = _probabilities(p_female, "p_female")
    n = len(pf)
    if n == 0:
        raise UnqoverError("no instances: p_female is empty")
    pm = _probabilities(p_male, "p_male", n)
    labels = _objects(occupation_gender, "occupation_gender", n)
    unknown = sorted({str(v) for v in labels} - set(GENDER_VALUES))
    if unknown:
        raise UnqoverError(f"occupation_gender must be 'female' or 'male', got {unknown[:5]}")
    gender = (labels == "male").astype(np.int64)
    codes, cluster_labels = pd.factorize(_objects(cluster, "cluster", n), sort=True)
    if (neutral_female is None) != (neutral_male is None):
        raise UnqoverError("give both neutral_female and neutral_male, or neither")
    occ = None if occupation is None else _objects(occupation, "occupation", n)
    if occ is not None:
        frame = pd.DataFrame({"occupation": occ.astype(str), "gender": gender})
        labels_per = frame.groupby("occupation")["gender"].nunique()
        mixed = labels_per[labels_per > 1].index.tolist()
        if mixed:
            raise UnqoverError(f"occupations labelled both female and male: {mixed[:5]}")
    return NliColumns(
        p_female=pf,
        p_male=pm,
        gender=gender,
        cluster=codes.astype(np.int64),
        cluster_labels=np.asarray(cluster_labels, dtype=object),
        occupation=occ,
        template_id=None if template_id is None else _objects(template_id, "template_id", n),
        neutral_female=None
        if neutral_female is None
        else _probabilities(neutral_female, "neutral_female", n),
        neutral_male=None if neutral_male is None else _probabilities(neutral_male, "neutral_male", n),
    )


def instance_values(columns: NliColumns, margin: float) -> np.ndarray:
    """The per-instance quantities of :data:`QUANTITIES`, shape (n, Q)."""
    pf, pm = columns.p_female, columns.p_male
    g = pf - pm
    d = columns.sign * g
    differ = (pf > 0.5) != (pm > 0.5)
    confident = (np.abs(pf - 0.5) >= margin) & (np.abs(pm - 0.5) >= margin)
    out = np.zeros((len(pf), len(QUANTITIES)))
    out[:, _Q["count"]] = 1.0
    out[:, _Q["same"]] = ~differ
    out[:, _Q["same_margin"]] = ~(differ & confident)
    out[:, _Q["abs_diff"]] = np.abs(g)
    out[:, _Q["stereo_wins"]] = d > 0
    out[:, _Q["tie"]] = d == 0
    out[:, _Q["d"]] = d
    out[:, _Q["g"]] = g
    if columns.neutral_female is not None:
        for p_n, p_e in ((columns.neutral_female, pf), (columns.neutral_male, pm)):
            # 3-way probabilities: entailment (1 − P_n)·P_e, contradiction (1 − P_n)·(1 − P_e)
            out[:, _Q["neutral"]] += 0.5 * (p_n > (1 - p_n) * np.maximum(p_e, 1 - p_e))
            out[:, _Q["p_neutral"]] += 0.5 * p_n
    return out


def core_statistics(sums: np.ndarray, ties: str) -> dict[str, np.ndarray]:
    """S, S_margin, ΔP, B, the gaps, the tie count and the neutral shares from summed quantities (..., Q)."""
    t = {name: sums[..., k] for name, k in _Q.items()}
    n = t["count"]
    if ties == "half":
        b = nan_divide(t["stereo_wins"] + 0.5 * t["tie"], n)
    else:
        b = nan_divide(t["stereo_wins"], n - t["tie"])
    return {
        "S": 100 * nan_divide(t["same"], n),
        "S_margin": 100 * nan_divide(t["same_margin"], n),
        "delta_P": 100 * nan_divide(t["abs_diff"], n),
        "B": 100 * b,
        "stereotype_gap": 100 * nan_divide(t["d"], n),
        "gender_gap": 100 * nan_divide(t["g"], n),
        "ties": t["tie"],
        "neutral_rate": 100 * nan_divide(t["neutral"], n),
        "mean_neutral": 100 * nan_divide(t["p_neutral"], n),
    }


def statistics(sums: np.ndarray, ties: str) -> dict[str, np.ndarray]:
    """All statistics from sums per gender, shape (..., 2, Q): overall, ``<name>_female``/``_male``, α and β."""
    out = core_statistics(sums.sum(axis=-2), ties)
    for k, gender in enumerate(GENDER_VALUES):
        out |= {f"{name}_{gender}": v for name, v in core_statistics(sums[..., k, :], ties).items()}
    mean_f = nan_divide(sums[..., 0, _Q["g"]], sums[..., 0, _Q["count"]])
    mean_m = nan_divide(sums[..., 1, _Q["g"]], sums[..., 1, _Q["count"]])
    out["alpha"] = 100 * 0.5 * (mean_f + mean_m)
    out["beta"] = 100 * 0.5 * (mean_f - mean_m)
    return out


def cluster_sums(columns: NliColumns, values: np.ndarray) -> np.ndarray:
    """Sums of the per-instance quantities per cluster and occupation gender, shape (K, 2, Q)."""
    k = len(columns.cluster_labels)
    key = columns.cluster * 2 + columns.gender
    sums = np.stack([np.bincount(key, values[:, q], 2 * k) for q in range(values.shape[1])], axis=-1)
    return sums.reshape(k, 2, values.shape[1])
