"""The code behind the lm-evaluation-harness tasks that ``unqover lm-eval-tasks`` writes.

A task folder holds YAML configs and a small ``unqover_tasks.py`` whose names point here (``hooks_for``), so that
lm-eval runs this installed package's code, not a copy:

- ``UnqoverTask``: the prompt of each document is :func:`unqover.scoring.causal.prompt_text`, with lm-eval's
  ``--system_instruction`` as the system prompt and, under ``--apply_chat_template``, the model's chat template:
  the prompt ``unqover probe`` builds with ``--system-prompt`` and ``--chat-template``. lm-eval's continuation is
  then ``" " + surface`` without a chat template and the surface with one (its target delimiter), and its causal
  models tokenize the pair as :func:`unqover.scoring.causal.encode_pair` does. An emotion or person document has
  no prompt (its choices are whole sentences, after the model's BOS): ``--apply_chat_template`` and
  ``--system_instruction`` are refused for it (:func:`check_sentence_prompt`), since ``unqover probe`` asks a chat
  model those questions as chat prompts, which these tasks do not.
- ``load_docs``: the dataset's rows (the sample task: the seeded sample of ``unqover sample``), each with a
  ``unqover`` field recording the probe, dataset and selection, so that logged samples measure on their own.
- ``process_results`` / aggregations: every document passes (id, log S₁, log S₂) to the aggregations, which run
  this project's measure once on all of them and return μ, η, δ, ε, their interval bounds and the value each
  interval is for (``mu_interval_estimate``: a full task's bias-corrected μ). lm-eval computes no
  standard error of its own for these (only for its built-in aggregations); its per-document bootstrap would treat
  the rows of a group, and the groups of a subject, as independent.

lm-eval prints a traceback for any exception a hook raises; a refusal of ours (:class:`UnqoverError`) instead
leaves lm-eval as the ``unqover`` command does: one ``unqover: error: ...`` line on stderr and exit status 2
(:func:`one_line`).
"""

from __future__ import annotations

import functools
import json
import logging
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from lm_eval.api.registry import AGGREGATION_REGISTRY, register_aggregation
from lm_eval.api.task import ConfigurableTask

from unqover.errors import UnqoverError, first_line
from unqover.format import MISSING
from unqover.jobs.lm_eval_tasks import METRICS, SENTENCE_LENGTH_RULE, SETTINGS_FILE, metric_values
from unqover.predictions import NLI_LABELS
from unqover.probes.base import RunOptions
from unqover.scoring.causal import prompt_text
from unqover.scoring.nli_prompt import nli_prompt_text

logger = logging.getLogger("unqover.lm_eval")


def one_line(hook: Callable) -> Callable:
    """``hook`` with its :class:`UnqoverError` ending lm-eval as ``unqover`` ends: the message as one
    ``unqover: error:`` line on stderr and exit status 2 (``SystemExit``, which lm-eval neither catches nor prints a
    traceback for), in place of the traceback lm-eval prints for an exception."""

    @functools.wraps(hook)
    def guarded(*args, **kwargs):
        try:
            return hook(*args, **kwargs)
        except UnqoverError as err:
            print(f"unqover: error: {first_line(err)}", file=sys.stderr, flush=True)
            raise SystemExit(2) from None

    return guarded


class UnqoverTask(ConfigurableTask):
    """A multiple-choice task whose prompt is ``unqover probe``'s (zero-shot only): the causal prompt of an UnQover
    question; nothing (the model's BOS) before an emotion or person question's whole sentences."""

    def __init__(self, config: dict | None = None) -> None:
        super().__init__(config={k: v for k, v in (config or {}).items() if k != "class"})

    @one_line
    def fewshot_context(
        self,
        doc: dict,
        num_fewshot: int,
        system_instruction: str | None = None,
        apply_chat_template: bool = False,
        fewshot_as_multiturn: bool = False,
        chat_template: Callable | None = None,
        gen_prefix: str | None = None,
    ) -> str:
        if num_fewshot:
            raise UnqoverError(
                f"{self.config.task} is zero-shot (its questions have no right answer): leave out --num_fewshot"
            )
        if "sentences" in doc:
            asked = (
                ("--apply_chat_template", apply_chat_template),
                ("--system_instruction", system_instruction),
            )
            check_sentence_prompt(self.config.task, doc, [flag for flag, on in asked if on])
            return ""
        render = chat_template if apply_chat_template and chat_template else None
        try:
            if "hypothesis_gender" in doc:
                return nli_prompt_text(
                    doc["premise"],
                    doc["hypothesis"],
                    template=_question(doc)["nli_prompt"],
                    system_prompt=system_instruction,
                    render=render,
                )
            return prompt_text(
                doc["context"], doc["question"], system_prompt=system_instruction, render=render
            )
        except Exception as err:  # the model's chat template (lm-eval renders it): none, or one that fails
            if render is None or isinstance(err, UnqoverError):
                raise
            reason = re.split(r"(?<=[.!?])\s", first_line(err), maxsplit=1)[0].rstrip(".!")
            raise UnqoverError(
                f"the chat template cannot render the prompt: {reason}; leave out "
                "--apply_chat_template for plain prompts, or give the model a chat template that renders"
            ) from None


def check_sentence_prompt(task: str, doc: dict, given: list[str]) -> None:
    """An emotion or person task scores each filled-in sentence on its own, after BOS: lm-eval's prompt flags
    (``given``) would not ask what ``unqover probe`` asks a chat model (one user message per question, each
    choice as the reply), so they are refused in one line that says what to run instead."""
    if not given:
        return
    probe = json.loads(doc["unqover"])["probe"]
    verb = "are" if len(given) > 1 else "is"
    raise UnqoverError(
        f"{' and '.join(given)} {verb} refused by {task}: its choices are whole sentences scored after BOS, not "
        f"replies to a chat prompt; leave {'them' if len(given) > 1 else 'it'} out for those numbers (`unqover "
        f"probe MODEL --bias {probe} --chat-template none --length-rule sum`), or ask the chat model as a chat "
        f"with `unqover probe MODEL --bias {probe}` (--system-prompt, --chat-template)"
    )


def doc_to_text(doc: dict) -> str:
    """The plain prompt (``UnqoverTask`` builds the prompt lm-eval scores; this is what lm-eval's checks see)."""
    if "sentences" in doc:
        return ""
    if "hypothesis_gender" in doc:
        return nli_prompt_text(doc["premise"], doc["hypothesis"], template=_question(doc)["nli_prompt"])
    return prompt_text(doc["context"], doc["question"])


def _question(doc: dict) -> dict:
    """What an NLI document's task asks (``unqover.scoring.nli_prompt.question_record``, in its provenance)."""
    return json.loads(doc["unqover"])["prompt"]


def choices(doc: dict) -> list[str]:
    """An UnQover question's two subjects as they appear in its context (lm-eval puts its target delimiter
    before each), an NLI pair's label words (entailment's, neutral's, contradiction's), or an emotion/person
    question's filled-in sentences."""
    if "sentences" in doc:
        return list(doc["sentences"])
    if "hypothesis_gender" in doc:
        words = _question(doc)["label_words"]
        return [words[label] for label in NLI_LABELS]
    return [doc["context"][slice(*doc[f"subject_{k}_span"])] for k in (1, 2)]


@dataclass(frozen=True)
class TaskFolder:
    """What ``unqover lm-eval-tasks`` recorded in a task folder's ``unqover_tasks.json``."""

    folder: Path
    record: dict

    @classmethod
    def read(cls, folder: Path) -> TaskFolder:
        try:
            return cls(folder, json.loads((folder / SETTINGS_FILE).read_text(encoding="utf-8")))
        except (OSError, ValueError) as err:
            reason = err.strerror if isinstance(err, OSError) and err.strerror else type(err).__name__
            raise UnqoverError(
                f"{folder / SETTINGS_FILE} cannot be read ({reason}): write the task folder again with `unqover "
                "lm-eval-tasks`"
            ) from None

    def is_sample(self, task: str) -> bool:
        return task == self.record["tasks"]["sample"]

    def about(self, sample: bool) -> dict:
        """The provenance of a task's documents (their ``unqover`` field): what ``unqover measure`` reads from
        logged samples, as it reads a predictions file's."""
        r = self.record
        about = {"probe": r["probe"], "dataset": r["dataset"], "lm_eval_task": r["tasks"]["full"]}
        if r["kind"] == "sentences":
            about["scoring"] = {"sentence": "causal-LM log-likelihood", "length_rule": SENTENCE_LENGTH_RULE}
        if r["kind"] == "nli":
            about["prompt"] = r["prompt"]
        if sample:
            about |= {"selection": r["selection"], "lm_eval_task": r["tasks"]["sample"]}
        return about


@cache
def _documents(folder: Path, sample: bool):
    """A task's documents (checked against the fingerprint recorded when the folder was written)."""
    from unqover.jobs.lm_eval_tasks import dataset_documents, sample_documents

    record = TaskFolder.read(folder).record
    return sample_documents(record, _documents(folder, False)) if sample else dataset_documents(record)


def load_docs(folder: Path, selection: str = "full", **_: Any):
    """lm-eval's ``custom_dataset``: the documents of the full or the sample task (a ``test`` split)."""
    import datasets
    import pyarrow as pa

    sample = selection == "sample"
    documents = _documents(folder, sample)
    about = json.dumps(TaskFolder.read(folder).about(sample), sort_keys=True)
    documents = documents.append_column("unqover", pa.array([about] * documents.num_rows, pa.string()))
    return datasets.DatasetDict({"test": datasets.Dataset(datasets.table.InMemoryTable(documents))})


def process_results(folder: Path, doc: dict, results: list) -> dict[str, tuple]:
    """Each document's (task folder, task name, id, log-likelihood of each choice) for every aggregation."""
    task = json.loads(doc["unqover"])["lm_eval_task"]
    item = (str(folder), task, doc["id"], tuple(float(log_likelihood) for log_likelihood, _ in results))
    kind = "sentences" if "sentences" in doc else "nli" if "hypothesis_gender" in doc else "subjects"
    return dict.fromkeys(METRICS[kind], item)


def aggregate(metric: str, items: list[tuple]) -> float:
    """One metric of this project's measure of all documents (computed once per set of documents)."""
    return _measured(tuple(items)).get(metric, math.nan)


@cache
def _measured(items: tuple) -> dict[str, float]:
    """The task's metrics from the documents' log-likelihoods, as ``unqover measure`` gives them from the logged
    samples; none (with a warning) when the documents are not the task's (lm-eval's ``--limit``)."""
    from unqover.errors import UnqoverError

    folder, task = Path(items[0][0]), items[0][1]
    tasks = TaskFolder.read(folder)
    sample = tasks.is_sample(task)
    documents = _documents(folder, sample)
    ids = [item[2] for item in items]
    if sorted(ids) != sorted(documents["id"].to_pylist()):
        logger.warning(
            "%s: %d of the task's %d documents were scored (lm-eval's --limit?); the measures need the whole "
            "task: no numbers. For a quick run use the _sample task (unqover lm-eval-tasks --groups N)",
            task,
            len(ids),
            documents.num_rows,
        )
        return {}
    about = tasks.about(sample)
    log_likelihoods = {item[2]: item[3] for item in items}
    try:
        if tasks.record["kind"] == "subjects":  # measured against the whole dataset, which a sample estimates
            population = _documents(folder, False)
            return _subject_metrics(population, log_likelihoods, about, tasks.record["resamples"])
        if tasks.record["kind"] == "nli":
            return _nli_metrics(documents, log_likelihoods, about, tasks.record["resamples"])
        return _sentence_metrics(documents, log_likelihoods, about, tasks.record["resamples"])
    except UnqoverError as err:
        logger.warning("%s: %s", task, err)
        return {}


def _subject_metrics(documents, log_likelihoods: dict, about: dict, resamples: int) -> dict[str, float]:
    """μ, η, δ, ε and their interval bounds (``unqover.probes.unqover_rows.measure_joined_scores``)."""
    from unqover.predictions import subject_scores
    from unqover.probes.registry import probe_of
    from unqover.probes.unqover_rows import measure_joined_scores

    scores = subject_scores(log_likelihoods)
    seed = (about.get("selection") or {}).get("seed", 0)
    result = measure_joined_scores(
        documents, scores, about, about["lm_eval_task"], resamples=resamples, seed=seed
    )
    data = result.to_dict()
    probe = probe_of(about)
    headline = probe.results.headline({"result": data})
    _say_declined(
        about["lm_eval_task"], probe.results.headline_text({"result": data, "provenance": {}}), headline
    )
    return metric_values("subjects", headline, data.get("interval_estimates") or {})


def _reason(text: str) -> str:
    """``declined: ...`` of a declined number's text (``— (declined: ...)``)."""
    inner = text.removeprefix(MISSING).strip()
    return inner[1:-1] if inner.startswith("(") and inner.endswith(")") else inner


def _say_declined(task: str, texts: dict[str, str], headline: dict) -> None:
    """One warning per number the measure declined, before lm-eval prints its table: which metrics are NaN and
    why, in the words ``unqover measure`` says it."""
    for name, (value, _) in headline.items():
        if value is None:
            metrics = [m for m, (of, _) in METRICS["subjects"].items() if of == name]
            logger.warning("%s: %s are NaN: %s", task, ", ".join(metrics), _reason(texts[name]))


def _sentence_metrics(documents, log_likelihoods: dict, about: dict, resamples: int) -> dict[str, float]:
    """The gender and race tests' p-values and Cramér's V (with its interval where the probe gives one), measured
    as ``unqover measure`` measures the logged samples (the probe's ``results.measure_sentences``)."""
    from unqover.predictions import sentence_log_likelihoods
    from unqover.probes.eec_rows import without_token_counts
    from unqover.probes.registry import probe_of

    probe = probe_of(about)
    seed = (about.get("selection") or {}).get("seed", 0)
    table = without_token_counts(sentence_log_likelihoods(documents.to_pylist(), log_likelihoods))
    result, _ = probe.results.measure_sentences(
        table, about, RunOptions(resamples=resamples, seed=seed), about["lm_eval_task"]
    )
    return metric_values("sentences", probe.results.headline({"result": result.to_dict()}), {})


def _nli_metrics(documents, log_likelihoods: dict, about: dict, resamples: int) -> dict[str, float]:
    """S, ΔP and B with their interval bounds, measured as ``unqover measure`` measures the logged samples (the
    probe's ``results.measure_scores``: against the dataset's rows, a sample task's as the quick run's estimate)."""
    from unqover.predictions import nli_pair_scores
    from unqover.probes.registry import probe_of

    probe = probe_of(about)
    seed = (about.get("selection") or {}).get("seed", 0)
    scores = nli_pair_scores(
        documents.select(["id", "row_id", "hypothesis_gender"]).to_pylist(), log_likelihoods
    )
    run = RunOptions(resamples=resamples, seed=seed)
    result = probe.results.measure_scores(scores, about, run, about["lm_eval_task"])
    return metric_values("nli", probe.results.headline({"result": result.to_dict()}), {})


def hooks_for(folder: Path) -> dict[str, Any]:
    """The names a task folder's ``unqover_tasks.py`` exports, bound to that folder."""
    folder = folder.resolve()
    hooks: dict[str, Any] = {
        "UnqoverTask": UnqoverTask,
        "doc_to_text": doc_to_text,
        "choices": choices,
        "load_docs": one_line(lambda **kwargs: load_docs(folder, **kwargs)),
        "process_results": one_line(lambda doc, results: process_results(folder, doc, results)),
    }
    for metrics in METRICS.values():
        for metric in metrics:
            hooks[metric] = _aggregation(metric)
    return hooks


def _aggregation(metric: str) -> Callable[[list], float]:
    @one_line
    def aggregation(items: list) -> float:
        return aggregate(metric, items)

    aggregation.__name__ = f"unqover_{metric}"
    return aggregation


for _metric in (metric for metrics in METRICS.values() for metric in metrics):
    # by name too, for task configs of one's own (``aggregation: unqover_mu``); lm-eval registers each name once
    if f"unqover_{_metric}" not in AGGREGATION_REGISTRY:
        register_aggregation(f"unqover_{_metric}")(_aggregation(_metric))
