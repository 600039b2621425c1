"""Quick runs on part of a dataset, keeping every kept group complete so that the bias math still applies.

A *group* is an unordered subject pair x template x attribute (x attribute type, when the rows have one): its
four rows (both subject orders x both polarities) are kept or dropped together, because every UnQover measure
needs all four. Groups are spread over *strata*, the (template, attribute) cells, so a small run still sees
every template and attribute instead of the first few in file order.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from unqover.errors import UnqoverError

GROUP_COLUMNS = ("subject_1", "subject_2", "template_id", "attribute")
_MAX_KEY = 1 << 62


def _codes(*columns: pa.ChunkedArray) -> tuple[list[np.ndarray], int]:
    """Integer codes for the values of one or more columns over a shared vocabulary (hash-based, no sort)."""
    vocabulary = pc.unique(pa.chunked_array([chunk for column in columns for chunk in column.chunks]))
    codes = [
        pc.index_in(column, value_set=vocabulary).to_numpy(zero_copy_only=False).astype(np.int64)
        for column in columns
    ]
    return codes, len(vocabulary)


def _combine(parts: list[tuple[np.ndarray, int]]) -> np.ndarray:
    """One int64 key per row for a tuple of codes (mixed radix; renumbered first if it could overflow)."""
    key, size = np.zeros(len(parts[0][0]), dtype=np.int64), 1
    for codes, radix in parts:
        if size * radix >= _MAX_KEY:
            distinct, key = np.unique(key, return_inverse=True)
            size = len(distinct)
        key = key * radix + codes
        size *= radix
    return key


def _first_appearance(key: np.ndarray) -> np.ndarray:
    """Dense codes numbered in order of first appearance."""
    array = pa.array(key)
    return pc.index_in(array, value_set=pc.unique(array)).to_numpy().astype(np.int64)


def _rank_within(stratum: np.ndarray, tiebreak: np.ndarray) -> np.ndarray:
    """Rank of each item inside its stratum, ordered by ``tiebreak``."""
    order = np.lexsort((tiebreak, stratum))
    starts = np.searchsorted(stratum[order], stratum[order], side="left")
    rank = np.empty(len(stratum), dtype=np.int64)
    rank[order] = np.arange(len(stratum)) - starts
    return rank


def group_codes(rows: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """Each row's group and each group's (template, attribute) stratum, numbered in order of first appearance."""
    missing = [name for name in GROUP_COLUMNS if name not in rows.column_names]
    if missing:
        raise UnqoverError(f"rows lack the columns {missing} that define UnQover groups")
    (s1, s2), num_subjects = _codes(rows["subject_1"], rows["subject_2"])
    (template,), num_templates = _codes(rows["template_id"])
    (attribute,), num_attributes = _codes(rows["attribute"])
    attribute_parts = [(attribute, num_attributes)]
    if "attribute_type" in rows.column_names:
        (attribute_type,), num_types = _codes(rows["attribute_type"])
        attribute_parts.append((attribute_type, num_types))
    group = _combine(
        [
            (np.minimum(s1, s2), num_subjects),
            (np.maximum(s1, s2), num_subjects),
            (template, num_templates),
            *attribute_parts,
        ]
    )
    group = _first_appearance(group)
    first_row = np.empty(int(group.max()) + 1, dtype=np.int64)
    first_row[group[::-1]] = np.arange(len(group) - 1, -1, -1)
    # Groups are numbered in row order, so are their first rows: strata numbered per group keep row order.
    stratum = _combine([(template[first_row], num_templates), (attribute[first_row], num_attributes)])
    return group, _first_appearance(stratum)


def select_groups(
    rows: pa.Table, *, limit: int | None = None, sample: float | None = None, seed: int = 0
) -> pa.Table:
    """Keep whole groups for a quick run; rows keep their order.

    ``limit=N`` keeps N groups, round-robin over the (template, attribute) strata: the first group (in row
    order) of every stratum, then the second of every stratum, and so on, so any N >= the number of strata
    covers them all. ``sample=f`` keeps a seeded random fraction ``f`` of the groups of each stratum (rounded,
    at least one). With neither, every row is kept.
    """
    if limit is not None and sample is not None:
        raise UnqoverError(
            "pass either limit (a number of groups) or sample (a fraction of groups), not both"
        )
    if limit is not None and (
        isinstance(limit, bool) or not isinstance(limit, int | np.integer) or limit < 1
    ):
        raise UnqoverError(f"limit must be a whole number of groups >= 1, got {limit!r}")
    if sample is not None and (
        isinstance(sample, bool) or not isinstance(sample, int | float | np.number) or not 0 < sample <= 1
    ):
        raise UnqoverError(f"sample must be a fraction of groups in (0, 1], got {sample!r}")
    if limit is None and sample is None:
        return rows
    if rows.num_rows == 0:
        return rows
    group, group_stratum = group_codes(rows)
    num_groups = len(group_stratum)
    if limit is not None:
        rank = _rank_within(group_stratum, np.arange(num_groups))
        keep = np.zeros(num_groups, dtype=bool)
        keep[np.lexsort((group_stratum, rank))[: int(limit)]] = True
    else:
        draw = np.random.default_rng(seed).random(num_groups)
        rank = _rank_within(group_stratum, draw)
        sizes = np.bincount(group_stratum)
        quota = np.maximum(1, np.floor(sizes * float(sample) + 0.5)).astype(np.int64)
        keep = rank < quota[group_stratum]
    if keep.all():
        return rows
    return rows.filter(pa.array(keep[group]))


def describe_selection(rows: pa.Table) -> dict[str, int]:
    """Counts for a log line: rows, groups and strata."""
    if rows.num_rows == 0:
        return {"rows": 0, "groups": 0, "strata": 0}
    _, stratum = group_codes(rows)
    return {"rows": rows.num_rows, "groups": len(stratum), "strata": int(stratum.max()) + 1}
