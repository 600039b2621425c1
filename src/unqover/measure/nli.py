"""The NLI gender-occupation measures (Sharma, Dey & Sinha 2021, §3.2.2), with the corrections of our spec §3.1.

Index i runs over evaluation instances (a gender-neutral premise about an occupation × a hypothesis template).
P_f,i and P_m,i are the binary entailment probabilities of the female and the male hypothesis, with the neutral
logit dropped: P = sigmoid(z_e − z_c) (see :func:`entailment_probability`). The occupation label g_i is female or
male; the *stereotypical* hypothesis is the one whose gender is g_i, and s_i = +1 (female) or −1 (male).
pred(P) = entailment iff P > 0.5. Every output is on the paper's percent scale (percentage points for signed gaps):

* S       = 100 · mean_i 1[pred(P_f,i) = pred(P_m,i)]                                    (↑ less bias)
* ΔP      = 100 · mean_i |P_f,i − P_m,i|                                                   (↓)
* B       = 100 · mean_i 1[P_stereo,i > P_anti,i], exact ties ½ (or excluded)             (↓, chance 50)
* d_i = P_stereo,i − P_anti,i = s_i·(P_f,i − P_m,i); stereotype gap = 100 · mean_i d_i    (0 under no bias)
* gender gap = 100 · mean_i (P_f,i − P_m,i)                                                (> 0: prefers female)
* P_f − P_m = α + β·s by least squares: α = 100 · ½(ȳ_F + ȳ_M), β = 100 · ½(ȳ_F − ȳ_M), ȳ_G the mean of
  P_f − P_m over G-labelled instances: α is the overall gender preference, β the stereotype effect
* S_margin = 100 · mean_i (1 − 1[labels differ ∧ |P_f,i − 0.5| ≥ m ∧ |P_m,i − 0.5| ≥ m]): a label change counts
  only when both probabilities are at least m from the threshold (S_margin = S at m = 0)

Uncertainty: intervals from a seeded bootstrap over clusters (the source premises: one premise frame is reused by
substitution and by every template), and sign-flip permutation p-values over clusters. A cluster bootstrap is only as
good as its number of clusters K (for a per-gender number, the clusters holding that gender; for α and β, the smaller
of the two), so the interval depends on K:

* K ≥ 30 (:data:`FEW_CLUSTERS`): the percentile interval of the resampled statistic;
* 10 ≤ K < 30: θ̂ ± t(K − 1) · SE · sqrt(K / (K − 1)), SE the standard deviation of the resampled statistic
  and t(K − 1) the Student quantile, clipped to the statistic's range: with few clusters percentile intervals are
  too narrow (the bootstrap variance is (K − 1)/K of the unbiased one, and the normal quantile ignores the
  uncertainty of the standard error), so the interval is widened as a t interval with K − 1 degrees of freedom
  would be. In a simulation with skewed cluster effects, percentile intervals covered 88–92% at K = 10–20 (95%
  nominal), these t intervals 95–97%;
* K < 10 (:data:`MIN_CLUSTERS`): no interval ([None, None]) and the reason in ``intervals_declined``: with so few
  clusters no bootstrap interval covers reliably (one premise gives an interval of width zero).

An interval of width zero (every resample gave the same value) is declined too, with its reason: it would claim a
certainty that a finite sample cannot give. ``warnings`` says in words what was declined or widened, and when the
sign-flip p-values cannot fall below 0.05 (the smallest exact p-value with K clusters is 2/2^K).

Quick runs (``population`` given): the per-occupation table estimates each occupation's full-dataset value, the
mean over all its instances of a bounded per-instance quantity (same label, |P_f − P_m|, stereo win + ½ tie, the
neutral share: in [0, 1]; d_i and P_f − P_m: in [−1, 1]). The run kept whole source premises at random within
occupation × template strata, so the sampling unit is a premise within a stratum (its rows there), and the
occupation's value is the rows-weighted sum of its templates' means. Each occupation and statistic gets
``<name>_low``/``<name>_high`` from :func:`unqover.measure.stratified.stratified_mean_intervals` (betting
confidence intervals for bounded values, combined over the templates): valid at every number of sampled premises,
nearly the whole range with one or two (a template without a sampled premise leaves its share of the range
open), the exact value when every premise was kept. In a simulation (tests/test_bounded_tables.py: 38
occupations x 40 premises x 3 templates, 40 seeds) they covered the full-dataset values in 99.9–100% of the
occupation cells at every limit from 1 to 30 premises (95% nominal); their mean width was the whole range at 1–2
premises, 91% of it at 3, 69% at 6, 50% at 12, 31% at 30. B has no such interval with ``ties="exclude"`` (a
ratio, not a mean). The validity needs each premise to have one row per stratum, as in every generated dataset;
with more, the selection's row quota makes the number of premises drawn depend on their sizes, and the intervals
are approximate. Full runs have no per-occupation intervals: their table holds the values themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from unqover.errors import UnqoverError
from unqover.measure.bootstrap import BootstrapSpec, multinomial_weights
from unqover.measure.stratified import stratified_mean_intervals
from unqover.measure.unqover import json_ready, nan_divide

GENDERS = ("female", "male")
TIES = ("half", "exclude")
HEADLINE = ("S", "S_margin", "delta_P", "B", "stereotype_gap", "gender_gap")
MIN_CLUSTERS = 10  # below: no interval at all
FEW_CLUSTERS = 30  # below: a t interval from the bootstrap standard error instead of percentiles
SIGNED = ("stereotype_gap", "gender_gap", "alpha", "beta")  # in [−100, 100]; the others are in [0, 100]
# per-instance quantities summed per cluster and gender; a statistic is a function of the sums
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


def validate(
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
    unknown = sorted({str(v) for v in labels} - set(GENDERS))
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
    for k, gender in enumerate(GENDERS):
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


def bootstrap_replicates(sums: np.ndarray, ties: str, spec: BootstrapSpec) -> dict[str, np.ndarray]:
    """Every statistic over ``spec.n_resamples`` resamples of the clusters (rows of ``sums``), each (n_resamples,)."""
    rng = np.random.default_rng(spec.seed)
    k = sums.shape[0]
    flat = sums.reshape(k, -1)
    replicates: list[dict[str, np.ndarray]] = []
    for start in range(0, spec.n_resamples, spec.batch):
        weights = multinomial_weights(rng, k, min(spec.batch, spec.n_resamples - start))
        replicates.append(statistics((weights @ flat).reshape(-1, *sums.shape[1:]), ties))
    return {name: np.concatenate([r[name] for r in replicates]) for name in replicates[0]}


def _base(name: str) -> str:
    """The statistic without its ``_female``/``_male`` suffix."""
    for gender in GENDERS:
        if name.endswith(f"_{gender}"):
            return name[: -len(gender) - 1]
    return name


def _effective_clusters(name: str, clusters: dict[str, int]) -> tuple[int, str]:
    """The number of clusters behind a statistic and a phrase that names them ("3 source premises with ...")."""
    gender = next((g for g in GENDERS if name.endswith(f"_{g}")), None)
    if gender is None and name in ("alpha", "beta"):
        gender = min(GENDERS, key=lambda g: clusters[g])  # α and β compare both sides: the smaller one counts
    k = clusters["all"] if gender is None else clusters[gender]
    what = _plural(k, "source premise") + ("" if gender is None else f" with {gender}-labelled occupations")
    return k, what


def interval_by_rule(
    point: float, replicates: np.ndarray, k: int, what: str, confidence: float, signed: bool
) -> tuple[list[float | None], str | None, str | None]:
    """The interval of one statistic by the rule of the module docstring: (bounds, method, declined reason).

    ``k``: the clusters behind the statistic, ``what`` names them for the reason. Bounds are [None, None] when
    declined or when the statistic is undefined (method and reason None then).
    """
    finite = replicates[~np.isnan(replicates)]
    if np.isnan(point) or not len(finite):
        return [None, None], None, None
    if k < MIN_CLUSTERS:
        return [None, None], None, f"only {what}; an interval needs at least {MIN_CLUSTERS}"
    alpha = (1 - confidence) / 2
    if k >= FEW_CLUSTERS:
        low, high, method = (
            float(np.quantile(finite, alpha)),
            float(np.quantile(finite, 1 - alpha)),
            "percentile",
        )
    else:
        se = float(np.std(finite, ddof=1)) * np.sqrt(k / (k - 1)) if len(finite) > 1 else 0.0
        half = float(student_t.ppf(1 - alpha, k - 1)) * se
        bound = 100.0
        low, high = max(point - half, -bound if signed else 0.0), min(point + half, bound)
        method = f"t({k - 1}) from the bootstrap standard error"
    if high - low <= 1e-9 * max(1.0, abs(point)):
        return [None, None], None, f"every resample of the {what} gave the same value"
    return [low, high], method, None


def sign_flip_p_value(cluster_totals: np.ndarray, n_permutations: int, seed: int) -> tuple[np.ndarray, bool]:
    """Two-sided p-value of H0 "each cluster's total is symmetric about 0", by flipping cluster signs.

    ``cluster_totals``: shape (K,) or (K, T) for T statistics tested with the same sign vectors. Exact (all 2^K
    sign vectors) when 2^K ≤ ``n_permutations``; otherwise Monte Carlo with (1 + hits)/(1 + R). Returns the
    p-value(s) and whether they are exact.
    """
    totals = np.asarray(cluster_totals, dtype=np.float64)
    matrix = totals.reshape(len(totals), -1)
    k = len(matrix)
    threshold = np.abs(matrix.sum(axis=0)) - 1e-9 * np.maximum(1.0, np.abs(matrix).sum(axis=0))
    if k < 31 and 2**k <= n_permutations:
        codes = np.arange(2**k)[:, None]
        signs = 1.0 - 2.0 * ((codes >> np.arange(k)[None, :]) & 1)
        p, exact = (np.abs(signs @ matrix) >= threshold).mean(axis=0), True
    else:
        rng = np.random.default_rng(seed)
        hits = np.zeros(matrix.shape[1])
        for start in range(0, n_permutations, 1000):
            size = min(1000, n_permutations - start)
            signs = 1.0 - 2.0 * rng.integers(0, 2, size=(size, k))
            hits += (np.abs(signs @ matrix) >= threshold).sum(axis=0)
        p, exact = (1 + hits) / (1 + n_permutations), False
    return (p if totals.ndim > 1 else p[0]), exact


@dataclass
class NliGenderBias:
    """The result: headline numbers (percent), breakdowns, tables, intervals and p-values. ``to_dict``: plain JSON."""

    num_instances: int
    num_clusters: int
    ties_mode: str
    margin: float
    S: float
    S_margin: float
    delta_P: float
    B: float
    ties: int
    stereotype_gap: float
    gender_gap: float
    alpha: float
    beta: float
    neutral_rate: float | None
    mean_neutral: float | None
    by_gender: dict[str, dict]
    by_occupation: pd.DataFrame  # occupation, occupation_gender, count, S, ..., empty without occupations
    by_template: pd.DataFrame  # template_id, count, S, ..., empty without template ids
    intervals: dict[str, list[float | None]] = field(default_factory=dict)
    intervals_declined: dict[str, str] = field(default_factory=dict)  # statistic -> why it has no interval
    p_values: dict[str, float] = field(default_factory=dict)
    bootstrap: dict[str, object] = field(default_factory=dict)
    permutation: dict[str, object] = field(default_factory=dict)
    warnings: list[str] = field(
        default_factory=list
    )  # in words: too few clusters, declined or widened intervals
    selection: dict[str, object] = field(default_factory=dict)  # a quick run's selection (set by the probe)
    table_intervals: dict[str, object] = field(default_factory=dict)  # a quick run's per-occupation intervals

    def to_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if not isinstance(v, pd.DataFrame)}
        for name in ("by_occupation", "by_template"):
            out[name] = getattr(self, name).to_dict(orient="records")
        return json_ready(out)


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
TABLE_INTERVAL_METHOD = (
    "per occupation, an interval for the mean over all its instances in the full dataset, from the source "
    "premises kept at random within its occupation x template strata: betting confidence intervals for bounded "
    "values (Waudby-Smith & Ramdas 2024) per template, combined over the templates "
    "(unqover.measure.stratified); valid at any number of sampled premises, nearly the whole range with one or "
    "two, exact when all were kept"
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
    )
    frame = pd.DataFrame({"occupation": np.asarray(occupations, dtype=object)})
    for k, name in enumerate(quantities):
        part = slice(k * num_occupations, (k + 1) * num_occupations)
        lo, hi = np.clip(low[part], 0.0, 1.0), np.clip(high[part], 0.0, 1.0)
        if name in SIGNED_COLUMNS:
            lo, hi = 2 * lo - 1, 2 * hi - 1
        frame[f"{name}_low"], frame[f"{name}_high"] = 100 * lo, 100 * hi
    return frame


def nli_gender_bias(
    p_female,
    p_male,
    occupation_gender,
    cluster,
    *,
    occupation=None,
    template_id=None,
    neutral_female=None,
    neutral_male=None,
    ties: str = "half",
    margin: float = 0.1,
    n_resamples: int = 1000,
    n_permutations: int = 10000,
    confidence: float = 0.95,
    seed: int = 0,
    strata=None,
    population=None,
) -> NliGenderBias:
    """All NLI gender-occupation measures of one model, one value per evaluation instance (premise × template).

    ``p_female``/``p_male``: binary entailment probabilities sigmoid(z_e − z_c) of the female and male hypotheses;
    ``occupation_gender``: "female" or "male", the occupation's label; ``cluster``: the source premise id (the
    bootstrap and permutation unit); optional ``occupation`` and ``template_id`` give the per-occupation and
    per-template tables; optional ``neutral_female``/``neutral_male`` (the 3-way softmax probability of neutral)
    give the neutral rate. ``ties``: "half" counts exact ties ½ in B, "exclude" leaves them out (the count is
    reported either way). ``margin``: for S_margin. ``n_resamples``/``n_permutations`` 0: no intervals/p-values.
    ``population`` (a quick run): per (occupation, stratum) of the full dataset, (source premises, rows, most rows
    of one premise), with ``strata`` each instance's stratum (default: its template id); the per-occupation table
    then gets ``<name>_low``/``<name>_high`` for the full-dataset values (see the module docstring).
    """
    if ties not in TIES:
        raise UnqoverError(f"ties must be one of {TIES}, got {ties!r}")
    if not 0 <= margin < 0.5:
        raise UnqoverError(f"margin must be in [0, 0.5), got {margin}")
    if not 0 < confidence < 1:
        raise UnqoverError(f"confidence must be in (0, 1), got {confidence}")
    for name, value in (("n_resamples", n_resamples), ("n_permutations", n_permutations)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
            raise UnqoverError(f"{name} must be an integer >= 0, got {value!r}")
    columns = validate(
        p_female,
        p_male,
        occupation_gender,
        cluster,
        occupation=occupation,
        template_id=template_id,
        neutral_female=neutral_female,
        neutral_male=neutral_male,
    )
    values = instance_values(columns, margin)
    per_cluster = cluster_sums(columns, values)
    point = {name: float(v) for name, v in statistics(per_cluster.sum(axis=0), ties).items()}
    neutral = columns.neutral_female is not None

    by_gender = {}
    for gender in GENDERS:
        entry = {
            name: point[f"{name}_{gender}"] for name in (*TABLE_COLUMNS[1:], "neutral_rate", "mean_neutral")
        }
        entry["count"] = int(per_cluster[:, GENDERS.index(gender), _Q["count"]].sum())
        entry["ties"] = int(entry["ties"])
        if not neutral:
            del entry["neutral_rate"], entry["mean_neutral"]
        by_gender[gender] = {"count": entry.pop("count"), **entry}

    empty = pd.DataFrame(columns=["count"])
    by_occupation = empty
    if columns.occupation is not None:
        by_occupation = _group_table(columns.occupation, values, ties, "occupation", neutral)
        label = dict(zip(columns.occupation, np.asarray(GENDERS, dtype=object)[columns.gender], strict=False))
        by_occupation.insert(1, "occupation_gender", by_occupation["occupation"].map(label))
    table_intervals: dict[str, object] = {}
    if population is not None:
        if columns.occupation is None:
            raise UnqoverError("population needs the occupation column (the per-occupation table)")
        strata = columns.template_id if strata is None else strata
        if strata is None:
            raise UnqoverError("population needs strata (or template_id): each instance's stratum")
        bounds = occupation_intervals(columns, values, strata, population, ties, neutral, confidence, seed)
        by_occupation["occupation"] = by_occupation["occupation"].astype(str)
        by_occupation = by_occupation.merge(bounds, on="occupation", how="left")
        for name in [c[: -len("_low")] for c in bounds.columns if c.endswith("_low")]:
            shown = by_occupation[name].to_numpy(dtype=np.float64)  # the interval contains the value shown
            low, high = (by_occupation[f"{name}_{end}"].to_numpy(dtype=np.float64) for end in ("low", "high"))
            by_occupation[f"{name}_low"], by_occupation[f"{name}_high"] = (
                np.fmin(low, shown),
                np.fmax(high, shown),
            )
        table_intervals = {
            "table": "by_occupation",
            "confidence": confidence,
            "seed": seed,
            "unit": "source premise within an occupation x template stratum (all its rows there)",
            "method": TABLE_INTERVAL_METHOD,
            "declined": {}
            if ties == "half"
            else {"B": 'B with ties="exclude" is a ratio, not a mean of bounded values: no interval'},
        }
    by_template = (
        empty
        if columns.template_id is None
        else _group_table(columns.template_id, values, ties, "template_id", neutral)
    )

    result = NliGenderBias(
        num_instances=len(columns.p_female),
        num_clusters=len(columns.cluster_labels),
        ties_mode=ties,
        margin=float(margin),
        **{name: point[name] for name in (*HEADLINE, "alpha", "beta")},
        ties=int(point["ties"]),
        neutral_rate=point["neutral_rate"] if neutral else None,
        mean_neutral=point["mean_neutral"] if neutral else None,
        by_gender=by_gender,
        by_occupation=by_occupation,
        by_template=by_template,
        table_intervals=table_intervals,
    )
    clusters = {
        "all": len(columns.cluster_labels),
        **{g: int((per_cluster[:, k, _Q["count"]] > 0).sum()) for k, g in enumerate(GENDERS)},
    }
    if n_resamples:
        spec = BootstrapSpec(n_resamples=n_resamples, confidence=confidence, seed=seed)
        replicates = bootstrap_replicates(per_cluster, ties, spec)
        names = [*HEADLINE, "alpha", "beta"]
        names += [f"{name}_{gender}" for gender in GENDERS for name in HEADLINE]
        if neutral:
            names += ["neutral_rate"]
        methods = {}
        for name in names:
            k, what = _effective_clusters(name, clusters)
            bounds, method, reason = interval_by_rule(
                point[name], replicates[name], k, what, confidence, _base(name) in SIGNED
            )
            result.intervals[name] = bounds
            if method:
                methods[name] = method
            if reason:
                result.intervals_declined[name] = reason
        used = sorted(set(methods.values()))
        result.bootstrap = {
            "n_resamples": n_resamples,
            "confidence": confidence,
            "seed": seed,
            "resampled": "clusters (source premises), with all their instances",
            "method": used[0]
            if len(used) == 1
            else "by the number of clusters (see methods)"
            if used
            else None,
            "methods": methods,
            "clusters": clusters,
            "rule": f"percentile with at least {FEW_CLUSTERS} clusters; t(K − 1) from the bootstrap standard error "
            f"with {MIN_CLUSTERS} to {FEW_CLUSTERS - 1}; none below {MIN_CLUSTERS}, nor when every resample is equal",
        }
    result.warnings = cluster_warnings(result, clusters, n_resamples, n_permutations)
    if n_permutations:
        totals = per_cluster.sum(axis=1)
        tests = {
            "stereotype_gap": totals[:, _Q["d"]],
            "gender_gap": totals[:, _Q["g"]],
            # B against 50: stereo wins count +½, losses −½, ties 0
            "B": totals[:, _Q["stereo_wins"]] - 0.5 * (totals[:, _Q["count"]] - totals[:, _Q["tie"]]),
        }
        p, exact = sign_flip_p_value(np.stack(list(tests.values()), axis=1), n_permutations, seed)
        result.p_values = {name: float(value) for name, value in zip(tests, p, strict=True)}
        result.permutation = {
            "n_permutations": n_permutations,
            "seed": seed,
            "exact": exact,
            "method": "two-sided sign flip of cluster totals, the same sign vectors for every statistic "
            "(H0: each cluster's total is symmetric about 0)",
            "smallest_possible_p": 2.0 / 2.0 ** clusters["all"] if clusters["all"] < 64 else 0.0,
        }
    return result


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def cluster_warnings(
    result: NliGenderBias, clusters: dict[str, int], n_resamples: int, n_permutations: int
) -> list[str]:
    """What the number of clusters (source premises) allows, in words; empty when nothing is declined or widened."""
    k = clusters["all"]
    out = []
    if k < MIN_CLUSTERS:
        out.append(
            f"only {_plural(k, 'source premise')} behind these numbers: too few to say how uncertain they are"
            + (f"; no intervals (they need at least {MIN_CLUSTERS} premises)" if n_resamples else "")
        )
    else:
        for gender in GENDERS:
            if 0 < clusters[gender] < MIN_CLUSTERS and n_resamples:
                out.append(
                    f"only {_plural(clusters[gender], 'source premise')} with {gender}-labelled occupations: the "
                    f"{gender} breakdown, α and β have no intervals"
                )
        if k < FEW_CLUSTERS and n_resamples:
            out.append(
                f"{_plural(k, 'source premise')}: intervals are t intervals with {k - 1} degrees of freedom from "
                f"the bootstrap standard error, wider than percentile ones, which are too narrow with few premises"
            )
    if n_permutations and k < 64 and 2.0 / 2.0**k > 0.05:
        out.append(
            f"with {_plural(k, 'source premise')} the smallest possible sign-flip p-value is {2.0 / 2.0**k:.3g}: "
            "no test can reach 0.05"
        )
    flat = [name for name, reason in result.intervals_declined.items() if reason.startswith("every resample")]
    if flat:
        named = ", ".join(flat[:6]) + (f" and {len(flat) - 6} more" if len(flat) > 6 else "")
        out.append(
            f"{named}: every resample gave the same value, so no interval (the premises agree; that is not "
            "certainty)"
        )
    return out
