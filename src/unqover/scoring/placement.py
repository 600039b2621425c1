"""Where a model runs: this process's share of the work and its device, alone or under ``accelerate launch``.

Model side only: the job layer (``unqover.probes``) asks here instead of touching torch or accelerate itself.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

from unqover.errors import UnqoverError


@dataclass(frozen=True)
class Placement:
    """This process's place in the run: its shard (index, count), whether it merges and reports, and a barrier."""

    shard: tuple[int, int]
    is_main: bool
    state: object | None = None  # the accelerate state when several processes run
    #: whether the main process merges, measures and reports once every shard is in (False: a shard task of a run
    #: on Ray, whose driver has that done once all its tasks are in: ``unqover.jobs.shards_ray``)
    merges: bool = True

    @property
    def distributed(self) -> bool:
        return self.state is not None

    def wait(self) -> None:
        """Wait for every process (no-op when alone)."""
        if self.state is not None:
            self.state.wait_for_everyone()


def _accelerate_state():
    """The accelerate state when launched with several processes, else None."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return None
    import torch
    from accelerate import PartialState

    # without a GPU, accelerate would quietly run each process alone; cpu=True makes them one gloo group
    return PartialState(cpu=not torch.cuda.is_available())


def torch_threads(load: bool = False) -> int | None:
    """torch's intra-op thread count in this process, on which a CPU run's arithmetic (and so its last bits)
    depends; None where torch is not imported (unless ``load``)."""
    torch = sys.modules.get("torch")
    if torch is None and load:
        import torch
    return None if torch is None else torch.get_num_threads()


def use_threads(threads: int) -> None:
    """Score with ``threads`` intra-op threads: the same count gives the same bits (a Ray worker starts with
    Ray's ``OMP_NUM_THREADS``, often 1, where the driver has its cores)."""
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


def check_device(device: str) -> None:
    """Refuse a ``--device`` this machine lacks (cuda without a CUDA GPU, mps without an Apple GPU) before any
    model or data is loaded; ``auto`` and ``cpu`` are always there."""
    if device in ("auto", "cpu"):
        return
    from unqover.scoring.models import choose_device

    choose_device(device)


def place(shard: tuple[int, int] | None, device: str) -> tuple[Placement, str]:
    """This process's placement and the device to load the model on (``--shard`` or accelerate's processes)."""
    state = _accelerate_state()
    if state is None:
        return Placement(shard or (0, 1), True), device
    if shard is not None:
        raise UnqoverError("--shard is chosen by accelerate under `accelerate launch`; leave it out")
    device = "cpu" if state.device.type == "cpu" else state.device.type
    return Placement((state.process_index, state.num_processes), state.is_main_process, state), device


def load_placed(
    loader: Callable, model_id: str, *, shard: tuple[int, int] | None, device: str, **options
) -> tuple[Placement, object]:
    """Load a model with ``loader`` (``load_model``, ``load_nli_model``) on this process's device.

    Under ``accelerate launch`` on GPUs, the model moves to this process's own GPU (loading put it on cuda:0),
    unless transformers placed it itself (quantized weights), as :func:`unqover.scoring.models.place_model` decides.
    """
    from unqover.scoring.models import place_model

    placement, device = place(shard, device)
    loaded = loader(model_id, device=device, **options)
    if placement.state is not None and placement.state.device.type == "cuda":
        loaded.device = place_model(loaded.model, str(placement.state.device))
    return placement, loaded
