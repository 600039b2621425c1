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
certainty that a finite sample cannot give. ``notes`` records (as data, a code and its numbers, see
:func:`cluster_notes`; :mod:`unqover.report.nli` words them) what was declined or widened, and when the sign-flip
p-values cannot fall below 0.05 (the smallest exact p-value with K clusters is 2/2^K).

Quick runs (``population`` given): the per-occupation table estimates each occupation's full-dataset value, the
mean over all its instances of a bounded per-instance quantity (same label, |P_f − P_m|, stereo win + ½ tie, the
neutral share: in [0, 1]; d_i and P_f − P_m: in [−1, 1]). The run kept whole source premises at random within
occupation × template strata, so the sampling unit is a premise within a stratum (its rows there), and the
occupation's value is the rows-weighted sum of its templates' means. Each occupation and statistic gets
``<name>_low``/``<name>_high`` from :func:`unqover.measure.stratified.stratified_mean_intervals` (the stratified
t interval with the finite-population correction where the occupation's sample passes Cochran's rule, near its
stated level; elsewhere betting confidence intervals for bounded values, combined over the templates, these:
valid at every number of sampled premises,
nearly the whole range with one or two (a template without a sampled premise leaves its share of the range
open), the exact value when every premise was kept. In a simulation (tests/measure/test_measure_bounded_tables.py: 38
occupations x 40 premises x 3 templates, 40 seeds) they covered the full-dataset values in 99.9–100% of the
occupation cells at every limit from 1 to 30 premises (95% nominal); their mean width was the whole range at 1–2
premises, 91% of it at 3, 69% at 6, 50% at 12, 31% at 30. B has no such interval with ``ties="exclude"`` (a
ratio, not a mean). The validity needs each premise to have one row per stratum, as in every generated dataset;
with more, the selection's row quota makes the number of premises drawn depend on their sizes, and the intervals
are approximate. Full runs have no per-occupation intervals: their table holds the values themselves.

Modules: the inputs and per-instance values are :mod:`unqover.measure.nli_instances`, the per-occupation and
per-template tables :mod:`unqover.measure.nli_tables`; this module holds the clustered intervals and tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from unqover.errors import UnqoverError
from unqover.measure.bootstrap import BootstrapSpec, multinomial_weights
from unqover.measure.nli_instances import (
    _Q,
    TIES,
    NliColumns,
    cluster_sums,
    instance_values,
    statistics,
    validate_nli_columns,
)
from unqover.measure.nli_tables import (
    NLI_TABLE_INTERVAL_METHOD,
    TABLE_COLUMNS,
    _group_table,
    occupation_intervals,
)
from unqover.measure.stats import ALPHA, GENDER_VALUES
from unqover.measure.unqover import json_ready

NLI_HEADLINE = ("S", "S_margin", "delta_P", "B", "stereotype_gap", "gender_gap")
MIN_CLUSTERS = 10  # below: no interval at all
FEW_CLUSTERS = 30  # below: a t interval from the bootstrap standard error instead of percentiles
LARGEST_GAPS = 10  # occupations a quick run's summary and the Space list (the largest |gender gap|)
SIGNED = ("stereotype_gap", "gender_gap", "alpha", "beta")  # in [−100, 100]; the others are in [0, 100]
# per-instance quantities summed per cluster and gender; a statistic is a function of the sums


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
    for gender in GENDER_VALUES:
        if name.endswith(f"_{gender}"):
            return name[: -len(gender) - 1]
    return name


def _effective_clusters(name: str, clusters: dict[str, int]) -> tuple[int, str | None]:
    """The number of clusters behind a statistic, and the occupation gender they are counted in (None: all)."""
    gender = next((g for g in GENDER_VALUES if name.endswith(f"_{g}")), None)
    if gender is None and name in ("alpha", "beta"):
        gender = min(
            GENDER_VALUES, key=lambda g: clusters[g]
        )  # α and β compare both sides: the smaller one counts
    return (clusters["all"] if gender is None else clusters[gender]), gender


def interval_by_rule(
    point: float, replicates: np.ndarray, k: int, confidence: float, signed: bool
) -> tuple[list[float | None], str | None, dict | None]:
    """The interval of one statistic by the rule of the module docstring: (bounds, method, why it is declined).

    ``k``: the clusters behind the statistic. Bounds are [None, None] when declined or when the statistic is
    undefined (method and reason None then). Why it is declined is data: ``{"code": "few_clusters", "clusters": k,
    "needed": MIN_CLUSTERS}`` or ``{"code": "same_value", "clusters": k}``.
    """
    finite = replicates[~np.isnan(replicates)]
    if np.isnan(point) or not len(finite):
        return [None, None], None, None
    if k < MIN_CLUSTERS:
        return [None, None], None, {"code": "few_clusters", "clusters": k, "needed": MIN_CLUSTERS}
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
        return [None, None], None, {"code": "same_value", "clusters": k}
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
    intervals_declined: dict[str, dict] = field(default_factory=dict)  # statistic -> why it has no interval
    p_values: dict[str, float] = field(default_factory=dict)
    bootstrap: dict[str, object] = field(default_factory=dict)
    permutation: dict[str, object] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # in words, set by the probe: a degenerate run's
    notes: list[dict] = field(default_factory=list)  # as data: few clusters, declined or widened intervals
    selection: dict[str, object] = field(default_factory=dict)  # a quick run's selection (set by the probe)
    table_intervals: dict[str, object] = field(default_factory=dict)  # a quick run's per-occupation intervals
    largest_gaps: list[int] = field(
        default_factory=list
    )  # rows of by_occupation: the ten largest |gender gap|
    gap_ranking: list[int] = field(
        default_factory=list
    )  # rows of by_occupation: by gender gap, highest first

    def to_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if not isinstance(v, pd.DataFrame)}
        for name in ("by_occupation", "by_template"):
            out[name] = getattr(self, name).to_dict(orient="records")
        return json_ready(out)


def largest_gaps(by_occupation: pd.DataFrame, k: int = LARGEST_GAPS) -> list[int]:
    """The positions of the k occupations with the largest |gender gap| in ``by_occupation`` (a missing gap counts
    as 0; ties keep the table's order)."""
    if "gender_gap" not in by_occupation:
        return []
    size = np.nan_to_num(np.abs(by_occupation["gender_gap"].to_numpy(dtype=np.float64)), nan=0.0)
    return sorted(range(len(size)), key=lambda i: -size[i])[:k]


def gap_ranking(by_occupation: pd.DataFrame) -> list[int]:
    """The positions of ``by_occupation``'s rows by signed gender gap P_f − P_m, highest first, missing gaps last
    (ties keep the table's order): the order of the report's occupation chart."""
    if "gender_gap" not in by_occupation:
        return []
    gap = by_occupation["gender_gap"].to_numpy(dtype=np.float64)
    return sorted(range(len(gap)), key=lambda i: (bool(np.isnan(gap[i])), -float(np.nan_to_num(gap[i]))))


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
    _check_options(ties, margin, confidence, n_resamples, n_permutations)
    columns = validate_nli_columns(
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
    by_occupation, table_intervals = _occupation_table(
        columns, values, ties, neutral, strata, population, confidence, seed
    )
    result = NliGenderBias(
        num_instances=len(columns.p_female),
        num_clusters=len(columns.cluster_labels),
        ties_mode=ties,
        margin=float(margin),
        **{name: point[name] for name in (*NLI_HEADLINE, "alpha", "beta")},
        ties=int(point["ties"]),
        neutral_rate=point["neutral_rate"] if neutral else None,
        mean_neutral=point["mean_neutral"] if neutral else None,
        by_gender=_by_gender(point, per_cluster, neutral),
        by_occupation=by_occupation,
        largest_gaps=largest_gaps(by_occupation),
        gap_ranking=gap_ranking(by_occupation),
        by_template=pd.DataFrame(columns=["count"])
        if columns.template_id is None
        else _group_table(columns.template_id, values, ties, "template_id", neutral),
        table_intervals=table_intervals,
    )
    clusters = {
        "all": len(columns.cluster_labels),
        **{g: int((per_cluster[:, k, _Q["count"]] > 0).sum()) for k, g in enumerate(GENDER_VALUES)},
    }
    if n_resamples:
        spec = BootstrapSpec(n_resamples=n_resamples, confidence=confidence, seed=seed)
        _attach_intervals(result, point, per_cluster, clusters, spec, neutral)
    result.notes = cluster_notes(result, clusters, n_resamples, n_permutations)
    if n_permutations:
        _attach_p_values(result, per_cluster, clusters["all"], n_permutations, seed)
    return result


def _check_options(
    ties: str, margin: float, confidence: float, n_resamples: int, n_permutations: int
) -> None:
    if ties not in TIES:
        raise UnqoverError(f"ties must be one of {TIES}, got {ties!r}")
    if not 0 <= margin < 0.5:
        raise UnqoverError(f"margin must be in [0, 0.5), got {margin}")
    if not 0 < confidence < 1:
        raise UnqoverError(f"confidence must be in (0, 1), got {confidence}")
    for name, value in (("n_resamples", n_resamples), ("n_permutations", n_permutations)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
            raise UnqoverError(f"{name} must be an integer >= 0, got {value!r}")


def _by_gender(point: dict[str, float], per_cluster: np.ndarray, neutral: bool) -> dict[str, dict]:
    """The statistics of each gender's instances (the count first), from the point estimates."""
    by_gender = {}
    for gender in GENDER_VALUES:
        entry = {
            name: point[f"{name}_{gender}"] for name in (*TABLE_COLUMNS[1:], "neutral_rate", "mean_neutral")
        }
        entry["count"] = int(per_cluster[:, GENDER_VALUES.index(gender), _Q["count"]].sum())
        entry["ties"] = int(entry["ties"])
        if not neutral:
            del entry["neutral_rate"], entry["mean_neutral"]
        by_gender[gender] = {"count": entry.pop("count"), **entry}
    return by_gender


def _occupation_table(
    columns: NliColumns,
    values,
    ties: str,
    neutral: bool,
    strata,
    population,
    confidence: float,
    seed: int,
) -> tuple[pd.DataFrame, dict[str, object]]:
    """The per-occupation table (empty without occupations) with each occupation's label; for a quick run (a
    ``population``) also the intervals of its full-dataset values, and what they are."""
    if columns.occupation is None:
        if population is not None:
            raise UnqoverError("population needs the occupation column (the per-occupation table)")
        return pd.DataFrame(columns=["count"]), {}
    by_occupation = _group_table(columns.occupation, values, ties, "occupation", neutral)
    label = dict(
        zip(columns.occupation, np.asarray(GENDER_VALUES, dtype=object)[columns.gender], strict=False)
    )
    by_occupation.insert(1, "occupation_gender", by_occupation["occupation"].map(label))
    if population is None:
        return by_occupation, {}
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
    return by_occupation, {
        "table": "by_occupation",
        "confidence": confidence,
        "seed": seed,
        "unit": "source premise within an occupation x template stratum (all its rows there)",
        "method": NLI_TABLE_INTERVAL_METHOD,
        "declined": {}
        if ties == "half"
        else {"B": 'B with ties="exclude" is a ratio, not a mean of bounded values: no interval'},
    }


def _attach_intervals(
    result: NliGenderBias,
    point: dict[str, float],
    per_cluster: np.ndarray,
    clusters: dict[str, int],
    spec: BootstrapSpec,
    neutral: bool,
) -> None:
    """The cluster bootstrap's intervals of the headline, per-gender and α/β statistics (each by the rule its
    number of clusters allows), those it declines, and how they were made."""
    replicates = bootstrap_replicates(per_cluster, result.ties_mode, spec)
    names = [*NLI_HEADLINE, "alpha", "beta"]
    names += [f"{name}_{gender}" for gender in GENDER_VALUES for name in NLI_HEADLINE]
    if neutral:
        names += ["neutral_rate"]
    methods = {}
    for name in names:
        k, gender = _effective_clusters(name, clusters)
        bounds, method, declined = interval_by_rule(
            point[name], replicates[name], k, spec.confidence, _base(name) in SIGNED
        )
        result.intervals[name] = bounds
        if method:
            methods[name] = method
        if declined:
            result.intervals_declined[name] = {**declined, "gender": gender}
    used = sorted(set(methods.values()))
    result.bootstrap = {
        "n_resamples": spec.n_resamples,
        "confidence": spec.confidence,
        "seed": spec.seed,
        "resampled": "clusters (source premises), with all their instances",
        "method": used[0] if len(used) == 1 else "by the number of clusters (see methods)" if used else None,
        "methods": methods,
        "clusters": clusters,
        "rule": f"percentile with at least {FEW_CLUSTERS} clusters; t(K − 1) from the bootstrap standard error "
        f"with {MIN_CLUSTERS} to {FEW_CLUSTERS - 1}; none below {MIN_CLUSTERS}, nor when every resample is equal",
    }


def _attach_p_values(
    result: NliGenderBias, per_cluster: np.ndarray, num_clusters: int, n_permutations: int, seed: int
) -> None:
    """Sign-flip p-values of the stereotype gap, the gender gap and B against 50, and how they were made."""
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
        "smallest_possible_p": 2.0 / 2.0**num_clusters if num_clusters < 64 else 0.0,
    }


def cluster_notes(
    result: NliGenderBias, clusters: dict[str, int], n_resamples: int, n_permutations: int
) -> list[dict]:
    """What the number of clusters (source premises) allows, as data (a ``code`` and its numbers, worded by
    :mod:`unqover.report.nli`); empty when nothing is declined or widened.

    * ``few_clusters`` (``clusters``, ``needed``, ``intervals``: whether intervals were asked for): too few
      premises to say how uncertain the numbers are;
    * ``few_gender_clusters`` (``gender``, ``clusters``, ``needed``): no intervals for one gender's breakdown, α
      and β;
    * ``t_intervals`` (``clusters``, ``df``): t intervals from the bootstrap standard error;
    * ``p_floor`` (``clusters``, ``smallest_p``, ``alpha``): no sign-flip p-value can reach ``alpha``;
    * ``same_value`` (``names``): statistics whose resamples all gave the same value, so no interval.
    """
    k = clusters["all"]
    out: list[dict] = []
    if k < MIN_CLUSTERS:
        out.append(
            {"code": "few_clusters", "clusters": k, "needed": MIN_CLUSTERS, "intervals": bool(n_resamples)}
        )
    else:
        for gender in GENDER_VALUES:
            if 0 < clusters[gender] < MIN_CLUSTERS and n_resamples:
                out.append(
                    {
                        "code": "few_gender_clusters",
                        "gender": gender,
                        "clusters": clusters[gender],
                        "needed": MIN_CLUSTERS,
                    }
                )
        if k < FEW_CLUSTERS and n_resamples:
            out.append({"code": "t_intervals", "clusters": k, "df": k - 1})
    if n_permutations and k < 64 and 2.0 / 2.0**k > ALPHA:
        out.append({"code": "p_floor", "clusters": k, "smallest_p": 2.0 / 2.0**k, "alpha": ALPHA})
    flat = [name for name, why in result.intervals_declined.items() if why.get("code") == "same_value"]
    if flat:
        out.append({"code": "same_value", "names": flat})
    return out
