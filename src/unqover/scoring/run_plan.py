"""The work plan of a probe run: what the runner asks of a scorer, and the chunks and shards of the rows.

The plan is a pure function of the rows, the scorer's keys and ``chunk_rows`` (never of what is on disk), so a
resumed or sharded run (:mod:`unqover.scoring.runner`) scores exactly the inputs, in exactly the batches, of an
uninterrupted one: :func:`plan_chunks` deduplicates the rows by ``scorer.input_key``, sorts the inputs longest
first and cuts them into chunks; shard ``i`` of ``n`` takes chunks i, i+n, ... Scores a scorer returns are
checked against its bounds (:func:`score_bounds`) before anything is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from unqover.errors import UnqoverError
from unqover.generate.ids import count_distinct, parse_hex_ids

#: Allowed range of each score column unless a scorer says otherwise (``score_bounds``): probabilities.
UNIT_BOUNDS = ((0.0, 1.0), (0.0, 1.0))


@runtime_checkable
class Scorer(Protocol):
    """What the runner needs from a model adapter."""

    def score(self, rows: pa.Table) -> np.ndarray:
        """Scores of subject_1 and subject_2 for each row: shape (len(rows), 2), float64 in [0, 1]."""
        ...

    def length_key(self, rows: pa.Table) -> np.ndarray:
        """Per-row integer sort key for length bucketing (e.g. characters of context + question)."""
        ...

    def input_key(self, rows: pa.Table) -> pa.Array:
        """Per-row string naming the model input; rows with equal keys must get identical scores."""
        ...

    # Optional: ``group_key(rows) -> pa.Array`` of strings; among rows of equal ``length_key``, rows with equal
    # group keys are kept consecutive in the plan (see ``plan_chunks``).


def score_bounds(scorer: Scorer) -> tuple[tuple[float, float], tuple[float, float]]:
    """The (low, high) range of each of a scorer's two columns: ``scorer.score_bounds`` or [0, 1] for both."""
    return getattr(scorer, "score_bounds", UNIT_BOUNDS)


def _check_shard(shard: tuple[int, int]) -> tuple[int, int]:
    try:
        index, count = (int(x) for x in shard)
    except (TypeError, ValueError):
        raise UnqoverError(f"shard must be a pair (i, n), got {shard!r}") from None
    if count < 1 or not 0 <= index < count:
        raise UnqoverError(f"shard ({index}, {count}) is out of range: need 0 <= i < n")
    return index, count


@dataclass(frozen=True)
class ChunkPlan:
    """The deterministic work plan of a run: which inputs are scored, in which order and chunk."""

    chunk_rows: int
    representative: np.ndarray  # (inputs,) row scored for each input, in plan order
    input_of_row: np.ndarray  # (rows,) plan position of each row's input
    row_order: np.ndarray  # (rows,) rows sorted by their input's plan position (stable)
    row_bounds: np.ndarray  # (chunks + 1,) slice of ``row_order`` holding each chunk's rows

    @property
    def num_rows(self) -> int:
        return len(self.input_of_row)

    @property
    def num_inputs(self) -> int:
        return len(self.representative)

    @property
    def num_chunks(self) -> int:
        return len(self.row_bounds) - 1

    def chunks(self, shard: tuple[int, int]) -> range:
        """Chunk numbers of shard ``i`` of ``n``: i, i+n, i+2n, ..."""
        index, count = shard
        return range(index, self.num_chunks, count)

    def inputs(self, chunk: int) -> np.ndarray:
        """The rows scored for a chunk's inputs, in batch order."""
        return self.representative[chunk * self.chunk_rows : (chunk + 1) * self.chunk_rows]

    def rows(self, chunk: int) -> np.ndarray:
        """Every row of a chunk (duplicates included), ordered by input."""
        return self.row_order[self.row_bounds[chunk] : self.row_bounds[chunk + 1]]


def plan_chunks(rows: pa.Table, scorer: Scorer, chunk_rows: int = 8192) -> ChunkPlan:
    """Deduplicate, length-sort and chunk the rows; the result depends only on the rows' content."""
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int | np.integer) or chunk_rows < 1:
        raise UnqoverError(f"chunk_rows must be a positive integer, got {chunk_rows!r}")
    if "id" not in rows.column_names:
        raise UnqoverError("rows need an 'id' column")
    n = rows.num_rows
    ids = rows["id"]
    if ids.null_count:
        raise UnqoverError(f"{ids.null_count} rows have no id")
    id_keys = parse_hex_ids(ids)
    if (count_distinct(ids) if id_keys is None else _distinct_keys(id_keys)) != n:
        raise UnqoverError("row ids are not unique; the runner keys its results by id")
    lengths = np.asarray(scorer.length_key(rows)).reshape(-1)
    if len(lengths) != n or not (np.issubdtype(lengths.dtype, np.integer) or lengths.dtype == bool):
        raise UnqoverError(
            f"scorer.length_key gave {len(lengths)} values of type {lengths.dtype}; expected {n} integers"
        )
    keys = scorer.input_key(rows)
    if len(keys) != n or keys.null_count:
        raise UnqoverError(
            f"scorer.input_key gave {len(keys)} keys ({keys.null_count} missing); expected {n} keys"
        )
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return ChunkPlan(chunk_rows, empty, empty, empty, np.zeros(1, dtype=np.int64))
    codes = _input_codes(keys)
    num_inputs = int(codes.max()) + 1
    # Rows sorted longest first, ties by group, then by id (hex ids sort like their integers): by id, then
    # stably by group, then stably by length.
    by_id = pc.sort_indices(ids).to_numpy() if id_keys is None else np.argsort(id_keys)
    group_key = getattr(scorer, "group_key", None)
    if group_key is not None:
        groups = _group_ranks(group_key(rows), n)
        by_id = by_id[np.argsort(groups[by_id], kind="stable")]
    lengths = lengths.astype(np.int64)
    shortfall = lengths.max() - lengths  # >= 0, smallest for the longest rows
    if shortfall.max() < 1 << 16:
        shortfall = shortfall.astype(np.uint16)  # numpy sorts 16-bit keys stably by radix, in O(n)
    by_length = by_id[np.argsort(shortfall[by_id], kind="stable")]
    # Each input takes the place of its first row in that order, and that row is the one scored.
    sorted_codes = codes[by_length]
    first = np.empty(num_inputs, dtype=np.int64)
    first[sorted_codes[::-1]] = np.arange(n - 1, -1, -1)
    is_first = np.zeros(n, dtype=bool)
    is_first[first] = True
    input_order = sorted_codes[is_first]  # codes by the place of their first row (O(n), no sort)
    position = np.empty(num_inputs, dtype=np.int64)
    position[input_order] = np.arange(num_inputs)
    input_of_row = position[codes]
    if num_inputs == n:  # no duplicates (the usual case): a permutation, inverted without sorting
        row_order = np.empty(n, dtype=np.int64)
        row_order[input_of_row] = np.arange(n)
    else:
        row_order = np.argsort(input_of_row, kind="stable")
    num_chunks = -(-num_inputs // chunk_rows)
    row_bounds = np.searchsorted(input_of_row[row_order], np.arange(num_chunks + 1) * chunk_rows)
    return ChunkPlan(
        chunk_rows, by_length[first[input_order]], input_of_row, row_order, row_bounds.astype(np.int64)
    )


def _input_codes(keys: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """An integer code per row, equal exactly when the input keys are equal (one hashing pass)."""
    return pc.dictionary_encode(_combined(keys)).indices.to_numpy(zero_copy_only=False).astype(np.int64)


def _combined(keys: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Strings as one array (wider offsets when they hold over 2 GiB of text)."""
    if not isinstance(keys, pa.ChunkedArray):
        return keys
    try:
        return keys.combine_chunks()
    except pa.ArrowException:
        return keys.cast(pa.large_string()).combine_chunks()


def _group_ranks(keys: pa.Array | pa.ChunkedArray, n: int) -> np.ndarray:
    """Per row, the rank of its group key among the distinct keys in sorted order (so the plan depends only on
    the rows' content, not on their order)."""
    if len(keys) != n or keys.null_count:
        raise UnqoverError(
            f"scorer.group_key gave {len(keys)} keys ({keys.null_count} missing); expected {n} keys"
        )
    encoded = pc.dictionary_encode(_combined(keys))
    rank = np.empty(len(encoded.dictionary), dtype=np.int64)
    rank[pc.sort_indices(encoded.dictionary).to_numpy()] = np.arange(len(encoded.dictionary))
    return rank[encoded.indices.to_numpy(zero_copy_only=False)]


def _distinct_keys(keys: np.ndarray) -> int:
    ordered = np.sort(keys)
    return int(len(ordered) and 1 + np.count_nonzero(ordered[1:] != ordered[:-1]))


def _check_scores(scores: object, batch: pa.Table, bounds=UNIT_BOUNDS) -> np.ndarray:
    """Scores as a (n, 2) float64 array, finite and within ``bounds``, or an error naming the first bad row."""
    n = batch.num_rows
    first = batch["id"][0].as_py() if n else None
    try:
        array = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise UnqoverError(
            f"scorer returned non-numeric scores for the batch starting at row {first}: {err}"
        ) from err
    if array.shape != (n, 2):
        raise UnqoverError(
            f"scorer returned scores of shape {array.shape} for a batch of {n} rows (expected ({n}, 2)); "
            f"batch starts at row {first}"
        )
    low, high = np.array(bounds, dtype=np.float64).T
    bad = ~(np.isfinite(array) & (array >= low) & (array <= high)).all(axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        ranges = " and ".join(f"[{a:g}, {b:g}]" for a, b in bounds)
        raise UnqoverError(
            f"scorer returned {array[i].tolist()} for row {batch['id'][i].as_py()}: scores must be finite and "
            f"in {ranges} ({int(bad.sum())} such rows in its batch of {n})"
        )
    return array
