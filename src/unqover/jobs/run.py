"""The one job runner: any probe definition, from a model id to a finished run folder.

load -> select -> score (resumable, sharded, ``accelerate``-aware) -> predictions with the same provenance for
every probe -> measure -> ``results.json`` (with a ``"probe"`` key) -> reports.

Run folder (``--output``, default ``runs/<model>/<probe>-<config>``)::

    run.json              what this run is (probe, model, dataset and its fingerprint, scoring, selection)
    shards/<i>-of-<n>/    finished chunks of scores (resume starts from these); <name>/shards/ for extra scorers
    predictions.parquet   the scores (id, score_1, score_2 for UnQover and NLI) + provenance
    results.json          {"probe", "provenance", "result", ...}: the measures
    report.md, report.html

Several machines split one run with ``--shard i/n`` into a shared folder; under ``accelerate launch`` every
process takes its shard and the main process merges, measures and reports.
"""

from __future__ import annotations

import contextlib
import functools
import platform
import re
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path

import pyarrow as pa
from tqdm.auto import tqdm

from unqover import __version__
from unqover.errors import UnqoverError, require_models_extra
from unqover.files import check_writable, write_text_atomic
from unqover.generate.ids import dataset_fingerprint
from unqover.hub.load import check_local_dataset
from unqover.jobs.folder_check import check_folder_before_load, planned_capabilities
from unqover.jobs.projection import projection_line, say, throughput_line
from unqover.jobs.run_size import plan_line
from unqover.predictions import write_predictions
from unqover.probes.base import Loaded, ProbeDefinition, ProbeRun, RunOptions, output_name
from unqover.probes.result_identity import run_selection
from unqover.probes.row_identity import check_rows_of
from unqover.results import RESULTS_FILE, results_of, write_results
from unqover.scoring.cpu_bf16 import warn_slow_bfloat16
from unqover.scoring.engines import engine_for, load_for
from unqover.scoring.engines.base import Engine
from unqover.scoring.placement import Placement, check_device, torch_threads
from unqover.scoring.requests import EngineRequest
from unqover.scoring.run_folder import check_run_folder, claim, holds_this_run
from unqover.scoring.runner import Timed, automatic_batch_size, merge_shards, recorded_batch_size, run_shard
from unqover.scoring.sampling import check_seed
from unqover.scoring.shard_files import holds_scores, in_use
from unqover.scoring.throughput import so_far, take


class Interrupted(KeyboardInterrupt):
    """Ctrl-C while scoring into ``folder``: what is scored so far is kept there, and the same command resumes."""

    def __init__(self, folder: Path, resumable: bool = True) -> None:
        super().__init__(str(folder))
        self.folder = folder
        self.resumable = resumable  # False: interrupted before this run scored anything there


def library_versions() -> dict:
    """Versions of the libraries a result depends on (read from package metadata: nothing is imported)."""
    versions = {"unqover": __version__, "python": platform.python_version()}
    for name in ("torch", "transformers", "datasets", "numpy", "pyarrow"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def default_output(model_id: str, name: str) -> Path:
    """runs/<model>/<name>: a local folder's last part (a local file's name without its suffix, e.g. a GGUF
    file), or the Hub id with / as __."""
    local = Path(model_id).expanduser()
    model = re.sub(
        r"[^A-Za-z0-9._-]+",
        "_",
        local.name if local.is_dir() else local.stem if local.is_file() else model_id.replace("/", "__"),
    )
    return Path("runs") / model / name


def smaller_limit(limit: int, seconds_per_row: float) -> str:
    """A long quick run's advice: a smaller one."""
    return f"run a smaller --limit than {limit} (wider intervals)"


def claim_and_score(
    rows: pa.Table,
    scorers: dict,
    folder: Path,
    identity: dict,
    run: RunOptions,
    placement: Placement,
    *,
    device: str | None = None,
    quick_run: str | Callable[[float], str] = "--limit N",
    model=None,
) -> tuple[pa.Table | None, dict[str, pa.Table]]:
    """Claim the run folder, score this process's shard with every scorer and merge all shards.

    ``scorers`` maps a name to a runner scorer: "" writes into ``folder``, any other name into ``folder/<name>``.
    Returns (None, {}) on a process or shard that only scored its part. A run projected to take an hour or more
    on ``device`` says so once its first batches are timed (:func:`unqover.jobs.projection.projection_line`, on
    stderr, with the tokens ``model``'s engine counted), with ``quick_run``: the options of a quick run.
    """
    if placement.is_main:
        claim(folder, identity)
    if placement.distributed:
        placement.wait()
        claim(folder, identity)
    shard = placement.shard

    def speed(timed: Timed, inputs_left: int, rows_left: int) -> None:
        tokens = so_far(getattr(model, "model", None))
        line = projection_line(timed, inputs_left, rows_left, device, quick_run, tokens)
        if line is not None:
            tqdm.write(line, file=sys.stderr)

    timed = placement.is_main
    for name, scorer in scorers.items():
        run_shard(
            rows,
            scorer,
            folder / name if name else folder,
            batch_size=run.batch_size,
            chunk_rows=run.chunk_rows,
            checkpoint_seconds=run.checkpoint_seconds,
            shard=shard,
            progress=run.progress and placement.is_main,
            speed=speed if timed and name == "" else None,
        )
    placement.wait()
    if not placement.is_main or not placement.merges:
        return None, {}
    try:
        merged = {name: merge_shards(rows, folder / name if name else folder, shard[1]) for name in scorers}
    except UnqoverError as err:
        if shard[1] > 1 and not placement.distributed:
            print(
                f"shard {shard[0]}/{shard[1]} is done; {err}. Run any shard's command again once all are done."
            )
            return None, {}
        raise
    return merged.pop(""), merged


def identity_of(probe: ProbeDefinition, model_id: str, model, loaded: Loaded, settings: dict) -> dict:
    """run.json: what makes two runs the same run."""
    provenance = model.provenance()
    path = provenance.get("path")  # a local model: its resolved folder or file
    identity = {
        "probe": probe.name,
        "model": {
            "id": model_id,
            "revision": model.revision,
            "family": model.family,
            **({"path": path} if path else {}),
            # --adapter, --model-arg and a GGUF file, only where given (runs without them keep their run.json);
            # a local folder's weights by content (the same bytes elsewhere are the same run)
            # a model on a server: its engine, URL and what the server reported
            **{
                key: provenance[key]
                for key in ("adapter", "model_args", "gguf", "engine", "served_at", "server", "tokenizer")
                if provenance.get(key)
            },
            **{
                k: provenance[k]
                for k in ("weights_sha256",)
                if provenance.get(k) and not provenance.get("gguf")
            },
        },
        "dataset": {
            **loaded.dataset,
            "rows": loaded.rows.num_rows,
            "fingerprint": dataset_fingerprint(loaded.rows["id"]),
        },
        "scoring": loaded.context.get("scoring", "default"),
        "dtype": model.dtype,
        "selection": loaded.selection,
    }
    return {**identity, **loaded.context.get("identity", {})}


def engine_request(model_id: str, probe: ProbeDefinition, run: RunOptions) -> EngineRequest:
    """What the run's engine loads: the model and the run's loading options (``--engine``, ``--dtype``, ...)."""
    return EngineRequest(
        model_id,
        engine=run.engine,
        revision=run.revision,
        token=run.token,
        dtype=run.dtype,
        device=run.device,
        shard=run.shard,
        allow_pickle=run.allow_pickle,
        adapter=run.adapter,
        model_args=run.model_args,
        gguf_file=run.gguf_file,
        options=run.engine_options,
        asker=probe.name,
    )


def checked_engine(
    model_id: str, probe: ProbeDefinition, run: RunOptions, settings: dict
) -> tuple[Engine, EngineRequest]:
    """The run's engine and what it loads, checked before anything loads: the engine's own options (another
    engine's refused), the probe's part of the load (which may refuse the engine or the model: ``engine_load``),
    then the engine's checks of the model argument and the options that apply to it."""
    request = engine_request(model_id, probe, run)
    engine = engine_for(request)
    request = replace(request, options=engine.check_options(request.options))
    request = replace(request, load=probe.engine_load(engine, request, run, settings))
    engine.check(request, probe.wants)
    return engine, request


@dataclass(frozen=True)
class RunPlan:
    """A run checked before its model loads: the probe's settings, the engine and what it loads, and the run's
    options the later steps read."""

    model_id: str
    probe: ProbeDefinition
    run: RunOptions
    settings: dict
    engine: Engine
    request: EngineRequest


def plan_run(model_id: str, probe: ProbeDefinition, run: RunOptions) -> RunPlan:
    """Everything that can be refused before the model loads, each in one line: the seed, the run folder, the
    device and the dataset; then the probe's options, what it passes to the engine's load, the model argument
    (its engine's checks), the rows' source; and a folder holding another run."""
    request = engine_request(model_id, probe, run)
    check_seed(run.seed)
    if run.output is not None:
        check_run_folder(run.output)
    else:
        check_writable(default_output(model_id, probe.name).parent, folder=True)
    check_device(run.device)
    check_rows_of(probe, run.dataset)  # another probe's rows
    check_local_dataset(run.dataset, run.config)  # its Parquet files' footers: a truncated file
    engine = engine_for(request)
    request = replace(request, options=engine.check_options(request.options))
    settings = probe.check_settings(run.settings)
    probe.check_config(run, settings)
    request = replace(request, load=probe.engine_load(engine, request, run, settings))
    engine.check(request, probe.wants)  # a model it cannot load (a missing folder)
    probe.check_source(run, settings)  # rows that cannot be found
    capabilities = planned_capabilities(engine, request) if run.output is None else None
    name = None if capabilities is None else probe.planned_output_name(capabilities, model_id, run, settings)
    check_folder_before_load(engine, request, probe, run, settings, name, default_output)  # another run's
    return RunPlan(model_id, probe, run, settings, engine, request)


def run_probe(model_id: str, probe: ProbeDefinition, run: RunOptions) -> ProbeRun | None:
    """Score, measure and report ``probe`` on a model; returns None on processes that only scored a shard."""
    require_models_extra()
    if run.quick:  # --quick: the probe's own default quick run
        run = replace(run, limit=probe.quick_run.default, quick=False)
    plan = plan_run(model_id, probe, run)
    # a CPU without bf16 matrix units: said before the load
    warn_slow_bfloat16(plan.request.dtype, plan.request.device)
    placement, model = load_for(plan.engine, plan.request, probe.wants)
    return run_loaded(model_id, probe, plan.run, plan.settings, placement, model)


def run_loaded(
    model_id: str, probe: ProbeDefinition, run: RunOptions, settings: dict, placement: Placement, model
) -> ProbeRun | None:
    """:func:`run_probe` from a loaded model on: load the rows, score, measure and report into the run folder."""
    loaded = probe.load(run, settings, model)
    note = probe.limit_note(loaded, run, settings)  # a --limit too small for the headline numbers, said first
    if note is not None and placement.is_main:
        print(note, file=sys.stderr, flush=True)
    quick_run = functools.partial(probe.quick_run_advice, model_id, loaded, settings)
    if run.limit is not None:  # a quick run already: a smaller one
        quick_run = functools.partial(smaller_limit, run.limit)
    score_rows = functools.partial(
        claim_and_score, device=getattr(model, "device", None), quick_run=quick_run, model=model
    )
    folder = run.output or default_output(model_id, output_name(probe, loaded, settings))
    identity = identity_of(probe, model_id, model, loaded, settings)
    # what scoring would refuse, before anything is written: a start that fails writes nothing
    check_scoring(probe, loaded, model, settings)
    if placement.is_main and run.progress:  # its plan: rows, inputs, tokens (a causal LM's)
        batch_size = run.batch_size or recorded_batch_size(folder, placement.shard) or automatic_batch_size()
        scorer = probe.scorers(model, settings, loaded).get("")
        say(plan_line(loaded.rows, scorer, batch_size, run.chunk_rows, folder))
    try:
        with discarded_on_failure(folder, alone=placement.shard[1] == 1 and not placement.distributed):
            scored = probe.score(loaded, model, folder, identity, run, settings, placement)
            if scored is None:  # as every probe scores: its scorers over its rows
                scorers = probe.scorers(model, settings, loaded)
                scores, extra = score_rows(loaded.rows, scorers, folder, identity, run, placement)
                if scores is None:  # this process scored its shard only
                    return None
                scored = (loaded, scores, extra)
            loaded, scores, extra = scored
            return finish(
                probe, folder, loaded, scores, extra, identity, model, run, settings, placement.shard
            )
    except KeyboardInterrupt as err:
        raise Interrupted(folder, resumable=holds_this_run(folder, identity)) from err


def check_scoring(probe: ProbeDefinition, loaded: Loaded, model, settings: dict) -> None:
    """What scoring would refuse, tried before the run folder is written: each scorer that can check rows
    (``check_rows``: a chat template rendered on a real row, the longest prompt against the model's positions)
    checks the rows to score (a run in rounds: all it may score). A scorer whose model cannot run (a first
    forward pass that fails, e.g. ``--model-arg n_layer=-1``) is refused in one line naming the model
    arguments, when there are any."""
    try:
        scorers = probe.scorers(model, settings, loaded)
    except (RuntimeError, ValueError, IndexError, TypeError) as err:
        if isinstance(err, UnqoverError) or not getattr(model, "model_args", None):
            raise
        from unqover.scoring.models import unusable_model_args

        raise UnqoverError(unusable_model_args(model.model_args, err)) from err
    for scorer in scorers.values():
        check = getattr(scorer, "check_rows", None)
        if check is not None:
            check(loaded.rows)


@contextlib.contextmanager
def discarded_on_failure(folder: Path, *, alone: bool) -> Iterator[None]:
    """A run that fails before anything is scored leaves no run folder that would refuse the next command: the
    folder this command created (with the empty folders above it it created), or the contents of an empty folder
    it found, are removed. Scores (chunks, checkpoints) are kept for the resume; a folder other processes may
    score into (``alone`` False: shards of one run; or a lock held there) and anything there before are never
    touched. Ctrl-C keeps everything: the same command resumes."""
    created = outermost_missing(folder) if alone else None
    emptied = alone and created is None and folder.is_dir() and not any(folder.iterdir())
    try:
        yield
    except Exception:
        fresh = (created is not None or emptied) and folder.is_dir()
        if fresh and not holds_scores(folder) and not in_use(folder):
            discard(folder, created)
        raise


def outermost_missing(folder: Path) -> Path | None:
    """The outermost folder on ``folder``'s path that does not exist yet (``folder`` itself when only it is
    missing; None when it exists): what a run into ``folder`` creates."""
    missing = None
    for path in (folder, *folder.parents):
        if path.exists():
            break
        missing = path
    return missing


def discard(folder: Path, created: Path | None) -> None:
    """Remove ``folder`` and the empty folders above it up to ``created`` (None: only ``folder``'s contents)."""
    if created is None:
        for entry in folder.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        return
    shutil.rmtree(folder, ignore_errors=True)
    for parent in folder.parents:
        if created not in (parent, *parent.parents):
            break
        try:
            parent.rmdir()  # only while empty
        except OSError:
            break


def finish(
    probe: ProbeDefinition,
    folder: Path,
    loaded: Loaded,
    scores: pa.Table,
    extra: dict[str, pa.Table],
    identity: dict,
    model,
    run: RunOptions,
    settings: dict,
    shard: tuple[int, int] = (0, 1),
) -> ProbeRun:
    """Write predictions, measure, write results.json and the reports."""
    provenance = {
        **identity,
        "selection": loaded.selection,  # a precision run adds where its rounds stopped
        "model": {**identity["model"], **model.provenance()},
        "batch_size": recorded_batch_size(folder, shard),
        "versions": library_versions(),
    }
    threads = torch_threads()
    if threads is not None:  # a CPU run's last bits depend on it (same threads, same bits)
        provenance["threads"] = threads
    provenance |= engine_throughput(model, threads)  # a causal LM's tokens per second
    predictions = probe.predictions(loaded, scores)
    write_predictions(folder / "predictions.parquet", predictions, provenance, schema=predictions.schema)
    measured = probe.measure_run(loaded, scores, extra, run, settings)
    for name, table in measured.tables.items():
        write_predictions(folder / name, table, provenance, schema=table.schema)
    # results.json says which rows: every row or the probe's seeded design (``unqover.probes.result_identity``)
    provenance = {**provenance, "selection": run_selection(loaded.selection)}
    results = results_of(probe.name, provenance, measured.result.to_dict(), measured.extra)
    write_results(folder / RESULTS_FILE, results)
    for name, text in probe.results.reports(results).items():
        write_text_atomic(folder / name, text)
    return ProbeRun(folder, measured.result, provenance, probe.name)


def engine_throughput(model, threads: int | None) -> dict:
    """The tokens per second the engine ran ``model`` at in this run, said on stderr and recorded in the run's
    provenance (``throughput``): nothing where no tokens were counted (other families; a resumed run that scored
    nothing)."""
    record = take(getattr(model, "model", None))
    if record is None:
        return {}
    say(throughput_line(record, getattr(model, "device", None), getattr(model, "dtype", None), threads))
    return {"throughput": record.record()}


def quiet_libraries() -> None:
    """--quiet: no progress bars from the libraries either (transformers' weight loading and GGUF dequantizing,
    Hub downloads)."""
    import os

    os.environ["TQDM_DISABLE"] = "1"  # bars a library makes with tqdm directly (transformers' GGUF reader)
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    os.environ["HF_DATASETS_DISABLE_PROGRESS_BARS"] = "1"
    from transformers.utils import logging

    logging.disable_progress_bar()


def user_cache_folder(name: str) -> Path:
    """``name`` under the user's cache (``$UNQOVER_CACHE`` or ``~/.cache/unqover``): where a surface keeps the
    runs it makes for itself (the Space's live probe), never in the working folder."""
    from unqover.lexicon.upstream import default_cache_dir

    return default_cache_dir() / name
