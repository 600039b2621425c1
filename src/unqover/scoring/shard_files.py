"""The shard folder of a probe run on disk: its paths, its lock, its JSON records and its chunk files.

Everything the runner (:mod:`unqover.scoring.runner`) keeps between runs lives here, written atomically, and is
checked against the plan when it is read back, so that a resumed run ends with exactly the scores of an
uninterrupted one::

    <run_dir>/shards/<i>-of-<n>/plan.json               sizes of the plan (rows, inputs, chunk_rows, chunks)
    <run_dir>/shards/<i>-of-<n>/batch_size.json         the batch size for the chunks still to score
    <run_dir>/shards/<i>-of-<n>/chunk-000007.parquet    id, score_1, score_2 of every row of chunk 7
    <run_dir>/shards/<i>-of-<n>/partial-000008.parquet  the first inputs of chunk 8 (while it is scored)
    <run_dir>/shards/<i>-of-<n>/run.lock                held by the process scoring this shard
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from filelock import FileLock, Timeout

from unqover.errors import UnqoverError
from unqover.files import atomic_path
from unqover.predictions import PREDICTION_SCHEMA
from unqover.scoring.run_plan import UNIT_BOUNDS, ChunkPlan, _check_scores

#: Key of the chunk files' Parquet metadata (JSON: chunk number, inputs, batch size).
CHUNK_METADATA_KEY = b"unqover_chunk"
#: The lock file of a shard folder (held while a process scores that shard).
LOCK_NAME = "run.lock"


def shard_folder(run_dir: str | Path, index: int, count: int) -> Path:
    """Where shard ``index`` of ``count`` keeps its chunks."""
    return Path(run_dir) / "shards" / f"{index}-of-{count}"


def chunk_path(folder: Path, chunk: int) -> Path:
    return folder / f"chunk-{chunk:06d}.parquet"


def partial_path(folder: Path, chunk: int) -> Path:
    """The checkpoint of a chunk being scored: its first inputs' scores (never named like a chunk)."""
    return folder / f"partial-{chunk:06d}.parquet"


def holds_scores(run_dir: str | Path) -> bool:
    """Whether any shard folder under ``run_dir`` (its extra scorers' and rounds' too) holds scored chunks or a
    checkpoint: work that a resumed run would use."""
    return any(any(Path(run_dir).rglob(pattern)) for pattern in ("chunk-*.parquet", "partial-*.parquet"))


def in_use(run_dir: str | Path) -> bool:
    """Whether another process holds the lock of a shard folder under ``run_dir`` (it is scoring there now)."""
    for path in Path(run_dir).rglob(LOCK_NAME):
        lock = FileLock(path, timeout=0)
        try:
            lock.acquire()
        except Timeout:
            return True
        lock.release()
    return False


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


def finished_shards(run_dir: str | Path, count: int) -> set[int]:
    """The shards of ``count`` whose folders under ``run_dir`` hold every chunk their plan records (a driver that
    runs a run's shards elsewhere need not start those again)."""
    done = set()
    for index in range(count):
        folder = shard_folder(run_dir, index, count)
        try:
            plan = _read_json(folder / "plan.json")
        except UnqoverError:
            continue
        if plan is not None and len(list(folder.glob("chunk-*.parquet"))) >= int(plan.get("chunks", 0)):
            done.add(index)
    return done


def _rows_in(path: Path) -> int:
    """The rows of a chunk or checkpoint file (0 while it is being replaced or removed)."""
    try:
        return pq.read_metadata(path).num_rows
    except (OSError, pa.ArrowInvalid):
        return 0


def scored_so_far(run_dir: str | Path, count: int, seen: dict[Path, int]) -> tuple[int | None, int]:
    """(the run's rows, as a shard's plan records them (None before any shard has started), the rows its ``count``
    shards have scored so far: their finished chunks' rows and their checkpoints' inputs), read from the files
    alone, so that another process (a driver whose shards run elsewhere) can follow a run. ``seen`` keeps the rows
    of the finished chunks already read (they never change) between calls."""
    total, scored = None, 0
    for index in range(count):
        folder = shard_folder(run_dir, index, count)
        if not folder.is_dir():
            continue
        if total is None:
            with contextlib.suppress(UnqoverError):
                total = (_read_json(folder / "plan.json") or {}).get("rows")
        for path in folder.glob("chunk-*.parquet"):
            if path not in seen:
                seen[path] = _rows_in(path)
            scored += seen[path]
        scored += sum(_rows_in(path) for path in folder.glob("partial-*.parquet"))
    return total, scored
