"""One run split into shard tasks on an existing Ray cluster (``unqover probe MODEL --bias B --ray [ADDRESS]
--shards [N]``), and a sweep's runs split the same way (``unqover probe M1 M2 ... --ray --shards N``).

The run's rows are the shards of a local ``--shard I/N`` run (:mod:`unqover.scoring.runner`: chunk ``k`` goes to
shard ``k mod N``): each shard is one Ray task, with a GPU where the cluster has GPUs (else the CPUs of the driver's
torch threads, as a sweep's tasks: :mod:`unqover.jobs.sweep_ray`), that loads the model, claims the one run folder
on the shared file system and writes its scores there as it goes (its shard folder, ``shards/<i>-of-<N>/``, exactly
as ``--shard i/N`` writes it). The driver follows the shard files with one progress bar over all rows; once every
shard is in, one more task loads the model (its tokenizer and config; its weights, since the engines load them
whole) and merges, measures and reports as the last shard of a local sharded run does, writing the one run folder
(``predictions.parquet``, ``results.json``, the reports) a local run writes.

Faults: a worker lost mid-shard (a process killed, a node gone) leaves its shard folder as an interrupted run
leaves it (finished chunks, the last checkpoint); Ray runs the task again (:data:`RETRIES` times) and the new try
resumes it from there, so nothing scored is lost and nothing is scored twice (each chunk and checkpoint is written
whole, atomically, by the one process that holds the shard's lock). A driver stopped and started again (the same
command) skips the shards that are complete and resumes the others. The predictions are the same bits as a local
run's: the plan and the batches do not depend on the sharding, and every CPU task scores with the driver's torch
threads (:mod:`tests.jobs.test_shards_ray`).
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from unqover.errors import UnqoverError, first_line
from unqover.jobs.folder_check import planned_capabilities
from unqover.jobs.plan_view import plan_text
from unqover.jobs.run import default_output, plan_run, run_loaded
from unqover.jobs.sweep_ray import (
    RETRIES,
    _connect,
    _lost,
    _require_ray,
    _run_task,
    _task_options,
    _where,
    sweep_ray_address,
)
from unqover.probes.base import ProbeDefinition, ProbeRun, RunOptions
from unqover.scoring.engines import load_for
from unqover.scoring.placement import torch_threads, use_threads
from unqover.scoring.runner import CPU_BATCH_SIZE
from unqover.scoring.shard_files import finished_shards, scored_so_far
from unqover.scoring.throughput import Throughput, add, take

__all__ = ["ShardedRun", "run_sharded", "score_shard", "shard_count", "sweep_on_ray"]

#: Seconds between two looks at the shard files (the driver's progress bar).
POLL_SECONDS = 1.0


def shard_count(ray, options: dict, given: int | None) -> int:
    """``--shards N``, else one shard per GPU of the cluster (tasks hold a GPU each), else one per task's worth of
    the cluster's CPUs."""
    if given:
        return given
    resources = ray.cluster_resources()
    if options["num_gpus"]:
        return max(1, int(resources.get("GPU", 1)))
    return max(1, int(resources.get("CPU", 1) // options["num_cpus"]))


def _loaded(model_id: str, probe: ProbeDefinition, run: RunOptions):
    """The run checked and its model loaded on this worker, with the driver's torch threads on the CPU."""
    if run.threads is not None:
        use_threads(run.threads)
    plan = plan_run(model_id, probe, run)
    placement, model = load_for(plan.engine, plan.request, probe.wants)
    return plan, placement, model


def score_shard(model_id: str, probes: list[ProbeDefinition], run: RunOptions) -> str | Throughput | None:
    """A shard task: score shard ``run.shard`` of the run into ``run.output`` (claimed as every shard of a run
    claims it), without merging; the tokens it ran (None: none counted) once the shard is in, else the one-line
    error."""
    (probe,) = probes
    try:
        plan, placement, model = _loaded(model_id, probe, run)
        run_loaded(model_id, probe, plan.run, plan.settings, replace(placement, merges=False), model)
    except MemoryError:
        return "out of memory (MemoryError): this shard needs more memory than this process may use"
    except (UnqoverError, OSError, RuntimeError, ValueError) as err:
        return first_line(err)
    return take(getattr(model, "model", None))


def finish_run(
    model_id: str, probes: list[ProbeDefinition], run: RunOptions, counted: Throughput | None = None
) -> ProbeRun | str:
    """The task run once every shard is in: the run as shard 0 of N again (nothing left to score), which merges
    every shard, measures and writes the run folder, with the tokens the shard tasks ran (``counted``) as its
    throughput; the finished run, else the one-line error."""
    (probe,) = probes
    try:
        plan, placement, model = _loaded(model_id, probe, run)
        if counted is not None:
            add(getattr(model, "model", None), counted)
        finished = run_loaded(model_id, probe, plan.run, plan.settings, placement, model)
    except MemoryError:
        return "out of memory (MemoryError) while merging and measuring the run"
    except (UnqoverError, OSError, RuntimeError, ValueError) as err:
        return first_line(err)
    return finished if finished is not None else f"not every shard of {run.output} is in"


@dataclass
class ShardedRun:
    """One run split into ``count`` shard tasks: what the tasks run (``run``: its folder in ``output``), the shards
    not in yet, the errors and, once it is merged and measured, the finished run."""

    model_id: str
    probe: ProbeDefinition
    run: RunOptions
    count: int
    left: set[int] = field(default_factory=set)
    errors: list[str] = field(default_factory=list)
    finished: ProbeRun | None = None
    counted: Throughput = field(default_factory=Throughput)  # the tokens the shard tasks ran

    def __post_init__(self) -> None:
        self.left = set(range(self.count)) - finished_shards(self.run.output, self.count)


def run_folder_of(model_id: str, probe: ProbeDefinition, run: RunOptions) -> Path:
    """The run folder, known on the driver before anything loads (the shard tasks must share it): ``--output``,
    else the default folder where its name is known from the model's config; else one line asking for
    ``--output``."""
    if run.output is not None:
        return run.output
    plan = plan_run(model_id, probe, run)
    capabilities = planned_capabilities(plan.engine, plan.request)
    name = None
    if capabilities is not None:
        name = probe.planned_output_name(capabilities, model_id, run, plan.settings)
    if name is None:
        raise UnqoverError(
            f"--shards needs --output for {model_id} and the {probe.name} probe: the run folder the shard tasks "
            "share is named only once the model loads"
        )
    return default_output(model_id, name)


def drive(ray, runs: list[ShardedRun], options: dict, progress: bool) -> None:
    """Submit every run's shard tasks at once (they share the cluster), then each run's merge-and-measure task as
    soon as its shards are in; one progress bar over all the rows, read from the shard files."""
    from tqdm.auto import tqdm

    task = ray.remote(_run_task).options(**options)
    folder = str(Path.cwd())
    pending: dict = {}

    def submit(k: int, index: int | None) -> None:
        sharded = runs[k]
        what = score_shard if index is not None else functools.partial(finish_run, counted=sharded.counted)
        shard = (0 if index is None else index, sharded.count)
        job = replace(sharded.run, shard=shard)
        pending[task.remote(what, sharded.model_id, [sharded.probe], job, folder, None)] = (k, index)

    for k, sharded in enumerate(runs):
        for index in sorted(sharded.left) or [None]:
            submit(k, index)
    seen: dict = {}
    with tqdm(unit="row", unit_scale=True, desc="scoring", disable=not progress, file=sys.stderr) as bar:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=POLL_SECONDS)
            for ref in ready:
                k, index = pending.pop(ref)
                try:
                    out = ray.get(ref)
                except ray.exceptions.RayError as err:
                    out = _lost(err)
                if _take(runs[k], index, out, bar):
                    submit(k, None)
            _show(bar, runs, seen)


def _take(sharded: ShardedRun, index: int | None, out, bar) -> bool:
    """Record a task's answer; True when it was a run's last shard (its merge-and-measure task is due)."""
    if index is None:
        if isinstance(out, ProbeRun):
            sharded.finished = out
        else:
            sharded.errors.append(str(out))
        return False
    sharded.left.discard(index)
    if isinstance(out, Throughput):
        sharded.counted.add(out)
    elif out is not None:
        sharded.errors.append(f"shard {index}/{sharded.count}: {out}")
        bar.write(
            f"  failed: {sharded.model_id} {sharded.probe.name} shard {index}/{sharded.count}: {out}",
            file=sys.stderr,
        )
    return not sharded.left and not sharded.errors


def _show(bar, runs: list[ShardedRun], seen: dict) -> None:
    """The bar at the rows the shard files hold (the total once every run's shards have recorded their plans)."""
    totals, scored = [], 0
    for sharded in runs:
        total, done = scored_so_far(sharded.run.output, sharded.count, seen)
        totals.append(total)
        scored += done
    if None not in totals and bar.total != sum(totals):
        bar.total = sum(totals)
    bar.update(scored - bar.n)


def run_sharded(
    model_id: str,
    probe: ProbeDefinition,
    run: RunOptions,
    address: str,
    shards: int | None,
    retries: int = RETRIES,
) -> ProbeRun:
    """Score one run as ``shards`` Ray tasks (None: one per GPU of the cluster, else per task's CPUs), then merge,
    measure and report it; returns the finished run. Everything is checked here before the cluster is joined."""
    ray = _require_ray()
    _check_one_run(probe, run)
    on_ray = (
        replace(run, device="auto") if run.device != "cpu" else run
    )  # the workers' devices, not this one's
    folder = run_folder_of(model_id, probe, on_ray)
    plan_run(model_id, probe, replace(on_ray, output=folder))
    address = sweep_ray_address(address)
    _connect(ray, address)
    try:
        threads = run.threads or torch_threads(load=True)  # every CPU task scores with this process's threads
        options = _task_options(ray, replace(run, threads=threads))
        count = shard_count(ray, options, shards)
        if run.progress:  # the run's plan, from the tokenizer alone, at the batch size the workers start at
            size = run.batch_size or (1024 if options["num_gpus"] else CPU_BATCH_SIZE)
            print(plan_text(model_id, probe, replace(on_ray, output=folder, batch_size=size)), flush=True)
        job = replace(run, output=folder, progress=False, threads=None if options["num_gpus"] else threads)
        sharded = ShardedRun(model_id, probe, job, count)
        done = count - len(sharded.left)
        print(
            f"Ray at {address}: {count} shard task(s) of one run into {folder}, {_where(options, job.threads)}"
            + (f"; {done} shard(s) in already" if done else ""),
            flush=True,
        )
        drive(ray, [sharded], {**options, "max_retries": retries}, run.progress)
    finally:
        ray.shutdown()
    if sharded.errors or sharded.finished is None:
        raise UnqoverError(
            f"{'; '.join(sharded.errors) or 'the run did not finish'}; the same command resumes {folder}"
        )
    return sharded.finished


def sweep_on_ray(models, probes, run: RunOptions, address: str, shards: int, retries: int = RETRIES) -> dict:
    """A sweep's runs (``run``: the sweep's, with the driver's threads) each split into ``shards`` tasks (0: one per
    GPU of the cluster), all sharing the cluster; each model's errors (an empty list: all its probes finished), as
    :func:`unqover.jobs.sweep_ray.run_on_ray` returns them."""
    ray = _require_ray()
    address = sweep_ray_address(address)
    _connect(ray, address)
    try:
        options = {**_task_options(ray, run), "max_retries": retries}
        count = shard_count(ray, options, shards)
        threads = None if options["num_gpus"] else run.threads
        runs = sweep_runs(models, list(probes), replace(run, progress=False, threads=threads), count)
        print(
            f"Ray at {address}: {len(models) * len(probes)} run(s) in {count} shard task(s) each, "
            f"{_where(options, threads)}",
            flush=True,
        )
        drive(ray, [r for each in runs.values() for r in each], options, run.progress)
    finally:
        ray.shutdown()
    return {
        model: [
            f"{r.probe.name}: {'; '.join(r.errors) or 'did not finish'}"
            for r in each
            if r.errors or r.finished is None
        ]
        for model, each in runs.items()
    }


def sweep_runs(models, probes: list[ProbeDefinition], run: RunOptions, count: int) -> dict:
    """A sweep's runs split into ``count`` shard tasks each (``run``: the sweep's, its threads and progress as
    its tasks take them): each model x probe into ``OUTPUT/<model>/<probe>``, as a sweep's runs are, by model."""
    return {
        model: [
            ShardedRun(
                model.model_id,
                probe,
                replace(
                    run,
                    output=run.output / model.folder_name() / probe.name,
                    revision=model.revision,
                    adapter=model.adapter,
                ),
                count,
            )
            for probe in probes
        ]
        for model in models
    }


def _check_one_run(probe: ProbeDefinition, run: RunOptions) -> None:
    """What a run split into Ray tasks cannot be: a shard itself, or a run in rounds."""
    if run.shard is not None:
        raise UnqoverError(
            "--shard I/N scores one shard here; --ray --shards N splits the run itself: give one"
        )
    if run.settings.get("precision") is not None:
        raise UnqoverError("--precision runs its rounds in one process: run it without --shards")
