"""The probe runner: score every row of an UnQover dataset with a model, in resumable, shardable chunks.

The work plan is a pure function of the rows, the scorer's keys and ``chunk_rows`` (never of what is on disk):

1. Deduplicate: rows with equal ``scorer.input_key`` are one *input*, scored once; its scores are copied to the
   other rows.
2. Sort the inputs by ``scorer.length_key``, longest first (ties: smallest row id first), so a batch of
   consecutive inputs holds texts of similar length (little padding), and an out-of-memory error shows up in
   the first batches of a run rather than hours into it.
3. Cut the sorted inputs into chunks of ``chunk_rows`` inputs; shard ``i`` of ``n`` takes chunks i, i+n, ...
4. Score a chunk in batches of ``batch_size`` consecutive inputs and write the scores of all its rows
   (duplicates included) atomically. A chunk is always scored whole at one batch size: an out-of-memory error
   restarts it at half the size.

Run folder::

    <run_dir>/shards/<i>-of-<n>/plan.json             sizes of the plan (rows, inputs, chunk_rows, chunks)
    <run_dir>/shards/<i>-of-<n>/batch_size.json       the batch size for the chunks still to score
    <run_dir>/shards/<i>-of-<n>/chunk-000007.parquet  id, score_1, score_2 of every row of chunk 7

A run stopped at any point (Ctrl-C, a crash, a lost machine) loses at most the chunk it was scoring; running
it again loads the finished chunks, checks them against the plan and scores the rest with the recorded batch
size, so it ends with exactly the scores of an uninterrupted run.
"""

from __future__ import annotations

import contextlib
import gc
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
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
    # Rows sorted longest first, ties by id (hex ids sort like their integers): by id, then stably by length.
    by_id = pc.sort_indices(ids).to_numpy() if id_keys is None else np.argsort(id_keys)
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
    if isinstance(keys, pa.ChunkedArray):
        try:
            keys = keys.combine_chunks()
        except pa.ArrowException:  # over 2 GiB of text: wider offsets
            keys = keys.cast(pa.large_string()).combine_chunks()
    return pc.dictionary_encode(keys).indices.to_numpy(zero_copy_only=False).astype(np.int64)


def _distinct_keys(keys: np.ndarray) -> int:
    ordered = np.sort(keys)
    return int(len(ordered) and 1 + np.count_nonzero(ordered[1:] != ordered[:-1]))


def shard_folder(run_dir: str | Path, index: int, count: int) -> Path:
    """Where shard ``index`` of ``count`` keeps its chunks."""
    return Path(run_dir) / "shards" / f"{index}-of-{count}"


def chunk_path(folder: Path, chunk: int) -> Path:
    return folder / f"chunk-{chunk:06d}.parquet"


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
    if have is None or (have != want and not any(folder.glob("chunk-*.parquet"))):
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
) -> np.ndarray:
    """Scores of a chunk's inputs, batch by batch; the bar advances by the rows each batch stands for."""
    inputs = rows.take(pa.array(plan.inputs(chunk)))
    out = np.empty((inputs.num_rows, 2), dtype=np.float64)
    start = chunk * plan.chunk_rows
    for lo in range(0, inputs.num_rows, batch_size):
        batch = inputs.slice(lo, batch_size)
        out[lo : lo + batch.num_rows] = _check_scores(scorer.score(batch), batch, score_bounds(scorer))
        bar.update(int(weights[start + lo : start + lo + batch.num_rows].sum()))
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
) -> pa.Table:
    """Score this shard's rows, resuming from finished chunks; return (id, score_1, score_2) in row order.

    ``batch_size=None`` finds one: ``max_batch_size`` on CUDA (``min(64, max_batch_size)`` on CPU), halved on
    each out-of-memory error, recorded so a resumed run uses it too. An explicit ``batch_size`` is never
    changed; a resumed shard must keep the batch size its finished chunks were scored with.
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
    for stale in folder.glob(".*.tmp"):  # left by a killed process; never under a final name
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
    size, automatic = _resolve_batch_size(folder, batch_size, int(max_batch_size), started=bool(done))
    weights = np.bincount(plan.input_of_row, minlength=plan.num_inputs)  # rows per input
    total = len(positions)
    initial = sum(len(done[k]) for k in done)
    desc = "scoring" if count == 1 else f"shard {index}/{count}"
    with tqdm(
        total=total, initial=initial, unit="row", unit_scale=True, desc=desc, disable=not progress
    ) as bar:
        bar.set_postfix(batch_size=size)
        for k in chunks:
            if k in done:
                continue
            while True:
                before = bar.n
                message = None
                try:
                    input_scores = _score_chunk(rows, scorer, plan, k, size, bar, weights)
                except Exception as err:
                    if not _is_oom(err):
                        raise
                    message = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
                if message is None:
                    break
                # Out of memory: the exception (and the tensors its traceback held) is gone; free and retry
                # the whole chunk at half the size, so every chunk is scored at one batch size.
                _free_accelerator_memory()
                bar.update(before - bar.n)
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
                _write_json(folder / "batch_size.json", {"batch_size": size, "automatic": True})
                bar.set_postfix(batch_size=size)
            row_scores = input_scores[plan.input_of_row[plan.rows(k)] - k * plan.chunk_rows]
            metadata = {"chunk": k, "inputs": len(input_scores), "batch_size": size}
            _write_chunk(chunk_path(folder, k), chunk_ids[k], row_scores, metadata)
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
            {p.name.split("-of-")[-1] for p in (Path(run_dir) / "shards").glob("*-of-*")} - {str(n_shards)}
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
