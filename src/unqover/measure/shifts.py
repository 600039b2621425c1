"""Did bias change? Intervals and p-values for the shift B − A of the full-dataset UnQover measures of two runs.

Each run scored a sample of the M groups of one dataset (a quick run) or all of them (a full run). The target is
the shift of the full-dataset values, T_B − T_A, so, as in ``unqover.measure.sampled``, the only randomness is which
groups were drawn.

Paired or unpaired. S = the groups both runs scored. Two runs of the same design and seed, or of nested budgets
(a larger budget with the same seed keeps a superset), or a quick run against a full one, share nearly every group
of the smaller sample: the smaller sample is a random subsample of the larger. Each run keeps its own estimate from
all its groups (the same as its own headline), and the se of the difference uses the pairing over S, which cancels
what the two runs have in common: Var(e_B − e_A) = V_A + V_B − 2·(1 − f_larger)·|S|·cov_S(ψ_A, ψ_B), with each
run's error linearized as Σ ψ_g over its sample and V = (1 − f)·n·s²(ψ). On one sample this is the plain paired
variance (1 − f)·n·s²(ψ_B − ψ_A). That is the *paired* analysis, used when |S| ≥ ``PAIRED_SHARE`` of the smaller
sample. Otherwise (different seeds) each run's own sample gives its
own estimate and the two are combined as independent (*unpaired*). Two full runs have *exact* shifts: subtract
their values.

* δ, ε and the mean score are means over groups. Paired: the difference of the two runs' means, ψ_g = (y_g − ȳ)/n,
  with a t interval (n − 1 degrees of freedom for the smaller n) and a two-sided t p-value. Unpaired: the difference of the two
  sample means, Welch's interval with each run's own correction.
* μ and η are not linear. Each run has an upper estimate Ũ and a cross-fitted lower estimate L̃ (``sampled.Bounds``);
  the shift lies between L_B − U_A and U_B − L_A, so

      Δ_low = L̃_B − Ũ_A − z·se(L_B − U_A),     Δ_high = Ũ_B − L̃_A + z·se(U_B − L_A).

  Paired: each run's bounds on its own sample (its headline's), the se from the per-group influence values ψ of
  the two bounds by the variance above. Unpaired: se² is the sum of the two runs' squared standard errors.
  That difference of bounds carries each run's gap Ũ − L̃ at both ends, so where bias is small (η near 0) it
  can be wider than the two runs' own intervals together. Two more bounds hold whatever the runs are: the runs'
  values are never negative, so −high_A ≤ Δ ≤ high_B (each run's own upper bound, the clipping of its interval
  at 0); and |max|θ_B| − max|θ_A|| ≤ max|θ_B − θ_A|, ||θ_B| − |θ_A|| ≤ |θ_B − θ_A|, so |Δ| is at most the μ-like
  (η-like) measure D of the cell differences θ_B − θ_A, whose upper bound comes from the groups both runs scored
  (paired only; D = 0 for two runs of one model on one sample). Each end of the reported interval is the nearest
  of these bounds; each end spends α/2, half of it on the difference of bounds (one-sided α/4) and the rest
  equally on the others (α/8 each; unpaired, without D: α/4): all hold at once with probability ≥ 1 − α
  (Bonferroni), and then so does their intersection, which is never wider than any of them. Only the difference
  of bounds can exclude 0, so the p-value of "no shift" is min(1, 4·min(1 − Φ((L̃_B − Ũ_A)/se_low),
  Φ((Ũ_B − L̃_A)/se_high))): p < α exactly when the interval excludes 0.
  The value is the difference of the two runs' midpoint estimates, clipped into the interval.
* γ(x, a) shifts. Paired: per shared group the cell value difference d = C_B − C_A ∈ [−2, 2]; a cell's shift is
  the mean of its d values in the full dataset, and its drawn values are a sample without replacement of them:
  betting intervals (``unqover.measure.bounded``), valid at any number of values, at α/K for the K cells compared
  (Bonferroni: a list picked from all cells must hold simultaneously), and p-values times K. Unpaired:
  [low_B − high_A, high_B − low_A] from each run's own intervals at α/(2K), no p-value. A cell is listed only when
  its interval excludes zero, ranked by the interval's distance from zero (a cell of few values has a wide interval
  and is not rewarded for its noise).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from unqover.errors import UnqoverError
from unqover.format import fmt_count, number
from unqover.measure.bounded import bounded_mean_intervals, bounded_mean_p_values
from unqover.measure.pairing import PairedScores
from unqover.measure.sampled import (
    MIN_GROUPS,
    Bounds,
    CellRecords,
    Design,
    declined_estimate,
    group_errors,
    max_abs_bounds,
    mean_abs_bounds,
    mean_and_se,
)
from unqover.measure.unqover import bias_scores, mu_units, pair_dataset_rows
from unqover.results import sample_of

PAIRED_SHARE = 0.9  # S must hold this share of the smaller sample for the paired analysis
CELL_BOUND = 2.0  # |C_B − C_A| ≤ 2
MEAN_MEASURES = ("positional_error", "attributive_error", "mean_score")


@dataclass(frozen=True)
class Shift:
    """One shift B − A: its value, interval and p-value; ``method`` is "paired", "unpaired" or "exact"."""

    value: float | None
    interval: list[float] | None
    p_value: float | None
    method: str
    declined: dict | None = None  # why there is no value, as data (worded by unqover.format)

    def to_dict(self) -> dict:
        return {
            "value": self.value,
            "interval": self.interval,
            "p_value": self.p_value,
            "paired": self.method != "unpaired",
            "method": self.method,
            **({"declined": self.declined} if self.declined else {}),
        }


@dataclass(frozen=True)
class Samples:
    """How the two runs' samples overlap: the shared groups S, and whether the analysis pairs over them."""

    shared: np.ndarray  # (M,) bool
    groups: tuple[int, int]  # groups each run scored
    of: int  # M
    paired: bool

    @property
    def exact(self) -> bool:
        return min(self.groups) == self.of


@dataclass(frozen=True)
class CellShifts:
    """γ(x, a) shifts of the cells compared, with simultaneous intervals (NaN where a cell was not compared)."""

    subject: np.ndarray  # (cells,) subject code
    attribute: np.ndarray  # (cells,) attribute code
    value: np.ndarray
    low: np.ndarray
    high: np.ndarray
    p_value: np.ndarray  # NaN for unpaired shifts
    count: np.ndarray  # values compared: shared values (paired), the fewer of the two runs' (unpaired)
    compared: int  # K: the cells with values in both runs
    method: str

    def listed(self) -> np.ndarray:
        """The cells whose interval excludes zero, farthest from zero first."""
        with np.errstate(invalid="ignore"):
            distance = np.fmax(np.fmax(self.low, -self.high), 0.0)
        cells = np.flatnonzero(distance > 0)
        return cells[np.lexsort((-np.abs(self.value[cells]), -distance[cells]))]


def samples(observed_a: np.ndarray, observed_b: np.ndarray) -> Samples:
    """The shared groups of two runs' samples, and whether they are enough of the smaller one to pair over."""
    observed_a, observed_b = np.asarray(observed_a, bool), np.asarray(observed_b, bool)
    if observed_a.shape != observed_b.shape:
        raise ValueError("the two runs' group masks differ in length")
    shared = observed_a & observed_b
    groups = (int(observed_a.sum()), int(observed_b.sum()))
    if min(groups) == 0:
        raise ValueError("a run scored no group")
    return Samples(shared, groups, len(shared), int(shared.sum()) >= PAIRED_SHARE * min(groups))


def _check_same_groups(a: PairedScores, b: PairedScores) -> None:
    same = a.num_groups == b.num_groups and all(
        np.array_equal(getattr(a, k), getattr(b, k)) for k in ("x1", "x2", "template", "attribute")
    )
    if (
        not same
        or not np.array_equal(a.subjects, b.subjects)
        or not np.array_equal(a.attributes, b.attributes)
    ):
        raise ValueError("the two runs' scores are not on the same groups (pair them from the same rows)")


def _ratio(x: float, se: float) -> float:
    if se > 0:
        return x / se
    return math.copysign(math.inf, x) if x else 0.0


def _designs(
    a: PairedScores,
    b: PairedScores,
    observed: tuple[np.ndarray, np.ndarray],
    sample: Samples,
    confidence: float,
    seeds: tuple[int, int],
) -> tuple[Design, Design]:
    """Each run on its own sample, as its own headline estimate (paired or not: the pairing is in the se)."""
    return Design(a, observed[0], seeds[0], confidence), Design(b, observed[1], seeds[1], confidence)


def _variance(design: Design, influence: np.ndarray) -> float:
    """Var of Σ_{g∈sample} ψ_g for an equal-probability sample: (1 − f)·n/(n − 1)·Σ (ψ_g − mean)²."""
    psi = influence[design.observed]
    if len(psi) < 2:
        return math.inf
    return max(0.0, 1 - design.f) * len(psi) * float(psi.var(ddof=1))


def _paired_se(designs: tuple[Design, Design], influence_a: np.ndarray, influence_b: np.ndarray) -> float:
    """se of e_B − e_A, each run's error linearized as Σ ψ_g over its own sample, the samples sharing S.

    Nested samples (the smaller inside the larger, drawn by subsampling it): Cov(e_A, e_B) = (1 − f_larger)·|S|·
    cov_S(ψ_A, ψ_B), so Var = V_A + V_B − 2·Cov. On one sample (A = B = S) it is (1 − f)·n/(n − 1)·Σ(ψ_B − ψ_A −
    mean)², the plain paired variance; with nested budgets each run keeps all its groups.
    """
    design_a, design_b = designs
    shared = design_a.observed & design_b.observed
    n = int(shared.sum())
    if n < 2:
        return math.inf
    covariance = float(np.cov(influence_a[shared], influence_b[shared])[0, 1])
    larger = max(design_a.f, design_b.f)
    variance = _variance(design_a, influence_a) + _variance(design_b, influence_b)
    variance -= 2 * max(0.0, 1 - larger) * n * covariance
    return math.sqrt(max(variance, 0.0))


def _mean_shift(
    designs: tuple[Design, Design], per_group: tuple[np.ndarray, np.ndarray], paired: bool
) -> Shift:
    """A mean over groups: paired t interval over S, or Welch's interval over the two samples."""
    method = "paired" if paired else "unpaired"
    design_a, design_b = designs
    if min(design_a.n, design_b.n) < MIN_GROUPS:
        n = min(design_a.n, design_b.n)
        declined = {"code": "few_groups_compared", "reason": "too few groups to compare"}
        return Shift(None, None, None, method, {**declined, "groups": n, "needed": MIN_GROUPS})
    if paired:
        influence = []
        for design, values in zip(designs, per_group, strict=True):
            own = values[design.observed]
            influence.append(np.where(design.observed, (values - own.mean()) / design.n, 0.0))
        value = float(per_group[1][design_b.observed].mean() - per_group[0][design_a.observed].mean())
        se = _paired_se(designs, *influence)
        df = min(design_a.n, design_b.n) - 1.0
    else:
        mean_a, se_a = mean_and_se(per_group[0][design_a.observed], design_a.f)
        mean_b, se_b = mean_and_se(per_group[1][design_b.observed], design_b.f)
        value, se = mean_b - mean_a, math.hypot(se_a, se_b)
        parts = se_a**4 / (design_a.n - 1) + se_b**4 / (design_b.n - 1)
        df = se**4 / parts if parts > 0 else design_a.n + design_b.n - 2.0
    t = float(stats.t.ppf(1 - design_a.alpha / 2, df))
    p = 2 * float(stats.t.sf(abs(_ratio(value, se)), df))
    return Shift(value, [max(-1.0, value - t * se), min(1.0, value + t * se)], min(1.0, p), method)


@dataclass(frozen=True)
class _BoundedMeasure:
    """A μ-like or η-like measure of both runs, as its shift needs it: the runs' designs, the records of the
    measure's units, each run's per-record values and the function bounding the measure
    (:func:`max_abs_bounds`, :func:`mean_abs_bounds`)."""

    designs: tuple[Design, Design]
    rec: CellRecords
    values: tuple[np.ndarray, np.ndarray]
    bounds_of: Callable[[Design, CellRecords, np.ndarray], Bounds]


def _difference_upper(measure: _BoundedMeasure, z: float) -> float:
    """An upper bound at z on the μ-like (η-like) measure of the cell differences θ_B − θ_A, from the groups both
    runs scored (inf when they are too few): |Δ| is at most that measure."""
    design_a, design_b = measure.designs
    rec, values = measure.rec, measure.values
    shared = design_a.observed & design_b.observed
    shared = Design(
        design_a.paired, shared, 0, 1 - design_a.alpha, design_a.population
    )  # the seed splits L̃ only
    if declined_estimate(shared, rec, "shift", "difference") is not None:
        return math.inf
    bounds = measure.bounds_of(
        shared, rec, 0.5 * (values[1] - values[0])
    )  # halved: in [−1, 1] as the measures expect
    return 2 * (bounds.upper + z * bounds.upper_se)


def _bounds_shift(measure: _BoundedMeasure, paired: bool, name: str, what: str) -> Shift:
    """μ-like and η-like shifts: each end the nearest of the difference of the runs' bounds, the other run's own
    upper bound and (paired) the bound on the cell differences' measure, at a Bonferroni split of α (module
    docstring)."""
    designs, rec = measure.designs, measure.rec
    method = "paired" if paired else "unpaired"
    for design in designs:
        declined = declined_estimate(design, rec, name, what)
        if declined is not None:
            why = dict(declined.declined or {})
            why.pop("groups_needed", None)  # one run's budget, not the comparison's
            return Shift(None, None, None, method, why)
    a, b = (measure.bounds_of(design, rec, v) for design, v in zip(designs, measure.values, strict=True))
    low_point, high_point = b.lower - a.upper, b.upper - a.lower
    if paired:
        se_low = _paired_se(designs, a.upper_influence, b.lower_influence)
        se_high = _paired_se(designs, a.lower_influence, b.upper_influence)
    else:
        se_low, se_high = math.hypot(b.lower_se, a.upper_se), math.hypot(b.upper_se, a.lower_se)
    per_end = designs[0].alpha / 2  # half of α for each end; of it, half for the difference of bounds
    z = float(stats.norm.isf(per_end / 2))
    z_other = float(stats.norm.isf(per_end / 4 if paired else per_end / 2))  # the other bound(s)
    difference = _difference_upper(measure, z_other) if paired else math.inf
    low = max(-1.0, low_point - z * se_low, -min(1.0, a.upper + z_other * a.upper_se), -difference)
    high = min(1.0, high_point + z * se_high, min(1.0, b.upper + z_other * b.upper_se), difference)
    if low > high:  # the bounds disagree, so one of them missed: the gap between them
        low, high = high, low
    value = min(max(b.midpoint - a.midpoint, low), high)
    # only the difference of bounds can exclude 0 (−high_A ≤ 0 ≤ high_B, and so for the differences' measure):
    # p < α exactly when the interval excludes 0
    one_sided = min(
        float(stats.norm.sf(_ratio(low_point, se_low))), float(stats.norm.cdf(_ratio(high_point, se_high)))
    )
    return Shift(value, [low, high], min(1.0, 4 * one_sided), method)


def headline_shifts(
    a: PairedScores,
    b: PairedScores,
    observed_a: np.ndarray,
    observed_b: np.ndarray,
    *,
    mode: str = "default",
    confidence: float = 0.95,
    seeds: tuple[int, int] = (0, 0),
    paired: bool | None = None,
) -> dict[str, Shift]:
    """Shifts B − A of δ, ε, the mean score, μ and η (and per-subject μ and η when μ is per cluster).

    ``a`` and ``b`` hold the whole dataset's groups (paired from the same rows), ``observed_*`` mark the groups each
    run scored; ``seeds`` choose the half splits of the cross-fits (the paired analysis uses the first).
    ``paired`` forces the analysis (None: paired when the samples overlap enough, see :func:`samples`).
    """
    _check_same_groups(a, b)
    sample = samples(observed_a, observed_b)
    if sample.exact:
        raise ValueError("both runs scored every group: their shifts are exact (subtract their values)")
    if paired is not None:
        sample = Samples(sample.shared, sample.groups, sample.of, paired)
    designs = _designs(a, b, (observed_a, observed_b), sample, confidence, seeds)
    means = [(*group_errors(p), p.scores.mean(axis=(1, 2, 3))) for p in (a, b)]
    out = {
        name: _mean_shift(designs, (means[0][k], means[1][k]), sample.paired)
        for k, name in enumerate(MEAN_MEASURES)
    }
    cluster_of, cluster_labels, cluster_unit = mu_units(a, mode)
    n_subjects = len(a.subjects)
    units = [("", cluster_of, len(cluster_labels), True)] if cluster_unit else []
    units.append(("subject_" if cluster_unit else "", np.arange(n_subjects), n_subjects, False))
    c = [np.concatenate([d.c, -d.c]) for d in designs]
    for prefix, unit_of, num_units, weighted in units:
        rec = designs[0].records(unit_of, num_units, weighted)
        label = "per-subject " if prefix else ""
        mu = _BoundedMeasure(designs, rec, (c[0], c[1]), max_abs_bounds)
        out[prefix + "mu"] = _bounds_shift(mu, sample.paired, f"{label}μ", "mean of maxima")
        eta = _BoundedMeasure(designs, rec, (np.sign(c[0]), np.sign(c[1])), mean_abs_bounds)
        out[prefix + "eta"] = _bounds_shift(eta, sample.paired, f"{label}η", "mean of absolute cell means")
    return out


def cell_shifts(
    a: PairedScores,
    b: PairedScores,
    observed_a: np.ndarray,
    observed_b: np.ndarray,
    *,
    confidence: float = 0.95,
    seed: int = 0,
    paired: bool | None = None,
) -> CellShifts:
    """Shifts B − A of γ(x, a) for every subject–attribute cell with values in both runs, with simultaneous
    intervals (and, paired, p-values); :meth:`CellShifts.listed` picks the cells that moved."""
    _check_same_groups(a, b)
    sample = samples(observed_a, observed_b)
    if sample.exact:
        raise ValueError("both runs scored every group: their shifts are exact (subtract their values)")
    paired = sample.paired if paired is None else paired
    alpha = 1 - confidence
    n_subjects, n_attributes = len(a.subjects), len(a.attributes)
    rec = Design(a, sample.shared, seed, confidence).records(np.arange(n_subjects), n_subjects, False)
    value = [np.concatenate([c, -c]) for c in (bias_scores(a)[2], bias_scores(b)[2])]
    nan = np.full(rec.num_cells, np.nan)
    if paired:
        mask = np.concatenate([sample.shared, sample.shared])
        cells, d = rec.cell[mask], (value[1] - value[0])[mask]
        count = np.bincount(cells, minlength=rec.num_cells)
        compared = int((count > 0).sum())
        if compared == 0:
            mean, low, high, p = nan, nan, nan, nan
        else:
            level = alpha / compared
            args = (d, cells, rec.num_cells, rec.population_count, CELL_BOUND)
            mean, low, high = bounded_mean_intervals(*args, alpha=level, seed=seed)
            p = np.minimum(1.0, compared * bounded_mean_p_values(*args, alpha=level, seed=seed))
    else:
        masks = [np.concatenate([o, o]) for o in (observed_a, observed_b)]
        counts = [np.bincount(rec.cell[m], minlength=rec.num_cells) for m in masks]
        both = (counts[0] > 0) & (counts[1] > 0)
        compared = int(both.sum())
        count = np.minimum(*counts)
        mean, low, high, p = nan, nan, nan, nan
        if compared:
            level = alpha / (2 * compared)
            runs = [
                bounded_mean_intervals(
                    v[m], rec.cell[m], rec.num_cells, rec.population_count, 1.0, alpha=level, seed=seed
                )
                for v, m in zip(value, masks, strict=True)
            ]
            (mean_a, low_a, high_a), (mean_b, low_b, high_b) = runs
            mean = np.where(both, mean_b - mean_a, np.nan)
            low = np.where(both, low_b - high_a, np.nan)
            high = np.where(both, high_b - low_a, np.nan)
    cell = np.arange(rec.num_cells)
    keep = cell < n_subjects * n_attributes  # the last unit row holds no subject
    return CellShifts(
        subject=(cell // n_attributes)[keep],
        attribute=(cell % n_attributes)[keep],
        value=mean[keep],
        low=low[keep],
        high=high[keep],
        p_value=p[keep],
        count=count[keep],
        compared=compared,
        method="paired" if paired else "unpaired",
    )


def paired_runs(
    rows,
    scored: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
    results: Sequence[Mapping],
    names: Sequence[str],
    mode: str,
) -> list[tuple[PairedScores, np.ndarray]]:
    """Each run's groups over the whole dataset ``rows`` (its scores where it scored, zeros elsewhere) and the mask
    of the groups it scored; ``results`` are the runs' results (not provenance). Raises :class:`UnqoverError` when
    the scores do not reproduce the groups a run measured."""
    runs = []
    for (score_1, score_2, rows_scored), result, name in zip(scored, results, names, strict=True):
        paired = pair_dataset_rows(
            rows,
            np.where(rows_scored, score_1, 0.0),
            np.where(rows_scored, score_2, 0.0),
            mode=mode,
            drop_incomplete=True,
        )
        observed = rows_scored[paired.rows].all(axis=1)
        sample = sample_of(result)
        measured = (sample["groups"], sample["of"]) if sample else (result.get("num_groups"),) * 2
        found = (int(observed.sum()), paired.num_groups)
        if any(number(m) is not None and int(number(m)) != f for m, f in zip(measured, found, strict=True)):
            raise UnqoverError(
                f"the predictions of {name} cover {found[0]:,} of the dataset's {found[1]:,} groups, but its results "
                f"measured {fmt_count(measured[0])} of {fmt_count(measured[1])}"
            )
        runs.append((paired, observed))
    return runs
