"""Seeded crossed bootstrap over subjects and templates.

The UnQover numbers generalize over two samples: the subjects (names or groups standing for a population) and
the templates (phrasings standing for all phrasings). Attributes are the fixed questions of interest. Each
replicate draws multiplicity weights for subjects and, independently, for templates; a C value of subject x
against partner y in template τ gets weight w_y·w_τ in γ(x, a), and subject x gets weight w_x wherever the
statistic averages over subjects. Intervals are percentile intervals of the replicates.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, fields, replace

import numpy as np

from unqover.measure.cells import Estimates, SubjectValues, Sums

DENSE_LIMIT = 60_000_000  # cells of the (statistic, subject, attribute) x (partner, template) matrix


@dataclass(frozen=True)
class BootstrapSpec:
    n_resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0
    batch: int = 50


def multinomial_weights(rng: np.random.Generator, n: int, replicates: int) -> np.ndarray:
    """Bootstrap multiplicity weights: how often each of ``n`` units is drawn, per replicate (replicates, n)."""
    return rng.multinomial(n, np.full(n, 1.0 / n), size=replicates).astype(np.float64)


def crossed_bootstrap(
    values: SubjectValues,
    n_subjects: int,
    n_attributes: int,
    n_templates: int,
    statistic: Callable[[Sums, np.ndarray], Estimates],
    spec: BootstrapSpec,
) -> tuple[Estimates, Estimates, Estimates, np.ndarray]:
    """Lower and upper percentile bounds and the replicate mean of every field of ``statistic``, and the replicates
    of γ(x, a) (for :func:`simultaneous_band`)."""
    rng = np.random.default_rng(spec.seed)
    subject_w = multinomial_weights(rng, n_subjects, spec.n_resamples)
    template_w = multinomial_weights(rng, n_templates, spec.n_resamples)
    S, A, T = n_subjects, n_attributes, n_templates
    kinds = (values.value, np.sign(values.value), np.ones_like(values.value))
    dense = 3 * S * A * S * T <= DENSE_LIMIT
    if dense:
        row = values.subject * A + values.attribute
        col = values.partner * T + values.template
        matrix = np.stack([np.bincount(row * (S * T) + col, k, S * A * S * T) for k in kinds]).reshape(
            3 * S * A, S * T
        )

    replicates: list[Estimates] = []
    for start in range(0, spec.n_resamples, spec.batch):
        ws, wt = subject_w[start : start + spec.batch], template_w[start : start + spec.batch]
        b = len(ws)
        if dense:
            weights = (ws[:, :, None] * wt[:, None, :]).reshape(b, S * T)
            sums = (matrix @ weights.T).reshape(3, S, A, b).transpose(0, 3, 1, 2)
        else:
            sums = np.empty((3, b, S, A))
            key = values.subject * A + values.attribute
            for r in range(b):
                w = ws[r, values.partner] * wt[r, values.template]
                for i, k in enumerate(kinds):
                    sums[i, r] = np.bincount(key, w * k, S * A).reshape(S, A)
        replicates.append(statistic(Sums(total=sums[0], signs=sums[1], count=sums[2]), ws))

    alpha = (1 - spec.confidence) / 2
    stacked = {
        f.name: np.concatenate([getattr(r, f.name) for r in replicates]) for f in fields(replicates[0])
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN slice: the interval is undefined (NaN)
        low = {name: np.nanquantile(v, alpha, axis=0) for name, v in stacked.items()}
        high = {name: np.nanquantile(v, 1 - alpha, axis=0) for name, v in stacked.items()}
        mean = {name: np.nanmean(v, axis=0) for name, v in stacked.items()}
    return (
        replace(replicates[0], **low),
        replace(replicates[0], **high),
        replace(replicates[0], **mean),
        stacked["gamma"],
    )


def simultaneous_band(
    replicates: np.ndarray, point: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """Intervals point ± q·sd that hold for every cell at once (the bootstrap sup-t band).

    ``replicates`` (R, ...cells) and ``point`` (...cells); sd is each cell's replicate standard deviation and q the
    ``confidence`` quantile over replicates of max over cells of |replicate − point| / sd. Cells with no spread
    (sd 0) or no replicate value get NaN bounds: no interval, so nothing is listed on their account.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        sd = np.nanstd(replicates, axis=0)
        usable = np.isfinite(point) & (sd > 0)
        standardized = np.abs(replicates - point) / np.where(usable, sd, np.nan)
        worst = np.nanmax(standardized.reshape(len(replicates), -1), axis=1)
    worst = worst[np.isfinite(worst)]
    if not len(worst):
        nan = np.full(point.shape, np.nan)
        return nan, nan.copy()
    q = float(np.quantile(worst, confidence))
    low = np.where(usable, point - q * sd, np.nan)
    high = np.where(usable, point + q * sd, np.nan)
    return low, high


def crossed_group_means(
    per_group: np.ndarray,
    x1: np.ndarray,
    x2: np.ndarray,
    template: np.ndarray,
    n_subjects: int,
    n_templates: int,
    spec: BootstrapSpec,
) -> list[float]:
    """Percentile interval of a mean over groups (δ, ε) under the crossed bootstrap: group (x1, x2, τ) gets
    weight w_x1·w_x2·w_τ. Groups are summed per (x1, x2, τ) cell first, so the cost does not grow with attributes."""
    rng = np.random.default_rng([spec.seed, 1])
    subject_w = multinomial_weights(rng, n_subjects, spec.n_resamples)
    template_w = multinomial_weights(rng, n_templates, spec.n_resamples)
    cell = (x1 * n_subjects + x2) * n_templates + template
    cells, inverse = np.unique(cell, return_inverse=True)
    total = np.bincount(inverse, per_group, len(cells))
    count = np.bincount(inverse, None, len(cells))
    c_x1 = cells // (n_subjects * n_templates)
    c_x2 = (cells // n_templates) % n_subjects
    c_t = cells % n_templates
    replicates = []
    for start in range(0, spec.n_resamples, spec.batch):
        ws, wt = subject_w[start : start + spec.batch], template_w[start : start + spec.batch]
        w = ws[:, c_x1] * ws[:, c_x2] * wt[:, c_t]
        with np.errstate(invalid="ignore", divide="ignore"):
            replicates.append((w @ total) / (w @ count))
    values = np.concatenate(replicates)
    values = values[~np.isnan(values)]
    if len(values) == 0:
        return [float("nan"), float("nan")]
    alpha = (1 - spec.confidence) / 2
    return [float(np.quantile(values, alpha)), float(np.quantile(values, 1 - alpha))]
