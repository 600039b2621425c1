"""Full-dataset values estimated from a random sample of groups, with design-based intervals.

A quick run scores n of the M groups of a dataset, drawn with equal inclusion probability f = n / M (the design of
``unqover.scoring.sampling``). The target is the value the full run would print, so the only randomness is which
groups were drawn: intervals come from the sampling design (simple random sampling formulas with the finite
population correction 1 − f; conservative for the stratified draw), not from a bootstrap that treats the sample
as the whole dataset.

Cells. γ(u, a) and η(u, a) of a unit u (a subject, or a cluster when μ is per cluster) are ratio estimators
θ̂ = Σ c·v / Σ c over the sampled values v of the cell (C or sign C), with population weights c chosen so that the
same ratio over the full dataset is the full run's value (c = 1 per subject; 1 / (K·N_xa) per value of subject x
in a cluster of K subjects, so that subjects count equally). A linear combination Σ λ θ̂ has the linearized
variance M²(1 − f) s²_z / n, with z_g = Σ_{values of group g} λ c (v − θ̂) / X and X = Σ_population c.

Headline numbers.
* δ and ε are means over groups: the sample mean, with a t interval.
* μ = Σ_u ω_u max_a |γ(u, a)| and η = Σ_{u,a} ω_{ua} |η(u, a)| are not linear, and their plug-in values rise
  with sampling noise. Two one-sided bounds hold whatever the noise:
  - upper: for the true signs s and maximising attribute a*, |θ̂| ≥ s θ̂ gives T ≤ T̂ − Σ ω s e, with
    e = θ̂ − θ; the sd of that mean-zero term is bounded without knowing s (μ: Σ_u ω_u max_a se(u, a);
    η: per group, |λ| in place of λ);
  - lower: cross-fitting. The sample is split at random into halves A and B; A chooses each cell's sign (and, for
    μ, each unit's attribute), B estimates Σ ω ŝ_A θ, which is ≤ T for any signs, and the roles swap.
  The interval is [lower − z·se, upper + z·se], clipped to [0, 1]; the value printed beside it is the mean of the
  plug-in (biased up) and the cross-fitted (biased down) estimates. A cell that has no sampled value may hold
  anything in [−1, 1], and the upper bound says so.
* A value is declined (missing, with the budget that would be needed) when its smallest cell expects fewer than
  ``MIN_EXPECTED_PER_CELL`` sampled values, or δ/ε when fewer than ``MIN_GROUPS`` groups were drawn.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from unqover.measure.cells import attributive_errors, bias_scores, positional_errors
from unqover.measure.pairing import PairedScores

MIN_EXPECTED_PER_CELL = 5
MIN_GROUPS = 30
HEADLINE = ("positional_error", "attributive_error", "mu", "eta")


@dataclass(frozen=True)
class Estimate:
    """One estimated number: the value, its interval, or why it is declined."""

    value: float | None
    interval: list[float] | None
    declined: dict | None = None  # why, as data: see declined_estimate (and "groups_needed": int | None)


@dataclass(frozen=True)
class PopulationCounts:
    """What a quick run's measure needs of the groups it did not score: how many groups the dataset has, and how
    many records (one per subject of a group) each (subject, attribute) key has in it.

    ``record_key``, when the population was paired from every row of its dataset (:meth:`of`): every record's key,
    x1's views then x2's, so that weights are summed record by record in the dataset's order. Without it (a
    generated probe too large to hold its rows, :mod:`unqover.probes.custom_population`), from the counts per key:
    the same totals up to the order of a float sum; ``labels`` then codes the sampled groups
    (:func:`unqover.measure.pairing.coded_as`).
    """

    num_groups: int
    num_attributes: int
    key_count: np.ndarray  # (subjects x attributes,) records of subject x with attribute a
    # (2G,) each record's subject x attributes + attribute, when every group is at hand
    record_key: np.ndarray | None = None
    labels: PairedScores | None = None  # the dataset's labels (no groups), when its groups are not at hand

    @classmethod
    def of(cls, population: PairedScores) -> PopulationCounts:
        """The counts of a dataset's groups, all of them paired."""
        num_attributes = len(population.attributes)
        key = np.concatenate([population.x1, population.x2]) * num_attributes + np.concatenate(
            [population.attribute, population.attribute]
        )
        size = len(population.subjects) * num_attributes
        return cls(population.num_groups, num_attributes, np.bincount(key, minlength=size), key)

    def counts(self, by_attribute: bool) -> np.ndarray:
        """Records per key: per (subject, attribute), or per subject."""
        return self.key_count if by_attribute else self.key_count.reshape(-1, self.num_attributes).sum(axis=1)

    def totals(
        self, key_cell: np.ndarray, key_weight: np.ndarray, num_cells: int, by_attribute: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per cell: the population's sum of record weights X = Σ c and its number of records."""
        if self.record_key is not None:
            key = self.record_key if by_attribute else self.record_key // self.num_attributes
            cell = key_cell[key]
            return np.bincount(cell, key_weight[key], num_cells), np.bincount(cell, None, num_cells).astype(
                float
            )
        count = self.counts(by_attribute)
        return (
            np.bincount(key_cell, key_weight * count, num_cells),
            np.bincount(key_cell, count, num_cells).astype(float),
        )


@dataclass(frozen=True)
class CellRecords:
    """Two records per group at hand (x1's view, then x2's): the cell it falls in and its weight c; per cell, the
    population's sums. Records are typed by key (subject x attributes + attribute, or the subject): a key's records
    share their cell and weight, so the population's own records need not be at hand."""

    cell: np.ndarray  # (2G,) cell index
    weight: np.ndarray  # (2G,) c
    num_cells: int
    population_weight: np.ndarray  # (cells,) X = Σ_population c
    population_count: np.ndarray  # (cells,) records in the full dataset
    key: np.ndarray  # (2G,) each record's key
    key_cell: np.ndarray  # (keys,) the cell of each key
    key_weight: np.ndarray  # (keys,) the weight of each key's records
    key_present: np.ndarray  # (keys,) whether the population has records of the key
    by_attribute: bool

    @property
    def population_bound(self) -> np.ndarray:
        """Per cell, the largest c·N / X of its population's records (1 when its weights are equal)."""
        scale = np.zeros(len(self.key_cell))
        present = self.key_present & (self.population_weight[self.key_cell] > 0)
        scale[present] = (
            self.key_weight[present]
            * self.population_count[self.key_cell[present]]
            / self.population_weight[self.key_cell[present]]
        )
        bound = np.zeros(self.num_cells)
        np.maximum.at(bound, self.key_cell, scale)
        return bound

    def record_scale(self) -> np.ndarray:
        """Per record, c·N / X of its cell (0 where the cell has no population weight)."""
        pw = self.population_weight[self.key_cell]
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = np.where(pw > 0, self.key_weight * self.population_count[self.key_cell] / pw, 0.0)
        return scale[self.key]


@dataclass
class SampleEstimates:
    """Headline estimates and, for the tables, each cell's estimate and interval."""

    groups: int
    of: int
    headline: dict[str, Estimate] = field(default_factory=dict)
    extra: dict[str, Estimate] = field(default_factory=dict)  # subject_mu, subject_eta


@dataclass(frozen=True)
class Bounds:
    """The pieces of a μ-like or η-like estimate, before its interval: the plug-in value, the upper estimate Ũ
    and the cross-fitted lower estimate L̃ with their standard errors, and per group its influence value ψ_g (its
    linearized contribution to Ũ or L̃; 0 for groups off the sample), so that two runs on the same groups can be
    differenced group by group (``unqover.measure.shifts``).

    Ũ is the plug-in with each cell's estimated sign (and, for μ, each unit's estimated maximiser), plus the
    allowance for cells whose spread was not seen: ψ_g = (M/n)·λ̂·z_g. ``upper_se`` bounds its standard error
    for every choice of signs. L̃ = ½ Σ_h Σ λ_(other half)·θ̂_h: ψ_g = ½·(M/n_h)·λ_(other half)·z_g for g in half h.
    """

    plug_in: float
    upper: float  # Ũ, before + z·se
    upper_se: float
    upper_influence: np.ndarray  # (M,)
    lower: float  # L̃, before − z·se
    lower_se: float
    lower_influence: np.ndarray  # (M,)

    @property
    def midpoint(self) -> float:
        """The value printed: the mean of the plug-in (biased up) and the cross-fitted (biased down) estimates."""
        return 0.5 * (self.plug_in + self.lower)


class Design:
    """The groups at hand (the whole dataset's, or a quick run's sample alone), which of them were sampled, the
    population's counts, and the split of the sample into two halves for cross-fitting."""

    def __init__(
        self,
        paired: PairedScores,
        observed: np.ndarray,
        seed: int,
        confidence: float,
        population: PopulationCounts | None = None,
    ):
        self.paired = paired
        self.population = PopulationCounts.of(paired) if population is None else population
        self.observed = np.asarray(observed, dtype=bool)
        self.M = self.population.num_groups
        self.n = int(self.observed.sum())
        self.f = self.n / self.M
        self.alpha = 1 - confidence
        self.z = float(stats.norm.ppf(1 - self.alpha / 2))
        self.c = bias_scores(paired)[2]  # C(x1, x2, a, τ) per group
        sampled = np.flatnonzero(self.observed)
        shuffled = np.random.default_rng(seed).permutation(sampled)
        self.half = np.zeros(paired.num_groups, dtype=np.int8)  # 0: not sampled, 1: half A, 2: half B
        self.half[shuffled[: len(shuffled) // 2]] = 1
        self.half[shuffled[len(shuffled) // 2 :]] = 2

    def records(
        self, unit_of: np.ndarray, num_units: int, subject_weighted: bool, by_attribute: bool = True
    ) -> CellRecords:
        """Records for cells (unit, attribute), or (unit) alone; ``subject_weighted``: subjects count equally
        inside a unit. Subjects with ``unit_of`` −1 fall in a cell of their own that nothing reads."""
        p = self.paired
        num_attributes = len(p.attributes) if by_attribute else 1
        unit_of = np.where(unit_of < 0, num_units, unit_of)
        num_units += 1
        num_cells = num_units * num_attributes
        keys = np.arange(len(p.subjects) * num_attributes)
        key_cell = unit_of[keys // num_attributes] * num_attributes + keys % num_attributes
        per_key = self.population.counts(by_attribute)
        key_weight = np.ones(len(keys))
        if subject_weighted:
            subjects_in_cell = np.bincount(key_cell[per_key > 0], minlength=num_cells)
            with np.errstate(divide="ignore"):
                key_weight = np.where(per_key > 0, 1.0 / (per_key * subjects_in_cell[key_cell]), 0.0)
        return self.keyed_records(key_cell, key_weight, num_cells, by_attribute)

    def keyed_records(
        self, key_cell: np.ndarray, key_weight: np.ndarray, num_cells: int, by_attribute: bool
    ) -> CellRecords:
        """The records of the groups at hand for a cell and a weight per key, with the population's sums."""
        p = self.paired
        subject = np.concatenate([p.x1, p.x2])
        key = (
            subject * len(p.attributes) + np.concatenate([p.attribute, p.attribute])
            if by_attribute
            else subject
        )
        weight_sum, count = self.population.totals(key_cell, key_weight, num_cells, by_attribute)
        return CellRecords(
            cell=key_cell[key],
            weight=key_weight[key],
            num_cells=num_cells,
            population_weight=weight_sum,
            population_count=count,
            key=key,
            key_cell=key_cell,
            key_weight=key_weight,
            key_present=self.population.counts(by_attribute) > 0,
            by_attribute=by_attribute,
        )

    def _record_mask(self, which: int | None) -> np.ndarray:
        groups = self.observed if which is None else self.half == which
        return np.concatenate([groups, groups])

    def cell_estimates(
        self, rec: CellRecords, values: np.ndarray, which: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """θ̂ per cell (NaN where no value was sampled) and each record's linearized term c(v − θ̂)/X."""
        mask = self._record_mask(which)
        num = np.bincount(rec.cell[mask], rec.weight[mask] * values[mask], rec.num_cells)
        den = np.bincount(rec.cell[mask], rec.weight[mask], rec.num_cells)
        with np.errstate(invalid="ignore", divide="ignore"):
            theta = np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
            term = rec.weight * (values - np.nan_to_num(theta)[rec.cell]) / rec.population_weight[rec.cell]
        return theta, np.where(mask, term, 0.0)

    def _scale(self, which: int | None) -> tuple[np.ndarray, float]:
        groups = self.observed if which is None else self.half == which
        n = int(groups.sum())
        return groups, self.M**2 * max(0.0, 1 - n / self.M) / max(n, 1)

    def linear_se(
        self, rec: CellRecords, term: np.ndarray, coef: np.ndarray, which: int | None = None
    ) -> float:
        """Standard error of Σ_cells coef·θ̂ (θ̂ from the sample, or from half ``which``)."""
        groups, scale = self._scale(which)
        G = self.paired.num_groups
        z = coef[rec.cell[:G]] * term[:G] + coef[rec.cell[G:]] * term[G:]
        z = z[groups]
        if len(z) < 2:
            return math.inf
        return math.sqrt(scale * z.var(ddof=1))

    def influence(
        self, rec: CellRecords, term: np.ndarray, coef: np.ndarray, which: int | None = None
    ) -> np.ndarray:
        """Per group, (M/n)·Σ_its records coef·term: its linearized contribution to Σ_cells coef·θ̂ (θ̂ from the
        sample, or from half ``which``, of n groups); 0 for the other groups."""
        groups = self.observed if which is None else self.half == which
        G = self.paired.num_groups
        z = coef[rec.cell[:G]] * term[:G] + coef[rec.cell[G:]] * term[G:]
        return np.where(groups, z * (self.M / max(int(groups.sum()), 1)), 0.0)

    def abs_linear_se(self, rec: CellRecords, term: np.ndarray, weight: np.ndarray) -> float:
        """A bound on the standard error of Σ weight·s·θ̂ for every choice of signs s."""
        groups, scale = self._scale(None)
        G = self.paired.num_groups
        z = np.abs(weight[rec.cell[:G]] * term[:G]) + np.abs(weight[rec.cell[G:]] * term[G:])
        z = z[groups]
        if len(z) < 2:
            return math.inf
        return math.sqrt(scale * (z**2).sum() / (len(z) - 1))

    def cell_se(self, rec: CellRecords, term: np.ndarray) -> np.ndarray:
        """Standard error of each cell's θ̂; NaN for a cell with fewer than 2 sampled values (no spread to see)."""
        groups, scale = self._scale(None)
        mask = np.concatenate([groups, groups])
        sq = np.bincount(rec.cell[mask], term[mask] ** 2, rec.num_cells)
        sampled = np.bincount(rec.cell[mask], None, rec.num_cells)
        se = np.sqrt(scale * sq / max(self.n - 1, 1))
        return np.where((sampled >= 2) | (scale == 0), se, np.nan)

    def needed(self, rec: CellRecords, cells: np.ndarray) -> tuple[bool, int]:
        """Are there enough expected values in every cell? And the number of groups that would be enough."""
        smallest = float(rec.population_count[cells].min()) if len(cells) else 0.0
        if smallest == 0:
            return False, self.M
        groups_needed = min(self.M, math.ceil(MIN_EXPECTED_PER_CELL * self.M / smallest))
        # f · smallest >= MIN_EXPECTED_PER_CELL, in whole numbers: exactly true at groups_needed
        return self.n * smallest >= MIN_EXPECTED_PER_CELL * self.M or self.n >= self.M, groups_needed


def _clip(low: float, high: float) -> list[float]:
    return [max(0.0, low), min(1.0, high)]


def mean_and_se(values: np.ndarray, f: float) -> tuple[float, float]:
    """The mean of an equal-probability sample (a fraction ``f`` of its population) and its standard error, with
    the finite population correction 1 − f."""
    return float(values.mean()), math.sqrt(max(0.0, 1 - f) * values.var(ddof=1) / len(values))


def group_errors(population: PairedScores) -> tuple[np.ndarray, np.ndarray]:
    """Per group: its positional error (mean over subjects and polarities) and attributive error (over subjects
    and orders); δ and ε are their means over the groups."""
    return positional_errors(population).mean(axis=(1, 2)), attributive_errors(population).mean(axis=(1, 2))


def _mean_estimate(design: Design, per_group: np.ndarray) -> Estimate:
    """A mean over all groups: the sample mean with a t interval (finite population corrected)."""
    values = per_group[design.observed]
    if design.n < MIN_GROUPS:
        return Estimate(
            None,
            None,
            {
                "code": "few_groups",
                "reason": "too few groups sampled",
                "groups": design.n,
                "needed": MIN_GROUPS,
                "groups_needed": MIN_GROUPS,
            },
        )
    mean, se = mean_and_se(values, design.f)
    t = float(stats.t.ppf(1 - design.alpha / 2, design.n - 1))
    return Estimate(mean, _clip(mean - t * se, mean + t * se))


def _units(design: Design, rec: CellRecords) -> tuple[np.ndarray, np.ndarray]:
    """Per cell with population data: its unit; and the units that have any data."""
    num_attributes = len(design.paired.attributes)
    present = rec.population_count > 0
    unit = np.arange(rec.num_cells) // num_attributes
    return unit, np.unique(unit[present])


def declined_estimate(design: Design, rec: CellRecords, name: str, what: str) -> Estimate | None:
    """The declined estimate of ``name`` (a ``what`` over cells) when its cells expect too few sampled values.

    Why is data, worded by :func:`unqover.format.fmt_declined`: ``code`` "few_values_per_cell",
    ``reason`` (a phrase without numbers), ``name``, ``what``, ``smallest`` (the values of the smallest cell in the
    full dataset), ``groups`` of ``of`` groups sampled, ``expected`` (the sampled values that cell expects),
    ``needed`` (at least that many per cell) and ``groups_needed``. A declined mean over groups (δ, ε,
    :func:`_mean_estimate`) has ``code`` "few_groups", ``reason``, ``groups`` sampled, ``needed`` and
    ``groups_needed``."""
    cells = np.flatnonzero(rec.population_count > 0)
    enough, groups_needed = design.needed(rec, cells)
    if enough:
        return None
    smallest = int(rec.population_count[cells].min()) if len(cells) else 0
    return Estimate(
        None,
        None,
        {
            "code": "few_values_per_cell",
            "reason": "too few sampled values per cell",
            "name": name,
            "what": what,
            "smallest": smallest,
            "groups": design.n,
            "of": design.M,
            "expected": design.f * smallest,
            "needed": MIN_EXPECTED_PER_CELL,
            "groups_needed": groups_needed,
        },
    )


def _cross_fit(
    design: Design,
    rec: CellRecords,
    values: np.ndarray,
    choose: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> tuple[float, float, np.ndarray]:
    """The cross-fitted lower estimate, its standard error and each group's influence value.

    ``choose(θ̂_A, usable)`` turns one half's cell estimates into coefficients λ (signs times weights, on the cells
    it picks); the other half estimates Σ λ θ, which is at most the target for any λ of that form. Both halves take
    each role once; the standard error of the mean of the two is at most the mean of theirs.
    """
    present = rec.population_count > 0
    values_, errors = [], []
    influence = np.zeros(design.paired.num_groups)
    for chooser, estimator in ((1, 2), (2, 1)):
        theta_a, _ = design.cell_estimates(rec, values, chooser)
        theta_b, term_b = design.cell_estimates(rec, values, estimator)
        coef = choose(theta_a, present & ~np.isnan(theta_a) & ~np.isnan(theta_b))
        values_.append(float((coef * np.nan_to_num(theta_b)).sum()))
        errors.append(design.linear_se(rec, term_b, coef, estimator))
        influence += 0.5 * design.influence(rec, term_b, coef, estimator)
    return 0.5 * sum(values_), 0.5 * sum(errors), influence


def _bounded(design: Design, bounds: Bounds) -> Estimate:
    """The interval [L̃ − z·se, Ũ + z·se] in [0, 1], and the midpoint of plug-in and cross-fit inside it."""
    interval = _clip(bounds.lower - design.z * bounds.lower_se, bounds.upper + design.z * bounds.upper_se)
    return Estimate(min(max(bounds.midpoint, interval[0]), interval[1]), interval)


def abs_mean_estimate(
    design: Design,
    rec: CellRecords,
    values: np.ndarray,
    name: str,
    bounds_of: Callable[[Design, CellRecords, np.ndarray], Bounds],
    what: str,
) -> Estimate:
    """The estimate of ``name`` (a ``what`` over cells) inside the bounds ``bounds_of`` gives (:func:`max_abs_bounds`
    or :func:`mean_abs_bounds`), or its declined form when the cells expect too few sampled values."""
    declined = declined_estimate(design, rec, name, what)
    return declined if declined is not None else _bounded(design, bounds_of(design, rec, values))


def max_abs_bounds(design: Design, rec: CellRecords, values: np.ndarray) -> Bounds:
    """The pieces of a μ-like estimate, Σ_u ω_u max_a |θ(u, a)| with ω equal over units (whether or not the cells
    are large enough for it)."""
    unit, units = _units(design, rec)
    present = rec.population_count > 0
    omega = np.zeros(int(unit.max()) + 1)
    omega[units] = 1.0 / len(units)
    theta, term = design.cell_estimates(rec, values)
    se = design.cell_se(rec, term)
    empty = present & (np.isnan(theta) | np.isnan(se))  # no sampled value, or one: its spread is unknown
    abs_theta = np.where(present, np.abs(np.nan_to_num(theta)), -np.inf)
    num_attributes = len(design.paired.attributes)
    per_unit = abs_theta.reshape(-1, num_attributes)
    plug_in = float((omega * np.maximum(per_unit.max(axis=1), 0)).sum())
    # a unit with an unsampled (or once-sampled) cell may have its maximum there: |θ| <= 1
    unit_has_empty = empty.reshape(-1, num_attributes).any(axis=1)
    upper_max = np.where(unit_has_empty, 1.0, np.maximum(per_unit.max(axis=1), 0))
    se_max = np.where(present, np.nan_to_num(se), 0).reshape(-1, num_attributes).max(axis=1)
    # Ũ's influence: each unit's estimated maximiser and sign (a unit held at 1 for an unseen cell has none)
    best = np.arange(len(per_unit)) * num_attributes + per_unit.argmax(axis=1)
    steady = ~unit_has_empty & (omega > 0)
    upper_coef = np.zeros(rec.num_cells)
    upper_coef[best[steady]] = omega[steady] * np.sign(np.nan_to_num(theta[best[steady]]))

    def choose(theta_a: np.ndarray, usable: np.ndarray) -> np.ndarray:
        score = np.where(usable, np.abs(np.nan_to_num(theta_a)), -1.0).reshape(-1, num_attributes)
        units_ = np.flatnonzero(score.max(axis=1) >= 0)
        cells = units_ * num_attributes + score.argmax(axis=1)[units_]
        coef = np.zeros(rec.num_cells)
        coef[cells] = omega[units_] * np.sign(theta_a[cells])
        return coef

    return Bounds(
        plug_in,
        float((omega * upper_max).sum()),
        float((omega * se_max).sum()),
        design.influence(rec, term, upper_coef),
        *_cross_fit(design, rec, values, choose),
    )


def mean_abs_bounds(design: Design, rec: CellRecords, values: np.ndarray) -> Bounds:
    """The pieces of an η-like estimate, Σ_u ω_u mean_a |θ(u, a)| with ω equal over units and attributes equal
    within a unit (whether or not the cells are large enough for it)."""
    unit, units = _units(design, rec)
    present = rec.population_count > 0
    cells_per_unit = np.bincount(unit[present], minlength=int(unit.max()) + 1)
    omega = np.where(present, 1.0 / (len(units) * np.maximum(cells_per_unit[unit], 1)), 0.0)
    theta, term = design.cell_estimates(rec, values)
    empty = present & np.isnan(theta)
    plug_in = float((omega * np.abs(np.nan_to_num(theta))).sum())
    upper_coef = np.where(empty, 0.0, omega * np.sign(np.nan_to_num(theta)))

    def choose(theta_a: np.ndarray, usable: np.ndarray) -> np.ndarray:
        return np.where(usable, omega * np.sign(np.nan_to_num(theta_a)), 0.0)

    return Bounds(
        plug_in,
        plug_in + float(omega[empty].sum()),
        design.abs_linear_se(rec, term, omega),
        design.influence(rec, term, upper_coef),
        *_cross_fit(design, rec, values, choose),
    )


def groups_needed(
    paired: PairedScores,
    *,
    unit_of: np.ndarray,
    num_units: int,
    subject_weighted: bool,
    population: PopulationCounts | None = None,
) -> int:
    """The fewest sampled groups for which :func:`estimate_from_sample` declines none of the headline δ, ε, μ and η
    (μ and η over the units ``unit_of``): the declining rule itself (:meth:`Design.needed` on the same cells, and
    ``MIN_GROUPS`` for δ and ε). Per-subject μ and η of a clustered probe (gender) may need more: they are extras.
    It reads the population's cells only, never its scores: it is known before anything is scored. ``paired``:
    the whole dataset's groups, or (with ``population``, their counts) any groups with its labels."""
    design = Design(paired, np.zeros(paired.num_groups, dtype=bool), 0, 0.95, population)
    rec = design.records(unit_of, num_units, subject_weighted)
    needed = design.needed(rec, np.flatnonzero(rec.population_count > 0))[1]
    return min(design.M, max(MIN_GROUPS, needed))


def estimate_from_sample(
    paired: PairedScores,
    observed: np.ndarray,
    *,
    unit_of: np.ndarray,
    num_units: int,
    subject_weighted: bool,
    subject_unit_too: bool = False,
    seed: int = 0,
    confidence: float = 0.95,
    population: PopulationCounts | None = None,
) -> tuple[Design, SampleEstimates]:
    """δ, ε, μ and η of the full dataset from the sampled groups ``observed`` (a mask over ``paired``, the whole
    dataset's groups; or, with ``population``, their counts, over any groups at hand such as the sample alone).

    ``unit_of`` maps subject codes to the units μ and η average over (subjects, or clusters with
    ``subject_weighted`` so that subjects count equally inside a cluster, as the full-run definition does).
    With ``subject_unit_too`` (μ per cluster), the per-subject μ and η are estimated as well (``extra``).
    """
    design = Design(paired, observed, seed, confidence, population)
    positional, attributive = group_errors(paired)
    rec = design.records(unit_of, num_units, subject_weighted)
    value = np.concatenate([design.c, -design.c])
    out = SampleEstimates(design.n, design.M)

    def mu_and_eta(records: CellRecords, prefix: str) -> dict[str, Estimate]:
        return {
            "mu": abs_mean_estimate(design, records, value, f"{prefix}μ", max_abs_bounds, "mean of maxima"),
            "eta": abs_mean_estimate(
                design, records, np.sign(value), f"{prefix}η", mean_abs_bounds, "mean of absolute cell means"
            ),
        }

    out.headline = {
        "positional_error": _mean_estimate(design, positional),
        "attributive_error": _mean_estimate(design, attributive),
        **mu_and_eta(rec, ""),
    }
    if subject_unit_too:
        subjects = len(paired.subjects)
        per_subject = design.records(np.arange(subjects), subjects, False)
        out.extra = {f"subject_{k}": v for k, v in mu_and_eta(per_subject, "per-subject ").items()}
    return design, out
