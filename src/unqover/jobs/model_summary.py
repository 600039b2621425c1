"""The bias summary of one model from its finished runs (several probes, one folder each): what a model card's
"Bias" section holds (:mod:`unqover.report.model_card`), built from each run's ``results.json`` as written.

``unqover probe MODEL --bias all`` (or any list of probes) writes it into the runs' parent folder:
``summary.md`` (the section, linking each run's report), ``summary.html`` (the same page) and ``summary.json``
(the model, each probe's run folder relative to it, where and how long each ran, the probes left out), which
``unqover publish-results FOLDER`` reads to publish the same section and every probe's numbers.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Mapping
from pathlib import Path

from unqover import __version__
from unqover.errors import UnqoverError
from unqover.files import write_json_atomic, write_text_atomic
from unqover.format import fmt_seconds
from unqover.probes.registry import results_probe
from unqover.probes.result_identity import KIND_DESIGN, KIND_FULL, selection_kind
from unqover.report.model_card import CardNumber, ModelCard, ProbeCard, card_section, card_text
from unqover.report.page import markdown_page
from unqover.results import RESULTS_FILE, dataset_of, load_results

SUMMARY_JSON = "summary.json"


def host_words() -> str:
    """This machine in a few words (no name): its system, architecture and CPU cores."""
    return f"{platform.system()} {platform.machine()}, {os.cpu_count() or '?'} CPU cores"


def scope(probe, results: Mapping, dataset: str | None = None) -> str:
    """A run's scope in one line: every row, or a quick run's seeded sample (its size, seed and what it kept), or
    part of the rows; ``dataset`` names the rows (default: as the run records them)."""
    provenance = results.get("provenance") or {}
    recorded = dataset_of(provenance)
    where = ", ".join(
        part
        for part in (
            dataset or recorded.get("source"),
            recorded.get("config") and f"config {recorded['config']}",
            recorded.get("split") and f"split {recorded['split']}",
        )
        if part
    )
    quick = probe.results.quick_run_line(results["result"])
    kind, why = selection_kind(provenance) or (None, None)
    selection = provenance.get("selection") or {}
    rows = f"rows: {where}" if where else "rows not recorded"
    if kind == KIND_FULL:
        return f"full run: every row; {rows}"
    if kind == KIND_DESIGN:
        limit = selection.get("limit")
        text = quick or "a seeded sample"
        if not text.startswith("quick run"):  # the UnQover probes' line says what it kept, not how
            size = f"--limit {limit}, " if limit is not None else ""
            text = f"quick run ({size}seed {selection.get('seed')}): {text}"
        return f"{text}; {rows}"
    return f"part of the rows ({why or 'no seeded design'}): {quick or 'a subset'}; {rows}"


def ran_on(provenance: Mapping, timing: Mapping | None) -> str | None:
    """Where and how long a run scored: the device and dtype it records, and this command's seconds and host
    (``summary.json``'s ``timing``); None when nothing is recorded."""
    model = provenance.get("model") if isinstance(provenance.get("model"), Mapping) else {}
    device = ", ".join(str(model[k]) for k in ("device", "dtype") if model.get(k))
    timing = timing or {}
    spent = timing.get("seconds")
    took = f"{fmt_seconds(spent)} on {timing.get('host')}" if spent is not None else None
    words = "; ".join(part for part in (device, took) if part)
    return words or None


def probe_card(
    results: Mapping,
    *,
    report: str | None = None,
    timing: Mapping | None = None,
    dataset: str | None = None,
    task: str | None = None,
) -> ProbeCard:
    """One run's card: its headline numbers in their words with their meanings, its scope and where it ran."""
    probe = results_probe(results)
    words = probe.results.headline_text(dict(results))
    meanings = probe.results.headline_meanings(dict(results))
    numbers = [CardNumber(key, text, meanings.get(key, "")) for key, text in words.items()]
    provenance = results.get("provenance") or {}
    return ProbeCard(
        probe.name,
        probe.title,
        numbers,
        scope(probe, results, dataset),
        ran_on(provenance, timing),
        report,
        task,
    )


def write_summary(
    folder: Path,
    model_id: str,
    runs: Mapping[str, Path],
    left_out: Mapping[str, str],
    timings: Mapping[str, Mapping],
) -> tuple[ModelCard, str]:
    """Write ``summary.md``, ``summary.html`` and ``summary.json`` into ``folder`` from the runs (probe -> run
    folder) as their ``results.json`` hold them; returns the card and the terminal's text."""
    cards = []
    for name, run in runs.items():
        results = load_results(run)
        report = Path(os.path.relpath(run / "report.html", folder)).as_posix()
        cards.append(probe_card(results, report=report, timing=timings.get(name)))
    card = ModelCard(model_id, __version__, cards, dict(left_out))
    markdown = card_section(card)
    write_text_atomic(folder / "summary.md", markdown)
    write_text_atomic(folder / "summary.html", markdown_page(markdown, f"Bias summary: {model_id}"))
    record = {
        "model": model_id,
        "unqover": __version__,
        "runs": {name: Path(os.path.relpath(run, folder)).as_posix() for name, run in runs.items()},
        "timing": {name: dict(timings[name]) for name in runs if name in timings},
        "left_out": dict(left_out),
    }
    write_json_atomic(folder / SUMMARY_JSON, record)
    return card, card_text(card, {name: str(run) for name, run in runs.items()})


def summary_record(folder: Path) -> dict | None:
    """A folder's ``summary.json`` (None where it has none); one line for one that cannot be read."""
    path = Path(folder) / SUMMARY_JSON
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise UnqoverError(f"cannot read {path}: {err}") from None
    if not isinstance(record, dict) or not isinstance(record.get("runs"), dict):
        raise UnqoverError(f"{path} is no summary of `unqover probe MODEL --bias all`: it lists no runs")
    return record


def summary_runs(folder: Path) -> list[Path]:
    """The run folders a summary folder holds: those its ``summary.json`` lists, else every folder in it holding a
    ``results.json`` (a multi-run parent folder), in name order; one line when it holds none."""
    record = summary_record(folder)
    if record is not None:
        return [Path(folder) / str(path) for path in record["runs"].values()]
    runs = sorted(p for p in Path(folder).iterdir() if p.is_dir() and (p / RESULTS_FILE).is_file())
    if not runs:
        raise UnqoverError(
            f"{folder} holds no {RESULTS_FILE} and no run folders: pass a run folder, a results JSON, or the folder "
            "of a summary of several probes"
        )
    return runs


def is_summary_folder(path: Path) -> bool:
    """Whether ``path`` is a folder of several runs (a summary's), not a run folder itself."""
    return Path(path).is_dir() and not (Path(path) / RESULTS_FILE).is_file()


def summary_timings(folder: Path) -> dict[str, Mapping]:
    """The ``timing`` of each probe a summary folder's ``summary.json`` records (empty without one)."""
    record = summary_record(folder) or {}
    timing = record.get("timing")
    return {k: v for k, v in timing.items() if isinstance(v, Mapping)} if isinstance(timing, Mapping) else {}
