"""The probe runner: score every row of an UnQover dataset with a model, in resumable, shardable chunks.

The work plan is a pure function of the rows, the scorer's keys and ``chunk_rows`` (never of what is on disk):

1. Deduplicate: rows with equal ``scorer.input_key`` are one *input*, scored once; its scores are copied to the
   other rows.
2. Sort the inputs by ``scorer.length_key``, longest first, so a batch of consecutive inputs holds texts of
   similar length (little padding), and an out-of-memory error shows up in the first batches of a run rather
   than hours into it. Ties: by ``scorer.group_key`` when the scorer has one (rows with one key, e.g. one
   context, are consecutive, so a batch shares their common computation), then smallest row id first.
3. Cut the sorted inputs into chunks of ``chunk_rows`` inputs; shard ``i`` of ``n`` takes chunks i, i+n, ...
4. Score a chunk in batches of ``batch_size`` consecutive inputs and write the scores of all its rows
   (duplicates included) atomically. A chunk is always scored whole at one batch size: an out-of-memory error
   restarts it at half the size.
5. Checkpoints are bounded in time as well as in size: once ``checkpoint_seconds`` (60 s) have passed since
   the chunk started or since its last checkpoint, the scores of the chunk's inputs so far are written (at a
   batch boundary) to ``partial-<chunk>.parquet``. A resumed run continues the chunk from there with the same
   batches, so the plan, and every score, is the same as without the interruption.

Run folder::

    <run_dir>/shards/<i>-of-<n>/plan.json               sizes of the plan (rows, inputs, chunk_rows, chunks)
    <run_dir>/shards/<i>-of-<n>/batch_size.json         the batch size for the chunks still to score
    <run_dir>/shards/<i>-of-<n>/chunk-000007.parquet    id, score_1, score_2 of every row of chunk 7
    <run_dir>/shards/<i>-of-<n>/partial-000008.parquet  the first inputs of chunk 8 (while it is scored)
    <run_dir>/shards/<i>-of-<n>/run.lock                held by the process scoring this shard

A run stopped at any point (Ctrl-C, a crash, a lost machine) loses at most about a minute of scoring (or one
chunk, whichever is less); running it again loads the finished chunks and partial checkpoints, checks them
against the plan and scores the rest with the recorded batch size, so it ends with exactly the scores of an
uninterrupted run. One process at a time scores a shard: a second one started on the same shard folder is
refused (a file lock, released by the operating system even when the holder is killed).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from filelock import FileLock, Timeout
from tqdm.auto import tqdm

from unqover.errors import UnqoverError
from unqover.files import atomic_path
from unqover.generate.ids import count_distinct, match_ids, parse_hex_ids
from unqover.predictions import PREDICTION_SCHEMA

#: Automatic batch sizes start here on CPU (``max_batch_size`` on CUDA).
CPU_BATCH_SIZE = 64
#: Key of the chunk files' Parquet metadata (JSON: chunk number, inputs, batch size).
CHUNK_METADATA_KEY = b"unqover_chunk"
MAX_LISTED = 5
#: Seconds of scoring after which a chunk's progress so far is written (a kill loses at most this much).
CHECKPOINT_SECONDS = 60.0
#: The lock file of a shard folder (held while a process scores that shard).
LOCK_NAME = "run.lock"
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


def shard_spec(text: str) -> tuple[int, int]:
    """Parse ``"i/n"`` (shard ``i`` of ``n``, counting from 0) as given on a command line."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(text))
    if match is None:
        raise UnqoverError(f"shard {text!r} is not of the form i/n, e.g. 0/4 for the first of four shards")
    index, count = int(match[1]), int(match[2])
    if count < 1 or index >= count:
        raise UnqoverError(
            f"shard {text!r} is out of range: i/n needs 0 <= i < n (shards count from 0, e.g. 0/2 and 1/2)"
        )
    return index, count


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


def shard_folder(run_dir: str | Path, index: int, count: int) -> Path:
    """Where shard ``index`` of ``count`` keeps its chunks."""
    return Path(run_dir) / "shards" / f"{index}-of-{count}"


def chunk_path(folder: Path, chunk: int) -> Path:
    return folder / f"chunk-{chunk:06d}.parquet"


def partial_path(folder: Path, chunk: int) -> Path:
    """The checkpoint of a chunk being scored: its first inputs' scores (never named like a chunk)."""
    return folder / f"partial-{chunk:06d}.parquet"


@contextlib.contextmanager
def lock_shard(folder: Path) -> Iterator[None]:
    """Hold the shard folder's lock for the block, or refuse at once when another process holds it."""
    lock = FileLock(folder / LOCK_NAME, timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise UnqoverError(
            f"another unqover process is scoring {folder} right now (it holds {folder / LOCK_NAME}): let it "
            "finish, then run this command again to use its scores, or choose another --output"
        ) from None
    try:
        yield
    finally:
        lock.release()


def _atomic_write(path: Path, write: Callable[[str], None]) -> None:
    """Write through a hidden temporary file beside ``path`` and rename (:func:`unqover.files.atomic_path`)."""
    with atomic_path(path) as tmp:
        write(str(tmp))


def _write_json(path: Path, value: dict) -> None:
    _atomic_write(
        path, lambda tmp: Path(tmp).write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    )


def _read_json(path: Path) -> dict | None:
    if not path.is_file():
        return None
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise UnqoverError(f"{path} is unreadable ({err}); delete it to start that shard again") from err
    if not isinstance(value, dict):
        raise UnqoverError(f"{path} is not a JSON object; delete it to start that shard again")
    return value


def recorded_batch_size(run_dir: str | Path, shard: tuple[int, int] = (0, 1)) -> int | None:
    """The batch size a shard of a run uses (after any automatic halving), or None before it started."""
    record = _read_json(shard_folder(run_dir, *_check_shard(shard)) / "batch_size.json")
    return None if record is None else int(record["batch_size"])


def _check_plan_record(folder: Path, plan: ChunkPlan, shard: tuple[int, int]) -> None:
    """Record the plan's sizes, or check that a resumed run (one with finished chunks) has the same plan."""
    want = {
        "rows": plan.num_rows,
        "inputs": plan.num_inputs,
        "chunk_rows": plan.chunk_rows,
        "chunks": len(plan.chunks(shard)),
        "shard": list(shard),
    }
    have = _read_json(folder / "plan.json")
    started = any(folder.glob("chunk-*.parquet")) or any(folder.glob("partial-*.parquet"))
    if have is None or (have != want and not started):
        _write_json(folder / "plan.json", want)
    elif have != want:
        diff = ", ".join(f"{k} {have.get(k)!r} -> {v!r}" for k, v in want.items() if have.get(k) != v)
        raise UnqoverError(
            f"{folder} holds a run with a different plan ({diff}): other rows, another scorer or another "
            "chunk_rows; use a new run folder, or delete this one to start again"
        )


def _has_cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def _free_accelerator_memory() -> None:
    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()


def _is_oom(err: BaseException) -> bool:
    """A too-large batch: torch's OutOfMemoryError (CUDA or other backends) or an equivalent RuntimeError."""
    torch = sys.modules.get("torch")  # a scorer that raised a torch error has imported torch
    if torch is not None:
        kinds = (getattr(torch, "OutOfMemoryError", None), getattr(torch.cuda, "OutOfMemoryError", None))
        if any(isinstance(kind, type) and isinstance(err, kind) for kind in kinds):
            return True
    return isinstance(err, RuntimeError) and "out of memory" in str(err).lower()


def _resolve_batch_size(
    folder: Path, batch_size: int | None, max_batch_size: int, started: bool
) -> tuple[int, bool]:
    """The batch size to score with and whether it may be halved; recorded before any chunk is scored."""
    path = folder / "batch_size.json"
    record = _read_json(path)
    if record is not None:
        recorded = int(record["batch_size"])
        if batch_size is None or batch_size == recorded:
            return recorded, batch_size is None
        if started:
            raise UnqoverError(
                f"{folder} was scored with batch size {recorded}; resume it with batch size {recorded} (or "
                f"none) so that its results stay identical, or use a new run folder for batch size {batch_size}"
            )
    if batch_size is None:
        size = max_batch_size if _has_cuda() else min(CPU_BATCH_SIZE, max_batch_size)
    else:
        size = batch_size
    _write_json(path, {"batch_size": size, "automatic": batch_size is None})
    return size, batch_size is None


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


def _load_chunk(path: Path, expected_ids: pa.Array, bounds=UNIT_BOUNDS) -> np.ndarray:
    """A finished chunk's row scores, after checking that it holds exactly the rows the plan expects."""
    try:
        table = pq.read_table(path, columns=PREDICTION_SCHEMA.names)
    except (pa.ArrowInvalid, OSError, KeyError) as err:
        raise UnqoverError(f"{path} is unreadable ({err}); delete it to score that chunk again") from err
    if not table["id"].combine_chunks().equals(expected_ids):
        raise UnqoverError(
            f"{path} does not hold the rows this run's plan puts in it (other rows, scorer or chunk_rows); "
            f"use a new run folder, or delete {path.parent} to start that shard again"
        )
    scores = np.stack([table["score_1"].to_numpy(), table["score_2"].to_numpy()], axis=1).astype(np.float64)
    return _check_scores(scores, table, bounds)


def _load_partial(
    path: Path, expected_ids: pa.Array, batch_size: int, bounds=UNIT_BOUNDS
) -> np.ndarray | None:
    """The scores of a chunk's first inputs from its checkpoint, or None (and the file removed) when they were
    scored at another batch size, so the chunk's batches would differ."""
    try:
        table = pq.read_table(path, columns=PREDICTION_SCHEMA.names)
        metadata = json.loads((table.schema.metadata or {}).get(CHUNK_METADATA_KEY, b"{}"))
    except (pa.ArrowInvalid, OSError, KeyError, ValueError) as err:
        raise UnqoverError(f"{path} is unreadable ({err}); delete it to score that chunk again") from err
    if metadata.get("batch_size") != batch_size:
        path.unlink(missing_ok=True)
        return None
    n = table.num_rows
    if n > len(expected_ids) or not table["id"].combine_chunks().equals(expected_ids.slice(0, n)):
        raise UnqoverError(
            f"{path} does not hold the inputs this run's plan puts first in its chunk (other rows, scorer or "
            f"chunk_rows); use a new run folder, or delete {path.parent} to start that shard again"
        )
    scores = np.stack([table["score_1"].to_numpy(), table["score_2"].to_numpy()], axis=1).astype(np.float64)
    return _check_scores(scores, table, bounds)


def _write_partial(folder: Path, chunk: int, ids: pa.Array, scores: np.ndarray, batch_size: int) -> None:
    """Checkpoint a chunk: the scores of its first ``len(scores)`` inputs (``ids``: the chunk's input rows)."""
    metadata = {"chunk": chunk, "inputs": len(scores), "batch_size": batch_size}
    _write_chunk(partial_path(folder, chunk), ids.slice(0, len(scores)), scores, metadata)


def _write_chunk(path: Path, ids: pa.Array, scores: np.ndarray, metadata: dict) -> None:
    table = pa.table(
        [ids, pa.array(scores[:, 0]), pa.array(scores[:, 1])], schema=PREDICTION_SCHEMA
    ).replace_schema_metadata({CHUNK_METADATA_KEY: json.dumps(metadata, sort_keys=True).encode()})
    _atomic_write(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))


def _score_chunk(
    rows: pa.Table,
    scorer: Scorer,
    plan: ChunkPlan,
    chunk: int,
    batch_size: int,
    bar: tqdm,
    weights: np.ndarray,
    prefix: np.ndarray | None = None,
    checkpoint: Callable[[np.ndarray, int], None] | None = None,
    checkpoint_seconds: float = CHECKPOINT_SECONDS,
) -> np.ndarray:
    """Scores of a chunk's inputs, batch by batch; the bar advances by the rows each batch stands for.

    ``prefix`` holds the scores of the chunk's first inputs from a checkpoint (a multiple of ``batch_size`` of
    them, so the remaining batches are the ones an uninterrupted run scores); ``checkpoint(scores so far,
    batch_size)`` is called at a batch boundary whenever ``checkpoint_seconds`` have passed since the last one.
    """
    indices = plan.inputs(chunk)
    first = 0 if prefix is None else len(prefix)
    inputs = rows.take(pa.array(indices[first:]))
    out = np.empty((len(indices), 2), dtype=np.float64)
    if first:
        out[:first] = prefix
    start = chunk * plan.chunk_rows
    last = time.monotonic()
    for lo in range(first, len(indices), batch_size):
        batch = inputs.slice(lo - first, batch_size)
        hi = lo + batch.num_rows
        out[lo:hi] = _check_scores(scorer.score(batch), batch, score_bounds(scorer))
        bar.update(int(weights[start + lo : start + hi].sum()))
        if checkpoint is not None and hi < len(indices) and time.monotonic() - last >= checkpoint_seconds:
            checkpoint(out[:hi], batch_size)
            last = time.monotonic()
    return out


def run_shard(
    rows: pa.Table,
    scorer: Scorer,
    run_dir: str | Path,
    *,
    batch_size: int | None = None,
    shard: tuple[int, int] = (0, 1),
    chunk_rows: int = 8192,
    progress: bool = True,
    max_batch_size: int = 1024,
    checkpoint_seconds: float = CHECKPOINT_SECONDS,
) -> pa.Table:
    """Score this shard's rows, resuming from finished chunks; return (id, score_1, score_2) in row order.

    ``batch_size=None`` finds one: ``max_batch_size`` on CUDA (``min(64, max_batch_size)`` on CPU), halved on
    each out-of-memory error, recorded so a resumed run uses it too. An explicit ``batch_size`` is never
    changed; a resumed shard must keep the batch size its finished chunks were scored with. A chunk being
    scored is checkpointed every ``checkpoint_seconds``. The shard folder is locked while this runs: a second
    process on the same shard is refused.
    """
    index, count = _check_shard(shard)
    for name, value in (("batch_size", batch_size), ("max_batch_size", max_batch_size)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1
        ):
            raise UnqoverError(f"{name} must be a positive integer, got {value!r}")
    plan = plan_chunks(rows, scorer, chunk_rows)
    folder = shard_folder(run_dir, index, count)
    folder.mkdir(parents=True, exist_ok=True)
    with lock_shard(folder):
        return _run_locked(rows, scorer, plan, folder, index, count, batch_size, progress, max_batch_size,
                           checkpoint_seconds)  # fmt: skip


def _run_locked(
    rows: pa.Table,
    scorer: Scorer,
    plan: ChunkPlan,
    folder: Path,
    index: int,
    count: int,
    batch_size: int | None,
    progress: bool,
    max_batch_size: int,
    checkpoint_seconds: float,
) -> pa.Table:
    """:func:`run_shard` with the shard folder's lock held."""
    # only the lock holder writes here, so temporary files are a killed holder's leftovers
    for stale in folder.glob(".*.tmp"):
        stale.unlink(missing_ok=True)
    _check_plan_record(folder, plan, (index, count))
    # Taking rows from a many-chunk table copies all of it on every take: combine it once (unless a column
    # is too large for one chunk; then take from the chunks as they are).
    with contextlib.suppress(pa.ArrowException):
        rows = rows.combine_chunks()
    chunks = list(plan.chunks((index, count)))
    positions = np.concatenate([plan.rows(k) for k in chunks]) if chunks else np.zeros(0, dtype=np.int64)
    shard_ids = rows["id"].take(pa.array(positions)).combine_chunks()
    bounds = np.cumsum([0] + [len(plan.rows(k)) for k in chunks])
    chunk_ids = {k: shard_ids.slice(bounds[j], bounds[j + 1] - bounds[j]) for j, k in enumerate(chunks)}
    done = {
        k: _load_chunk(chunk_path(folder, k), chunk_ids[k], score_bounds(scorer))
        for k in chunks
        if chunk_path(folder, k).exists()
    }
    for k in done:  # a checkpoint left beside its finished chunk (killed between the two writes)
        partial_path(folder, k).unlink(missing_ok=True)
    started = bool(done) or any(partial_path(folder, k).exists() for k in chunks)
    size, automatic = _resolve_batch_size(folder, batch_size, int(max_batch_size), started=started)
    weights = np.bincount(plan.input_of_row, minlength=plan.num_inputs)  # rows per input
    partial = {}
    for k in chunks:
        if k not in done and partial_path(folder, k).exists():
            ids = rows["id"].take(pa.array(plan.inputs(k))).combine_chunks()
            prefix = _load_partial(partial_path(folder, k), ids, size, score_bounds(scorer))
            if prefix is not None and (len(prefix) % size == 0 or len(prefix) == len(ids)):
                partial[k] = prefix
    total = len(positions)
    initial = sum(len(done[k]) for k in done) + sum(
        int(weights[k * plan.chunk_rows : k * plan.chunk_rows + len(p)].sum()) for k, p in partial.items()
    )
    desc = "scoring" if count == 1 else f"shard {index}/{count}"
    with tqdm(
        total=total, initial=initial, unit="row", unit_scale=True, desc=desc, disable=not progress
    ) as bar:
        bar.set_postfix(batch_size=size)
        for k in chunks:
            if k in done:
                continue
            input_ids = rows["id"].take(pa.array(plan.inputs(k))).combine_chunks()
            checkpoint = functools.partial(_write_partial, folder, k, input_ids)
            # rows of the checkpoint the chunk resumes from: counted already, scored again after an OOM
            resumed = int(weights[k * plan.chunk_rows : k * plan.chunk_rows + len(partial.get(k, ()))].sum())
            while True:
                before = bar.n
                message = None
                try:
                    input_scores = _score_chunk(rows, scorer, plan, k, size, bar, weights, partial.pop(k, None),
                                                checkpoint, checkpoint_seconds)  # fmt: skip
                except Exception as err:
                    if not _is_oom(err):
                        raise
                    message = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
                if message is None:
                    break
                # Out of memory: the exception (and the tensors its traceback held) is gone; free and retry
                # the whole chunk at half the size, so every chunk is scored at one batch size.
                _free_accelerator_memory()
                bar.update(before - bar.n - resumed)
                resumed = 0
                if size == 1:
                    raise UnqoverError(
                        f"out of memory at batch size 1 ({message}): one input does not fit; use a smaller "
                        "model, a lower-precision dtype or a device with more memory"
                    )
                if not automatic:
                    raise UnqoverError(
                        f"out of memory at batch size {size} ({message}); pass a smaller batch size, or "
                        "none to find one automatically"
                    )
                size //= 2
                partial_path(folder, k).unlink(missing_ok=True)  # the chunk starts again at the new size
                _write_json(folder / "batch_size.json", {"batch_size": size, "automatic": True})
                bar.set_postfix(batch_size=size)
            row_scores = input_scores[plan.input_of_row[plan.rows(k)] - k * plan.chunk_rows]
            metadata = {"chunk": k, "inputs": len(input_scores), "batch_size": size}
            _write_chunk(chunk_path(folder, k), chunk_ids[k], row_scores, metadata)
            partial_path(folder, k).unlink(missing_ok=True)
            done[k] = row_scores
    if not chunks:
        return PREDICTION_SCHEMA.empty_table()
    scores = np.concatenate([done[k] for k in chunks])
    order = np.argsort(positions)
    return pa.table(
        [shard_ids.take(pa.array(order)), pa.array(scores[order, 0]), pa.array(scores[order, 1])],
        schema=PREDICTION_SCHEMA,
    )


def _listed(ids: pa.ChunkedArray | pa.Array, where: np.ndarray) -> str:
    shown = ids.take(pa.array(where[:MAX_LISTED])).to_pylist()
    return ", ".join(str(x) for x in shown) + (", ..." if len(where) > MAX_LISTED else "")


def merge_shards(rows: pa.Table, run_dir: str | Path, n_shards: int) -> pa.Table:
    """Join the chunks of all ``n_shards`` shards into (id, score_1, score_2) in the order of ``rows``.

    Every row must be scored exactly once; otherwise the error counts the missing, repeated and unknown ids
    and says which shards are unfinished.
    """
    if isinstance(n_shards, bool) or not isinstance(n_shards, int | np.integer) or n_shards < 1:
        raise UnqoverError(f"n_shards must be a positive integer, got {n_shards!r}")
    ids = rows["id"]
    n = rows.num_rows
    if count_distinct(ids) != n:
        raise UnqoverError("row ids are not unique; results are keyed by id")
    tables, unfinished = [], []
    for i in range(n_shards):
        folder = shard_folder(run_dir, i, n_shards)
        files = sorted(folder.glob("chunk-*.parquet")) if folder.is_dir() else []
        plan = _read_json(folder / "plan.json")
        if not folder.is_dir():
            unfinished.append(f"shard {i}/{n_shards} has not started ({folder} is missing)")
        elif plan is not None and len(files) < int(plan.get("chunks", 0)):
            unfinished.append(f"shard {i}/{n_shards} has {len(files)} of {plan['chunks']} chunks")
        for path in files:
            try:
                tables.append(pq.read_table(path, columns=PREDICTION_SCHEMA.names).cast(PREDICTION_SCHEMA))
            except (pa.ArrowInvalid, OSError, KeyError) as err:
                raise UnqoverError(
                    f"{path} is unreadable ({err}); delete it and run that shard again"
                ) from err
    scored = pa.concat_tables(tables).combine_chunks() if tables else PREDICTION_SCHEMA.empty_table()
    position = match_ids(scored["id"], ids) if scored.num_rows else np.zeros(0, dtype=np.int64)
    unknown = np.flatnonzero(position < 0)
    counts = np.bincount(position[position >= 0], minlength=n)
    missing, repeated = np.flatnonzero(counts == 0), np.flatnonzero(counts > 1)
    if len(unknown) or len(missing) or len(repeated):
        problems = []
        if len(missing):
            problems.append(f"{len(missing)} of {n} rows have no scores (e.g. {_listed(ids, missing)})")
        if len(repeated):
            problems.append(f"{len(repeated)} rows are scored more than once (e.g. {_listed(ids, repeated)})")
        if len(unknown):
            problems.append(
                f"{len(unknown)} scored ids are not among the rows (e.g. {_listed(scored['id'], unknown)})"
            )
        others = sorted(
            {p.name.split("-of-")[-1] for p in (Path(run_dir) / "shards").glob("*-of-*") if p.is_dir()}
            - {str(n_shards)}
        )
        hint = f"; the run folder also has shards of n = {', '.join(others)}" if others else ""
        raise UnqoverError(
            f"cannot merge {n_shards} shard(s) of {run_dir}: "
            + "; ".join(problems + unfinished)
            + hint
            + ". Run the missing shards (or the same rows) to completion first."
        )
    score_1 = np.empty(n, dtype=np.float64)
    score_2 = np.empty(n, dtype=np.float64)
    score_1[position] = scored["score_1"].to_numpy()
    score_2[position] = scored["score_2"].to_numpy()
    return pa.table([ids, pa.array(score_1), pa.array(score_2)], schema=PREDICTION_SCHEMA)
