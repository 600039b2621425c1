"""The live probe of the Space: a bounded sample, a GPU call sized to it, durable cached results, clear errors.

Results are cached in run folders keyed by (model, revision, bias, sample): the runner's own resumable run folder,
so a finished run is read back instead of scored again, also after a restart.
"""

from __future__ import annotations

import contextvars
import json
import re
import threading
from collections.abc import Callable
from pathlib import Path

from unqover.errors import UnqoverError, first_line
from unqover.probes.base import QuickRunSize, RunOptions
from unqover.probes.registry import PROBES, get_probe
from unqover.space.models import ModelCheck

RESULTS = "results.json"


SAMPLES = {name: probe.quick_run for name, probe in PROBES.items()}
SAMPLE_INFO = (
    "A quick run: a random sample, stratified, drawn with a fixed seed. UnQover classes: the numbers are estimates "
    "of the full-dataset values with 95% intervals; μ and η are declined (with the number of groups they need) "
    "when the sample is too small for them."
)
GPU_ROWS_PER_SECOND = 200  # conservative for a base-size model on a shared GPU, model loading included below
GPU_BASE_SECONDS = 30
GPU_MAX_SECONDS = 120


def sample_size(bias: str) -> QuickRunSize:
    if bias not in SAMPLES:
        raise UnqoverError(f"unknown bias class {bias!r}; choose from {', '.join(SAMPLES)}")
    return SAMPLES[bias]


def check_sample(bias: str, sample: float | int | None) -> int:
    """The sample as a whole number within the bias class's bound."""
    size = sample_size(bias)
    if sample is None or sample == "":
        return size.default
    try:
        value = int(sample)
    except (TypeError, ValueError) as err:
        raise UnqoverError(f"the sample size must be a whole number, got {sample!r}") from err
    if value != sample or not 1 <= value <= size.maximum:
        raise UnqoverError(f"the sample size for {bias} is 1 to {size.maximum:,} {size.unit}, got {sample!r}")
    return value


def gpu_seconds(bias: str, sample: int) -> int:
    """The GPU time to ask for: model loading plus the sample's inputs at a conservative rate, capped."""
    rows = sample * sample_size(bias).rows_each
    return int(min(GPU_MAX_SECONDS, GPU_BASE_SECONDS + rows / GPU_ROWS_PER_SECOND))


def gpu(duration: Callable[..., int]) -> Callable:
    """``spaces.GPU(duration=...)`` on ZeroGPU; a no-op decorator where ``spaces`` is not installed."""
    try:
        import spaces
    except ImportError:
        return lambda function: function
    return spaces.GPU(duration=duration)


def cache_folder(cache_dir: Path, check: ModelCheck, bias: str, sample: int) -> Path:
    """One run folder per (model, revision, bias, sample)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(check.model_id).name if check.local else check.model_id)
    revision = re.sub(r"[^A-Za-z0-9._-]+", "_", check.revision)[:40]
    return Path(cache_dir) / f"{name}@{revision}" / f"{bias}-limit{sample}"


_LOCKS: dict[Path, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _lock(folder: Path) -> threading.Lock:
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(folder.resolve(), threading.Lock())


def cached(folder: Path) -> dict | None:
    path = folder / RESULTS
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def run_probe(
    check: ModelCheck,
    bias: str,
    sample: int,
    cache_dir: Path,
    *,
    token: str | None = None,
    word_lists: Path | None = None,
    resamples: int = 200,
    progress: bool = True,
) -> dict:
    """The results dict of ``probe(model, limit=sample)`` (``sample`` in the bias class's unit: groups for the
    UnQover classes): read from the cache, else scored once and cached."""
    from unqover.probes.job import run_probe as run_job

    folder = cache_folder(cache_dir, check, bias, sample)
    found = cached(folder)
    if found is not None:
        return found
    with _lock(folder):  # a second identical request waits for the first, then reads its results
        found = cached(folder)
        if found is not None:
            return found
        probe = get_probe(bias)
        options = RunOptions(
            limit=sample,
            output=folder,
            revision=None if check.local else check.revision,
            token=token,
            resamples=resamples,
            progress=progress,
            # the word lists go to the probes that build their rows from them
            settings={"word_lists": word_lists} if "word_lists" in probe.settings else {},
        )
        run_job(check.model_id, probe, options)
        found = cached(folder)
    if found is None:
        raise UnqoverError(f"the probe finished without {RESULTS} in {folder}")
    return found


class ProbeTimeout(UnqoverError):
    """The request ran past the Space's time limit (the run goes on and lands in the cache)."""


def with_timeout(function: Callable, timeout: float | None, *args, **kwargs):
    """Run ``function`` in a worker thread (with the caller's context, for progress bars); give up after ``timeout``.

    A thread cannot be killed: on a timeout it finishes in the background and its results land in the cache.
    """
    if timeout is None:
        return function(*args, **kwargs)
    outcome: dict = {}
    context = contextvars.copy_context()

    def work() -> None:
        try:
            outcome["value"] = context.run(function, *args, **kwargs)
        except BaseException as err:
            outcome["error"] = err

    worker = threading.Thread(target=work, daemon=True, name="unqover-probe")
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise ProbeTimeout(
            f"the probe took longer than {timeout:.0f} s. It goes on in the background and its results are cached: "
            "try again in a minute, or choose a smaller sample"
        )
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def friendly(err: BaseException) -> str:
    """One message a user can act on, for every failure the live probe can meet."""
    from unqover.space.models import gated_message

    name = type(err).__name__
    text = first_line(err)
    if isinstance(err, UnqoverError) and ("--word-lists" in text or "word lists" in text.lower()):
        return (
            "the Space cannot find this bias class's rows: no local build in datasets/unqover, no Hub access and no "
            "word lists. The Space's operator sets UNQOVER_WORD_LISTS to a word_lists folder (or builds the "
            "datasets with `unqover build-datasets`)"
        )
    if isinstance(err, UnqoverError):
        return text
    if name == "GatedRepoError":
        return gated_message(getattr(err, "repo_id", None) or "this model")
    if "OutOfMemoryError" in name or "out of memory" in text.lower():
        return (
            "the GPU ran out of memory on this model: choose a smaller sample or a smaller model "
            "(or run `unqover probe` on your own machine)"
        )
    if isinstance(err, TimeoutError) or "GPU task aborted" in text or "duration" in text.lower():
        return "the GPU call ran out of time: choose a smaller sample and try again"
    return f"the probe failed ({name}: {text}). Try another model or a smaller sample"
