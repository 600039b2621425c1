"""``unqover publish-results RUN... --model-repo OWNER/NAME``: a run's headline numbers as the Hub's evaluation
results of the model (``.eval_results/*.yaml`` in the model repo), by pull request or (``--output DIR``) locally.

Each run is read as ``unqover compare`` reads it (a run folder or a results JSON); the probe that wrote it (the
registry) gives its headline numbers (:meth:`~unqover.probes.base.ProbeDefinition.headline`) and its task ids
(those of its lm-evaluation-harness tasks): ``unqover_<probe>`` for a run on every row, ``unqover_<probe>_sample``
for a quick run. The dataset is named by its Hub id: a run on a Hub dataset names it; a run on a folder that
``unqover build-datasets`` made names the Hub dataset that folder is a build of (its card says so); anything else
needs ``--dataset-id``. A number that is missing or not finite (a measure the run declined) is left out with a
note; a run with none left is refused. The files themselves are the hub layer's (:mod:`unqover.hub.eval_results`).
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from unqover.errors import UnqoverError
from unqover.hub.eval_results import EvalResult, eval_result_files, open_pull_request, write_eval_results
from unqover.hub.load import HUB_ID
from unqover.hub.publish.common import CARD, validate_repo_id
from unqover.probes.lm_eval_tasks import task_names
from unqover.probes.registry import dataset_names, results_probe
from unqover.report.compare_checks import RESULTS_FILE, check_numbers, dataset_of, load_results
from unqover.report.format import fmt_estimate, fmt_interval, fmt_level

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


def _check_model(provenance: Mapping, model_repo: str, where: str) -> None:
    """Refuse a run of another Hub model than ``model_repo`` (a local model, or a run that names none, passes)."""
    model = provenance.get("model") if isinstance(provenance.get("model"), Mapping) else {}
    model_id = model.get("id") or model.get("name")
    if not isinstance(model_id, str) or model.get("path") or Path(model_id).exists():
        return
    adapter = model.get("adapter")
    adapter_id = adapter.get("id") if isinstance(adapter, Mapping) else adapter
    ids = {str(i).split("@")[0].lower() for i in (model_id, adapter_id) if i}
    if "/" in model_id and model_repo.lower() not in ids:
        raise UnqoverError(
            f"{where} measured the model {model_id}, not {model_repo}; publish it on its own repo"
        )


def _notes(
    metric: str,
    value: float,
    interval: object,
    confidence: object,
    dataset: Mapping,
    selection: object,
    words: str = "",
) -> str:
    """The notes of one number: its interval, and where the interval is for another value than the one published
    (a full UnQover run's, for its bias-corrected estimate), the words every surface shows it with."""
    parts = [metric]
    if fmt_interval(interval) != fmt_interval(None):
        level = fmt_level(confidence)
        parts.append(f"{level + ' ' if level else ''}interval {fmt_interval(interval)}")
        if fmt_interval(interval) in words and words != fmt_estimate(value, interval):
            parts.append(f"the interval is for another estimate than this value, as reported: {words}")
    config, split = dataset.get("config"), dataset.get("split")
    if config or split:
        parts.append(", ".join(f"{k} {v}" for k, v in (("config", config), ("split", split)) if v))
    if selection:
        parts.append("a quick run's estimate of the whole dataset's value")
    return "; ".join(parts)


def run_results(
    run: Path,
    model_repo: str,
    *,
    dataset_id: str | None = None,
    source_url: str | None = None,
) -> tuple[list[EvalResult], list[str]]:
    """The headline numbers of one run (a run folder or results JSON) as Hub results, and the numbers left out."""
    from unqover import __version__

    results = load_results(run)
    where = str(run)
    probe = results_probe(results)
    headline = probe.headline(results)
    check_numbers(headline, where)
    words = probe.headline_text(results)
    provenance = results.get("provenance") or {}
    _check_model(provenance, model_repo, where)
    recorded = provenance.get("dataset") if isinstance(provenance.get("dataset"), Mapping) else {}
    hub_id = hub_dataset_id(recorded, dataset_id, where)
    selection = provenance.get("selection")
    task = task_names(probe)["sample" if selection else "full"]
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
                    words.get(metric, ""),
                ),
            )
        )
    if not entries:
        raise UnqoverError(f"{where} holds no headline number to publish")
    return entries, skipped


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
    pull request on the model repo ``model_repo``. Every run is checked before anything is written."""
    validate_repo_id(model_repo)
    if dataset_id is not None:
        validate_repo_id(dataset_id)
    if source_url is not None and not source_url.startswith(("https://", "http://")):
        raise UnqoverError(f"--source-url {source_url!r} is no http(s) URL")
    entries, skipped = [], []
    for run in runs:
        found, left_out = run_results(Path(run), model_repo, dataset_id=dataset_id, source_url=source_url)
        entries += found
        skipped += left_out
    files = eval_result_files(entries)
    published = PublishedResults(files, skipped)
    if output is not None:
        published.written = write_eval_results(files, output)
        return published
    tasks = ", ".join(dict.fromkeys(e.task_id for e in entries))
    published.pr_url = open_pull_request(
        model_repo,
        files,
        title=f"Add unqover evaluation results ({tasks})",
        description="Bias measures of this model written by `unqover publish-results`: "
        + ", ".join(f"{e.task_id} {e.metric}" for e in entries)
        + f" on {', '.join(dict.fromkeys(e.dataset_id for e in entries))}.",
        token=token,
    )
    return published
