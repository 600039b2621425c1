"""`unqover probe M1 M2 --bias religion --ray ADDRESS`: a sweep on a real local Ray cluster (``ray start --head``
in a subprocess, not a mock) gives the same predictions, bit for bit, as the same sweep without Ray; a worker killed
mid-run leaves a run folder that the next call resumes."""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from unqover.cli import main
from unqover.jobs.sweep import SweepModel, run_model, sweep
from unqover.jobs.sweep_ray import run_on_ray
from unqover.probes.base import RunOptions
from unqover.probes.registry import get_probe
from unqover.scoring.placement import torch_threads

pytestmark = pytest.mark.ray

LIMIT = 400  # groups of the seeded sample every model scores


@pytest.fixture(scope="module")
def ray_address():
    """A real one-node Ray cluster for this module (:func:`ray_cluster.ray_head`)."""
    from ray_cluster import ray_head

    with ray_head(Path(tempfile.mkdtemp(prefix="ray"))) as address:
        yield address


@pytest.fixture(scope="module")
def models(tmp_path_factory, religion_qa_model, religion_tables) -> list[Path]:
    import tiny_models

    rows = religion_tables["qa"]
    texts = sorted(set(rows["context"].to_pylist()) | set(rows["question"].to_pylist()))
    return [
        religion_qa_model,
        tiny_models.bert_qa(tmp_path_factory.mktemp("ray-models") / "qa-2", texts, seed=2),
    ]


@pytest.fixture(scope="module")
def mlm_models(tmp_path_factory, religion_tables) -> list[Path]:
    """Two tiny masked LMs that know every word of the religion ``mlm`` rows."""
    import tiny_models

    rows = religion_tables["mlm"]
    texts = sorted(set(rows["context"].to_pylist()) | set(rows["question"].to_pylist()))
    folder = tmp_path_factory.mktemp("ray-mlm")
    return [tiny_models.bert_mlm(folder / f"mlm-{seed}", texts, seed=seed) for seed in (0, 1)]


def _predictions(folder: Path) -> dict:
    return {
        p.relative_to(folder): pq.read_table(p) for p in sorted(folder.glob("*/religion/predictions.parquet"))
    }


def _same_predictions_and_threads(plain: Path, on_ray: Path) -> None:
    """Both sweeps' predictions bit for bit, scored with the same torch threads (the driver's), as each records."""
    import torch

    from unqover.predictions import read_provenance

    local, remote = _predictions(plain), _predictions(on_ray)
    assert len(local) == 2 and local.keys() == remote.keys()
    for name, table in local.items():
        assert table.equals(remote[name]), name  # bit for bit
        threads = [read_provenance(folder / name)["threads"] for folder in (plain, on_ray)]
        assert threads == [torch.get_num_threads()] * 2, name


def _argv(models, output, word_lists, *extra) -> list[str]:
    return [
        "probe",
        *map(str, models),
        *("--bias", "religion", "--word-lists", str(word_lists), "--limit", str(LIMIT), "--seed", "3"),
        *("--output", str(output), "--quiet", "--leaderboard-metric", "positional_error", *extra),
    ]


@pytest.mark.slow
def test_sweep_on_ray_gives_the_same_predictions_as_without(
    ray_address, models, tmp_path, upstream_word_lists_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)  # relative paths: the tasks must run in the driver's folder
    local = [Path(os.path.relpath(m, tmp_path)) for m in models]
    lists = Path(os.path.relpath(upstream_word_lists_path, tmp_path))
    assert main(_argv(local, Path("plain"), lists)) == 0
    monkeypatch.setenv("RAY_ADDRESS", ray_address)
    assert main(_argv(local, Path("on-ray"), lists, "--ray")) == 0
    printed = capsys.readouterr().out
    threads = torch_threads(load=True)
    cpus = "1 CPU" if threads == 1 else f"{min(threads, 2)} CPUs"  # the cluster's node has 2
    assert f"Ray at {ray_address}: 2 run(s), {cpus} and {threads} torch thread" in printed

    _same_predictions_and_threads(tmp_path / "plain", tmp_path / "on-ray")
    plain = _predictions(tmp_path / "plain")
    for name in plain:  # the same run records: either folder resumes the other's runs
        run_json = Path(name).parent / "run.json"
        assert (tmp_path / "plain" / run_json).read_text() == (tmp_path / "on-ray" / run_json).read_text()
    board = (tmp_path / "on-ray" / "leaderboard-religion.json").read_text()
    assert board.replace("on-ray", "plain") == (tmp_path / "plain" / "leaderboard-religion.json").read_text()


@pytest.mark.slow
def test_masked_lm_predictions_on_ray_are_the_same_bits(
    ray_address, mlm_models, tmp_path, upstream_word_lists_path, monkeypatch
):
    """A masked LM's scores sum over a vocabulary, where the torch thread count can change the last bits: each Ray
    task scores with the driver's threads, so they are the local sweep's bit for bit."""
    monkeypatch.chdir(tmp_path)
    local = [Path(os.path.relpath(m, tmp_path)) for m in mlm_models]
    lists = Path(os.path.relpath(upstream_word_lists_path, tmp_path))
    assert main(_argv(local, Path("plain"), lists)) == 0
    assert main(_argv(local, Path("on-ray"), lists, "--ray", ray_address)) == 0
    _same_predictions_and_threads(tmp_path / "plain", tmp_path / "on-ray")
    run = json.loads((tmp_path / "on-ray" / local[0].name / "religion" / "run.json").read_text())
    assert run["dataset"]["config"] == "mlm"


def _kill_worker_when(folder: Path, stop: threading.Event) -> None:
    """SIGKILL the Ray worker running the sweep's task once a checkpoint of its run exists."""
    import psutil

    while not stop.is_set():
        if list(folder.glob("shards/*/partial-*.parquet")):
            for process in psutil.process_iter(["cmdline"]):
                if (process.info["cmdline"] or [""])[0].startswith("ray::_run_task"):
                    process.kill()
                    return
        time.sleep(0.01)


@pytest.mark.slow
def test_a_worker_lost_mid_run_leaves_a_run_the_next_call_resumes(
    ray_address, models, tmp_path, upstream_word_lists_path
):
    probe = get_probe("religion")
    run = RunOptions(
        output=tmp_path / "sweep",
        limit=LIMIT,
        seed=3,
        batch_size=4,
        checkpoint_seconds=0.0,  # a checkpoint after every batch: the kill comes mid-run
        progress=False,
        settings={"word_lists": upstream_word_lists_path},
    )
    model = SweepModel(str(models[1]))
    folder = run.output / model.folder_name() / "religion"
    stop = threading.Event()
    killer = threading.Thread(target=_kill_worker_when, args=(folder, stop))
    killer.start()
    try:  # no retry: the loss is seen
        first = run_on_ray([model], [probe], run, ray_address, run_model, retries=0)
    finally:
        stop.set()
        killer.join()
    [error] = first[model]
    assert error.startswith("the Ray task was lost (") and "resumes its run folder" in error
    assert (folder / "run.json").is_file() and not (folder / "predictions.parquet").exists()
    assert list(folder.glob("shards/*/partial-*.parquet"))  # what the lost worker scored is kept

    again = sweep([model], [probe], run, ray_address=ray_address)  # the next call resumes it
    assert again.failures == {} and again.finished == [model]
    fresh = sweep([model], [probe], replace(run, output=tmp_path / "fresh", checkpoint_seconds=60.0))
    assert fresh.finished == [model]
    assert pq.read_table(folder / "predictions.parquet").equals(
        pq.read_table(tmp_path / "fresh" / model.folder_name() / "religion" / "predictions.parquet")
    )
