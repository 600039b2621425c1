"""A sweep of several models (``unqover probe MODEL MODEL ... --bias B[,B...]`` or ``--models FILE``): every model
x probe runs into ``DIR/<model>/<probe>`` through :func:`unqover.jobs.multi.run_probes`, one model loaded at a time
and freed before the next; a model that fails is reported at the end and the others go on; then one leaderboard
per probe (``DIR/leaderboard-<probe>.json/.md/.html``, by :func:`unqover.jobs.compare.leaderboard`), or, when
its models measured different dataset configs (QA models and masked LMs), one per config with two or more runs
(``DIR/leaderboard-<probe>-<config>.*``; a run alone on its config is named as standing alone), and one page
linking them (``DIR/index.html``). Run folders resume, so a second call scores only what is missing.
``--max-time`` (with ``--precision``) bounds the whole sweep: once it is spent no further model starts, and the
models not run are listed for the next call.
"""

from __future__ import annotations

import gc
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from unqover.errors import UnqoverError, first_line
from unqover.files import check_writable, write_json_atomic, write_text_atomic
from unqover.hub.load import check_local_dataset
from unqover.jobs.multi import probe_limits, probe_settings, run_probes, shared_engine
from unqover.jobs.run import default_output
from unqover.probes.base import ProbeDefinition, RunOptions
from unqover.probes.options import parse_duration
from unqover.probes.row_identity import check_rows_of
from unqover.report.markdown import md
from unqover.report.page import markdown_page
from unqover.scoring.placement import check_device, torch_threads, use_threads
from unqover.scoring.run_folder import check_run_folder
from unqover.scoring.sampling import check_seed

__all__ = ["TIME_SPENT", "SweepModel", "SweepResult", "read_models_file", "run_model", "sweep"]

_KEYS = ("revision", "adapter")

#: What :func:`run_model` returns for a model it did not start because the command's ``--max-time`` was spent.
TIME_SPENT = "not run: --max-time was spent before it started; the same command runs it"
#: Why the sweep's models not run were not run (its last lines and its page).
_NOT_RUN = "--max-time was spent before these models started; the same command runs them"


@dataclass(frozen=True)
class SweepModel:
    """One model of a sweep: its id (Hub id or folder) with an optional revision and adapter."""

    model_id: str
    revision: str | None = None
    adapter: str | None = None

    def folder_name(self) -> str:
        """The model's folder under the sweep's output: as ``runs/<model>`` names it, with the revision and the
        adapter beside it when given (so two revisions of one model do not share a folder)."""
        name = default_output(self.model_id, "x").parent.name
        if self.revision:
            name += "@" + self.revision
        if self.adapter:
            name += "+" + Path(self.adapter.rstrip("/")).name
        return re.sub(r"[^A-Za-z0-9._@+-]+", "_", name)

    def label(self) -> str:
        extra = [f"{key}={getattr(self, key)}" for key in _KEYS if getattr(self, key)]
        return " ".join([self.model_id, *extra])


@dataclass
class SweepResult:
    """What a sweep did: the finished models, the failed ones (label -> one-line error), the ones not run because
    ``--max-time`` was spent (the next call runs them), the leaderboards written (name -> JSON path: the probe's
    name, or ``<probe>-<config>`` when its runs measured several configs) and the ones that could not be made, or
    the runs that stand alone (name -> why)."""

    folder: Path
    finished: list[SweepModel] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)
    not_run: list[SweepModel] = field(default_factory=list)
    boards: dict[str, Path] = field(default_factory=dict)
    no_board: dict[str, str] = field(default_factory=dict)


def read_models_file(path: Path) -> list[SweepModel]:
    """The models of a ``--models`` file: one a line (``MODEL [revision=REV] [adapter=PATH]``), blank lines and
    ``#`` comments ignored, a byte-order mark at the start read as none (as the word lists read it); bad lines are
    refused with their line numbers."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        raise UnqoverError(f"cannot read --models {path}: {err}") from None
    models, bad = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        model, extra, problem = words[0], {}, None
        if "=" in model:
            problem = "starts with an option, not a model id"
        for word in words[1:]:
            key, sep, value = word.partition("=")
            if not sep or key not in _KEYS or not value:
                problem = f"{word!r} is not revision=REV or adapter=PATH"
            elif key in extra:
                problem = f"{key} given twice"
            else:
                extra[key] = value
        if problem:
            bad.append(f"line {number}: {problem}")
        else:
            models.append(SweepModel(model, **extra))
    if bad:
        raise UnqoverError(
            f"--models {path}: {'; '.join(bad)} (write one model a line: MODEL [revision=REV] [adapter=PATH])"
        )
    if not models:
        raise UnqoverError(f"--models {path} names no model: write one model id a line")
    return models


def sweep_models(names: Sequence[str], models_file: Path | None, run: RunOptions) -> list[SweepModel]:
    """The sweep's models: those named on the command line (with --revision/--adapter) then the file's; one
    folder name used twice is refused."""
    models = [SweepModel(n, run.revision, run.adapter) for n in names]
    if models_file is not None:
        models += read_models_file(models_file)
    seen: dict[str, str] = {}
    for model in models:
        name = model.folder_name()
        if name in seen:
            raise UnqoverError(
                f"{model.label()} and {seen[name]} would share the run folder {name}: list each model once"
            )
        seen[name] = model.label()
    return models


def _free_memory() -> None:
    """Free the last model before the next loads (its tensors, and the GPU cache where torch has one)."""
    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()


def _check_metric(probes: Sequence[ProbeDefinition], metric: str | None) -> None:
    """Refuse a ``--leaderboard-metric`` that is not a headline number of every probe of the sweep (where the
    probe knows its names before any run), before the first model loads."""
    if metric is None:
        return
    for probe in probes:
        names = probe.results.headline_names()
        if names and metric not in names:
            raise UnqoverError(
                f"--leaderboard-metric {metric!r} is not a headline number of the {probe.name} probe; choose one "
                f"of {', '.join(names)}"
            )


def time_left(run: RunOptions) -> float | None:
    """Seconds left of the command's ``--max-time`` (counted from ``run.started``); None without one."""
    given = run.settings.get("max_time")
    if given is None or run.started is None:
        return None
    return parse_duration(given) - (time.monotonic() - run.started)


def _check_all(
    models: Sequence[SweepModel],
    probes: Sequence[ProbeDefinition],
    run: RunOptions,
    on_ray: bool,
    metric: str | None = None,
) -> dict:
    """What can be checked before the first model loads, as ``unqover probe`` checks one model: the options for
    every probe, the leaderboards' metric, seed, device (here, unless the runs go to a Ray cluster's workers),
    output, dataset and rows; then each model's id (a missing folder, a malformed Hub id) and run folders, collected
    as that model's failure (the other models go on)."""
    if run.shard is not None:
        raise UnqoverError("--shard splits one model's run: probe a single model with it")
    settings = probe_settings(probes, run.settings)
    probe_limits(probes, run)  # a --limit that counts different things for these probes
    _check_metric(probes, metric)
    check_seed(run.seed)
    if not on_ray:
        check_device(run.device)
    check_writable(run.output, folder=True)
    if run.dataset is not None and len(probes) > 1:
        raise UnqoverError("--dataset names one probe's dataset: give --bias a single probe with it")
    if run.gguf_file is not None:
        raise UnqoverError(
            "--gguf-file names the GGUF file of one model: in a sweep, give each GGUF file's path as a model"
        )
    check_local_dataset(run.dataset, run.config)
    check_rows_of(probes[0], run.dataset)  # another probe's rows
    for probe, probe_settings_ in zip(probes, settings, strict=True):
        probe.check_config(run, probe_settings_)
        probe.check_source(run, probe_settings_)
    failures = {}
    for model in models:
        try:
            shared_engine(model.model_id, probes, [run] * len(probes), settings)
            for probe in probes:
                check_run_folder(run.output / model.folder_name() / probe.name)
        except UnqoverError as err:
            failures[model.label()] = str(err)
    return failures


def run_model(model: SweepModel, probes: Sequence[ProbeDefinition], run: RunOptions) -> str | None:
    """Run the probes on one model of a sweep (into ``run.output/<model>/<probe>``), loaded once and freed after;
    None when every run finished, :data:`TIME_SPENT` when the command's ``--max-time`` was spent before it
    started, else the one-line error (the sweep goes on with the next model). Scores with ``run.threads`` torch
    threads where given."""
    left = time_left(run)
    if left is not None and left <= 0:
        return TIME_SPENT
    if run.threads is not None:
        use_threads(run.threads)
    one = replace(
        run, output=run.output / model.folder_name(), revision=model.revision, adapter=model.adapter
    )
    try:
        run_probes(model.model_id, probes, one)
    except MemoryError:
        return "out of memory (MemoryError): this model's run needs more memory than this process may use"
    except (UnqoverError, OSError, RuntimeError, ValueError) as err:
        return first_line(err)
    finally:
        _free_memory()
    return None


def _leaderboard(name: str, runs: list[Path], folder: Path, metric: str | None) -> Path:
    """Write one leaderboard (``leaderboard-<name>``) as JSON, Markdown and HTML; raises UnqoverError when it
    cannot be made."""
    from unqover.jobs.compare import leaderboard
    from unqover.report.leaderboard import leaderboard_html, leaderboard_markdown

    if len(runs) < 2:
        raise UnqoverError(f"{len(runs)} finished run(s): a leaderboard needs at least 2")
    board = leaderboard(runs, metric)
    write_text_atomic(folder / f"leaderboard-{name}.md", leaderboard_markdown(board))
    write_text_atomic(folder / f"leaderboard-{name}.html", leaderboard_html(board))
    return write_json_atomic(folder / f"leaderboard-{name}.json", board)


def _config_of(run: Path) -> str | None:
    """The dataset config a finished run measured (None: not recorded, or no results to read)."""
    from unqover.results import dataset_of, load_results

    try:
        return dataset_of(load_results(run)["provenance"])["config"]
    except UnqoverError:
        return None


def comparable_groups(probe: str, runs: Sequence[tuple[str, Path]]) -> dict[str, list[tuple[str, Path]]]:
    """The runs of one probe (model label, run folder) by the dataset config they measured, each group named
    for its leaderboard: the probe's name when every run measured one config, else ``<probe>-<config>`` (models
    of different families measure different configs: QA models ``qa``, masked LMs ``mlm``)."""
    groups: dict[str | None, list[tuple[str, Path]]] = {}
    for label, run in runs:
        groups.setdefault(_config_of(run), []).append((label, run))
    if len(groups) <= 1:
        return {probe: next(iter(groups.values()), [])}
    return {f"{probe}-{config or 'unrecorded'}": members for config, members in groups.items()}


def _probe_boards(
    probe: str, runs: Sequence[tuple[str, Path]], result: SweepResult, metric: str | None
) -> None:
    """One leaderboard per group of comparable runs of ``probe`` with two or more runs; a run alone in its
    group stands alone (said in ``result.no_board``)."""
    groups = comparable_groups(probe, runs)
    for name, members in groups.items():
        if len(groups) > 1 and len(members) == 1:
            label, _ = members[0]
            config = name.removeprefix(f"{probe}-")
            result.no_board[name] = (
                f"{label} stands alone: the only finished run of {probe} on the {config!r} config (the others "
                f"measured {', '.join(repr(g.removeprefix(probe + '-')) for g in groups if g != name)})"
            )
            continue
        try:
            result.boards[name] = _leaderboard(name, [run for _, run in members], result.folder, metric)
        except UnqoverError as err:
            result.no_board[name] = str(err)


def _index(result: SweepResult) -> str:
    """The sweep's summary page (Markdown): the leaderboards, the ones not made and why, the failed models."""
    lines = ["# Sweep", "", f"{len(result.finished)} model(s) finished.", "", "## Leaderboards", ""]
    lines += [f"- [{md(p)}](leaderboard-{p}.html)" for p, path in result.boards.items()]
    lines += [f"- {md(p)}: no leaderboard: {md(why)}" for p, why in result.no_board.items()]
    lines += ["", "## Models", ""]
    lines += [f"- [{md(m.label())}]({m.folder_name()}/summary.html)" for m in result.finished]
    if result.failures:
        lines += ["", "## Failed", ""]
        lines += [f"- {md(label)}: {md(err)}" for label, err in result.failures.items()]
    if result.not_run:
        lines += ["", "## Not run", "", f"{md(_NOT_RUN)}:", ""]
        lines += [f"- {md(m.label())}" for m in result.not_run]
    return "\n".join(lines) + "\n"


def sweep(
    models: Sequence[SweepModel],
    probes: Sequence[ProbeDefinition],
    run: RunOptions,
    metric: str | None = None,
    ray_address: str | None = None,
    shards: int | None = None,
) -> SweepResult:
    """Run every model x probe into ``run.output`` (default ``runs``), then the leaderboards and the page; with
    ``ray_address`` (``""``: ``RAY_ADDRESS``, else the cluster started on this machine) each model x probe is a
    task on that Ray cluster (:mod:`unqover.jobs.sweep_ray`), or ``shards`` tasks (0: one per GPU of the cluster)
    that each score one shard of it (:mod:`unqover.jobs.shards_ray`)."""
    folder = run.output or Path("runs")
    started = time.monotonic() if run.started is None else run.started  # --max-time bounds the whole sweep
    run = replace(run, output=folder, started=started)
    result = SweepResult(folder)
    result.failures = _check_all(models, probes, run, on_ray=ray_address is not None, metric=metric)
    # every run, here or on a Ray worker's CPU, scores with this process's torch threads: the same bits either way
    run = replace(run, threads=run.threads or torch_threads(load=True))
    if run.limit is not None or run.quick:
        size = "--quick" if run.quick else f"--limit {run.limit}"
        print(
            f"Quick runs: every model scores the same seeded sample ({size} --seed {run.seed}), so "
            "the leaderboards compare them paired.",
            flush=True,
        )
    if ray_address is not None:
        from unqover.jobs.shards_ray import sweep_on_ray
        from unqover.jobs.sweep_ray import run_on_ray

        todo = [m for m in models if m.label() not in result.failures]
        if shards is None:
            ran = run_on_ray(todo, probes, run, ray_address, run_model)
        else:
            ran = sweep_on_ray(todo, probes, run, ray_address, shards)
        for model, errors in ran.items():
            failed = [error for error in errors if not error.endswith(TIME_SPENT)]
            if failed:
                result.failures[model.label()] = "; ".join(failed)
            elif errors:  # a task started after --max-time was spent: the next call runs it
                result.not_run.append(model)
            else:
                result.finished.append(model)
    else:
        for number, model in enumerate(models, start=1):
            if model.label() in result.failures:
                continue
            left = time_left(run)
            if left is not None and left <= 0:
                result.not_run.append(model)
                continue
            print(f"[{number}/{len(models)}] {model.label()}", flush=True)
            error = run_model(model, probes, run)
            if error is None:
                result.finished.append(model)
            elif error == TIME_SPENT:
                result.not_run.append(model)
            else:
                result.failures[model.label()] = error
                print(f"  failed: {error}", file=sys.stderr, flush=True)
    for probe in probes:
        runs = [(m.label(), folder / m.folder_name() / probe.name) for m in result.finished]
        _probe_boards(probe.name, runs, result, metric)
    write_text_atomic(folder / "index.html", markdown_page(_index(result), "Sweep"))
    return result


def sweep_text(result: SweepResult) -> str:
    """What the command prints at the end: leaderboards, the ones not made and why, and every failure."""
    lines = [f"Sweep: {len(result.finished)} model(s) finished into {result.folder}"]
    lines += [f"  leaderboard {p}: {path} (and .md, .html)" for p, path in result.boards.items()]
    lines += [f"  no leaderboard for {p}: {why}" for p, why in result.no_board.items()]
    lines += [f"  failed: {label}: {err}" for label, err in result.failures.items()]
    if result.not_run:
        lines.append(f"  not run: {', '.join(m.label() for m in result.not_run)} ({_NOT_RUN})")
    lines.append(f"Summary page: {result.folder / 'index.html'}")
    return "\n".join(lines)
