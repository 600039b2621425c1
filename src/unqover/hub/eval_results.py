"""The Hub's evaluation results of a model: YAML files in the model repo's ``.eval_results/`` folder.

The format is the Hub's (https://huggingface.co/docs/hub/eval-results; specification:
https://github.com/huggingface/hub-docs/blob/main/eval_results.yaml): each file is a list of results, each
result names the benchmark dataset (``dataset.id``, a Hub dataset id) and its task (``dataset.task_id``), the
metric ``value``, and optionally the ``date`` it was measured, its ``source`` (``url``, ``name``) and ``notes``
about the setup. A result holds one number and no metric name, so every headline number gets its own file, with
the metric named in its notes (the Hub's way of telling variants of one task apart, such as "with tools").

Task ids are ``unqover_<probe>`` (the whole dataset) and ``unqover_<probe>_sample`` (a quick run's sample), with
``-`` in the probe's name read as ``_``: the names of the probe's lm-evaluation-harness tasks. The dataset cards
list them (:func:`results_section`). This module writes and uploads the files; which numbers a run holds is the
job layer's (``unqover.jobs.publish_results``).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from unqover.env import HUB_TIMEOUT
from unqover.errors import UnqoverError
from unqover.files import write_text_atomic
from unqover.hub.publish.common import validate_repo_id

#: the model repo's folder of evaluation results
FOLDER = ".eval_results"
OFFLINE = (
    "offline mode: set HF_HUB_OFFLINE=0 and check your connection; --output DIR writes the files locally"
)


def task_ids(probe: str) -> dict[str, str]:
    """The Hub task ids of a probe's results: ``full`` (every row of its dataset) and ``sample`` (a quick run)."""
    base = "unqover_" + probe.replace("-", "_")
    return {"full": base, "sample": f"{base}_sample"}


WHAT = {
    "full": "a run on every row",
    "sample": "a quick run on a sample of the rows",
}


def results_section(*probes: str) -> str:
    """The dataset cards' section that names the task ids of results on this dataset (probes' names)."""
    ids = "\n".join(
        f"- `{task}`: {what}"
        for probe in probes
        for kind, task in task_ids(probe).items()
        for what in [(f"the {probe} probe, " if len(probes) > 1 else "") + WHAT[kind]]
    )
    return f"""## Evaluation results on the Hub

A model's results on this dataset, in its repo's `{FOLDER}/` folder (the Hub's evaluation results), use these
task ids (the names of the probe's lm-evaluation-harness tasks, where it has them):

{ids}

Each headline number is one file, its metric named in the notes. `unqover publish-results RUN --model-repo
OWNER/NAME` writes them from a run and opens a pull request on the model repo (`--output DIR` writes them
locally).
"""


@dataclass(frozen=True)
class EvalResult:
    """One headline number of one run, as a ``.eval_results`` entry (``metric`` names its file and notes)."""

    dataset_id: str
    task_id: str
    metric: str
    value: float
    date: str | None = None
    source_url: str | None = None
    source_name: str | None = None
    notes: str | None = None

    def entry(self) -> dict[str, Any]:
        """The entry as the Hub's format spells it (optional fields only where given)."""
        data: dict[str, Any] = {
            "dataset": {"id": self.dataset_id, "task_id": self.task_id},
            "value": self.value,
        }
        if self.date is not None:
            data["date"] = self.date
        if self.source_url is not None:
            data["source"] = {"url": self.source_url}
            if self.source_name is not None:
                data["source"]["name"] = self.source_name
        if self.notes is not None:
            data["notes"] = self.notes
        return data


def slug(text: str) -> str:
    """A file-name part of a metric's name: ASCII letters, digits and single ``_`` ("race: Cramér's V" ->
    ``race_cramer_s_v``)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "_", ascii_text.lower()).strip("_") or "value"


def eval_result_files(results: Sequence[EvalResult]) -> dict[str, str]:
    """``.eval_results/<task id>_<metric>.yaml`` -> its YAML text (one entry each); refuses a value that is no
    finite number, a dataset id that is no Hub dataset id, and two results for one file."""
    import yaml

    files: dict[str, str] = {}
    for result in results:
        validate_repo_id(result.dataset_id)
        if isinstance(result.value, bool) or not isinstance(result.value, int | float):
            raise UnqoverError(f"{result.task_id} {result.metric} is {result.value!r}, not a number")
        if not math.isfinite(result.value):
            raise UnqoverError(
                f"{result.task_id} {result.metric} is not a finite number; the Hub takes finite numbers"
            )
        path = f"{FOLDER}/{result.task_id}_{slug(result.metric)}.yaml"
        if path in files:
            raise UnqoverError(
                f"two runs give {result.task_id} {result.metric} ({path}); publish one of them at a time"
            )
        files[path] = yaml.safe_dump(
            [result.entry()], sort_keys=False, allow_unicode=True, default_flow_style=False, width=1000
        )
    return files


def write_eval_results(files: Mapping[str, str], output: Path) -> list[Path]:
    """Write ``files`` (as :func:`eval_result_files` makes them) under ``output``; returns the paths written."""
    return [write_text_atomic(Path(output) / name, text) for name, text in files.items()]


#: the model card in a model repo
MODEL_CARD = "README.md"


def model_card_text(model_repo: str, token: str | None = None, timeout: float = HUB_TIMEOUT) -> str | None:
    """The model repo's card (``README.md``) as it stands, None where it has none; one line when offline or on
    any Hub or network failure."""
    from unqover.hub.publish.upload import bounded_http, hub_offline, transport_errors

    validate_repo_id(model_repo)
    if hub_offline():
        raise UnqoverError(OFFLINE)
    import huggingface_hub
    from huggingface_hub.errors import HfHubHTTPError, RemoteEntryNotFoundError

    try:
        with bounded_http(timeout):
            path = huggingface_hub.hf_hub_download(model_repo, MODEL_CARD, token=token)
    except RemoteEntryNotFoundError:  # the repo has no card yet (not: the Hub could not be asked)
        return None
    except (HfHubHTTPError, *transport_errors(), RuntimeError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise UnqoverError(
            f"could not read the model card of {model_repo} ({type(exc).__name__}: {first}); --output DIR writes "
            "the files locally"
        ) from exc
    return Path(path).read_text(encoding="utf-8")


def open_pull_request(
    model_repo: str,
    files: Mapping[str, str],
    *,
    title: str,
    description: str,
    token: str | None = None,
    timeout: float = HUB_TIMEOUT,
) -> str:
    """Open a pull request on the model repo ``model_repo`` that adds ``files``; returns its URL.

    The token is ``token``, else ``HF_TOKEN`` or the stored login. Raises UnqoverError (one line) when offline,
    without a token, or on any Hub or network failure.
    """
    from unqover.hub.publish.upload import bounded_http, hub_offline, hub_token, transport_errors

    validate_repo_id(model_repo)
    if hub_offline():
        raise UnqoverError(OFFLINE)
    import huggingface_hub
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    errors = transport_errors()
    token = hub_token(token)
    operations = [
        huggingface_hub.CommitOperationAdd(path_in_repo=path, path_or_fileobj=text.encode("utf-8"))
        for path, text in files.items()
    ]
    api = huggingface_hub.HfApi(token=token)
    try:
        with bounded_http(timeout):
            info = api.create_commit(
                repo_id=model_repo,
                repo_type="model",
                operations=operations,
                commit_message=title,
                commit_description=description,
                create_pr=True,
                token=token,
            )
    except OfflineModeIsEnabled as exc:
        raise UnqoverError(OFFLINE) from exc
    except HfHubHTTPError as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        hint = {
            401: ": the Hub rejected the token; run `hf auth login` again, or pass --token / set HF_TOKEN",
            403: ": the token may not open pull requests there",
            404: ": no such model repo, or the token cannot see it",
        }.get(status, f": {first}")
        raise UnqoverError(f"could not open a pull request on {model_repo} (HTTP {status}){hint}") from exc
    except (*errors, RuntimeError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise UnqoverError(
            f"could not open a pull request on {model_repo} ({type(exc).__name__}: {first}); check your "
            "connection; --output DIR writes the files locally"
        ) from exc
    url = getattr(info, "pr_url", None)
    if not url:
        raise UnqoverError(f"the Hub made no pull request on {model_repo}")
    return str(url)
