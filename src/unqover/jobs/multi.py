"""Several probes in one command (``unqover probe MODEL --bias gender,religion``, ``--bias unqover`` or ``--bias
all``): the model loads once (by its family, for every request the probes may ask), each probe runs into its own run
folder through the job runner, and one summary of the model's bias gives every probe's headline numbers with their
intervals (printed, and ``summary.md`` / ``summary.html`` / ``summary.json`` in the parent folder:
:mod:`unqover.jobs.model_summary`). Each probe scores with the first of its requests the model answers; a probe
the model answers none of is refused, or, chosen by ``--bias all`` alone, left out with a line.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from unqover.errors import UnqoverError, require_models_extra
from unqover.files import check_writable
from unqover.hub.load import check_local_dataset
from unqover.jobs.folder_check import check_folder_before_load, planned_name
from unqover.jobs.model_summary import host_words, write_summary
from unqover.jobs.run import check_scoring, default_output, engine_request, run_loaded
from unqover.probes.base import ProbeDefinition, ProbeRun, RunOptions
from unqover.probes.row_identity import check_rows_of
from unqover.scoring.cpu_bf16 import warn_slow_bfloat16
from unqover.scoring.engines import engine_for, load_for
from unqover.scoring.engines.base import Engine
from unqover.scoring.placement import check_device
from unqover.scoring.requests import EngineRequest, first_wanted
from unqover.scoring.run_folder import check_run_folder
from unqover.scoring.sampling import check_seed


@dataclass
class MultiRun:
    """Finished runs of several probes and their summary (written into ``folder``)."""

    runs: list[ProbeRun]
    folder: Path
    text: str


def probe_settings(probes: Sequence[ProbeDefinition], given: Mapping) -> list[dict]:
    """Each probe's settings from the options given: an option goes to the probes that take it; one that none of
    them takes is refused."""
    unknown = sorted(
        k for k, v in given.items() if v is not None and not any(k in p.settings for p in probes)
    )
    if unknown:
        names = ", ".join("--" + k.replace("_", "-") for k in unknown)
        raise UnqoverError(
            f"{names} do(es) not apply to any of the probes {', '.join(p.name for p in probes)}"
        )
    return [p.check_settings({k: v for k, v in given.items() if k in p.settings}) for p in probes]


def probe_limits(probes: Sequence[ProbeDefinition], run: RunOptions) -> list[int | None]:
    """Each probe's ``--limit``: ``--quick`` gives each its own default quick run (``quick_run.default``); a bare
    ``--limit N`` is refused where the probes count N in different units (groups, persons, rows per occupation)."""
    if run.quick:
        return [probe.quick_run.default for probe in probes]
    meanings = dict.fromkeys(probe.limit_meaning for probe in probes)
    if run.limit is not None and len(meanings) > 1:
        units = "; ".join(
            f"{', '.join(p.name for p in probes if p.limit_meaning == m)}: {m}" for m in meanings
        )
        raise UnqoverError(
            f"--limit {run.limit} counts different things for these probes ({units}): give --quick for each "
            "probe's own default quick run, or run the probes in separate commands"
        )
    return [run.limit for _ in probes]


def union_wants(probes: Sequence[ProbeDefinition]) -> tuple[str, ...]:
    """What the probes of one load ask a model, in a stable order: each probe's wants in its order of preference,
    the probes in theirs, each once."""
    return tuple(dict.fromkeys(want for probe in probes for want in probe.wants))


def shared_engine(
    model_id: str, probes: Sequence[ProbeDefinition], runs: Sequence[RunOptions], settings: Sequence[dict]
) -> tuple[Engine, EngineRequest]:
    """:func:`unqover.jobs.run.checked_engine` for one load that serves several probes: what each passes to the
    load (a key two probes pass is the first's), then the engine's checks for every request they may ask."""
    request = replace(
        engine_request(model_id, probes[0], runs[0]), asker=" and ".join(p.name for p in probes)
    )
    engine = engine_for(request)
    request = replace(request, options=engine.check_options(request.options))
    load: dict = {}
    for probe, probe_run, probe_settings_ in zip(probes, runs, settings, strict=True):
        for key, value in probe.engine_load(engine, request, probe_run, probe_settings_).items():
            load.setdefault(key, value)
    request = replace(request, load=load)
    engine.check(request, union_wants(probes))
    return engine, request


def unfit(probes: Sequence[ProbeDefinition], capabilities: Sequence[str] | None) -> list[ProbeDefinition]:
    """The probes a model answering ``capabilities`` cannot score (None: not known yet, none refused)."""
    if capabilities is None:
        return []
    return [p for p in probes if first_wanted(capabilities, p.wants) is None]


def known_capabilities(engine: Engine, request: EngineRequest) -> tuple[str, ...] | None:
    """What the model answers, read before it loads (a local model's config, a Hub model's as its load would
    read it, an engine's own kinds); None where it cannot be read then (its load says why)."""
    try:
        return engine.capabilities_of(request)
    except (UnqoverError, OSError, ValueError, RuntimeError):
        return None


def left_out_reason(model_id: str, what: str, probe: ProbeDefinition) -> str:
    """Why a probe of ``--bias all`` is left out: the model is ``what``, and the families the probe scores."""
    return f"{model_id} is {what}; it scores {', '.join(probe.families)} models"


def sort_out(
    model_id: str,
    probes: Sequence[ProbeDefinition],
    unscored: Sequence[ProbeDefinition],
    optional: Collection[str],
    what: str,
) -> dict[str, str]:
    """The probes left out (name -> why): those ``--bias all`` chose that the model cannot score; a probe named
    (alone or by its group) that it cannot score is refused in one line."""
    named = [p.name for p in unscored if p.name not in optional]
    if named:
        them = "it" if len(named) == 1 else "them"
        raise UnqoverError(
            f"{model_id} is {what}, which the {', '.join(named)} probe{'s' if len(named) > 1 else ''} cannot "
            f"score; leave {them} out of --bias"
        )
    if len(unscored) == len(probes):
        raise UnqoverError(f"{model_id} is {what}, which none of the probes of --bias all can score")
    return {p.name: left_out_reason(model_id, what, p) for p in unscored}


def model_words(engine: Engine, request: EngineRequest, capabilities: Sequence[str]) -> str:
    """The model in a few words before it loads: its family where its engine reads one from its config (``a causal
    model``), else what it answers."""
    family = getattr(engine, "family", None)
    try:
        return (
            f"a {family(request)} model"
            if callable(family)
            else f"a model that answers {', '.join(capabilities)}"
        )
    except (UnqoverError, OSError, ValueError):
        return f"a model that answers {', '.join(capabilities)}"


@dataclass
class Plan:
    """The probes a command runs on one model, checked before it loads: each with its run options and settings,
    the engine and its request, and the probes left out (name -> why)."""

    probes: list[ProbeDefinition]
    runs: list[RunOptions]
    settings: list[dict]
    engine: Engine
    request: EngineRequest
    left_out: dict[str, str]

    def drop(self, names: Collection[str]) -> None:
        kept = [i for i, p in enumerate(self.probes) if p.name not in names]
        self.probes = [self.probes[i] for i in kept]
        self.runs = [self.runs[i] for i in kept]
        self.settings = [self.settings[i] for i in kept]


def plan_probes(
    model_id: str, probes: Sequence[ProbeDefinition], run: RunOptions, optional: Collection[str]
) -> Plan:
    """Everything refused before the model loads, each in one line, for every probe; the probes of ``--bias all``
    that a local model cannot score (its config says what it answers) are left out here."""
    if run.shard is not None:
        raise UnqoverError("--shard splits one probe's run: give --bias a single probe")
    if run.dataset is not None and len(probes) > 1:  # one dataset's rows under several probes' names
        raise UnqoverError(
            "--dataset names one probe's dataset: give --bias a single probe with it (several probes find their "
            "own datasets)"
        )
    all_settings = probe_settings(probes, run.settings)
    check_seed(run.seed)
    limits = probe_limits(probes, run)
    runs = [
        replace(run, output=None if run.output is None else run.output / p.name, limit=limit, quick=False)
        for p, limit in zip(probes, limits, strict=True)
    ]
    check_device(run.device)
    check_local_dataset(run.dataset, run.config)
    check_rows_of(probes[0], run.dataset)  # another probe's rows (a --dataset goes with a single probe)
    engine, request = shared_engine(model_id, probes, runs, all_settings)
    plan = Plan(list(probes), runs, all_settings, engine, request, {})
    capabilities = known_capabilities(engine, request)
    unscored = unfit(probes, capabilities)
    if unscored:
        plan.left_out = sort_out(
            model_id, probes, unscored, optional, model_words(engine, request, capabilities)
        )
        plan.drop(plan.left_out)
    for probe, probe_run, settings in zip(plan.probes, plan.runs, plan.settings, strict=True):
        if probe_run.output is not None:
            check_run_folder(probe_run.output)
        else:
            check_writable(default_output(model_id, probe.name).parent, folder=True)
        probe.check_config(probe_run, settings)
        name = planned_name(engine, request, probe, probe_run, settings)
        check_folder_before_load(engine, request, probe, probe_run, settings, name, default_output)
        probe.check_source(probe_run, settings)
    return plan


def run_probes(
    model_id: str, probes: Sequence[ProbeDefinition], run: RunOptions, optional: Collection[str] = ()
) -> MultiRun | None:
    """Run several probes on one model loaded once; None on processes that only scored a shard. ``optional``: the
    probes ``--bias all`` chose, which a model that cannot score them leaves out (with a line) instead of
    refusing."""
    require_models_extra()
    plan = plan_probes(model_id, probes, run, optional)
    for name, why in plan.left_out.items():
        print(f"--bias all: leaving out {name} ({why})", file=sys.stderr, flush=True)
    warn_slow_bfloat16(plan.request.dtype, plan.request.device)  # said once a process: a sweep warns once
    placement, model = load_for(plan.engine, plan.request, union_wants(plan.probes))
    unscored = unfit(plan.probes, model.capabilities)  # a Hub model's family is known once it loads
    if unscored:
        left = sort_out(model_id, plan.probes, unscored, optional, f"a {model.family} model")
        for name, why in left.items():
            print(f"--bias all: leaving out {name} ({why})", file=sys.stderr, flush=True)
        plan.left_out |= left
        plan.drop(left)
    # every probe's start (chat template on its rows, longest prompt) is checked before any run is written: a
    # later probe that would fail leaves no earlier run folder that refuses the corrected command
    for probe, probe_run, settings in zip(plan.probes[1:], plan.runs[1:], plan.settings[1:], strict=True):
        check_scoring(probe, probe.load(probe_run, settings, model), model, settings)
    finished, timings = [], {}
    for probe, probe_run, settings in zip(plan.probes, plan.runs, plan.settings, strict=True):
        started = time.monotonic()
        done = run_loaded(model_id, probe, probe_run, settings, placement, model)
        if done is None:
            return None
        timings[probe.name] = {"seconds": round(time.monotonic() - started, 3), "host": host_words()}
        finished.append(done)
    folders = {done.probe: done.folder for done in finished}
    folder = run.output or Path(os.path.commonpath([str(f) for f in folders.values()]))
    if len(finished) == 1 and folder == finished[0].folder:
        folder = folder.parent  # one probe left of several: its summary beside its run folder
    _, text = write_summary(folder, model_id, folders, plan.left_out, timings)
    return MultiRun(finished, folder, text)
