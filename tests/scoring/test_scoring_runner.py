"""The probe runner: resume, shards, dedup, automatic batch size and score checks, with a fake scorer.

The fake scorer's scores depend on the input text and, by a tiny amount, on the whole batch it arrives in (as
padding does in a real model), so "bit-identical" results prove that the same batches were scored.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from unqover.errors import UnqoverError
from unqover.probes.options import shard_spec
from unqover.scoring.run_plan import Scorer, plan_chunks
from unqover.scoring.runner import merge_shards, recorded_batch_size, run_shard
from unqover.scoring.sampling import select_groups
from unqover.scoring.shard_files import LOCK_NAME, shard_folder

CHUNK = 64  # inputs per chunk in these tests
BATCH = 8


def _unit(text: str, salt: int) -> float:
    digest = hashlib.blake2b(f"{salt}\x1f{text}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") / 2**64


class FakeScorer:
    """Deterministic scores from a hash of the input; can run out of memory, be interrupted or misbehave."""

    def __init__(
        self,
        *,
        key: str = "text",
        oom_above: int | None = None,
        oom_after: int | None = None,
        interrupt_after: int | None = None,
        corrupt=None,
    ) -> None:
        self.key = key
        self.oom_above = oom_above  # batches larger than this run out of memory
        self.oom_after = oom_after  # every batch after this many runs out of memory
        self.interrupt_after = interrupt_after  # Ctrl-C after this many batches
        self.corrupt = corrupt  # function (scores) -> scores returned instead
        self.calls = 0
        self.inputs: list[str] = []
        self.attempted: list[int] = []

    def _texts(self, rows: pa.Table) -> list[str]:
        if self.key == "context":
            return rows["context"].to_pylist()
        return [
            f"{c}\x1f{q}"
            for c, q in zip(rows["context"].to_pylist(), rows["question"].to_pylist(), strict=True)
        ]

    def input_key(self, rows: pa.Table) -> pa.Array:
        return pa.array(self._texts(rows), pa.string())

    def length_key(self, rows: pa.Table) -> np.ndarray:
        return np.array([len(t) for t in self._texts(rows)], dtype=np.int64)

    def expected(self, rows: pa.Table) -> np.ndarray:
        """Scores without the batch term."""
        return np.array([[_unit(t, 1), _unit(t, 2)] for t in self._texts(rows)]).reshape(-1, 2)

    def score(self, rows: pa.Table) -> np.ndarray:
        import torch

        self.attempted.append(rows.num_rows)
        if self.oom_above is not None and rows.num_rows > self.oom_above:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        if self.oom_after is not None and self.calls >= self.oom_after:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 MiB")
        if self.interrupt_after is not None and self.calls >= self.interrupt_after:
            raise KeyboardInterrupt
        self.calls += 1
        texts = self._texts(rows)
        self.inputs.extend(texts)
        batch_term = _unit("\x1e".join(texts), 3) * 1e-6
        scores = self.expected(rows) * (1 - 1e-6) + batch_term
        return self.corrupt(scores) if self.corrupt else scores


@pytest.fixture(scope="module")
def religion_rows(upstream_word_lists_path) -> pa.Table:
    from unqover.generate.unqover import make_plan
    from unqover.lexicon import WordLists

    plan = make_plan(WordLists(upstream_word_lists_path), "religion", "qa")
    return pa.Table.from_batches(list(plan.batches()))


@pytest.fixture(scope="module")
def rows(religion_rows) -> pa.Table:
    """600 rows: 150 whole groups spread over templates and attributes (10 chunks of 64 inputs)."""
    return select_groups(religion_rows, limit=150)


@pytest.fixture(scope="module")
def reference(rows, tmp_path_factory) -> pa.Table:
    """The uninterrupted, unsharded run."""
    return run_shard(
        rows, FakeScorer(), tmp_path_factory.mktemp("ref"), batch_size=BATCH, chunk_rows=CHUNK, progress=False
    )


def _files(folder) -> list[str]:
    """The shard folder's files, but for its lock file (which stays, unlocked, after a run)."""
    return sorted(p.name for p in folder.iterdir() if p.name != LOCK_NAME)


def test_fake_scorer_is_a_scorer():
    assert isinstance(FakeScorer(), Scorer)


def test_full_run_scores_every_row_in_row_order(rows, reference, tmp_path):
    assert reference["id"].equals(rows["id"])
    got = np.stack([reference["score_1"].to_numpy(), reference["score_2"].to_numpy()], axis=1)
    np.testing.assert_allclose(got, FakeScorer().expected(rows), atol=3e-6)  # each score on its own row
    folder = shard_folder(tmp_path, 0, 1)
    with pytest.raises(UnqoverError, match="600 of 600 rows have no scores"):
        merge_shards(rows, tmp_path, 1)
    run_shard(rows, FakeScorer(), tmp_path, batch_size=BATCH, chunk_rows=CHUNK, progress=False)
    assert _files(folder) == sorted(
        ["batch_size.json", "plan.json"] + [f"chunk-{k:06d}.parquet" for k in range(10)]
    )
    assert json.loads((folder / "plan.json").read_text()) == {
        "rows": 600,
        "inputs": 600,
        "chunk_rows": CHUNK,
        "chunks": 10,
        "shard": [0, 1],
    }
    assert merge_shards(rows, tmp_path, 1).equals(reference)


def test_plan_is_longest_first_and_independent_of_row_order(rows):
    scorer = FakeScorer()
    plan = plan_chunks(rows, scorer, CHUNK)
    lengths = scorer.length_key(rows)[plan.representative]
    assert np.all(np.diff(lengths) <= 0)
    shuffled = rows.take(pa.array(np.random.default_rng(1).permutation(rows.num_rows)))
    other = plan_chunks(shuffled, scorer, CHUNK)
    assert (
        rows["id"]
        .take(pa.array(plan.representative))
        .equals(shuffled["id"].take(pa.array(other.representative)))
    )


@pytest.mark.parametrize("interrupt_after", [0, 3, 8, 9, 40, 74])
def test_resume_after_interrupt_is_bit_identical(rows, reference, tmp_path, interrupt_after):
    folder = shard_folder(tmp_path, 0, 1)
    with pytest.raises(KeyboardInterrupt):
        run_shard(
            rows,
            FakeScorer(interrupt_after=interrupt_after),
            tmp_path,
            batch_size=BATCH,
            chunk_rows=CHUNK,
            progress=False,
        )
    finished = interrupt_after // (CHUNK // BATCH)  # the chunk being scored is lost, finished ones stay
    assert _files(folder) == sorted(
        ["batch_size.json", "plan.json"] + [f"chunk-{k:06d}.parquet" for k in range(finished)]
    )
    (folder / ".chunk-000009.parquet.abc.tmp").write_bytes(b"half a file")  # as left by kill -9
    resumed = FakeScorer()
    result = run_shard(rows, resumed, tmp_path, chunk_rows=CHUNK, progress=False)  # batch size recorded
    assert result.equals(reference)
    assert len(resumed.inputs) == rows.num_rows - finished * CHUNK  # finished chunks are not scored again
    assert not list(folder.glob(".*"))
    assert merge_shards(rows, tmp_path, 1).equals(reference)
    again = FakeScorer()
    assert run_shard(rows, again, tmp_path, chunk_rows=CHUNK, progress=False).equals(reference)
    assert again.calls == 0


@pytest.mark.parametrize("interrupt_after", [3, 11, 74])
def test_checkpoints_bounded_in_time_resume_mid_chunk_bit_identically(
    rows, reference, tmp_path, interrupt_after
):
    """With a time budget of 0 s every batch ends in a checkpoint: a kill loses no finished batch, and the
    resumed chunk goes on with the same batches (bit-identical to the uninterrupted run)."""
    folder = shard_folder(tmp_path, 0, 1)
    with pytest.raises(KeyboardInterrupt):
        run_shard(rows, FakeScorer(interrupt_after=interrupt_after), tmp_path, batch_size=BATCH,
                  chunk_rows=CHUNK, progress=False, checkpoint_seconds=0)  # fmt: skip
    per_chunk = CHUNK // BATCH
    finished, batches = divmod(interrupt_after, per_chunk)
    partial = [f"partial-{finished:06d}.parquet"] if batches else []
    assert _files(folder) == sorted(
        ["batch_size.json", "plan.json", *partial] + [f"chunk-{k:06d}.parquet" for k in range(finished)]
    )
    resumed = FakeScorer()
    assert run_shard(rows, resumed, tmp_path, chunk_rows=CHUNK, progress=False).equals(reference)
    assert len(resumed.inputs) == rows.num_rows - interrupt_after * BATCH  # only the unscored batches
    assert not list(folder.glob("partial-*"))  # a finished chunk replaces its checkpoint
    assert merge_shards(rows, tmp_path, 1).equals(reference)


def test_without_a_time_budget_checkpoints_are_only_chunks(rows, reference, tmp_path):
    folder = shard_folder(tmp_path, 0, 1)
    with pytest.raises(KeyboardInterrupt):
        run_shard(rows, FakeScorer(interrupt_after=11), tmp_path, batch_size=BATCH, chunk_rows=CHUNK,
                  progress=False, checkpoint_seconds=3600)  # fmt: skip
    assert not list(folder.glob("partial-*"))
    assert run_shard(rows, FakeScorer(), tmp_path, chunk_rows=CHUNK, progress=False).equals(reference)


def test_an_oom_after_a_checkpoint_restarts_the_chunk_at_half_the_size(rows, tmp_path):
    class OnceOutOfMemory(FakeScorer):
        """One out-of-memory error at the 11th batch (the 4th of chunk 1, after its checkpoints)."""

        def score(self, rows):
            import torch

            if self.calls == 10 and not self.attempted.count(-1):
                self.attempted.append(-1)
                raise torch.OutOfMemoryError("CUDA out of memory.")
            return super().score(rows)

    folder = shard_folder(tmp_path, 0, 1)
    scorer = OnceOutOfMemory()
    with pytest.raises(
        KeyboardInterrupt
    ):  # stop right after the restart's first batch, to look at the folder
        scorer.interrupt_after = 12
        run_shard(
            rows, scorer, tmp_path, chunk_rows=CHUNK, max_batch_size=8, progress=False, checkpoint_seconds=0
        )
    assert recorded_batch_size(tmp_path) == 4
    part = pq.read_table(
        folder / "partial-000001.parquet"
    )  # rewritten at the new size from the chunk's start
    assert json.loads(part.schema.metadata[b"unqover_chunk"])["batch_size"] == 4 and part.num_rows == 8
    result = run_shard(rows, FakeScorer(), tmp_path, chunk_rows=CHUNK, progress=False)
    chunks = [pq.read_table(p) for p in sorted(folder.glob("chunk-*.parquet"))]
    sizes = [json.loads(c.schema.metadata[b"unqover_chunk"])["batch_size"] for c in chunks]
    assert sizes == [8] + [4] * 9  # chunk 1 scored whole at the halved size
    assert result.num_rows == rows.num_rows and not list(folder.glob("partial-*"))


def test_a_second_process_on_the_same_shard_is_refused_and_keeps_its_files(rows, reference, tmp_path):
    """Two identical commands into one folder: the second refuses at once and deletes nothing of the first."""
    from filelock import FileLock

    folder = shard_folder(tmp_path, 0, 1)
    folder.mkdir(parents=True)
    writing = folder / ".chunk-000003.parquet.x1y2.tmp"  # the first process's file being written
    writing.write_bytes(b"in progress")
    with FileLock(folder / LOCK_NAME, timeout=0):  # the first process, scoring
        second = FakeScorer()
        with pytest.raises(UnqoverError, match="another unqover process is scoring"):
            run_shard(rows, second, tmp_path, batch_size=BATCH, chunk_rows=CHUNK, progress=False)
        assert second.calls == 0 and writing.read_bytes() == b"in progress"
        other_shard = run_shard(rows, FakeScorer(), tmp_path, batch_size=BATCH, chunk_rows=CHUNK,
                                shard=(1, 2), progress=False)  # fmt: skip
        assert other_shard.num_rows > 0  # another shard of the same folder is not blocked
    # once the first is gone, its leftovers are stale: the next run clears them and scores
    assert run_shard(rows, FakeScorer(), tmp_path, batch_size=BATCH, chunk_rows=CHUNK, progress=False).equals(
        reference
    )
    assert not writing.exists()


@pytest.mark.parametrize("n_shards", [2, 3])
def test_sharded_runs_merge_to_the_unsharded_result(rows, reference, tmp_path, n_shards):
    parts = []
    for i in range(n_shards):
        # each shard may see the rows in another order: the plan depends only on their content
        order = np.random.default_rng(i).permutation(rows.num_rows)
        mine = rows.take(pa.array(order))
        parts.append(
            run_shard(
                mine,
                FakeScorer(),
                tmp_path,
                batch_size=BATCH,
                shard=(i, n_shards),
                chunk_rows=CHUNK,
                progress=False,
            )
        )
    assert sum(p.num_rows for p in parts) == rows.num_rows
    assert pc.count_distinct(pa.concat_tables(parts)["id"]).as_py() == rows.num_rows
    assert merge_shards(rows, tmp_path, n_shards).equals(reference)
    chunks = sorted(
        p.name for i in range(n_shards) for p in shard_folder(tmp_path, i, n_shards).glob("chunk-*")
    )
    assert chunks == [f"chunk-{k:06d}.parquet" for k in range(10)]


def test_merge_names_missing_and_unfinished_shards(rows, tmp_path):
    run_shard(rows, FakeScorer(), tmp_path, batch_size=BATCH, shard=(0, 3), chunk_rows=CHUNK, progress=False)
    with pytest.raises(KeyboardInterrupt):
        run_shard(
            rows,
            FakeScorer(interrupt_after=9),
            tmp_path,
            batch_size=BATCH,
            shard=(1, 3),
            chunk_rows=CHUNK,
            progress=False,
        )
    with pytest.raises(UnqoverError) as err:
        merge_shards(rows, tmp_path, 3)
    message = str(err.value)
    # shard 0 has chunks 0, 3, 6 (64 rows each) and 9 (the last 24); shard 1 finished chunk 1 of 1, 4, 7
    assert f"{600 - 3 * 64 - 24 - 64} of 600 rows have no scores" in message
    assert "shard 1/3 has 1 of 3 chunks" in message
    assert "shard 2/3 has not started" in message
    with pytest.raises(UnqoverError, match="shards of n = 3"):
        merge_shards(rows, tmp_path, 2)
    run_shard(rows, FakeScorer(), tmp_path, batch_size=BATCH, shard=(1, 3), chunk_rows=CHUNK, progress=False)
    run_shard(rows, FakeScorer(), tmp_path, batch_size=BATCH, shard=(2, 3), chunk_rows=CHUNK, progress=False)
    assert merge_shards(rows, tmp_path, 3).num_rows == 600
    with pytest.raises(UnqoverError, match="200 scored ids are not among the rows"):
        merge_shards(rows.slice(0, 400), tmp_path, 3)


def test_duplicate_inputs_are_scored_once(rows, tmp_path):
    scorer = FakeScorer(key="context")  # rows with the same context are one input
    result = run_shard(rows, scorer, tmp_path, batch_size=BATCH, chunk_rows=16, progress=False)
    contexts = rows["context"]
    distinct = pc.count_distinct(contexts).as_py()
    assert distinct < rows.num_rows
    assert len(scorer.inputs) == distinct == len(set(scorer.inputs))
    assert result["id"].equals(rows["id"])
    by_context: dict[str, tuple[float, float]] = {}
    for context, s1, s2 in zip(
        contexts.to_pylist(), result["score_1"].to_pylist(), result["score_2"].to_pylist(), strict=True
    ):
        assert by_context.setdefault(context, (s1, s2)) == (s1, s2)
    assert merge_shards(rows, tmp_path, 1).equals(result)  # chunk files hold the duplicates too
    plan = json.loads((shard_folder(tmp_path, 0, 1) / "plan.json").read_text())
    assert plan["inputs"] == distinct and plan["rows"] == rows.num_rows


def test_automatic_batch_size_halves_on_oom_and_is_reused(rows, tmp_path):
    scorer = FakeScorer(oom_above=20)
    result = run_shard(rows, scorer, tmp_path, chunk_rows=CHUNK, progress=False)  # CPU: starts at 64
    assert scorer.attempted[:3] == [64, 32, 16]
    assert set(scorer.attempted[3:]) == {16, 600 - 9 * 64 - 16}  # the last chunk has 24 inputs
    assert recorded_batch_size(tmp_path) == 16
    record = json.loads((shard_folder(tmp_path, 0, 1) / "batch_size.json").read_text())
    assert record == {"batch_size": 16, "automatic": True}
    explicit = run_shard(
        rows, FakeScorer(), tmp_path / "explicit", batch_size=16, chunk_rows=CHUNK, progress=False
    )
    assert result.equals(explicit)  # same batches, bit for bit


def test_recorded_batch_size_is_kept_on_resume(rows, tmp_path):
    with pytest.raises(KeyboardInterrupt):
        run_shard(
            rows, FakeScorer(oom_above=20, interrupt_after=9), tmp_path, chunk_rows=CHUNK, progress=False
        )
    with pytest.raises(UnqoverError, match="scored with batch size 16"):
        run_shard(rows, FakeScorer(), tmp_path, batch_size=8, chunk_rows=CHUNK, progress=False)
    resumed = FakeScorer()  # no OOM now: the recorded size is used, not the starting one
    result = run_shard(rows, resumed, tmp_path, chunk_rows=CHUNK, progress=False)
    assert set(resumed.attempted) == {16, 8}  # 8: the end of the last chunk (24 inputs)
    explicit = run_shard(
        rows, FakeScorer(), tmp_path / "explicit", batch_size=16, chunk_rows=CHUNK, progress=False
    )
    assert result.equals(explicit)
    assert run_shard(rows, FakeScorer(), tmp_path, batch_size=16, chunk_rows=CHUNK, progress=False).equals(
        result
    )


def test_automatic_batch_size_starts_high_on_cuda(rows, tmp_path, monkeypatch):
    import torch

    freed = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: freed.append(1))
    scorer = FakeScorer(oom_above=40)
    run_shard(rows, scorer, tmp_path, chunk_rows=256, max_batch_size=256, progress=False)
    assert scorer.attempted[:4] == [256, 128, 64, 32]
    assert len(freed) == 3 and recorded_batch_size(tmp_path) == 32


def test_oom_errors_are_clear_and_keep_finished_chunks(rows, reference, tmp_path):
    with pytest.raises(UnqoverError, match="out of memory at batch size 1"):
        run_shard(rows, FakeScorer(oom_above=0), tmp_path / "one", chunk_rows=CHUNK, progress=False)
    with pytest.raises(UnqoverError, match=r"out of memory at batch size 8 .*smaller batch size"):
        run_shard(
            rows, FakeScorer(oom_after=20), tmp_path, batch_size=BATCH, chunk_rows=CHUNK, progress=False
        )
    folder = shard_folder(tmp_path, 0, 1)
    assert sorted(p.name for p in folder.glob("chunk-*")) == ["chunk-000000.parquet", "chunk-000001.parquet"]
    assert run_shard(rows, FakeScorer(), tmp_path, chunk_rows=CHUNK, progress=False).equals(reference)


@pytest.mark.parametrize(
    ("corrupt", "what"),
    [
        (lambda s: np.where(np.arange(len(s))[:, None] == 3, np.nan, s), "nan"),
        (lambda s: np.where(np.arange(len(s))[:, None] == 3, 1.5, s), "1.5"),
        (lambda s: np.where(np.arange(len(s))[:, None] == 3, -0.25, s), "-0.25"),
        (lambda s: s[:, :1], "shape"),
        (lambda s: s[:-1], "shape"),
    ],
)
def test_invalid_scores_are_rejected_naming_the_row(rows, tmp_path, corrupt, what):
    scorer = FakeScorer(corrupt=corrupt)
    plan = plan_chunks(rows, scorer, CHUNK)
    row = 3 if what != "shape" else 0
    bad_id = rows["id"][int(plan.representative[row])].as_py()
    with pytest.raises(
        UnqoverError, match=f"{what}.*{bad_id}|{bad_id}.*{what}" if what != "shape" else bad_id
    ):
        run_shard(rows, scorer, tmp_path, batch_size=BATCH, chunk_rows=CHUNK, progress=False)
    assert not list(shard_folder(tmp_path, 0, 1).glob("chunk-*"))


def test_progress_bar_does_not_change_results(rows, reference, tmp_path, capsys):
    quiet = run_shard(
        rows, FakeScorer(), tmp_path / "quiet", batch_size=BATCH, chunk_rows=CHUNK, progress=False
    )
    assert capsys.readouterr().err == ""
    with pytest.raises(KeyboardInterrupt):
        run_shard(
            rows,
            FakeScorer(interrupt_after=16),
            tmp_path / "loud",
            batch_size=BATCH,
            chunk_rows=CHUNK,
            progress=True,
        )
    capsys.readouterr()
    loud = run_shard(rows, FakeScorer(), tmp_path / "loud", batch_size=BATCH, chunk_rows=CHUNK, progress=True)
    err = capsys.readouterr().err
    assert "600/600" in err and "row/s" in err and "batch_size=8" in err
    assert quiet.equals(reference) and loud.equals(reference)


def test_plan_and_arguments_are_checked(rows, tmp_path):
    run_shard(rows, FakeScorer(), tmp_path, batch_size=BATCH, chunk_rows=CHUNK, progress=False)
    with pytest.raises(UnqoverError, match=r"different plan.*chunk_rows"):
        run_shard(rows, FakeScorer(), tmp_path, batch_size=BATCH, chunk_rows=32, progress=False)
    with pytest.raises(UnqoverError, match=r"different plan.*rows"):
        run_shard(
            rows.slice(0, 300), FakeScorer(), tmp_path, batch_size=BATCH, chunk_rows=CHUNK, progress=False
        )
    for bad in ({"batch_size": 0}, {"max_batch_size": -1}, {"shard": (2, 2)}, {"chunk_rows": 0}):
        with pytest.raises(UnqoverError):
            run_shard(rows, FakeScorer(), tmp_path / "x", **{"progress": False, **bad})
    doubled = pa.concat_tables([rows.slice(0, 4), rows.slice(0, 4)])
    with pytest.raises(UnqoverError, match="not unique"):
        run_shard(doubled, FakeScorer(), tmp_path / "y", progress=False)
    with pytest.raises(UnqoverError, match="n_shards"):
        merge_shards(rows, tmp_path, 0)


def test_shard_spec():
    assert shard_spec("0/1") == (0, 1)
    assert shard_spec(" 2 / 3 ") == (2, 3)
    for bad in ("3/3", "1/0", "-1/2", "a/b", "1", "1/2/3", ""):
        with pytest.raises(UnqoverError, match="shard"):
            shard_spec(bad)
