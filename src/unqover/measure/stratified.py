"""Intervals for a weighted sum of stratum means from a stratified random sample of bounded values, valid at any n.

The quick runs of the NLI and emotion probes draw within strata: NLI keeps source premises at random within each
occupation × template stratum, the emotion probe keeps persons at random within each gender × race cell. A table
cell of theirs (an occupation; a race or gender group) spans several strata, and its full-dataset value is

    θ = Σ_s a_s μ_s,

μ_s the mean of the N_s values (in [0, 1]) of stratum s and a_s ≥ 0 its weight. Given the number n_s drawn from
each stratum, each stratum's draw is a simple random sample without replacement and the strata draw independently,
but the cell's draw as a whole is not a simple random sample of its units (the quotas are fixed per stratum), so
:func:`unqover.measure.bounded.bounded_mean_intervals` does not apply to the cell directly. This module combines
its per-stratum betting capital (Waudby-Smith & Ramdas, JRSS-B 2024):

* per stratum s and candidate μ, K⁺_s(μ) and K⁻_s(μ) are the capitals of betting up and down on the stratum's
  draws (in a seeded random order), each a nonnegative martingale of mean 1 at the true μ_s;
* the strata are independent, so Π_s K⁺_s(μ_s) and Π_s K⁻_s(μ_s) have mean 1 at the true (μ_s), and so has
  E(μ) = ½(Π_s K⁺_s + Π_s K⁻_s): P(E ≥ 1/α) ≤ α (Markov);
* a candidate θ is rejected when every allocation (μ_s) with Σ_s a_s μ_s = θ is: when
  max(min Σ_s log K⁺_s, min Σ_s log K⁻_s) − log 2 ≥ log(1/α), the minima over those allocations (a lower bound of
  the minimum of log E, so the test stays valid). The minima are min-plus convolutions of the strata's capitals on
  a grid of the contributions a_s μ_s.

A stratum whose every unit was drawn (n_s = N_s) contributes its exact value; a stratum with no draw can hold any
μ_s in [0, 1] (its capital is 1), so it widens the interval by its whole weight: nothing is known about it. The
bets are the bounded module's fixed-n plug-in with n = n_s (in a simulation with three strata they gave 5–20%
narrower intervals than bets tuned to the cell's whole n). The grid has ``GRID`` steps over the cell's range; each bound is moved out by one step per
stratum plus one, so the reported interval contains the exact one up to the grid's resolution.

Near nominal where the sample allows it (the default, ``method="t"``), as in :mod:`unqover.measure.bounded`: the
classical interval of stratified sampling (Cochran, *Sampling Techniques*, 3rd ed., §5.4–5.5),

    θ̂ ± t_ν · sqrt(Σ_s a_s² (1 − f_s) s̃_s² / n_s),   ν the Welch–Satterthwaite degrees of freedom,

f_s = n_s / N_s and s̃_s² the stratum's variance, raised toward the pooled variance of the strata of its ``pool``
as in the bounded module (default: all the strata of the call; a call whose cells are different quantities, such
as the NLI table's S and gender gap, pools each quantity apart: pooled together, the benchmark's NLI gaps covered
97–100%, apart 93–99%; not pooled at all, the emotion shares covered 89–92%). A cell takes it when its open
strata hold at least ``T_MIN_COUNT`` draws together, every one of them has two or more draws, the values of at
least one of them are not all equal, and the estimator's skewness (its third cumulant over its variance^{3/2},
Σ a_s³ m3_s (1 − f_s)(1 − 2 f_s) / n_s² over the strata: Cochran's rule, as in the bounded module) is below
``MAX_MEAN_SKEWNESS``; every other cell keeps its betting interval, but for the cells of signs below. A stratum
whose draws are all equal (a rare emotion no sampled person of a cell chose) has s² = 0, which understates its
variance; the moderation gives it d₀ s₀² / (d₀ + n_s − 1), as the moderated t statistic does for a gene without
variance. Before this rule such cells kept the betting interval, and the benchmark's emotion top-1 shares covered
96.8–97.9% (200 seeds), NLI S 97.4–98.8% (20 seeds); with it 95.7–97.3% and 96.1–96.4% (100 seeds).

Cells of signs (every value 0, ½ or 1: the NLI table's S, B and gender gap per premise) that the skewness rule
refuses — strata that lean hard one way, under a strong bias — take the bounded module's score interval instead of
betting, with n ≥ ``T_MIN_COUNT`` draws over strata that were all drawn from: the θ with (θ̂ − θ)² ≤ z² V(θ), where
V(θ) = κ θ (W − θ) / W bounds the estimator's variance Σ a_s² σ_s² (N_s − n_s) / ((N_s − 1) n_s) for every
allocation of θ over the strata (W = Σ a_s and κ = max_s a_s (N_s − n_s) / ((N_s − 1) n_s) over the open strata;
σ_s² ≤ μ_s (1 − μ_s) by Bhatia–Davis, and Σ a_s μ_s (1 − μ_s) ≤ θ (W − θ) / W by concavity). In the benchmark it
took the NLI B cells under a strong bias from 97.3% to 96.5% (100 seeds).

With one stratum every interval here is the bounded module's (the score one: Wilson's). ``method="betting"`` gives
the betting interval everywhere.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from unqover.measure.bounded import (
    GRID,
    MAX_MEAN_SKEWNESS,
    METHODS,
    T_MIN_COUNT,
    log_capitals,
    mean_skewness,
    plug_in_bets,
    prepared_draws,
    sample_moments,
    score_intervals,
    without_replacement,
)

_CHUNK = 25  # grid points per pass (bounds the memory: records x chunk)


def _min_plus(f: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Row by row, (f ⊕ g)(k) = min over i + j = k of f(i) + g(j); f (rows, a), g (rows, b)."""
    if f.shape[1] < g.shape[1]:
        f, g = g, f
    width = f.shape[1]
    out = np.full((len(f), width + g.shape[1] - 1), np.inf)
    for j in range(g.shape[1]):
        np.minimum(out[:, j : j + width], f + g[:, j : j + 1], out=out[:, j : j + width])
    return out


@dataclass(frozen=True)
class _Strata:
    """A stratified sample: each unit's value and stratum; per stratum its cell, population N_s, weight a_s, the
    number drawn and their mean."""

    values: np.ndarray
    stratum: np.ndarray
    stratum_cell: np.ndarray
    population: np.ndarray
    weight: np.ndarray
    counts: np.ndarray
    means: np.ndarray
    num_cells: int

    @property
    def exact(self) -> np.ndarray:
        """Strata whose every unit was drawn: their mean is known."""
        return (self.counts > 0) & (self.counts >= self.population)

    @property
    def partial(self) -> np.ndarray:
        return (self.counts > 0) & ~self.exact

    @property
    def unsampled(self) -> np.ndarray:
        return self.counts == 0

    def per_cell(self, x: np.ndarray) -> np.ndarray:
        return np.bincount(self.stratum_cell, x, self.num_cells)


def _strata(
    values: np.ndarray,
    stratum: np.ndarray,
    stratum_cell: np.ndarray,
    population_count: np.ndarray,
    weight: np.ndarray,
) -> _Strata:
    values = np.asarray(values, dtype=np.float64)
    stratum = np.asarray(stratum, dtype=np.int64)
    stratum_cell = np.asarray(stratum_cell, dtype=np.int64)
    num_strata = len(stratum_cell)
    counts = np.bincount(stratum, minlength=num_strata)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.bincount(stratum, values, num_strata) / counts
    return _Strata(
        values,
        stratum,
        stratum_cell,
        np.asarray(population_count, dtype=np.float64),
        np.asarray(weight, dtype=np.float64),
        counts,
        means,
        int(stratum_cell.max()) + 1 if num_strata else 0,
    )


def stratified_mean_intervals(
    values: np.ndarray,
    stratum: np.ndarray,
    stratum_cell: np.ndarray,
    population_count: np.ndarray,
    weight: np.ndarray,
    alpha: float = 0.05,
    seed: int = 0,
    method: str = "t",
    pool: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cell: an estimate and a 1 − α interval for θ = Σ_{s in the cell} a_s μ_s.

    ``values``: one per sampled unit, in [0, 1]; ``stratum``: each unit's stratum (0 .. S − 1); per stratum, its
    ``stratum_cell``, its ``population_count`` N_s (units in the full dataset) and its ``weight`` a_s. μ_s is the
    mean of the stratum's N_s values. The estimate Σ a_s ȳ_s is NaN when a stratum of the cell has no sampled unit;
    a cell without any sampled unit gets NaN throughout. ``method``: ``"t"`` (the stratified t interval where
    Cochran's rule admits it, betting elsewhere) or ``"betting"`` (see the module's docstring); ``pool``: per
    stratum, the group whose pooled variance its t interval leans on (default: all strata together).
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    st = _strata(values, stratum, stratum_cell, population_count, weight)
    offset = st.per_cell(np.where(st.exact, st.weight * st.means, 0.0))
    drawn = st.per_cell(np.where(st.partial, st.weight * st.means, 0.0))
    span = st.per_cell(np.where(st.exact, 0.0, st.weight))  # the range of the part not known exactly
    has = st.per_cell(st.counts.astype(np.float64)) > 0
    estimate = np.where(has & (st.per_cell(st.unsampled.astype(np.float64)) == 0), offset + drawn, np.nan)
    low, high = np.full(st.num_cells, np.nan), np.full(st.num_cells, np.nan)
    if not has.any():
        return estimate, low, high
    cells = np.flatnonzero(has)
    lo, hi = _betting_range(st, cells, span, drawn, alpha, seed)
    low[cells] = offset[cells] + np.clip(lo, 0.0, span[cells])
    high[cells] = offset[cells] + np.clip(hi, 0.0, span[cells])
    if method == "t":
        use, half = _stratified_t(
            st.values, st.stratum, st.stratum_cell, st.population, st.weight, alpha, pool
        )
        low[use] = np.clip(estimate[use] - half[use], offset[use], offset[use] + span[use])
        high[use] = np.clip(estimate[use] + half[use], offset[use], offset[use] + span[use])
        score, factor = _score_cells(st.values, st.stratum, st.stratum_cell, st.population, st.weight, span)
        score &= ~use
        lo, hi = score_intervals(drawn[score], 0.0, span[score], factor[score], alpha)
        low[score] = offset[score] + np.clip(lo, 0.0, span[score])
        high[score] = offset[score] + np.clip(hi, 0.0, span[score])
    return estimate, low, high


def _stratum_capitals(
    st: _Strata, h: np.ndarray, points: np.ndarray, alpha: float, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each partially drawn stratum's log capitals of betting up and down (rows ``row[s]``), at the contributions
    c = min(k·h, a_s), k = 0 .. points − 1 (the grid of its cell)."""
    up = down = np.zeros((0, 0))
    row = np.full(len(st.stratum_cell), -1)
    sub = np.flatnonzero(st.partial)
    if not len(sub):
        return up, down, row
    row[sub] = np.arange(len(sub))
    keep = st.partial[st.stratum]
    u, position, before, code, _, starts, variance = prepared_draws(
        2 * st.values[keep] - 1, row[st.stratum[keep]], len(sub), st.population[sub], 1.0, seed
    )
    bet = plug_in_bets(st.counts[sub][code], variance, alpha)
    k = np.arange(int(points[sub].max()))
    a = st.weight[sub][:, None]
    candidates = np.clip(np.minimum(k[None, :] * h[sub][:, None], a) / np.where(a > 0, a, 1.0), 0.0, 1.0)
    parts = [
        log_capitals(
            u, position, before, st.population[sub][code], bet, starts, candidates[:, s : s + _CHUNK]
        )
        for s in range(0, len(k), _CHUNK)
    ]
    up = np.concatenate([p[0] for p in parts], axis=1)
    down = np.concatenate([p[1] for p in parts], axis=1)
    return up, down, row


def _cell_capitals(
    st: _Strata, cells: np.ndarray, points: np.ndarray, capitals: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, list[list[int]]]:
    """Per cell, the min-plus convolution of its open strata's capitals (a cell with fewer strata: the identity),
    and each cell's open strata."""
    up, down, row = capitals
    exact, partial = st.exact, st.partial
    order = np.argsort(st.stratum_cell, kind="stable")
    edges = np.searchsorted(st.stratum_cell[order], np.arange(st.num_cells + 1))
    members = [[s for s in order[edges[c] : edges[c + 1]] if not exact[s]] for c in cells]
    total_up = total_down = np.zeros((len(cells), 1))
    for slot in range(max(map(len, members))):
        length = max(int(points[m[slot]]) for m in members if len(m) > slot)
        g_up, g_down = np.full((len(cells), length), np.inf), np.full((len(cells), length), np.inf)
        for k, m in enumerate(members):
            if len(m) <= slot:
                g_up[k, 0] = g_down[k, 0] = 0.0
            elif partial[m[slot]]:
                s = m[slot]
                g_up[k, : points[s]], g_down[k, : points[s]] = (
                    up[row[s], : points[s]],
                    down[row[s], : points[s]],
                )
            else:
                g_up[k, : points[m[slot]]] = g_down[k, : points[m[slot]]] = 0.0
        total_up, total_down = _min_plus(total_up, g_up), _min_plus(total_down, g_down)
    return total_up, total_down, members


def _betting_range(
    st: _Strata, cells: np.ndarray, span: np.ndarray, drawn: np.ndarray, alpha: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """The betting interval of each cell's part not known exactly (before clipping to [0, span]), on a grid of
    ``GRID`` steps over its span, each bound moved out by one step per open stratum plus one."""
    step = np.where(span > 0, span, 1.0) / GRID  # per cell
    h = step[st.stratum_cell]
    points = np.where(
        st.exact, 0, np.ceil(st.weight / h - 1e-9).astype(np.int64) + 1
    )  # c = min(k·h, a_s), k = 0, 1, ...
    capitals = _stratum_capitals(st, h, points, alpha, seed)
    total_up, total_down, members = _cell_capitals(st, cells, points, capitals)
    accepted = np.maximum(total_up, total_down) - math.log(2) < math.log(1 / alpha)
    any_accepted = accepted.any(axis=1)
    first = np.argmax(accepted, axis=1)
    last = accepted.shape[1] - 1 - np.argmax(accepted[:, ::-1], axis=1)
    h = step[cells]
    slack = (np.array([len(m) for m in members]) + 1) * h
    free = st.per_cell(np.where(st.unsampled, st.weight, 0.0))  # the range of the strata without a draw
    # nothing accepted: the accepted set falls between grid points; around the draws then
    lo = np.where(any_accepted, first * h - slack, drawn[cells] - slack)
    hi = np.where(any_accepted, last * h + h, drawn[cells] + free[cells] + slack)
    return lo, hi


def _score_cells(
    values: np.ndarray,
    stratum: np.ndarray,
    stratum_cell: np.ndarray,
    population: np.ndarray,
    weight: np.ndarray,
    span: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Per cell: whether it is a cell of signs that may take the score interval (``T_MIN_COUNT`` draws or more,
    every open stratum drawn, every value 0, ½ or 1), and the factor that bounds its estimate's variance by
    factor · θ(W − θ) (see the module's docstring)."""
    num_strata = len(stratum_cell)
    num_cells = int(stratum_cell.max()) + 1
    n = np.bincount(stratum, minlength=num_strata).astype(np.float64)
    partial = (n > 0) & (n < population)
    off_signs = np.bincount(stratum, ~np.isin(values, (0.0, 0.5, 1.0)), num_strata)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(partial, weight * without_replacement(n, n / population), 0.0)  # c_s / a_s

    def per_cell(x: np.ndarray) -> np.ndarray:
        return np.bincount(stratum_cell, np.asarray(x, dtype=np.float64), num_cells)

    kappa = np.zeros(num_cells)
    np.maximum.at(kappa, stratum_cell, ratio)
    score = (
        (per_cell(np.where(partial, n, 0.0)) >= T_MIN_COUNT)
        & (per_cell(n == 0) == 0)
        & (per_cell(off_signs) == 0)
        & (span > 0)
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        return score, np.where(score, kappa / np.where(span > 0, span, 1.0), np.nan)


def _stratified_t(
    values: np.ndarray,
    stratum: np.ndarray,
    stratum_cell: np.ndarray,
    population: np.ndarray,
    weight: np.ndarray,
    alpha: float,
    pool: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per cell: whether it takes the stratified t interval, and the interval's half-width."""
    num_strata = len(stratum_cell)
    num_cells = int(stratum_cell.max()) + 1 if num_strata else 0
    moments = sample_moments(values, stratum, num_strata, population, pool=pool)
    n, f = moments.count, moments.fraction
    partial = (n > 0) & (f < 1)

    def per_cell(x: np.ndarray) -> np.ndarray:
        return np.bincount(stratum_cell, np.where(partial, x, 0.0), num_cells)

    third, second = mean_skewness(weight, moments)
    with np.errstate(invalid="ignore", divide="ignore"):
        terms = weight**2 * (1 - f) * moments.variance / n
        variance = per_cell(terms)
        df = variance**2 / per_cell(terms**2 / (n - 1))
        skewness = np.abs(per_cell(third)) / per_cell(second) ** 1.5
        half = stats.t.ppf(1 - alpha / 2, df) * np.sqrt(variance)
    # a stratum without a draw, or with one (no variance); one whose draws are all equal leans on the pooled s₀²
    unsure = (n == 0) | (partial & (n < 2))
    use = (
        (per_cell(n) >= T_MIN_COUNT)
        & (np.bincount(stratum_cell, unsure.astype(np.float64), num_cells) == 0)
        & (per_cell(second) > 0)
        & (np.nan_to_num(skewness, nan=np.inf) < MAX_MEAN_SKEWNESS)
    )
    return use, half
