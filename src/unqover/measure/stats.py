"""Small shared statistics: Pearson's chi-square of independence, Cramér's V, Holm and Benjamini–Hochberg.

Pure functions on arrays. The chi-square drops empty rows and columns first, so structurally empty cells (an
emotion no question of a group chose) lower the degrees of freedom instead of dividing by zero.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2

from unqover.errors import UnqoverError

ADJUSTMENTS = ("holm", "bh")
#: the level of every test and note in the measures
ALPHA = 0.05
#: the two values of a gender column the measures compare (NLI hypotheses, EEC persons)
GENDER_VALUES = ("female", "male")


@dataclass(frozen=True)
class ChiSquare:
    """Pearson's chi-square of independence of one contingency table, after dropping empty rows and columns."""

    statistic: float
    df: int
    p_value: float
    n: float
    rows_kept: int
    columns_kept: int


def pearson_statistics(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Σ (O − E)²/E with E = row·column/N for a stack of tables (..., R, C), and each table's df.

    Empty rows and columns of each table contribute nothing and are not counted in its df = (r − 1)(c − 1).
    """
    tables = np.asarray(tables, dtype=np.float64)
    rows, columns = tables.sum(axis=-1), tables.sum(axis=-2)
    total = rows.sum(axis=-1)
    expected = rows[..., :, None] * columns[..., None, :]
    safe_total = np.where(total > 0, total, 1.0)[..., None, None]
    expected = expected / safe_total
    with np.errstate(invalid="ignore", divide="ignore"):
        cells = np.where(expected > 0, (tables - expected) ** 2 / np.where(expected > 0, expected, 1.0), 0.0)
    r = (rows > 0).sum(axis=-1)
    c = (columns > 0).sum(axis=-1)
    df = np.maximum(r - 1, 0) * np.maximum(c - 1, 0)
    return cells.sum(axis=(-2, -1)), df


def chi_square_independence(table) -> ChiSquare:
    """Pearson's chi-square test of independence, df after dropping empty rows/columns; p = 1 when df = 0."""
    table = np.asarray(table, dtype=np.float64)
    if table.ndim != 2:
        raise UnqoverError(f"a contingency table must be two-dimensional, got shape {table.shape}")
    if (table < 0).any():
        raise UnqoverError("a contingency table must not have negative cells")
    statistic, df = pearson_statistics(table)
    df = int(df)
    p = float(chi2.sf(statistic, df)) if df > 0 else 1.0
    return ChiSquare(
        statistic=float(statistic),
        df=df,
        p_value=p,
        n=float(table.sum()),
        rows_kept=int((table.sum(axis=1) > 0).sum()),
        columns_kept=int((table.sum(axis=0) > 0).sum()),
    )


def cramers_v(tables) -> np.ndarray | float:
    """Cramér's V = sqrt(χ² / (N · (min(r, c) − 1))) of one table (R, C) or a stack (..., R, C).

    r and c count non-empty rows and columns; V is 0 when min(r, c) = 1 (the distributions cannot differ) and NaN
    for an empty table.
    """
    tables = np.asarray(tables, dtype=np.float64)
    statistic, _ = pearson_statistics(tables)
    r = (tables.sum(axis=-1) > 0).sum(axis=-1)
    c = (tables.sum(axis=-2) > 0).sum(axis=-1)
    k = np.minimum(r, c) - 1
    n = tables.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        v = np.where(k > 0, np.sqrt(statistic / np.where(k > 0, n * k, 1.0)), np.where(n > 0, 0.0, np.nan))
    return float(v) if v.ndim == 0 else v


def _adjusted_in_order(p_values, adjust: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``adjust`` applied to the p-values that are not NaN, sorted ascending (stable); NaN entries stay NaN."""
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    present = np.flatnonzero(~np.isnan(p))
    if len(present) == 0:
        return out
    order = present[np.argsort(p[present], kind="stable")]
    out[order] = adjust(p[order])
    return out


def _holm_steps(ordered: np.ndarray) -> np.ndarray:
    m = len(ordered)
    return np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * ordered))


def _benjamini_hochberg_steps(ordered: np.ndarray) -> np.ndarray:
    m = len(ordered)
    steps = m / np.arange(1, m + 1) * ordered
    return np.minimum(1.0, np.minimum.accumulate(steps[::-1])[::-1])


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error); NaN entries stay NaN and are not counted."""
    return _adjusted_in_order(p_values, _holm_steps)


def benjamini_hochberg(p_values) -> np.ndarray:
    """Benjamini–Hochberg step-up adjusted p-values (false discovery rate); NaN entries stay NaN."""
    return _adjusted_in_order(p_values, _benjamini_hochberg_steps)


def adjust_p_values(p_values, method: str = "holm") -> np.ndarray:
    """Adjust a family of p-values: ``"holm"`` (family-wise error) or ``"bh"`` (false discovery rate)."""
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise UnqoverError(f"p_values must be one-dimensional, got shape {p.shape}")
    if ((p < 0) | (p > 1)).any():
        raise UnqoverError("p_values must lie in [0, 1]")
    if method == "holm":
        return holm(p)
    if method == "bh":
        return benjamini_hochberg(p)
    raise UnqoverError(f"unknown adjustment {method!r}; use one of {list(ADJUSTMENTS)}")
