"""Quick runs on part of a dataset: a seeded random sample of whole groups whose numbers estimate the full set.

A *group* is an unordered subject pair x template x attribute (x attribute type, when the rows have one): its
four rows (both subject orders x both polarities) are kept or dropped together, because every UnQover measure
needs all four.

The design (``DESIGN``): stratified by (template, attribute) cell with proportional allocation, drawn with
permanent random numbers.

* Every group gets a random number u_g from a seeded hash of its identity (its two subjects, template, attribute
  and attribute type), so the draw depends on the seed and the dataset's content, never on row order or machine.
* Inside its stratum h (N_h groups) a group of rank k by u_g gets the priority (k + v_h) / N_h, where v_h is the
  stratum's own seeded random offset in [0, 1). A sample of n groups keeps the n smallest priorities.

So stratum h keeps floor(t N_h) or ceil(t N_h) groups for the common threshold t ≈ n / M (proportional
allocation: every template and attribute is represented as soon as n reaches the number of strata), each group's
inclusion probability is n / M, and a larger budget keeps a superset of a smaller one with the same seed (rounds
of a precision target only add groups). Estimators are therefore plain sample means, and the variance estimators of
simple random sampling are valid (and conservative for this stratified draw): see ``unqover.measure.sampled``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from unqover.errors import UnqoverError

GROUP_COLUMNS = ("subject_1", "subject_2", "template_id", "attribute")
DESIGN = (
    "stratified-prn-v1"  # (template, attribute) strata, proportional allocation, permanent random numbers
)
_MAX_KEY = 1 << 62
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _codes(*columns: pa.ChunkedArray) -> tuple[list[np.ndarray], int]:
    """Integer codes for the values of one or more columns over a shared vocabulary (hash-based, no sort)."""
    vocabulary = pc.unique(pa.chunked_array([chunk for column in columns for chunk in column.chunks]))
    codes = [
        pc.index_in(column, value_set=vocabulary).to_numpy(zero_copy_only=False).astype(np.int64)
        for column in columns
    ]
    return codes, len(vocabulary)


def _rank_within(stratum: np.ndarray, tiebreak: np.ndarray) -> np.ndarray:
    """Rank of each item inside its stratum, ordered by ``tiebreak``."""
    order = np.lexsort((tiebreak, stratum))
    starts = np.searchsorted(stratum[order], stratum[order], side="left")
    rank = np.empty(len(stratum), dtype=np.int64)
    rank[order] = np.arange(len(stratum)) - starts
    return rank


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on uint64 arrays: a bijective, well-mixed hash (wraps modulo 2**64)."""
    x = np.asarray(x, dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _text_hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


def _hashed_codes(*columns: pa.ChunkedArray) -> tuple[list[np.ndarray], list[np.ndarray], int]:
    """Codes over a shared vocabulary and a content hash of each row's value (the same on every machine)."""
    codes, size = _codes(*columns)
    vocabulary = pc.unique(pa.chunked_array([chunk for column in columns for chunk in column.chunks]))
    hashes = np.array([_text_hash(str(value)) for value in vocabulary.to_pylist()], dtype=np.uint64)
    return codes, [hashes[c] for c in codes], size


def seeded_keys(seed: int, tag: str, *columns: list) -> np.ndarray:
    """A uniform number in [0, 1) per position from a hash of (tag, seed, the columns' values there).

    The same values and seed give the same number on every machine, whatever the row order (blake2b, not
    Python's salted ``hash``); ``tag`` keeps different draws of one seed independent.
    """
    return np.array(
        [
            int.from_bytes(
                hashlib.blake2b(
                    "\x1f".join((tag, str(seed), *map(str, values))).encode(), digest_size=8
                ).digest(),
                "big",
            )
            / 2.0**64
            for values in zip(*columns, strict=True)
        ]
    )


def _uniform(hashes: np.ndarray) -> np.ndarray:
    """Uniform numbers in [0, 1) from 64-bit hashes (their top 53 bits)."""
    return (hashes >> np.uint64(11)).astype(np.float64) * 2.0**-53


def _seed_hash(seed: int) -> np.uint64:
    return _mix(np.array([seed], dtype=np.uint64) ^ _GOLDEN)[0]


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


@dataclass(frozen=True)
class Groups:
    """The groups of a table of rows: each row's group, and per group its stratum and content hash."""

    row_group: np.ndarray  # (rows,) group index
    stratum: np.ndarray  # (groups,) stratum index
    identity: np.ndarray  # (groups,) uint64 hash of (subject pair, template, attribute[, type])
    stratum_identity: np.ndarray  # (strata,) uint64 hash of (template, attribute[, type])

    @property
    def num_groups(self) -> int:
        return len(self.stratum)


def find_groups(rows: pa.Table) -> Groups:
    """Group and stratum of every row, with content hashes that do not depend on row order."""
    missing = [name for name in GROUP_COLUMNS if name not in rows.column_names]
    if missing:
        raise UnqoverError(f"rows lack the columns {missing} that define UnQover groups")
    (s1, s2), (h1, h2), num_subjects = _hashed_codes(rows["subject_1"], rows["subject_2"])
    (template,), (h_template,), num_templates = _hashed_codes(rows["template_id"])
    (attribute,), (h_attribute,), num_attributes = _hashed_codes(rows["attribute"])
    cell_parts = [(template, num_templates), (attribute, num_attributes)]
    cell_hash = _mix(_mix(h_template) ^ h_attribute)
    if "attribute_type" in rows.column_names:
        (attribute_type,), (h_type,), num_types = _hashed_codes(rows["attribute_type"])
        cell_parts.append((attribute_type, num_types))
        cell_hash = _mix(cell_hash ^ h_type)
    pair = [(np.minimum(s1, s2), num_subjects), (np.maximum(s1, s2), num_subjects)]
    distinct, row_group = np.unique(_combine(pair + cell_parts), return_inverse=True)
    first_row = np.empty(len(distinct), dtype=np.int64)
    first_row[row_group[::-1]] = np.arange(len(row_group) - 1, -1, -1)
    low, high = np.minimum(h1, h2)[first_row], np.maximum(h1, h2)[first_row]
    identity = _mix(_mix(_mix(low) ^ high) ^ cell_hash[first_row])
    cells, stratum = np.unique(_combine(cell_parts)[first_row], return_inverse=True)
    stratum_first = np.empty(len(cells), dtype=np.int64)
    stratum_first[stratum] = first_row
    return Groups(row_group.reshape(-1), stratum.reshape(-1), identity, cell_hash[stratum_first])


def check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= seed < 2**63:
        raise UnqoverError(f"seed must be a whole number >= 0, got {seed!r}")
    return int(seed)


def priorities(groups: Groups, seed: int) -> np.ndarray:
    """Each group's priority under the design: the n smallest form the sample of n groups."""
    seed_hash = _seed_hash(check_seed(seed))
    draw = _uniform(_mix(groups.identity ^ seed_hash))
    offset = _uniform(_mix(groups.stratum_identity ^ _mix(seed_hash)))
    order = np.lexsort((groups.identity, draw))
    position = np.empty(len(order), dtype=np.int64)
    position[order] = np.arange(len(order))
    rank = _rank_within(groups.stratum, position)
    sizes = np.bincount(groups.stratum)
    return (rank + offset[groups.stratum]) / sizes[groups.stratum]


def cell_hashes(
    templates: list[int | str], attributes: list[str], types: list[str] | None = None
) -> np.ndarray:
    """Each cell's stratum identity, as :func:`find_groups` hashes it: one cell per position of the parallel
    lists (template ids are hashed as ``str(value)``, e.g. ``"0"``; ``types=None`` for rows without a type)."""

    cell_hash = _mix(_mix(text_hashes(templates)) ^ text_hashes(attributes))
    return cell_hash if types is None else _mix(cell_hash ^ text_hashes(types))


def text_hashes(values: list) -> np.ndarray:
    """The content hash :func:`find_groups` gives each value (a subject's text, a template id as ``str(value)``)."""
    return np.array([_text_hash(str(value)) for value in values], dtype=np.uint64)


def _first_candidates(n: int, size: int, cells: int) -> int:
    """Candidates per cell to try first: ceil((n + H) N_h / M) + 2, above any cell's share of n."""
    return min(size, -(-(n + cells) // cells) + 2)


def select_crossed_groups(
    subject_hash: np.ndarray, pairs: np.ndarray, cell_hash: np.ndarray, n: int, seed: int
) -> np.ndarray:
    """The ``n`` groups :func:`selected_groups` keeps when the groups are every pair x every cell, without rows.

    ``subject_hash``: :func:`text_hashes` of the subjects; ``pairs`` (P, 2): subject indices of each unordered pair,
    once; ``cell_hash`` (H,): from :func:`cell_hashes`. Returns (pair index, cell index) of the kept groups,
    shape (min(n, P H), 2), sorted by (cell, pair). Memory grows with P, not P H (a generated probe can have
    millions of groups): every stratum is one cell of P groups, and only its few smallest draws can be kept, so
    each cell gives its k best candidates, and k doubles until no cell had all of its candidates kept.
    """
    seed_hash = _seed_hash(check_seed(seed))
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
        raise UnqoverError(f"n must be a whole number of groups >= 0, got {n!r}")
    subject_hash = np.asarray(subject_hash, dtype=np.uint64)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    cell_hash = np.asarray(cell_hash, dtype=np.uint64)
    size, cells = len(pairs), len(cell_hash)  # N_h = size for every stratum
    if n >= size * cells:  # everything (callers keep n small: this is P H rows)
        return np.stack(np.divmod(np.arange(size * cells, dtype=np.int64), size)[::-1], axis=1)
    first, second = subject_hash[pairs[:, 0]], subject_hash[pairs[:, 1]]
    pair_hash = _mix(_mix(np.minimum(first, second)) ^ np.maximum(first, second))
    offset = _uniform(_mix(cell_hash ^ _mix(seed_hash)))
    k = _first_candidates(n, size, cells)
    while True:
        found = []  # per cell: (pair, cell, identity, priority) of its k smallest (draw, identity)
        for h in range(cells):
            identity = _mix(pair_hash ^ cell_hash[h])
            draw = _uniform(_mix(identity ^ seed_hash))
            bound = draw[np.argpartition(draw, k - 1)[k - 1]]
            near = np.flatnonzero(draw <= bound)  # ties on the bound included, then cut exactly
            best = near[np.lexsort((identity[near], draw[near]))[:k]]
            found.append((best, np.full(k, h), identity[best], (np.arange(k) + offset[h]) / size))
        pair, cell, identity, priority = (np.concatenate(part) for part in zip(*found, strict=True))
        kept = np.lexsort((identity, priority))[:n]
        if k == size or np.bincount(cell[kept], minlength=cells).max(initial=0) < k:
            break  # no cell may have more groups below the threshold than its candidates
        k = min(size, 2 * k)
    kept = kept[np.lexsort((pair[kept], cell[kept]))]
    return np.stack([pair[kept], cell[kept]], axis=1).astype(np.int64)


def budget(num_groups: int, limit: int | None = None, sample: float | None = None) -> int:
    """The number of groups a quick run keeps: ``limit`` groups, or a fraction ``sample`` of them (at least 1)."""
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
    if limit is not None:
        return min(int(limit), num_groups)
    if sample is not None:
        return min(num_groups, max(1, int(np.floor(num_groups * float(sample) + 0.5))))
    return num_groups


def selected_groups(groups: Groups, n: int, seed: int) -> np.ndarray:
    """Boolean mask over groups: the ``n`` groups the design keeps with this seed."""
    keep = np.zeros(groups.num_groups, dtype=bool)
    if n >= groups.num_groups:
        keep[:] = True
        return keep
    order = np.lexsort((groups.identity, priorities(groups, seed)))
    keep[order[:n]] = True
    return keep


def select_groups(
    rows: pa.Table, *, limit: int | None = None, sample: float | None = None, seed: int = 0
) -> pa.Table:
    """Keep whole groups for a quick run (the design above); rows keep their order.

    ``limit=N`` keeps N groups, ``sample=f`` the fraction f of them (rounded, at least one). With neither, every
    row is kept. The same rows, limit/sample and seed keep the same groups on any machine.
    """
    check_seed(seed)
    if limit is None and sample is None:
        return rows
    if rows.num_rows == 0:
        budget(0, limit, sample)
        return rows
    groups = find_groups(rows)
    keep = selected_groups(groups, budget(groups.num_groups, limit, sample), seed)
    if keep.all():
        return rows
    return rows.filter(pa.array(keep[groups.row_group]))


@dataclass(frozen=True)
class DesignCheck:
    """Does a set of kept groups look like this design's draw? ``matches``: every stratum holds floor or ceil of
    its proportional share (the design's property, whatever the seed). The stratum furthest from its share:
    ``stratum`` (its index), ``kept`` of its ``size`` groups, ``expected`` (its proportional share, about that
    many kept); :func:`unqover.report.diagnostics.design_warning` words them."""

    groups: int
    of: int
    matches: bool
    stratum: int
    kept: int
    size: int
    expected: float


def check_design(groups: Groups, kept: np.ndarray) -> DesignCheck:
    """Compare the kept groups' strata with proportional allocation (what any seed of the design gives)."""
    n, total = int(kept.sum()), groups.num_groups
    sizes = np.bincount(groups.stratum).astype(float)
    have = np.bincount(groups.stratum[kept], minlength=len(sizes))
    share = sizes * n / total
    # the design's threshold t is the n-th smallest priority, within one stratum's step of n / M
    slack = 1.0 + sizes / max(total, 1) * len(sizes)
    gap = np.abs(have - share) - slack
    if not len(gap):  # no groups: nothing to compare
        return DesignCheck(n, total, True, 0, 0, 0, 0.0)
    worst = int(np.argmax(gap))
    matches = bool((gap <= 1e-9).all())
    return DesignCheck(n, total, matches, worst, int(have[worst]), int(sizes[worst]), float(share[worst]))


def describe_selection(rows: pa.Table) -> dict[str, int]:
    """Counts for a log line: rows, groups and strata."""
    if rows.num_rows == 0:
        return {"rows": 0, "groups": 0, "strata": 0}
    groups = find_groups(rows)
    return {"rows": rows.num_rows, "groups": groups.num_groups, "strata": int(groups.stratum.max()) + 1}
