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

The plan (steps 1-3) is :mod:`unqover.scoring.run_plan`; the run folder, ``<run_dir>/shards/<i>-of-<n>/`` with its
plan, batch size, chunk and checkpoint files and its lock, is :mod:`unqover.scoring.shard_files`. This module
scores (steps 4-5) and merges the shards.

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
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from tqdm.auto import tqdm

from unqover.errors import UnqoverError, first_line
from unqover.generate.ids import count_distinct, match_ids
from unqover.predictions import PREDICTION_SCHEMA
from unqover.scoring.run_plan import ChunkPlan, Scorer, _check_scores, _check_shard, plan_chunks, score_bounds
from unqover.scoring.shard_files import (
    _check_plan_record,
    _load_chunk,
    _load_partial,
    _read_json,
    _write_chunk,
    _write_json,
    _write_partial,
    chunk_path,
    lock_shard,
    partial_path,
    shard_folder,
)

#: Automatic batch sizes start here on CPU (``max_batch_size`` on CUDA).
CPU_BATCH_SIZE = 64
MAX_IDS_LISTED = 5
#: Seconds of scoring after which a chunk's progress so far is written (a kill loses at most this much).
CHECKPOINT_SECONDS = 60.0
#: A run's speed is timed over this many batches after the first (or :data:`TIMED_SECONDS` of scoring, if sooner).
TIMED_BATCHES = 3
TIMED_SECONDS = 10.0


def recorded_batch_size(run_dir: str | Path, shard: tuple[int, int] = (0, 1)) -> int | None:
    """The batch size a shard of a run uses (after any automatic halving), or None before it started."""
    record = _read_json(shard_folder(run_dir, *_check_shard(shard)) / "batch_size.json")
    return None if record is None else int(record["batch_size"])


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


def automatic_batch_size(max_batch_size: int = 1024) -> int:
    """The batch size a run starts at without ``batch_size``: ``max_batch_size`` on CUDA, else at most 64."""
    return max_batch_size if _has_cuda() else min(CPU_BATCH_SIZE, max_batch_size)


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
    size = automatic_batch_size(max_batch_size) if batch_size is None else batch_size
    _write_json(path, {"batch_size": size, "automatic": batch_size is None})
    return size, batch_size is None


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
    timed: Callable[[int, float], None] | None = None,
) -> np.ndarray:
    """Scores of a chunk's inputs, batch by batch; the bar advances by the rows each batch stands for.

    ``prefix`` holds the scores of the chunk's first inputs from a checkpoint (a multiple of ``batch_size`` of
    them, so the remaining batches are the ones an uninterrupted run scores); ``checkpoint(scores so far,
    batch_size)`` is called at a batch boundary whenever ``checkpoint_seconds`` have passed since the last one;
    ``timed(inputs, seconds)`` after each batch.
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
        began = time.monotonic()
        out[lo:hi] = _check_scores(scorer.score(batch), batch, score_bounds(scorer))
        if timed is not None:
            timed(batch.num_rows, time.monotonic() - began)
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
    speed: Callable[[Timed, int, int], None] | None = None,
) -> pa.Table:
    """Score this shard's rows, resuming from finished chunks; return (id, score_1, score_2) in row order.

    ``batch_size=None`` finds one: ``max_batch_size`` on CUDA (``min(64, max_batch_size)`` on CPU), halved on
    each out-of-memory error, recorded so a resumed run uses it too. An explicit ``batch_size`` is never
    changed; a resumed shard must keep the batch size its finished chunks were scored with. A chunk being
    scored is checkpointed every ``checkpoint_seconds``. The shard folder is locked while this runs: a second
    process on the same shard is refused. ``speed(timed, inputs left, rows left)`` hears how fast the first
    batches this call scores went (:class:`Timed`) and what was left of the shard when it started (once, if
    enough is left to score to time them).
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
                           checkpoint_seconds, speed)  # fmt: skip


@dataclass(frozen=True)
class Timed:
    """How fast the first batches of a run went: ``inputs`` scored in ``seconds`` over ``batches`` batches,
    from batch ``first`` (1-based; the first batch, with its one-off start-up costs, counts only when it is the
    only one timed)."""

    inputs: int
    seconds: float
    batches: int
    first: int

    @property
    def rate(self) -> float:
        """Inputs per second."""
        return self.inputs / max(self.seconds, 1e-9)


def _timer(
    speed: Callable[[Timed, int, int], None], inputs_left: int, rows_left: int
) -> Callable[[int, float], None]:
    """The first batches' timer for :func:`run_shard`'s ``speed``: it tells ``speed`` once, after
    :data:`TIMED_BATCHES` batches past the first or :data:`TIMED_SECONDS` of scoring, however many chunks (or
    retries after an out-of-memory error) call it."""
    batches: list[tuple[int, float]] = []
    told = False

    def timed(inputs: int, seconds: float) -> None:
        nonlocal told
        if told:
            return
        batches.append((inputs, seconds))
        later = batches[1:]
        if len(later) < TIMED_BATCHES and sum(s for _, s in batches) < TIMED_SECONDS:
            return
        told = True
        counted = later or batches
        speed(
            Timed(sum(i for i, _ in counted), sum(s for _, s in counted), len(counted), 2 if later else 1),
            inputs_left,
            rows_left,
        )

    return timed


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
    speed: Callable[[Timed, int, int], None] | None = None,
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
    partial = _resumed_partials(rows, scorer, plan, folder, [k for k in chunks if k not in done], size)
    total = len(positions)
    initial = sum(len(done[k]) for k in done) + sum(
        int(weights[k * plan.chunk_rows : k * plan.chunk_rows + len(p)].sum()) for k, p in partial.items()
    )
    timed = None
    if speed is not None and total > initial:
        inputs_left = sum(len(plan.inputs(k)) for k in chunks if k not in done) - sum(
            map(len, partial.values())
        )
        timed = _timer(speed, inputs_left, total - initial)
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
                                                checkpoint, checkpoint_seconds, timed)  # fmt: skip
                except Exception as err:
                    if not _is_oom(err):
                        raise
                    message = first_line(err)
                if message is None:
                    break
                # Out of memory: the exception (and the tensors its traceback held) is gone; free and retry
                # the whole chunk at half the size, so every chunk is scored at one batch size.
                _free_accelerator_memory()
                bar.update(before - bar.n - resumed)
                resumed = 0
                size = _halved(size, automatic, message)
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


def _resumed_partials(
    rows: pa.Table, scorer: Scorer, plan: ChunkPlan, folder: Path, unfinished: list[int], size: int
) -> dict[int, np.ndarray]:
    """The scores so far of each unfinished chunk that a checkpoint holds at this batch size (its batches whole,
    or the chunk's every input): where a resumed run continues from."""
    partial = {}
    for k in unfinished:
        if partial_path(folder, k).exists():
            ids = rows["id"].take(pa.array(plan.inputs(k))).combine_chunks()
            prefix = _load_partial(partial_path(folder, k), ids, size, score_bounds(scorer))
            if prefix is not None and (len(prefix) % size == 0 or len(prefix) == len(ids)):
                partial[k] = prefix
    return partial


def _halved(size: int, automatic: bool, message: str) -> int:
    """The batch size to score a chunk again at after an out-of-memory error at ``size``: half of it, when it was
    found automatically and is more than 1; otherwise one line saying what to do."""
    if size == 1:
        raise UnqoverError(
            f"out of memory at batch size 1 ({message}): one input does not fit; use a smaller model, a "
            "lower-precision dtype or a device with more memory"
        )
    if not automatic:
        raise UnqoverError(
            f"out of memory at batch size {size} ({message}); pass a smaller batch size, or none to find one "
            "automatically"
        )
    return size // 2


def _listed(ids: pa.ChunkedArray | pa.Array, where: np.ndarray) -> str:
    shown = ids.take(pa.array(where[:MAX_IDS_LISTED])).to_pylist()
    return ", ".join(str(x) for x in shown) + (", ..." if len(where) > MAX_IDS_LISTED else "")


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
