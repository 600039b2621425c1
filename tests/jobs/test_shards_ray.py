"""`unqover probe MODEL --bias B --ray ADDRESS --shards N`: one run split into shard tasks on a real local Ray
cluster (``ray start --head --num-cpus 2`` in a subprocess: two worker processes) gives the local run's predictions
bit for bit; a worker killed mid-shard is replaced and its shard resumes (the chunks it had finished are not scored
again); a driver started again submits only the shards not in; a sweep's runs are split into shard tasks too."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from unqover.cli import main
from unqover.jobs.run import run_probe
from unqover.jobs.shards_ray import run_sharded
from unqover.probes.base import RunOptions
from unqover.probes.registry import get_probe

pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def ray_address(tmp_path_factory):
    from ray_cluster import ray_head

    with ray_head(tmp_path_factory.mktemp("ray")) as address:
        yield address


@pytest.fixture(scope="module")
def one_thread():
    """Every run here, local or on a worker (which takes the driver's count), scores with one torch thread, so
    that the cluster's two CPUs run two shard tasks at once."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def causal_model(tmp_path_factory, religion_tables) -> Path:
    import tiny_models

    rows = religion_tables["qa"]
    texts = sorted(set(rows["context"].to_pylist()) | set(rows["question"].to_pylist()))
    return tiny_models.gpt2(tmp_path_factory.mktemp("shards-models") / "gpt2", texts)


def _run(output: Path, word_lists: Path, **changes) -> RunOptions:
    """200 groups (800 rows) in chunks of 50 inputs (16 chunks: 8 a shard), batches of 4, on the CPU."""
    options = RunOptions(
        output=output, limit=200, seed=3, batch_size=4, chunk_rows=50, device="cpu", progress=False,
        settings={"word_lists": word_lists},
    )  # fmt: skip
    return replace(options, **changes)


@pytest.fixture(scope="module")
def local_run(one_thread, causal_model, tmp_path_factory, upstream_word_lists_path) -> Path:
    """The same run without Ray, in this process."""
    folder = tmp_path_factory.mktemp("local") / "run"
    assert run_probe(str(causal_model), get_probe("religion"), _run(folder, upstream_word_lists_path))
    return folder


def _same_run(local: Path, on_ray: Path) -> None:
    assert pq.read_table(on_ray / "predictions.parquet").equals(pq.read_table(local / "predictions.parquet"))
    assert (on_ray / "run.json").read_text() == (local / "run.json").read_text()
    result = [json.loads((f / "results.json").read_text())["result"] for f in (local, on_ray)]
    assert result[0] == result[1]


def test_a_run_in_shard_tasks_is_the_local_run_bit_for_bit(
    ray_address, one_thread, causal_model, tmp_path, upstream_word_lists_path, capsys
):
    """The command line: ``--ray ADDRESS --shards 2`` against the same command without them."""
    argv = [
        *(
            "probe",
            str(causal_model),
            "--bias",
            "religion",
            "--limit",
            "60",
            "--seed",
            "3",
            "--device",
            "cpu",
        ),
        *("--word-lists", str(upstream_word_lists_path), "--batch-size", "8"),
    ]
    assert main([*argv, "--output", str(tmp_path / "local"), "--quiet"]) == 0
    capsys.readouterr()
    folder = tmp_path / "on-ray"
    assert main([*argv, "--output", str(folder), "--ray", ray_address, "--shards", "2"]) == 0
    printed = capsys.readouterr()
    assert (
        f"Ray at {ray_address}: 2 shard task(s) of one run into {folder}, 1 CPU and 1 torch thread"
        in printed.out
    )
    assert (
        f"Plan of religion on {causal_model}: 240 rows, 240 model inputs, " in printed.out
    )  # before it starts
    assert "scoring: 100%" in printed.err  # the one progress bar, over every row
    _same_run(tmp_path / "local", folder)
    assert sorted(p.name for p in (folder / "shards").iterdir()) == ["0-of-2", "1-of-2"]
    counted = [
        json.loads((f / "results.json").read_text())["provenance"]["throughput"]
        for f in (tmp_path / "local", folder)
    ]
    assert counted[0]["tokens"] == counted[1]["tokens"]  # the shard tasks' tokens, summed


def _kill_the_holder_of(shard: Path, stop: threading.Event, seen: dict) -> None:
    """SIGKILL the worker scoring ``shard`` (the process holding its lock) once it has finished a chunk and is
    checkpointing the next; ``seen``: the chunk files it had finished then, with their inode and mtime."""
    import psutil

    lock = str(shard / "run.lock")
    while not stop.is_set():
        chunks = list(shard.glob("chunk-*.parquet"))
        if chunks and list(shard.glob("partial-*.parquet")):
            for process in psutil.process_iter(["cmdline"]):
                if not (process.info["cmdline"] or [""])[0].startswith("ray::"):
                    continue
                try:
                    if any(f.path == lock for f in process.open_files()):
                        seen.update({p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in chunks})
                        process.kill()
                        return
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    continue
        time.sleep(0.005)


def test_a_worker_killed_mid_shard_is_replaced_and_the_bits_are_the_same(
    ray_address, causal_model, local_run, tmp_path, upstream_word_lists_path
):
    folder = tmp_path / "on-ray"
    run = _run(folder, upstream_word_lists_path, checkpoint_seconds=0.0)  # a checkpoint after every batch
    stop, seen = threading.Event(), {}
    killer = threading.Thread(target=_kill_the_holder_of, args=(folder / "shards" / "1-of-2", stop, seen))
    killer.start()
    try:
        run_sharded(str(causal_model), get_probe("religion"), run, ray_address, 2)
    finally:
        stop.set()
        killer.join()
    assert 1 <= len(seen) < 8, "the worker was not killed mid-shard"
    _same_run(local_run, folder)
    for index in (0, 1):  # shard i holds chunks i, i + 2, ...
        chunks = sorted(p.name for p in (folder / "shards" / f"{index}-of-2").glob("chunk-*.parquet"))
        assert chunks == [f"chunk-{k:06d}.parquet" for k in range(index, 16, 2)]
    for path, stamp in seen.items():  # the chunks the killed worker had finished were not scored again
        assert (path.stat().st_ino, path.stat().st_mtime_ns) == stamp, path
    assert not list(folder.glob("shards/*/partial-*.parquet"))


def test_a_driver_started_again_submits_only_the_shards_not_in(
    ray_address, causal_model, local_run, tmp_path, upstream_word_lists_path, capsys
):
    """A driver stopped after shard 0 was in (its run folder: run.json and shard 0's chunks; shard 1 not
    started) resumes: the same call submits shard 1 alone, then merges and measures."""
    folder = tmp_path / "on-ray"
    run = _run(folder, upstream_word_lists_path)
    assert run_probe(str(causal_model), get_probe("religion"), replace(run, shard=(0, 2))) is None  # here
    shard0 = {p: p.stat().st_mtime_ns for p in folder.glob("shards/0-of-2/chunk-*.parquet")}
    assert len(shard0) == 8 and not (folder / "shards" / "1-of-2").exists()
    capsys.readouterr()

    run_sharded(str(causal_model), get_probe("religion"), run, ray_address, 2)
    assert "; 1 shard(s) in already" in capsys.readouterr().out
    _same_run(local_run, folder)
    assert {p: p.stat().st_mtime_ns for p in folder.glob("shards/0-of-2/chunk-*.parquet")} == shard0


def test_a_sweep_with_shards_splits_every_run_into_shard_tasks(
    ray_address, causal_model, tmp_path, upstream_word_lists_path, monkeypatch, capsys
):
    import shutil

    monkeypatch.chdir(tmp_path)
    shutil.copytree(causal_model, tmp_path / "other")  # a second model: the same weights in another folder
    argv = [
        *("probe", str(causal_model), "other", "--bias", "religion", "--limit", "40", "--seed", "3"),
        *("--word-lists", str(upstream_word_lists_path), "--output", "sweep", "--quiet", "--device", "cpu"),
        *("--ray", ray_address, "--shards", "2", "--leaderboard-metric", "positional_error"),
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert f"Ray at {ray_address}: 2 run(s) in 2 shard task(s) each" in printed
    runs = [tmp_path / "sweep" / name / "religion" for name in (causal_model.name, "other")]
    for folder in runs:
        assert sorted(p.name for p in (folder / "shards").iterdir()) == ["0-of-2", "1-of-2"]
    first, second = (pq.read_table(folder / "predictions.parquet") for folder in runs)
    assert first.num_rows == 160 and first.equals(second)
    assert "Sweep: 2 model(s) finished into sweep" in printed
