"""``unqover publish-results RUN... --model-repo OWNER/NAME``: a run's headline numbers as the Hub's evaluation
results of the model (``.eval_results/*.yaml`` in the model repo), by pull request or (``--output DIR``) locally.

Each run is read as ``unqover compare`` reads it (a run folder or a results JSON); the probe that wrote it (the
registry) gives its headline numbers (:meth:`~unqover.probes.readings.ProbeResults.headline`) and its task ids
(those of its lm-evaluation-harness tasks): ``unqover_<probe>`` for a run on every row, ``unqover_<probe>_sample``
for a number from part of the rows (the seeded design sample, or a subset, its notes saying which: the recorded
selection, :mod:`unqover.probes.result_identity`). Only a run of exactly the model ``--model-repo`` is published
(:func:`check_model`): not another Hub model, not one with an adapter (unless ``--model-repo`` is the adapter's
own repo, made for that base), not a local folder unless it is a Hub-cache snapshot of that repo. The dataset is named by its Hub id: a run on a Hub dataset names it; a run on a folder that
``unqover build-datasets`` made names the Hub dataset that folder is a build of (its card says so); anything else
needs ``--dataset-id``. A number that is missing or not finite (a measure the run declined) is left out with a
note; a run with none left is refused. Last, the run's predictions are measured again and must give the numbers
and model its results record (:func:`unqover.jobs.compare.verify_run`): nothing edited or borrowed is published. The files themselves are the hub layer's (:mod:`unqover.hub.eval_results`).

A RUN that is a folder of several runs (the summary folder of ``unqover probe MODEL --bias all``, listed by its
``summary.json``, or any folder of run folders) stands for its runs, each published as above, and the model card
(``README.md``) gets their bias section as ``summary.md`` words it (:mod:`unqover.report.model_card`), with each
run's Hub dataset and task id in place of its local rows and report, replacing an earlier unqover section.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from unqover.errors import UnqoverError
from unqover.format import fmt_estimate, fmt_interval, fmt_level
from unqover.hub.eval_results import (
    MODEL_CARD,
    EvalResult,
    eval_result_files,
    model_card_text,
    open_pull_request,
    write_eval_results,
)
from unqover.hub.load import HUB_ID
from unqover.hub.publish.common import CARD, validate_repo_id
from unqover.jobs.compare import verify_run
from unqover.jobs.lm_eval_tasks import task_names
from unqover.probes.registry import dataset_names, results_probe
from unqover.probes.result_identity import KIND_DESIGN, KIND_FULL, KIND_SUBSET, selection_kind
from unqover.report.model_card import with_section
from unqover.results import RESULTS_FILE, check_numbers, dataset_of, load_results

HUB = "https://huggingface.co"


@dataclass
class PublishedResults:
    """What :func:`publish_results` did: the files (path in the repo -> YAML), where they went (the files
    written, or the pull request's URL) and the numbers left out (one line each)."""

    files: dict[str, str]
    skipped: list[str] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)
    pr_url: str | None = None


def _results_file(run: Path) -> Path:
    return run / RESULTS_FILE if run.is_dir() else run


def hub_dataset_id(dataset: Mapping, given: str | None, where: str) -> str:
    """The Hub id of the dataset a run measured: ``given`` (``--dataset-id``), else the Hub id it loaded, else
    ``unqover/<name>`` for a folder that ``unqover build-datasets`` built as the dataset ``<name>``."""
    if given is not None:
        return validate_repo_id(given)
    source = dataset.get("source")
    hint = (
        "measure the model on the Hub dataset (--dataset OWNER/NAME) or pass --dataset-id OWNER/NAME to name "
        "the Hub dataset these rows are"
    )
    if not source:
        raise UnqoverError(f"{where} does not record its dataset; {hint}")
    folder = Path(source)
    if folder.is_dir():
        card = folder / CARD
        name = folder.name
        builds = card.is_file() and f'load_dataset("unqover/{name}"' in card.read_text(encoding="utf-8")
        if name in dataset_names() and builds:
            return f"unqover/{name}"
        raise UnqoverError(f"{where} measured the local folder {source}, no build of a Hub dataset; {hint}")
    if (
        "/" in source
        and HUB_ID.fullmatch(source)
        and not source.startswith((".", "/", "~"))
        and not folder.exists()
    ):
        return validate_repo_id(source)
    raise UnqoverError(f"{where} measured {source}, not a Hub dataset; {hint}")


def _remeasure(run: Path, provenance: Mapping) -> str:
    """The command that measures a run's predictions again, writing today's provenance over its results."""
    predictions = provenance.get("predictions")
    if not isinstance(predictions, str):
        predictions = str(run / "predictions.parquet") if run.is_dir() else "PREDICTIONS"
    return f"unqover measure {predictions} --output {_results_file(run)}"


def _hub_model(model: Mapping) -> str | None:
    """The Hub repo a recorded model is: its Hub id, or the repo of a Hub-cache snapshot folder; None for any
    other local model (a folder is tied to no repo: its files can be anything)."""
    from unqover.scoring.models import is_hub_id
    from unqover.scoring.weights import hub_snapshot

    model_id = str(model.get("id") or model.get("name"))
    folder = model.get("path") or (model_id if Path(model_id).expanduser().exists() else None)
    if folder is not None:
        found = hub_snapshot(str(folder))
        return None if found is None else found[0]
    repo = model_id.split("@")[0]
    local = repo.startswith((".", "/", "~")) or not is_hub_id(repo)
    return None if local else repo


def check_model(provenance: Mapping, model_repo: str, where: str) -> None:
    """Refuse a run whose model is not exactly the Hub model ``model_repo``: another Hub model, a local folder
    that is no snapshot of it, a model with an adapter (unless ``model_repo`` is that adapter's Hub repo, made
    for this base), or no model recorded."""
    model = provenance.get("model")
    model = {"id": model} if isinstance(model, str) else model  # a results file that names it alone
    model_id = model.get("id") or model.get("name") if isinstance(model, Mapping) else None
    if not isinstance(model_id, str) or not model_id:
        if isinstance(provenance.get("lm_eval"), Mapping):
            raise UnqoverError(
                f"{where} records no model: lm-eval's results file (results_*.json, which names it) was not "
                "beside the logged samples when they were measured; measure them again with it beside them"
            )
        raise UnqoverError(
            f"{where} records no model, so it cannot be tied to {model_repo}: publish the results of `unqover "
            f"probe {model_repo}` or of predictions that record their model"
        )
    same = model_repo.lower()
    hub = _hub_model(model)
    adapter = model.get("adapter")
    if adapter:
        adapter = adapter if isinstance(adapter, Mapping) else {"id": str(adapter)}
        adapter_id = str(adapter.get("id"))
        adapter_hub = None if adapter.get("path") else _hub_model(adapter)
        base = adapter.get("base_model")
        if (
            adapter_hub is not None
            and adapter_hub.lower() == same
            and hub is not None
            and isinstance(base, str)
            and base.lower() == hub.lower()
        ):
            return
        # the adapter's repo, but the run does not tie the adapter to the base it was measured on
        if adapter_hub is not None and adapter_hub.lower() == same:
            if isinstance(base, str):
                raise UnqoverError(
                    f"{where} was measured on {model_id} with the adapter {adapter_id}, which records {base} as its "
                    f"base model (base_model_name_or_path), not {hub or model_id}: these numbers are not {model_repo}'s "
                    "on the base it was made for"
                )
            lm_eval = " (lm-eval's model arguments do not name it)" if provenance.get("lm_eval") else ""
            raise UnqoverError(
                f"{where} was measured on {model_id} with the adapter {adapter_id}, but records no base model the "
                f"adapter was made for{lm_eval}, so it cannot be tied to {model_repo}; probe it with `unqover probe "
                f"{hub or model_id} --adapter {adapter_id}`, which records it"
            )
        raise UnqoverError(
            f"{where} was measured on {model_id} with the adapter {adapter_id}, not {model_repo}: an adapted "
            "model's numbers are not its base model's; they go only on the adapter's own Hub repo (made for "
            "that base model)"
        )
    if hub is None:
        raise UnqoverError(
            f"{where} was measured on the local model {model_id}, not {model_repo}: a local folder is tied to no "
            f"Hub repo; probe {model_repo} by its Hub id (offline: from the Hub cache) to publish on it"
        )
    if hub.lower() != same:
        raise UnqoverError(f"{where} was measured on {hub}, not {model_repo}; publish it on its own repo")


def check_selection(
    provenance: Mapping, quick_run: str | None, where: str, again: str
) -> tuple[str, str | None]:
    """The recorded selection's (kind, why), refused when absent (an older unqover's results) or when it
    contradicts the numbers (every row recorded, a quick run's estimates measured)."""
    found = selection_kind(provenance)
    if found is None:
        raise UnqoverError(
            f"{where} records no row selection (full, design sample or subset): an older unqover wrote it; "
            f"measure it again (`{again}`) and publish that"
        )
    if found[0] == KIND_FULL and quick_run is not None:
        raise UnqoverError(
            f"{where} records every row, but its numbers are estimates from part of them; measure it again "
            f"(`{again}`) and publish that"
        )
    return found


def _notes(
    metric: str,
    value: float,
    interval: object,
    confidence: object,
    dataset: Mapping,
    selection: Mapping,
    quick_run: str | None,
    words: str = "",
) -> str:
    """The notes of one number: its interval (and, where it is for another value than the one published, as a
    full UnQover run's is for its bias-corrected estimate, the words every surface shows it with), its config and
    split, and what rows it was estimated from (the design sample's seed, or why a subset is no design's)."""
    parts = [metric]
    if fmt_interval(interval) != fmt_interval(None):
        level = fmt_level(confidence)
        parts.append(f"{level + ' ' if level else ''}interval {fmt_interval(interval)}")
        if fmt_interval(interval) in words and words != fmt_estimate(value, interval):
            parts.append(f"the interval is for another estimate than this value, as reported: {words}")
    config, split = dataset.get("config"), dataset.get("split")
    if config or split:
        parts.append(", ".join(f"{k} {v}" for k, v in (("config", config), ("split", split)) if v))
    kind = selection.get("kind")
    if kind == KIND_DESIGN:
        seed = selection.get("seed")
        parts.append(
            "a quick run's estimate of the whole dataset's value (the seeded design sample"
            + (f", seed {seed}" if seed is not None else "")
            + (f"; {quick_run}" if quick_run else "")
            + ")"
        )
    elif kind == KIND_SUBSET:
        parts.append(
            "an estimate of the whole dataset's value from a subset of the rows that is no seeded design sample "
            f"({selection.get('why')}" + (f"; {quick_run}" if quick_run else "") + ")"
        )
    return "; ".join(parts)


def run_results(
    run: Path,
    model_repo: str,
    *,
    dataset_id: str | None = None,
    source_url: str | None = None,
) -> tuple[list[EvalResult], list[str]]:
    """The headline numbers of one run (a run folder or results JSON) as Hub results, and the numbers left out,
    once its predictions give them (:func:`unqover.jobs.compare.verify_run`)."""
    results = load_results(run)
    found = results_entries(results, run, model_repo, dataset_id=dataset_id, source_url=source_url)
    verify_run(results_probe(results), results, run, str(run), results_rows=False)
    return found


def results_entries(
    results: dict,
    run: Path,
    model_repo: str,
    *,
    dataset_id: str | None = None,
    source_url: str | None = None,
) -> tuple[list[EvalResult], list[str]]:
    """:func:`run_results` of the ``results`` read from ``run``, as they stand: the checks of the model, the
    selection and the dataset, and each headline number as a Hub result (or why it is left out)."""
    from unqover import __version__

    where = str(run)
    probe = results_probe(results)
    headline = probe.results.headline(results)
    check_numbers(headline, where)
    words = probe.results.headline_text(results)
    provenance = results.get("provenance") or {}
    check_model(provenance, model_repo, where)
    quick_run = probe.results.quick_run_line(results["result"])
    kind, _ = check_selection(provenance, quick_run, where, _remeasure(Path(run), provenance))
    selection = provenance["selection"]
    recorded = provenance.get("dataset") if isinstance(provenance.get("dataset"), Mapping) else {}
    hub_id = hub_dataset_id(recorded, dataset_id, where)
    task = task_names(probe)["full" if kind == KIND_FULL else "sample"]
    result = results["result"]
    confidence = (result.get("bootstrap") or {}).get("confidence") if isinstance(result, Mapping) else None
    mtime = _results_file(Path(run)).stat().st_mtime
    date = datetime.datetime.fromtimestamp(mtime, tz=datetime.timezone.utc).date().isoformat()
    entries, skipped = [], []
    for metric, (value, interval) in headline.items():
        if value is None or not math.isfinite(value):
            said = words.get(metric, "")
            skipped.append(
                f"{where}: {metric} is {'missing' if value is None else 'not finite'}"
                + (f" ({said})" if "declined" in said else "")
                + "; not published"
            )
            continue
        entries.append(
            EvalResult(
                dataset_id=hub_id,
                task_id=task,
                metric=metric,
                value=float(value),
                date=date,
                source_url=source_url or f"{HUB}/datasets/{hub_id}",
                source_name=f"unqover {__version__}, {probe.title}",
                notes=_notes(
                    metric,
                    value,
                    interval,
                    confidence,
                    dataset_of(provenance),
                    selection,
                    quick_run,
                    words.get(metric, ""),
                ),
            )
        )
    if not entries:
        raise UnqoverError(f"{where} holds no headline number to publish")
    return entries, skipped


@dataclass
class PublishedRun:
    """One run's part of a publication: its folder or file, its results, its Hub results and the numbers left
    out, and (a run of a summary folder) how long it took and where."""

    path: Path
    results: dict
    entries: list[EvalResult]
    skipped: list[str]
    timing: Mapping | None = None


def expand_runs(runs: Sequence[Path]) -> tuple[list[tuple[Path, Mapping | None]], bool]:
    """Each RUN as run folders or results files with their recorded timing: a folder of several runs (the
    summary folder of ``unqover probe MODEL --bias all``, or any folder of run folders) stands for its runs; and
    whether one did (then the model card's bias section is written too)."""
    from unqover.jobs.model_summary import is_summary_folder, summary_runs, summary_timings

    expanded: list[tuple[Path, Mapping | None]] = []
    summary = False
    for run in map(Path, runs):
        if not is_summary_folder(run):
            expanded.append((run, None))
            continue
        summary = True
        timings = summary_timings(run)
        for folder in summary_runs(run):
            probe = load_results(folder).get("probe")
            expanded.append((folder, timings.get(probe) if isinstance(probe, str) else None))
    return expanded, summary


def card_section_of(model_repo: str, published: Sequence[PublishedRun]) -> str:
    """The model card's bias section of the published runs, as ``summary.md`` words it: the Hub dataset and task
    id of each run instead of its local rows and report."""
    from unqover import __version__
    from unqover.jobs.model_summary import probe_card
    from unqover.report.model_card import ModelCard, card_section

    cards = [
        probe_card(
            run.results,
            timing=run.timing,
            dataset=run.entries[0].dataset_id,
            task=run.entries[0].task_id,
        )
        for run in published
    ]
    return card_section(ModelCard(model_repo, __version__, cards))


def publish_results(
    runs: Sequence[Path],
    model_repo: str,
    *,
    output: Path | None = None,
    dataset_id: str | None = None,
    source_url: str | None = None,
    token: str | None = None,
) -> PublishedResults:
    """Write the runs' headline numbers as ``.eval_results/*.yaml``: under ``output`` when given, else in a
    pull request on the model repo ``model_repo``. A RUN that is a folder of several runs (a summary's) stands for
    its runs, and the model card (``README.md``) gets their bias section (replacing an earlier one). Every run is
    checked before anything is written."""
    _check_arguments(model_repo, dataset_id, source_url, output)
    expanded, summary = expand_runs(runs)
    published = []
    for run, timing in expanded:
        found, left_out = run_results(run, model_repo, dataset_id=dataset_id, source_url=source_url)
        published.append(PublishedRun(run, load_results(run), found, left_out, timing))
    entries = [entry for run in published for entry in run.entries]
    files = eval_result_files(entries)
    result = PublishedResults(files, [note for run in published for note in run.skipped])
    section = card_section_of(model_repo, published) if summary else None
    if output is not None:
        from unqover.files import check_writable

        if section is not None:
            card = Path(output) / MODEL_CARD
            files[MODEL_CARD] = with_section(_read_card(card), section)
        for name in files:  # a folder in the way of a file is named, not the temporary file beside it
            check_writable(Path(output) / name, folder=False)
        result.written = write_eval_results(files, output)
        return result
    if section is not None:
        files[MODEL_CARD] = with_section(model_card_text(model_repo, token), section)
    tasks = ", ".join(dict.fromkeys(e.task_id for e in entries))
    result.pr_url = open_pull_request(
        model_repo,
        files,
        title=f"Add unqover evaluation results ({tasks})",
        description="Bias measures of this model written by `unqover publish-results`: "
        + ", ".join(f"{e.task_id} {e.metric}" for e in entries)
        + f" on {', '.join(dict.fromkeys(e.dataset_id for e in entries))}"
        + (", and their section in the model card." if section is not None else "."),
        token=token,
    )
    return result


def _check_arguments(
    model_repo: str, dataset_id: str | None, source_url: str | None, output: Path | None
) -> None:
    """The repo ids, the source URL and the output folder, checked before any run is read."""
    validate_repo_id(model_repo)
    if dataset_id is not None:
        validate_repo_id(dataset_id)
    if source_url is not None and not source_url.startswith(("https://", "http://")):
        raise UnqoverError(f"--source-url {source_url!r} is no http(s) URL")
    if output is not None:  # before the runs are read: a file in the way is named, not a temporary file
        from unqover.files import check_writable

        check_writable(output, folder=True)
        check_writable(Path(output) / ".eval_results", folder=True)


def _read_card(path: Path) -> str | None:
    """A local model card's text (None: there is none yet); one line when it cannot be read."""
    if not path.is_file():
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise UnqoverError(f"cannot read the model card {path}: {err}") from None
