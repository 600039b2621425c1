"""Confidence intervals for the mean of a finite population of bounded values, valid at every sample size.

A quick run's table cell (γ(x, a), η(x, a), γ(x), a cluster's γ, an occupation's or a person's mean) estimates the
mean of the cell's N values in the full dataset from the n of them the sample drew. Given n, the drawn values are
a simple random sample without replacement of the cell's values (the design draws groups with equal probability,
so every subset of a cell of the same size is equally likely). The cells of a quick run are small — religion at
1,500 groups expects 5 values per γ(x, a) cell — and a normal or t interval does not cover there: the issue that
introduced this module measured 36% coverage at n = 2 and 78% over all cells. The values are bounded (C in
[−1, 1], a sign in {−1, 0, 1}), and that is enough for intervals that hold at any n.

The method: betting confidence intervals for sampling without replacement (Waudby-Smith & Ramdas, "Estimating
means of bounded random variables by betting", JRSS-B 2024, §3 and §6; "Confidence sequences for sampling without
replacement", NeurIPS 2020). Rescale the values to [0, 1]; for a candidate mean m, the mean of the values not yet
drawn before the i-th draw is m_i = (N·m − Σ_{j<i} x_j) / (N − i + 1), and the capital

    K⁺(m) = Π_i (1 + λ⁺_i (x_i − m_i)),      K⁻(m) = Π_i (1 − λ⁻_i (x_i − m_i))

with bets λ_i chosen from the values before draw i is a nonnegative martingale of mean 1 when m is the true mean.
So ½(K⁺ + K⁻) ≥ 1/α has probability at most α (Markov's inequality), and the candidates it does not reject form
a 1 − α interval. The bets are the paper's fixed-n plug-in, λ_i = sqrt(2 log(2/α) / (n σ̂²_{i−1})), capped at
c/m_i (and c/(1 − m_i)) with c = ¾ so the capital stays positive. The draws are taken in a seeded random order,
which the validity needs (the sample as a sequence of draws) and which makes the interval reproducible.

The interval is as wide as honesty requires: at n = 1 it is nearly the whole range, and it narrows to within
about 10–20% of the t interval as n grows. A cell whose every value was drawn (n = N) has its exact value.
Candidates are checked on a grid of ``GRID`` points; each bound is moved out by one grid step, so the reported
interval contains the exact one.

Near nominal where the sample allows it (the default, ``method="t"``). A betting interval is valid at every n, and
so conservative: the quick-run benchmark (``scripts/bench_quick_runs.py``, issue 32) measured 98–100% coverage at a
stated 95% in every count bin. Where a cell's sample is large enough for the central limit theorem of sampling
without replacement (Hájek 1960) to hold, the classical interval of survey sampling is near nominal and narrower:

    ȳ ± t_{n−1, 1−α/2} · sqrt((1 − n/N) s² / n),

the t interval with the finite-population correction (Cochran, *Sampling Techniques*, 3rd ed., §2.15), with two
safeguards for small and skewed samples:

* How large is large enough depends on the skewness: Cochran's rule asks n > 25 G₁², G₁ the population's
  skewness, i.e. a skewness of the sample mean, G₁ (1 − 2f) / sqrt(n (1 − f)) with f = n/N, below 0.2. A cell gets
  the t interval when n ≥ ``T_MIN_COUNT`` (10), n < N, its values are not all equal, and the sample's estimate of
  that skewness is below ``MAX_MEAN_SKEWNESS`` (½: with the variance floor below, the benchmark and a simulation
  on skewed, heavy-tailed and sign-valued populations covered 95–98% at ½ and over-covered at 0.2); every other
  cell keeps its betting interval. The rule falls back exactly where a t interval fails: a cell of equal values
  (no variance seen) and a cell with a rare value far from the rest (two-point populations with 10% of one value
  stay on betting at n ≤ 25).
* A small sample underestimates its variance more often than not, and the t interval's misses at n = 10–12 were
  the cells whose s was below the table's typical one (coverage 88–94% there). The cell's variance is raised
  toward the table's pooled within-cell variance s₀² as in a moderated t statistic (Smyth 2004, "Linear models
  and empirical Bayes methods for assessing differential expression", SAGMB 3:3): s̃² = max(s², (d₀ s₀² +
  (n − 1) s²) / (d₀ + n − 1)) with d₀ = ``PRIOR_DF`` (4), only ever upward, so its weight fades as n grows; the
  quantile stays t_{n−1}. In the benchmark this brought the 10–19 bin of γ(x, a) from 92–94% to 95–98%.

A table of signs (η(x, a): every value −b, 0 or b) is a proportion in all but name, and for proportions the t
(Wald) interval is the wrong tool: its coverage swings with the lattice of the counts and collapses near 0 and 1,
where a strongly biased model's cells are, and the skewness rule above sends most of those cells to the betting
interval, which covered 99% of the 10–19-value η(x, a) cells under a strong planted bias. Sign cells of n ≥
``T_MIN_COUNT`` values (n < N) take Wilson's score interval instead (Wilson 1927; the interval Brown, Cai &
DasGupta, "Interval estimation for a binomial proportion", Statistical Science 16:2, 2001, recommend for n ≤ 40),
with the finite-population correction: the candidates m with

    (ȳ − m)² ≤ z²_{1−α/2} (b² − m²) (N − n) / ((N − 1) n),

(b² − m²) the largest variance a population in [−b, b] with mean m can have (Bhatia & Davis 2000; exact for
values ±b, an upper bound when zeros occur) and (N − n)/((N − 1) n) what turns a population's variance into that of
the mean of n draws without replacement. Averaged over the proportion it covers 95.1–96.0% for every n = 10–19 and
N = 40, 130, 400 (exact hypergeometric computation; the t quantile in its place gave 96.5–97.9%); in the benchmark
the η(x, a) bins of ≥ 10 values covered 94–96%. It is defined for a cell of equal signs too (all b: [(n − f − k)/(n
− f + k)·b, b], k = z²(1 − f)), so no sign cell of n ≥ 10 needs the betting interval. The stratified module uses
the same score interval for cells of signs that fail its skewness rule.

The interval is clipped to the value range; a cell with n = N is exact either way. ``method="betting"`` gives the
betting interval in every cell (the construction before issue 32, kept for comparisons).

:func:`bounded_mean_p_values` inverts the same intervals (the two-sided t test in the t cells, the score test in
the sign cells, the capital in the others), so that p < α exactly when the null lies outside the interval at level
1 − α, at any α.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

GRID = 400  # candidate means per cell, evenly spaced over the cell's range
BET_CAP = 0.75  # c: the largest fraction of the capital a bet may risk
PRIOR_VARIANCE = (
    0.25  # σ̂²_0: the running variance before the first draw (the paper: ¼, the largest for [0, 1])
)
_CHUNK = 25  # grid points per pass (bounds the memory: records x chunk)
T_MIN_COUNT = 10  # the fewest sampled values of a cell with a t interval (the switch-over; below it: betting)
MAX_MEAN_SKEWNESS = (
    0.5  # the sample mean's estimated skewness at most ½ (Cochran's rule, loosened: n > 4 G₁²)
)
METHODS = ("t", "betting")
PRIOR_DF = (
    4.0  # weight, in degrees of freedom, of the table's pooled variance in a cell's (only ever raising it)
)


def _order(cell: np.ndarray, seed: int) -> np.ndarray:
    """Records sorted by cell, in a seeded random order within each cell."""
    shuffle = np.random.default_rng(seed).random(len(cell))
    return np.lexsort((shuffle, cell))


def log_capitals(
    u: np.ndarray,
    position: np.ndarray,
    drawn_before: np.ndarray,
    population: np.ndarray,
    bet: np.ndarray,
    starts: np.ndarray,
    candidates: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """log K⁺ and log K⁻ per (cell with data, candidate): records in cell order (``starts``: each cell's first),
    candidates (cells, k) in [0, 1]; +inf where a candidate is impossible given the values drawn."""
    cells_of_records = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(u))))
    m = candidates[cells_of_records]  # (records, k)
    remaining = (population - position)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        m_i = (population[:, None] * m - drawn_before[:, None]) / remaining
    impossible = np.add.reduceat((m_i < -1e-12) | (m_i > 1 + 1e-12), starts, axis=0) > 0
    m_i = np.clip(m_i, 0.0, 1.0)
    diff = u[:, None] - m_i
    with np.errstate(divide="ignore"):
        up = np.minimum(bet[:, None], BET_CAP / np.maximum(m_i, 1e-300))
        down = np.minimum(bet[:, None], BET_CAP / np.maximum(1 - m_i, 1e-300))
    log_up = np.add.reduceat(np.log1p(up * diff), starts, axis=0)
    log_down = np.add.reduceat(np.log1p(-down * diff), starts, axis=0)
    return np.where(impossible, np.inf, log_up), np.where(impossible, np.inf, log_down)


def _log_capital(*args: np.ndarray) -> np.ndarray:
    """log ½(K⁺ + K⁻) per (cell with data, candidate) (the arguments of :func:`log_capitals`)."""
    log_up, log_down = log_capitals(*args)
    return np.logaddexp(log_up, log_down) - math.log(2)


def prepared_draws(
    values: np.ndarray,
    cell: np.ndarray,
    num_cells: int,
    population_count: np.ndarray,
    bound: float | np.ndarray,
    seed: int,
    keep: np.ndarray | None = None,
) -> tuple[np.ndarray, ...]:
    """The draws in a seeded order within each cell: per record its value rescaled to [0, 1], its position in its
    cell, the sum of its cell's values drawn before it, its cell, the cells' sample sizes and first records, and
    the running variance the record's bet uses. ``keep`` (a mask of the records) leaves out whole cells without
    changing the order of the others."""
    values = np.asarray(values, dtype=np.float64)
    cell = np.asarray(cell, dtype=np.int64)
    bound = np.broadcast_to(np.asarray(bound, dtype=np.float64), (num_cells,))
    order = _order(cell, seed)
    if keep is not None:
        order = order[np.asarray(keep, dtype=bool)[order]]
    cell, values = cell[order], values[order]
    counts = np.bincount(cell, minlength=num_cells)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    position = np.arange(len(cell)) - starts[cell]  # 0-based draw index within the cell
    scale = bound[cell]
    u = np.clip((values + scale) / (2 * scale), 0.0, 1.0)
    cumulative = np.cumsum(u)
    before = cumulative - u - (cumulative - u)[starts[cell]] if len(u) else u
    # the paper's running mean and variance: μ̂_t = (½ + Σ_{≤t} x)/(t + 1), σ̂²_t = (¼ + Σ_{≤t} (x − μ̂)²)/(t + 1)
    running_mean = (0.5 + before + u) / (position + 2)
    squares = (u - running_mean) ** 2
    cumulative_squares = np.cumsum(squares)
    squares_before = (
        cumulative_squares - squares - (cumulative_squares - squares)[starts[cell]] if len(u) else u
    )
    variance_before = (PRIOR_VARIANCE + squares_before) / (position + 1)
    return u, position, before, cell, counts, starts, variance_before


def plug_in_bets(sample_size: np.ndarray, variance_before: np.ndarray, alpha: float) -> np.ndarray:
    """The fixed-n plug-in bet of each draw: sqrt(2 log(2/α) / (n σ̂²_{i−1})), n its cell's (or stratum's) size;
    the caps c/m_i and c/(1 − m_i) are applied per candidate in :func:`log_capitals`."""
    return np.sqrt(2 * math.log(2 / alpha) / (np.asarray(sample_size, dtype=np.float64) * variance_before))


def _betting_intervals(
    values: np.ndarray,
    cell: np.ndarray,
    num_cells: int,
    population_count: np.ndarray,
    bound: float | np.ndarray,
    alpha: float,
    seed: int,
    keep: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cell: the sample mean and the betting 1 − α interval (the arguments of :func:`bounded_mean_intervals`;
    ``keep``: that of :func:`prepared_draws`)."""
    population_count = np.asarray(population_count, dtype=np.float64)
    bound_per_cell = np.broadcast_to(np.asarray(bound, dtype=np.float64), (num_cells,))
    u, position, before, cell, counts, starts, variance_before = prepared_draws(
        values, cell, num_cells, population_count, bound, seed, keep
    )
    mean = np.full(num_cells, np.nan)
    low, high = np.full(num_cells, np.nan), np.full(num_cells, np.nan)
    has = counts > 0
    if not has.any():
        return mean, low, high
    scaled_mean = np.bincount(cell, u, num_cells)[has] / counts[has]
    mean[has] = (2 * scaled_mean - 1) * bound_per_cell[has]
    bet = plug_in_bets(counts[cell], variance_before, alpha)
    threshold = math.log(1 / alpha)
    grid = np.linspace(0.0, 1.0, GRID + 1)
    kept_low = np.full(int(has.sum()), np.nan)
    kept_high = np.full(int(has.sum()), np.nan)
    data_starts = starts[has]
    population = population_count[cell]
    for start in range(0, len(grid), _CHUNK):
        chunk = grid[start : start + _CHUNK]
        candidates = np.broadcast_to(chunk, (len(data_starts), len(chunk)))
        log_k = _log_capital(u, position, before, population, bet, data_starts, candidates)
        accepted = log_k < threshold
        any_accepted = accepted.any(axis=1)
        first = chunk[np.argmax(accepted, axis=1)]
        last = chunk[len(chunk) - 1 - np.argmax(accepted[:, ::-1], axis=1)]
        kept_low = np.where(any_accepted & np.isnan(kept_low), first, kept_low)
        kept_high = np.where(any_accepted, last, kept_high)
    step = 1.0 / GRID
    # no grid point accepted: the accepted set lies between two grid points around the sample mean
    kept_low = np.where(np.isnan(kept_low), scaled_mean, kept_low)
    kept_high = np.where(np.isnan(kept_high), scaled_mean, kept_high)
    scaled_low = np.clip(np.minimum(kept_low, scaled_mean) - step, 0.0, 1.0)
    scaled_high = np.clip(np.maximum(kept_high, scaled_mean) + step, 0.0, 1.0)
    b = bound_per_cell[has]
    low[has], high[has] = (2 * scaled_low - 1) * b, (2 * scaled_high - 1) * b
    whole = has & (counts >= population_count)  # every value drawn: the mean is known
    low[whole], high[whole] = mean[whole], mean[whole]
    return mean, low, high


def _betting_p_values(
    values: np.ndarray,
    cell: np.ndarray,
    num_cells: int,
    population_count: np.ndarray,
    bound: float | np.ndarray,
    null: float,
    alpha: float,
    seed: int,
    keep: np.ndarray | None = None,
) -> np.ndarray:
    """Per cell, min(1, 1 / ½(K⁺ + K⁻)) at ``null`` (the arguments of :func:`bounded_mean_p_values`; ``keep``: that
    of :func:`prepared_draws`)."""
    population_count = np.asarray(population_count, dtype=np.float64)
    bound_per_cell = np.broadcast_to(np.asarray(bound, dtype=np.float64), (num_cells,))
    u, position, before, cell, counts, starts, variance_before = prepared_draws(
        values, cell, num_cells, population_count, bound, seed, keep
    )
    p = np.full(num_cells, np.nan)
    has = counts > 0
    if not has.any():
        return p
    bet = plug_in_bets(counts[cell], variance_before, alpha)
    candidates = ((null + bound_per_cell[has]) / (2 * bound_per_cell[has]))[:, None]
    log_k = _log_capital(u, position, before, population_count[cell], bet, starts[has], candidates)[:, 0]
    p[has] = np.minimum(1.0, np.exp(-np.maximum(log_k, 0.0)))
    return p


@dataclass(frozen=True)
class SampleMoments:
    """Per cell: its sample size n, sampling fraction f = n / N, mean, central moments m2 and m3 (divisor n), the
    moderated variance s̃² (see the module's docstring) and whether its values are not all equal."""

    count: np.ndarray
    fraction: np.ndarray
    mean: np.ndarray
    m2: np.ndarray
    m3: np.ndarray
    variance: np.ndarray
    spread: np.ndarray


def sample_moments(
    values: np.ndarray,
    cell: np.ndarray,
    num_cells: int,
    population_count: np.ndarray,
    pool: np.ndarray | None = None,
) -> SampleMoments:
    """The moments of every cell's sample; s² raised toward the pooled variance of the cells of its ``pool`` (one
    code per cell; default: all cells together) with weight ``PRIOR_DF``."""
    values = np.asarray(values, dtype=np.float64)
    cell = np.asarray(cell, dtype=np.int64)
    n = np.bincount(cell, minlength=num_cells).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(cell, values, num_cells) / n
        d = values - mean[cell]
        m2 = np.bincount(cell, d**2, num_cells) / n
        m3 = np.bincount(cell, d**3, num_cells) / n
        variance = n * m2 / (n - 1)  # s²
        several = n >= 2
        pool = np.zeros(num_cells, dtype=np.int64) if pool is None else np.asarray(pool, dtype=np.int64)
        sums = np.bincount(pool[several], (n * m2)[several], pool.max() + 1 if num_cells else 0)
        dfs = np.bincount(pool[several], (n - 1)[several], pool.max() + 1 if num_cells else 0)
        pooled = (sums / np.maximum(dfs, 1.0))[pool]
        moderated = np.maximum(variance, (PRIOR_DF * pooled + (n - 1) * variance) / (PRIOR_DF + n - 1))
        fraction = np.minimum(n / np.asarray(population_count, dtype=np.float64), 1.0)
    scale = float(np.max(np.abs(values))) if len(values) else 1.0
    spread = np.nan_to_num(m2) > (1e-12 * max(scale, 1e-300)) ** 2
    return SampleMoments(n, fraction, mean, m2, m3, moderated, spread)


def mean_skewness(a: np.ndarray, moments: SampleMoments) -> tuple[np.ndarray, np.ndarray]:
    """Per cell, the terms a³ κ₃ and a² v of the third and second cumulants of a·ȳ under sampling without
    replacement, κ₃ = m3 (1 − f)(1 − 2f) / n², v = m2 (1 − f) / n (summed over strata, their ratio
    κ₃ / v^{3/2} is the estimator's skewness, Cochran's rule asks it small)."""
    n, f = moments.count, moments.fraction
    with np.errstate(invalid="ignore", divide="ignore"):
        third = a**3 * moments.m3 * (1 - f) * (1 - 2 * f) / n**2
        second = a**2 * moments.m2 * (1 - f) / n
    return third, second


@dataclass(frozen=True)
class TCells:
    """Per cell: the sample size, mean, standard error (with the finite-population correction) and sampling
    fraction, and which interval it takes (see the module's docstring): ``use_t`` the t interval, ``use_score`` the
    score interval of a table of signs; the other cells take the betting interval."""

    count: np.ndarray
    mean: np.ndarray
    se: np.ndarray
    fraction: np.ndarray
    use_t: np.ndarray
    use_score: np.ndarray


def signs_only(values: np.ndarray, cell: np.ndarray, bound: np.ndarray) -> bool:
    """Whether every value is −b, 0 or b of its cell (a table of signs, such as η(x, a)'s)."""
    magnitude = np.abs(np.asarray(values, dtype=np.float64))
    return bool(len(magnitude)) and bool(np.all((magnitude == 0) | (magnitude == bound[cell])))


def t_cells(
    values: np.ndarray,
    cell: np.ndarray,
    num_cells: int,
    population_count: np.ndarray,
    bound: float | np.ndarray = 1.0,
) -> TCells:
    """The t statistics of every cell, Cochran's rule for which cells may use them, and which take the score
    interval instead (tables of signs)."""
    cell = np.asarray(cell, dtype=np.int64)
    moments = sample_moments(values, cell, num_cells, population_count)
    n = moments.count
    third, second = mean_skewness(np.ones(num_cells), moments)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt((1 - moments.fraction) * moments.variance / n)
        skewness = np.abs(third) / np.where(moments.spread, second, 1.0) ** 1.5
    enough = (n >= T_MIN_COUNT) & (moments.fraction < 1)
    if signs_only(values, cell, np.broadcast_to(np.asarray(bound, dtype=np.float64), (num_cells,))):
        use_t, use_score = np.zeros(num_cells, dtype=bool), enough
    else:
        use_t = enough & moments.spread & (np.where(moments.spread, skewness, np.inf) < MAX_MEAN_SKEWNESS)
        use_score = np.zeros(num_cells, dtype=bool)
    return TCells(n, moments.mean, se, moments.fraction, use_t, use_score)


def score_intervals(
    estimate: np.ndarray, low_end: np.ndarray, high_end: np.ndarray, factor: np.ndarray, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval for a mean of values in [``low_end``, ``high_end``]: the candidates θ with
    (estimate − θ)² ≤ z² · factor · (θ − low_end)(high_end − θ), in closed form. (θ − lo)(hi − θ) is the largest
    variance of values in [lo, hi] with mean θ (Bhatia–Davis), ``factor`` what turns it into the estimate's."""
    k = stats.norm.ppf(1 - alpha / 2) ** 2 * factor
    span, e = high_end - low_end, np.clip(estimate - low_end, 0.0, high_end - low_end)
    root = np.sqrt(k * (4 * e * (span - e) + k * span**2))
    return (
        low_end + (2 * e + k * span - root) / (2 * (1 + k)),
        low_end + (2 * e + k * span + root) / (2 * (1 + k)),
    )


def score_p_values(
    estimate: np.ndarray, low_end: np.ndarray, high_end: np.ndarray, factor: np.ndarray, null: float
) -> np.ndarray:
    """The two-sided score test of "the mean is ``null``" that :func:`score_intervals` inverts."""
    variance = factor * (null - low_end) * (high_end - null)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.abs(estimate - null) / np.sqrt(np.maximum(variance, 0.0))
    p = 2 * stats.norm.sf(z)
    return np.where(variance > 0, p, np.where(estimate == null, 1.0, 0.0))


def without_replacement(count: np.ndarray, fraction: np.ndarray) -> np.ndarray:
    """Var(ȳ) / σ² for n draws without replacement from N values: (N − n) / ((N − 1) n) = (1 − f) / (n − f)."""
    return (1 - fraction) / (count - fraction)


def _check(alpha: float, method: str) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")


def _betting_records(cell: np.ndarray, cells: TCells) -> np.ndarray:
    """The records of the cells that keep the betting interval."""
    return ~(cells.use_t | cells.use_score)[np.asarray(cell, dtype=np.int64)]


def bounded_mean_intervals(
    values: np.ndarray,
    cell: np.ndarray,
    num_cells: int,
    population_count: np.ndarray,
    bound: float | np.ndarray = 1.0,
    alpha: float = 0.05,
    seed: int = 0,
    method: str = "t",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cell: the sample mean and a 1 − α interval for the mean of its ``population_count`` values.

    ``values`` (one per sampled record) lie in [−bound, bound] of their ``cell`` (``bound`` a number or one per
    cell). Cells without a sampled value get NaN. ``alpha`` may be divided by the number of cells for intervals
    that hold simultaneously over all of them (Bonferroni). ``method="t"`` (the default): the t interval with the
    finite-population correction in the cells that Cochran's rule admits, Wilson's score interval in the cells of
    a table of signs with n ≥ ``T_MIN_COUNT``, the betting interval elsewhere;
    ``"betting"``: the betting interval everywhere (see the module's docstring).
    """
    _check(alpha, method)
    values = np.asarray(values, dtype=np.float64)
    cell = np.asarray(cell, dtype=np.int64)
    if method == "betting":
        return _betting_intervals(values, cell, num_cells, population_count, bound, alpha, seed)
    stats_ = t_cells(values, cell, num_cells, population_count, bound)
    keep = _betting_records(cell, stats_)
    mean, low, high = _betting_intervals(values, cell, num_cells, population_count, bound, alpha, seed, keep)
    bound = np.broadcast_to(np.asarray(bound, dtype=np.float64), (num_cells,))
    use = stats_.use_t
    half = stats.t.ppf(1 - alpha / 2, stats_.count[use] - 1) * stats_.se[use]
    low[use], high[use] = stats_.mean[use] - half, stats_.mean[use] + half
    score = stats_.use_score
    factor = without_replacement(stats_.count[score], stats_.fraction[score])
    low[score], high[score] = score_intervals(stats_.mean[score], -bound[score], bound[score], factor, alpha)
    either = use | score
    mean[either] = stats_.mean[either]
    low[either] = np.clip(low[either], -bound[either], bound[either])
    high[either] = np.clip(high[either], -bound[either], bound[either])
    return mean, low, high


def bounded_mean_p_values(
    values: np.ndarray,
    cell: np.ndarray,
    num_cells: int,
    population_count: np.ndarray,
    bound: float | np.ndarray = 1.0,
    null: float = 0.0,
    alpha: float = 0.05,
    seed: int = 0,
    method: str = "t",
) -> np.ndarray:
    """Per cell, a p-value for "the cell's population mean is ``null``", the inverse of
    :func:`bounded_mean_intervals` with the same ``method``: p < α exactly when ``null`` lies outside the
    interval at level 1 − α (for the betting cells: its exact, not grid, version; ``alpha`` tunes their bets).

    The t cells: the two-sided t test, 2 P(T_{n−1} > |ȳ − null| / se) (0 when ``null`` is outside the value range);
    the sign cells: the score test, 2 P(Z > |ȳ − null| / sqrt((b² − null²)(N − n) / ((N − 1) n)));
    the betting cells: min(1, 1 / ½(K⁺ + K⁻)), valid at any n by Markov's inequality.
    """
    _check(alpha, method)
    values = np.asarray(values, dtype=np.float64)
    cell = np.asarray(cell, dtype=np.int64)
    if method == "betting":
        return _betting_p_values(values, cell, num_cells, population_count, bound, null, alpha, seed)
    stats_ = t_cells(values, cell, num_cells, population_count, bound)
    keep = _betting_records(cell, stats_)
    p = _betting_p_values(values, cell, num_cells, population_count, bound, null, alpha, seed, keep)
    bound = np.broadcast_to(np.asarray(bound, dtype=np.float64), (num_cells,))
    use = stats_.use_t
    z = np.abs(stats_.mean[use] - null) / stats_.se[use]
    p[use] = np.where(np.abs(null) > bound[use], 0.0, 2 * stats.t.sf(z, stats_.count[use] - 1))
    score = stats_.use_score
    factor = without_replacement(stats_.count[score], stats_.fraction[score])
    p[score] = score_p_values(stats_.mean[score], -bound[score], bound[score], factor, null)
    return p
