"""The engine's measured speed: tokens run through a model and the wall seconds of scoring them.

A causal-LM scorer wraps each batch in :func:`counted`: a forward hook adds the tokens of every forward pass (the
packed token tree's rows × width, padding included: what the model computes) and the block's wall time. The job
runner reads the total at the end of a run (:func:`take`) to print the tokens per second and record them in the
run's provenance, so that a user can project a larger run; and while scoring (:func:`so_far`) to add tokens to a
long run's projected time. Nothing here changes a score.
"""

from __future__ import annotations

import contextlib
import time
import weakref
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass
class Throughput:
    """Tokens run through one model, the inputs (a runner's rows to score) they came from, and the wall seconds
    of the scoring calls that ran them."""

    tokens: int = 0
    inputs: int = 0
    seconds: float = 0.0

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / max(self.seconds, 1e-9)

    def add(self, other: Throughput) -> None:
        """Count ``other``'s tokens, inputs and seconds too."""
        self.tokens += other.tokens
        self.inputs += other.inputs
        self.seconds += other.seconds

    def record(self) -> dict:
        """What a run's provenance keeps (``throughput``)."""
        return {
            "tokens": self.tokens,
            "scoring_seconds": round(self.seconds, 6),
            "tokens_per_second": round(self.tokens_per_second, 1),
        }


#: per model (the torch module), what has been counted since the last :func:`take`
_COUNTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _count_tokens(record: Throughput):
    def hook(module, args, kwargs) -> None:
        ids = kwargs.get("input_ids", args[0] if args else None)
        if ids is not None:
            record.tokens += int(ids.numel())

    return hook


@contextlib.contextmanager
def counted(model, inputs: int) -> Iterator[None]:
    """Count the tokens of ``model``'s forward passes in this block, its wall seconds and its ``inputs``."""
    record = _COUNTS.setdefault(model, Throughput())
    handle = model.register_forward_pre_hook(_count_tokens(record), with_kwargs=True)
    began = time.perf_counter()
    try:
        yield
    finally:
        handle.remove()
        record.seconds += time.perf_counter() - began
        record.inputs += inputs


def so_far(model) -> Throughput | None:
    """What has been counted for ``model`` since the last :func:`take` (None: nothing)."""
    record = _COUNTS.get(model) if _countable(model) else None
    return record if record is not None and record.tokens else None


def take(model) -> Throughput | None:
    """What has been counted for ``model`` (None: nothing), starting the count again (a model loaded once for
    several probes counts each run's own)."""
    record = _COUNTS.pop(model, None) if _countable(model) else None
    return record if record is not None and record.tokens else None


def _countable(model) -> bool:
    """Whether ``model`` is one whose forward passes :func:`counted` counts: a torch module (Beecher's GloVe or
    TF-IDF models run no forward pass, and are not hashable)."""
    return hasattr(model, "register_forward_pre_hook")


def add(model, record: Throughput) -> None:
    """Count ``record`` for ``model`` as if its forward passes had run in this process: the tokens other processes
    ran for the run (its shard tasks on a Ray cluster), which :func:`take` then reports with the run's own."""
    if _countable(model) and record.tokens:
        _COUNTS.setdefault(model, Throughput()).add(record)
