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
from unqover.format import fmt_seconds
from unqover.probes.base import QuickRunSize, RunOptions
from unqover.probes.registry import PROBES, get_probe
from unqover.space import inputs
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
    return SAMPLES[inputs.choice(bias, "bias class", list(SAMPLES))]


def check_sample(bias: str, sample: float | int | None) -> int:
    """The sample as a whole number within the bias class's bound (NaN, infinities and fractions refused)."""
    size = sample_size(bias)
    if sample is None or sample == "":
        return size.default
    return inputs.whole_in_range(sample, f"sample size for {bias}", 1, size.maximum, size.unit)


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


def run_live_probe(
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
    from unqover.jobs.run import run_probe as run_job

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
            f"the probe took longer than {fmt_seconds(timeout)}. It goes on in the background and its results are "
            "cached: try again in a minute, or choose a smaller sample"
        )
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


#: a command-line option named in a library message (``--word-lists``, ``--probe FILE.yaml``)
CLI_FLAG = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*")
#: where a message may be cut before the clause that names an option (a sentence's end, not an "e.g." or "i.e.")
CLAUSE = re.compile(r"(?:; |(?<!e\.g)(?<!i\.e)\. | \(|, | or |: )")
#: the library's messages that give command-line advice, in web terms: (what the message names, what a web user
#: reads); the first that matches wins
WEB_TERMS = (
    (
        re.compile(r"--word-lists|--dataset\b|--source\b|word lists|build-datasets", re.I),
        "the Space cannot find this bias class's rows: no local build in datasets/unqover, no Hub access and no "
        "word lists. The Space's operator sets UNQOVER_WORD_LISTS to a word_lists folder (or builds the "
        "datasets with `unqover build-datasets`)",
    ),
    (
        re.compile(r"--probe\b|--bias\b"),
        "this run was written by a probe this Space does not offer (a custom probe): the Space shows runs of its "
        "own probes only. The report.md and report.html in the run's folder show it",
    ),
    (
        re.compile(r"--output\b"),
        "the Space's cache holds another run under this model, bias class and sample; its operator can clear the "
        "cache folder (UNQOVER_SPACE_CACHE)",
    ),
    (re.compile(r"--limit\b"), "the sample size is out of range for this bias class: choose another"),
)
NOT_SET_UP = "the Space cannot do this as it is set up; its operator finds the details in the Space's logs"
#: what a web user does instead of passing an option, after the message's own words up to it
INSTEAD = {
    "--allow-pickle": "choose a model with safetensors weights",
    "--mode": "only runs measured in the same mode compare",
    "--metric": "choose another metric, or rank quick runs of more groups",
    "--local-dir": (
        "the Space loads only the models on its server: choose one of the listed models, or ask its operator to "
        "download this one (`hf download` on a machine with network)"
    ),
}


def web_terms(text: str) -> str:
    """A library message as a web user can act on it: advice to pass a command-line option becomes what to do
    on the page or what the Space's operator does; other messages are kept as they are."""
    for pattern, message in WEB_TERMS:
        if pattern.search(text):
            return message
    if not CLI_FLAG.search(text):
        return text
    # any other option: keep what the message says up to the clause that names it
    flag = CLI_FLAG.search(text)
    head = text[: flag.start()]
    cuts = [m.start() for m in CLAUSE.finditer(head)]
    head = head[: cuts[-1]] if cuts else ""
    head = (head + ")" * max(0, head.count("(") - head.count(")"))).strip()
    advice = INSTEAD.get(flag.group(0), NOT_SET_UP)
    return f"{head}: {advice}" if head else advice


def friendly(err: BaseException) -> str:
    """One message a user of the web page can act on, for every failure the Space can meet (no command-line
    options: a page has none)."""
    from unqover.space.models import gated_message

    name = type(err).__name__
    text = first_line(err)
    if isinstance(err, UnqoverError):
        return web_terms(text)
    if name == "GatedRepoError":
        return gated_message(getattr(err, "repo_id", None) or "this model")
    if "OutOfMemoryError" in name or "out of memory" in text.lower():
        return (
            "the GPU ran out of memory on this model: choose a smaller sample or a smaller model "
            "(or run `unqover probe` on your own machine)"
        )
    if isinstance(err, TimeoutError) or "GPU task aborted" in text or "duration" in text.lower():
        return "the GPU call ran out of time: choose a smaller sample and try again"
    return web_terms(f"the probe failed ({name}: {text}). Try another model or a smaller sample")


#: how a report's mentions of command-line options read on a web page (a page has no options): the quick-run
#: settings in words; any other ``--option`` by its name
_OPTION_WORDS = (
    (re.compile(r"(?<![\w-])--limit\b"), "a sample of"),
    (re.compile(r"(?<![\w-])--sample\b"), "a sampled fraction of"),
    (re.compile(r"(?<![\w-])--precision\b"), "a target interval width of"),
    (re.compile(r"(?<![\w-])--max-rows\b"), "the row bound of"),
    (re.compile(r"(?<![\w-])--max-time\b"), "the time bound of"),
    (re.compile(r"(?<![\w-])--([A-Za-z][\w-]*)"), r"the \1 setting"),
)


def web_text(text: str) -> str:
    """A report's text as a web page shows it: ``quick run (--limit 2 rows per occupation…)`` reads ``quick run (a
    sample of 2 rows per occupation…)``; no command-line option is named."""
    for pattern, words in _OPTION_WORDS:
        text = pattern.sub(words, text)
    return text
