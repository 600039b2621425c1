"""What another process reads of a sharded run from its files alone (the Ray driver's progress bar and its resume),
and two processes claiming one run folder at once (a run's shard tasks start together)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from unqover.scoring.run_folder import claim, read_manifest
from unqover.scoring.runner import run_shard
from unqover.scoring.shard_files import finished_shards, partial_path, scored_so_far, shard_folder


class LengthScorer:
    """Scores from the text's length; rows with one text are one input."""

    def input_key(self, rows: pa.Table) -> pa.Array:
        return rows["text"]

    def length_key(self, rows: pa.Table) -> np.ndarray:
        return np.array([len(t) for t in rows["text"].to_pylist()], dtype=np.int64)

    def score(self, rows: pa.Table) -> np.ndarray:
        n = np.array([len(t) for t in rows["text"].to_pylist()], dtype=np.float64)
        return np.stack([1 / (1 + n), n / (1 + n)], axis=1)


def _rows(n: int) -> pa.Table:
    texts = [f"text {i % 90}" + "x" * (i % 7) for i in range(n)]  # 100 rows, some sharing an input
    return pa.table({"id": [f"{i:04x}" for i in range(n)], "text": texts})


def test_a_sharded_run_is_followed_from_its_files(tmp_path):
    rows = _rows(100)
    assert scored_so_far(tmp_path, 3, {}) == (None, 0)  # nothing started
    run_shard(rows, LengthScorer(), tmp_path, shard=(1, 3), chunk_rows=10, batch_size=4, progress=False)
    seen: dict = {}
    total, scored = scored_so_far(tmp_path, 3, seen)
    chunks = sorted(shard_folder(tmp_path, 1, 3).glob("chunk-*.parquet"))
    assert total == 100 and scored == sum(pq.read_metadata(p).num_rows for p in chunks) > 0
    assert set(seen) == set(chunks)  # finished chunks are read once
    assert finished_shards(tmp_path, 3) == {1}
    chunks[0].unlink()  # a shard that lost a chunk is not in
    assert finished_shards(tmp_path, 3) == set()
    run_shard(rows, LengthScorer(), tmp_path, shard=(1, 3), chunk_rows=10, batch_size=4, progress=False)
    for index in (0, 2):
        run_shard(
            rows, LengthScorer(), tmp_path, shard=(index, 3), chunk_rows=10, batch_size=4, progress=False
        )
    assert finished_shards(tmp_path, 3) == {0, 1, 2}
    assert scored_so_far(tmp_path, 3, {}) == (100, 100)


def test_a_checkpoint_counts_its_inputs(tmp_path):
    rows = _rows(100)
    run_shard(rows, LengthScorer(), tmp_path, chunk_rows=10, batch_size=4, progress=False)
    folder = shard_folder(tmp_path, 0, 1)
    last = sorted(folder.glob("chunk-*.parquet"))[-1]
    table = pq.read_table(last)
    pq.write_table(table.slice(0, 4), partial_path(folder, 99))
    assert scored_so_far(tmp_path, 1, {}) == (100, 104)


def test_a_folder_another_shard_is_claiming_is_claimed_too(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / ".run.json.abc123.tmp").write_text("{")  # another process writing run.json right now
    claim(folder, {"probe": "religion"})
    assert read_manifest(folder) == {"probe": "religion"}
    claim(folder, {"probe": "religion"})  # the other shard's claim: the same run
