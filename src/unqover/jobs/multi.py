"""Several probes in one command (``unqover probe MODEL --bias gender,religion`` or ``--bias unqover``): the model
loads once, each probe runs into its own run folder through the job runner, and one summary sets every probe's
headline numbers and intervals side by side (printed, and ``summary.md`` / ``summary.html`` in the parent folder).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from unqover.errors import UnqoverError, require_models_extra
from unqover.files import check_writable, write_text_atomic
from unqover.format import MISSING
from unqover.hub.load import check_local_dataset
from unqover.jobs.folder_check import check_folder_before_load, planned_name
from unqover.jobs.run import check_scoring, checked_engine, default_output, run_loaded
from unqover.probes.base import ProbeDefinition, ProbeRun, RunOptions
from unqover.probes.row_identity import check_rows_of
from unqover.report.markdown import HEADLINE_NAMES, md, md_text
from unqover.report.page import markdown_page
from unqover.scoring.cpu_bf16 import warn_slow_bfloat16
from unqover.scoring.engines import load_for
from unqover.scoring.placement import check_device
from unqover.scoring.requests import first_wanted
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


def check_shared_loader(probes: Sequence[ProbeDefinition]) -> None:
    """The probes of one command share one loaded model: they must ask it the same requests."""
    first = probes[0]
    for other in probes[1:]:
        if other.wants != first.wants:
            raise UnqoverError(
                f"the {first.name} and {other.name} probes load different kinds of model, so they cannot share "
                "one command: run them in separate commands"
            )


def run_probes(model_id: str, probes: Sequence[ProbeDefinition], run: RunOptions) -> MultiRun | None:
    """Run several probes on one model loaded once; None on processes that only scored a shard."""
    require_models_extra()
    if run.shard is not None:
        raise UnqoverError("--shard splits one probe's run: give --bias a single probe")
    if run.dataset is not None and len(probes) > 1:  # one dataset's rows under several probes' names
        raise UnqoverError(
            "--dataset names one probe's dataset: give --bias a single probe with it (several probes find their "
            "own datasets)"
        )
    check_shared_loader(probes)
    all_settings = probe_settings(probes, run.settings)
    check_seed(run.seed)
    runs = [replace(run, output=None if run.output is None else run.output / p.name) for p in probes]
    for probe, probe_run in zip(probes, runs, strict=True):
        if probe_run.output is not None:
            check_run_folder(probe_run.output)
        else:
            check_writable(default_output(model_id, probe.name).parent, folder=True)
    check_device(run.device)
    for probe, probe_run, settings in zip(probes, runs, all_settings, strict=True):
        probe.check_config(probe_run, settings)
    check_local_dataset(run.dataset, run.config)
    check_rows_of(probes[0], run.dataset)  # another probe's rows (a --dataset goes with a single probe)
    engine, request = checked_engine(model_id, probes[0], runs[0], all_settings[0])
    for probe, probe_run, settings in zip(probes, runs, all_settings, strict=True):
        name = planned_name(engine, request, probe, probe_run, settings)
        check_folder_before_load(
            engine, request, probe, probe_run, settings, name, default_output
        )  # before load
        probe.check_source(probe_run, settings)
    warn_slow_bfloat16(request.dtype, request.device)  # said once a process: a sweep measures and warns once
    placement, model = load_for(engine, request, probes[0].wants)
    unfit = [p.name for p in probes if first_wanted(model.capabilities, p.wants) is None]
    if unfit:
        raise UnqoverError(
            f"{model_id} is a {model.family} model, which the {', '.join(unfit)} probe(s) cannot score; leave "
            f"{'it' if len(unfit) == 1 else 'them'} out of --bias"
        )
    # every probe's start (chat template on its rows, longest prompt) is checked before any run is written: a
    # later probe that would fail leaves no earlier run folder that refuses the corrected command
    for probe, probe_run, settings in zip(probes[1:], runs[1:], all_settings[1:], strict=True):
        check_scoring(probe, probe.load(probe_run, settings, model), model, settings)
    finished = []
    for probe, probe_run, settings in zip(probes, runs, all_settings, strict=True):
        done = run_loaded(model_id, probe, probe_run, settings, placement, model)
        if done is None:
            return None
        finished.append(done)
    folder = run.output or Path(os.path.commonpath([str(f.folder) for f in finished]))
    headlines = {  # each number in the words of every surface (a full run's interval is for another value)
        done.probe: probe.results.headline_text(
            json.loads((done.folder / "results.json").read_text(encoding="utf-8"))
        )
        for probe, done in zip(probes, finished, strict=True)
    }
    markdown = summary_markdown(model_id, headlines, {d.probe: d.folder for d in finished})
    write_text_atomic(folder / "summary.md", markdown)
    write_text_atomic(folder / "summary.html", markdown_page(markdown, f"Bias summary: {model_id}"))
    return MultiRun(
        finished, folder, summary_text(model_id, headlines, {d.probe: d.folder for d in finished})
    )


def _table(headlines: Mapping[str, Mapping[str, str]], cell) -> list[str]:
    """Headline names down (with the reports' symbols), probes across (each number as ``probe.results.headline_text`` words it); a probe without
    that number shows "—"."""
    names = list(dict.fromkeys(key for head in headlines.values() for key in head))
    lines = ["| | " + " | ".join(cell(p) for p in headlines) + " |", "|---|" + "---:|" * len(headlines)]
    for key in names:
        values = [head.get(key, MISSING) for head in headlines.values()]
        lines.append(
            f"| {cell(HEADLINE_NAMES.get(key, key))} | " + " | ".join(md_text(v) for v in values) + " |"
        )
    return lines


def summary_markdown(model_id: str, headlines: Mapping, folders: Mapping[str, Path]) -> str:
    lines = [f"# Bias summary: {md(model_id)}", "", "Each probe's headline numbers with their intervals.", ""]
    lines += _table(headlines, md)
    lines += [
        "",
        "## Run folders",
        "",
        *(f"- {md(name)}: {md(folder)}" for name, folder in folders.items()),
        "",
    ]
    return "\n".join(lines)


def summary_text(model_id: str, headlines: Mapping, folders: Mapping[str, Path]) -> str:
    lines = [f"Bias summary: {model_id}", "", *_table(headlines, str), "", "Run folders:"]
    lines += [f"  {name}: {folder}" for name, folder in folders.items()]
    return "\n".join(lines)
