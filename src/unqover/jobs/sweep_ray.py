"""A sweep on an existing Ray cluster (``unqover probe M1 M2 ... --ray [ADDRESS]``): each model x probe run is one
Ray task, with a GPU each where the cluster has GPUs (one CPU otherwise).

The driver (the machine that runs the command) checks every option, model id and run folder as a local sweep does,
then submits the tasks. A task runs :func:`unqover.jobs.sweep.run_model` in the driver's working folder, so every
path of the command (models, ``--output``, ``--word-lists``, ``--dataset``, adapters) means on the worker what it
meant on the driver, and the run records (run.json) are the same as a local sweep's: the cluster's nodes must see
the driver's folders (a shared file system), and the runs are written to the shared ``--output``. The scores are
the same as a local sweep's: on the CPU each task scores with the driver's torch thread count (``run.threads``,
which a local sweep uses too, and each run records as ``threads`` in its provenance), since the thread count can
change a model's last bits; checked bit for bit for QA and masked LMs, :mod:`tests.jobs.test_sweep_ray`.

A worker lost mid-run (a node gone, a process killed) leaves its run folder as an interrupted local run leaves it:
its run.json, its finished chunks and its last checkpoint; Ray retries the task ``RETRIES`` times, and each retry,
like the next call of the same command, resumes it. Ray is imported only here, so a sweep without ``--ray`` needs
none of it (the ``ray`` extra).
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Protocol, TypeVar

from unqover.errors import UnqoverError, first_line
from unqover.probes.base import ProbeDefinition, RunOptions

__all__ = ["RETRIES", "run_on_ray", "sweep_ray_address"]

#: How many times Ray runs a task again after its worker was lost (each retry resumes the run folder).
RETRIES = 2

#: How long the driver waits for the cluster's address to answer before it refuses the sweep.
CONNECT_SECONDS = 3.0

#: The driver's variables a task needs (offline switches, caches, unqover's own), passed to every worker.
_PASSED_PREFIXES = ("HF_", "HUGGINGFACE_", "TRANSFORMERS_", "UNQOVER_")


def sweep_ray_address(given: str) -> str:
    """The cluster to use: ``--ray ADDRESS``, else ``RAY_ADDRESS``, else ``auto`` (Ray's name for the cluster
    that ``ray start --head`` started on this machine)."""
    return given or os.environ.get("RAY_ADDRESS") or "auto"


def _require_ray():
    try:
        import ray
    except ImportError:
        raise UnqoverError('--ray needs Ray: pip install "unqover[ray]"') from None
    return ray


def _check_reachable(address: str) -> None:
    """A HOST:PORT that nothing answers on is refused in one line within seconds (Ray itself waits minutes)."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address:
        return  # ``auto`` and ``ray://`` addresses: Ray finds or checks them itself
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_SECONDS).close()
    except OSError as err:
        raise UnqoverError(
            f"no Ray cluster answers at {address} ({err.strerror or type(err).__name__}); start one with "
            "`ray start --head` and pass the address it prints"
        ) from None


def _connect(ray, address: str) -> None:
    """Join the cluster as a driver (never start a new one), passing the driver's variables to every task."""
    _check_reachable(address)
    env = {k: v for k, v in os.environ.items() if k.startswith(_PASSED_PREFIXES)}
    try:
        ray.init(
            address=address,
            log_to_driver=False,
            runtime_env={"env_vars": env},
            configure_logging=False,
            ignore_reinit_error=True,
        )
    except (ConnectionError, RuntimeError, ValueError) as err:
        reason = first_line(err)
        raise UnqoverError(
            f"cannot join the Ray cluster at {address} ({reason}); start one with `ray start --head`, or give its "
            "address (--ray HOST:PORT or RAY_ADDRESS)"
        ) from None


class _Model(Protocol):
    def label(self) -> str: ...


Model = TypeVar("Model", bound=_Model)
RunModel = Callable[[Model, Sequence[ProbeDefinition], RunOptions], "str | None"]


def _run_task(
    run_model: RunModel,
    model: Model,
    probes: Sequence[ProbeDefinition],
    run: RunOptions,
    folder: str,
    submitted: tuple[float, float] | None,
) -> str | None:
    """One model x probe on a worker, in the driver's working folder; None when it finished, else the error.
    ``submitted``: the seconds the command had run and the wall clock when the task was submitted, so that
    ``--max-time`` counts from the command's start here too (monotonic clocks are not shared between machines)."""
    if submitted is not None:
        elapsed, wall = submitted
        run = replace(run, started=time.monotonic() - elapsed - max(0.0, time.time() - wall))
    here = os.getcwd()
    try:
        os.chdir(folder)
    except OSError:
        return (
            f"the driver's folder {folder} is not on this Ray node: a sweep on Ray needs the models and --output on "
            "a file system every node shares"
        )
    try:
        return run_model(model, probes, run)
    finally:
        os.chdir(here)


def _task_options(ray, run: RunOptions) -> dict:
    """A GPU (and a CPU) per task where the cluster has GPUs (and --device does not ask for the CPU); else as many
    CPUs as the run's torch threads (``run.threads``), at most a node's."""
    gpus = ray.cluster_resources().get("GPU", 0)
    if gpus > 0 and run.device != "cpu":
        return {"num_cpus": 1, "num_gpus": 1}
    largest = max((node["Resources"].get("CPU", 1) for node in ray.nodes() if node.get("Alive")), default=1)
    return {"num_cpus": max(1, min(run.threads or 1, int(largest))), "num_gpus": 0}


def _where(options: dict, threads: int | None) -> str:
    """What each task holds, for the driver's first line."""
    if options["num_gpus"]:
        return "a GPU each"
    cpus = options["num_cpus"]
    return f"{cpus} CPU{'s' if cpus > 1 else ''} and {threads} torch thread{'s' if threads != 1 else ''} each"


def _lost(err: Exception) -> str:
    reason = first_line(err)
    return f"the Ray task was lost ({reason}); the same command resumes its run folder"


def run_on_ray(
    models: Sequence[Model],
    probes: Sequence[ProbeDefinition],
    run: RunOptions,
    address: str,
    run_model: RunModel,
    retries: int = RETRIES,
) -> dict[Model, list[str]]:
    """Run ``run_model`` for every model x probe as a Ray task (the sweep's :func:`unqover.jobs.sweep.run_model`);
    returns each model's errors (an empty list: all its probes finished). The driver shows the sweep's progress."""
    from tqdm.auto import tqdm

    ray = _require_ray()
    address = sweep_ray_address(address)
    _connect(ray, address)
    errors: dict[Model, list[str]] = {model: [] for model in models}
    try:
        options = {**_task_options(ray, run), "max_retries": retries}
        task = ray.remote(_run_task).options(**options)
        folder = str(Path.cwd())
        # on the CPU every task scores with the driver's torch threads, as a local sweep does (the same bits); a
        # GPU's arithmetic does not depend on them, and a GPU task holds one CPU
        quiet = replace(run, progress=False, threads=None if options["num_gpus"] else run.threads)
        submitted = None if run.started is None else (time.monotonic() - run.started, time.time())
        pending = {
            task.remote(run_model, model, [probe], quiet, folder, submitted): (model, probe)
            for model in models
            for probe in probes
        }
        print(f"Ray at {address}: {len(pending)} run(s), {_where(options, quiet.threads)}", flush=True)
        with tqdm(
            total=len(pending), desc="sweep", unit="run", disable=not run.progress, file=sys.stderr
        ) as bar:
            while pending:
                [ref], _ = ray.wait(list(pending), num_returns=1)
                model, probe = pending.pop(ref)
                try:
                    error = ray.get(ref)
                except ray.exceptions.RayError as err:
                    error = _lost(err)
                if error is not None:
                    errors[model].append(f"{probe.name}: {error}" if len(probes) > 1 else error)
                    failed = "" if error.startswith("not run:") else "failed: "
                    bar.write(f"  {failed}{model.label()} {probe.name}: {error}", file=sys.stderr)
                bar.update(1)
    finally:
        ray.shutdown()
    return errors
