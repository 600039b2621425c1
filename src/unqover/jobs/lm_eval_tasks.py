"""``unqover lm-eval-tasks``: a task folder for ``lm_eval --include_path DIR`` (lm-evaluation-harness).

Per probe two tasks: ``unqover_<bias>`` scores every row of the dataset, ``unqover_<bias>_sample`` the seeded,
stratified sample of whole groups that ``unqover sample --groups N --seed S`` selects (lm-eval's own ``--limit``
takes the first N documents, which are not a sample of anything). Both are multiple-choice tasks with the two
subjects as choices; their code is :mod:`unqover.jobs.lm_eval_hooks`, reached from the folder's
``unqover_tasks.py``. The folder records the dataset (and its row fingerprint, checked when lm-eval loads it) in
``unqover_tasks.json``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from unqover.env import word_lists_folder
from unqover.errors import UnqoverError
from unqover.files import check_writable, write_json_atomic, write_text_atomic
from unqover.probes.base import ProbeDefinition, RunOptions
from unqover.probes.row_identity import check_rows_of

#: the config a causal LM scores (``unqover probe``'s choice for the family)
CAUSAL_CONFIG = "qa"
#: the folder's record of its probe, dataset and sample
SETTINGS_FILE = "unqover_tasks.json"
#: lm-eval metric name -> (the result's headline number, what of it: None the value, 0 = its interval's low end,
#: 1 = its high end, ESTIMATE = the value the interval is for), per kind of task: "subjects" (the UnQover probes:
#: which subject answers), "nli" (the NLI probe: which label word answers a premise and hypothesis) and "sentences"
#: (the emotion and person fill-ins: which filled-in sentence is likelier)
ESTIMATE = "estimate"
_ENDS = (("", None), ("_low", 0), ("_high", 1))
#: a full task's μ and η are the values over all groups, and their intervals are for their bias-corrected
#: estimates: ``mu_interval_estimate`` names the value ``mu_low`` and ``mu_high`` bound (a sample task's: ``mu``)
_SUBJECT_ENDS = (*_ENDS, ("_interval_estimate", ESTIMATE))
METRICS = {
    "subjects": {
        f"{short}{suffix}": (name, end)
        for short, name in (
            ("mu", "mu"),
            ("eta", "eta"),
            ("delta", "positional_error"),
            ("epsilon", "attributive_error"),
        )
        for suffix, end in _SUBJECT_ENDS
    },
    "nli": {
        f"{short}{suffix}": (name, end)
        for short, name in (("S", "S"), ("delta_P", "delta_P"), ("B", "B"))
        for suffix, end in _ENDS
    },
    "sentences": {
        **{f"{test}_p_value": (f"{test}: p-value", None) for test in ("gender", "race")},
        **{
            f"{test}_cramers_v{suffix}": (f"{test}: Cramér's V", end)
            for test in ("gender", "race")
            for suffix, end in _ENDS
        },
    },
}


def metric_values(
    kind: str, headline: Mapping[str, tuple], estimates: Mapping[str, float]
) -> dict[str, float]:
    """The lm-eval metrics of a kind of task from a result's headline numbers (name -> (value, interval), the
    probe's ``results.headline``) and the values its intervals are for (``interval_estimates``; default: the value);
    NaN where a number is missing or declined."""
    values = {}
    for metric, (name, end) in METRICS[kind].items():
        value, interval = headline.get(name, (None, None))
        if end is None:
            chosen = value
        elif end == ESTIMATE:
            chosen = estimates.get(name, value) if interval else None
        else:
            chosen = interval[end] if interval else None
        values[metric] = math.nan if chosen is None else float(chosen)
    return values


#: the emotion and person tasks rank each question's sentences by total log-likelihood: lm-eval's logged
#: samples carry no token counts, so ``--length-rule mean`` cannot be computed from them
SENTENCE_LENGTH_RULE = "sum"

SHIM = '''"""lm-evaluation-harness hooks of this folder's tasks (written by `unqover lm-eval-tasks`).

The code is the installed unqover package's (unqover.jobs.lm_eval_hooks), bound to this folder.
"""

from pathlib import Path

from unqover.jobs.lm_eval_hooks import hooks_for

_hooks = hooks_for(Path(__file__).parent)
UnqoverTask = _hooks["UnqoverTask"]
load_docs = _hooks["load_docs"]
doc_to_text = _hooks["doc_to_text"]
choices = _hooks["choices"]
process_results = _hooks["process_results"]
{aggregations}
'''


def task_names(probe: ProbeDefinition) -> dict[str, str]:
    """The lm-eval task names of a probe (also the task ids of its results on the Hub)."""
    base = "unqover_" + probe.name.replace("-", "_")
    return {"full": base, "sample": f"{base}_sample"}


@dataclass(frozen=True)
class WrittenTasks:
    """What ``write_tasks`` wrote: the folder, the task names, and the documents of the full and sample tasks."""

    folder: Path
    tasks: dict[str, str]
    documents: int
    sample_documents: int
    sample: str  # what the sample holds, in words
    note: str | None = None  # the sample too small for some numbers, which lm-eval's table will show as NaN


def write_tasks(
    probe: ProbeDefinition,
    output: Path,
    *,
    dataset: str | None = None,
    word_lists: Path | None = None,
    size: int | None = None,
    seed: int = 0,
    resamples: int = 1000,
) -> WrittenTasks:
    """Write the task folder of ``probe`` to ``output``; the sample task holds the quick run of ``size`` units
    (UnQover: groups; emotion: persons per gender × race cell; default the probe's quick-run size) drawn with
    ``seed``, as ``unqover probe --limit SIZE --seed SEED`` scores it."""
    from unqover.generate.ids import dataset_fingerprint

    if probe.lm_eval_unfit:
        raise UnqoverError(f"the {probe.name} probe has no lm-eval tasks: {probe.lm_eval_unfit}")
    check_writable(output, folder=True)
    size = probe.quick_run.default if size is None else size
    if word_lists is not None and probe.lm_eval_kind != "subjects":
        raise UnqoverError(f"--word-lists applies to the UnQover probes, not {probe.name}")
    if probe.lm_eval_kind == "subjects":
        word_lists = word_lists_folder(word_lists)  # else UNQOVER_WORD_LISTS's folder
    check_rows_of(probe, dataset)
    record = {
        "probe": probe.name,
        "kind": probe.lm_eval_kind,
        "given_dataset": dataset,
        "word_lists": None if word_lists is None else str(Path(word_lists).resolve()),
    }
    if probe.lm_eval_kind == "nli":  # the prompt `unqover probe` asks a causal LM by default
        from unqover.scoring.nli_prompt import LABELS, MNLI_LABEL_WORDS, MNLI_PROMPT

        record["prompt"] = {
            "nli_prompt": MNLI_PROMPT,
            "label_words": dict(zip(LABELS, MNLI_LABEL_WORDS, strict=True)),
        }
    documents, record["dataset"] = _documents(probe, record)
    sample, record["selection"], described = _sample(probe, record, documents, size, seed)
    note = _small_sample_note(probe, documents, record["dataset"], size)
    names = task_names(probe)
    record |= {
        "documents": documents.num_rows,
        "fingerprint": dataset_fingerprint(documents["id"]),
        "resamples": resamples,
        "tasks": names,
    }
    output.mkdir(parents=True, exist_ok=True)
    write_json_atomic(output / SETTINGS_FILE, record)
    metrics = METRICS[probe.lm_eval_kind]
    aggregations = "\n".join(f'{metric} = _hooks["{metric}"]' for metric in metrics)
    write_text_atomic(output / "unqover_tasks.py", SHIM.format(aggregations=aggregations))
    for kind, name in names.items():
        task_note = note if kind == "sample" else None
        write_text_atomic(
            output / f"{name}.yaml", _task_yaml(name, kind, probe, metrics, described, task_note)
        )
    return WrittenTasks(output, names, documents.num_rows, sample.num_rows, described, note)


#: how lm-eval's table shows a number the measure declined
NAN_IN_THE_TABLE = "NaN in lm-eval's table"


def _small_sample_note(probe: ProbeDefinition, documents, dataset: dict, size: int) -> str | None:
    """``unqover probe``'s note on a ``--limit`` too small for μ and η (:meth:`ProbeDefinition.limit_note`),
    said of the sample task's ``--groups``: its numbers would be NaN in lm-eval's table."""
    from unqover.probes.base import Loaded

    if probe.lm_eval_kind != "subjects":
        return None
    loaded = Loaded(documents, dataset, population=documents)
    settings = {"mode": "default", "precision": None}  # the tasks' measure (lm_eval_hooks)
    return probe.limit_note(loaded, RunOptions(limit=size), settings, "--groups", NAN_IN_THE_TABLE)


def _documents(probe: ProbeDefinition, record: dict):
    """The full task's documents (every column) and where they came from: an UnQover dataset's rows, or the
    emotion/person questions with their choice sentences."""
    from unqover.probes.eec_rows import with_sentences
    from unqover.probes.unqover_rows import check_rows_fit, check_unqover_columns
    from unqover.scoring.requests import CONTINUATIONS

    if record["kind"] == "subjects":
        if "dataset" in record:  # a folder written before: the rows it recorded, wherever lm-eval runs
            rows = probe.results.recorded_rows(record["dataset"], RunOptions(), all_columns=True)[0]
            return rows, record["dataset"]
        run = RunOptions(dataset=record["given_dataset"])
        settings = probe.check_settings({"word_lists": record["word_lists"]})
        rows, about = probe.rows(run, settings, CAUSAL_CONFIG)
        check_unqover_columns(rows, about["source"])
        check_rows_fit(rows, CONTINUATIONS, CAUSAL_CONFIG)
        return rows, about
    if record["kind"] == "nli":
        from unqover.probes.nli_rows import nli_documents

        rows, about = _nli_rows(record)
        return nli_documents(rows), about
    questions, about = probe.load_questions(_given_dataset(record), None, False)
    return with_sentences(probe, questions), about


def _given_dataset(record: dict) -> str | None:
    """The dataset the documents come from: the folder recorded, while it is there, else the one given."""
    source = (record.get("dataset") or {}).get("source")
    return source if source and Path(source).is_dir() else record["given_dataset"]


def _nli_rows(record: dict):
    """The NLI rows of a task folder's record, and where they came from."""
    from unqover.probes.nli_rows import load_nli_rows

    config = (record.get("dataset") or {}).get("config") or "synthetic"
    return load_nli_rows(record["probe"], _given_dataset(record), config)


def _sample(probe: ProbeDefinition, record: dict, documents, size: int, seed: int):
    """The sample task's documents, its ``selection`` record and a line saying what it holds."""
    from unqover.format import fmt_count

    if record["kind"] == "subjects":
        from unqover.scoring.sampling import DESIGN, describe_selection, select_groups

        total = describe_selection(documents)
        if size > total["groups"]:
            raise UnqoverError(
                f"--groups {size:,} is more than the dataset's {fmt_count(total['groups'])} groups: give "
                f"--groups {total['groups']} or fewer"
            )
        kept = select_groups(documents, limit=size, seed=seed)
        chosen = describe_selection(kept)
        selection = {"design": DESIGN, "seed": seed, "groups": chosen["groups"], "of": total["groups"]}
        return (
            kept,
            selection,
            f"{fmt_count(chosen['groups'])} of {fmt_count(total['groups'])} groups, seed {seed}",
        )
    if record["kind"] == "nli":
        kept, selection = nli_sample(record, documents, size, seed)
    else:
        kept, selection = probe.select(documents, size, seed)
    if kept.num_rows == documents.num_rows:  # a sample of everything is the full task under another name
        raise UnqoverError(
            f"--groups {size:,} ({probe.quick_run.unit}) keeps every document of the {probe.name} dataset, so its "
            "sample task would be the full task: use the full task, or give a smaller --groups"
        )
    return kept, selection, f"{fmt_count(size)} {probe.quick_run.unit}, seed {seed}"


def nli_sample(record: dict, documents, limit: int, seed: int):
    """The NLI sample task's documents (both hypotheses of the rows that ``unqover probe --bias nli-gender --limit
    LIMIT --seed SEED`` scores) and its ``selection`` record, which ``unqover measure`` draws again."""
    import pyarrow.compute as pc

    from unqover.probes.nli_rows import describe_nli_selection, limit_per_occupation

    rows, _ = _nli_rows(record)
    kept = limit_per_occupation(rows, limit, seed)
    chosen = documents.filter(pc.is_in(documents["row_id"], value_set=kept["id"]))
    return chosen, describe_nli_selection(rows, kept, limit, seed)


def sample_documents(record: dict, documents):
    """The sample task's documents of a task folder's record."""
    from unqover.probes.registry import probe_of

    selection = record["selection"]
    if record["kind"] == "nli":
        return nli_sample(record, documents, selection["limit"], selection["seed"])[0]
    if record["kind"] == "subjects":
        from unqover.scoring.sampling import select_groups

        return select_groups(documents, limit=selection["groups"], seed=selection["seed"])
    return probe_of(record).select(documents, selection["limit"], selection["seed"])[0]


def write_task_folders(
    bias: list[str],
    output: Path,
    *,
    dataset: str | None,
    word_lists: Path | None = None,
    groups: int | None,
    seed: int,
) -> list[WrittenTasks]:
    """``unqover lm-eval-tasks``: one probe's tasks in ``output``, several probes' (``bias``: their names) in
    ``output/<probe>``; ``groups``: the sample task's size (:func:`write_tasks`' ``size``)."""
    from unqover.probes.registry import get_probe

    probes = [get_probe(name) for name in bias]
    unfit = [p for p in probes if p.lm_eval_unfit]
    if unfit:
        raise UnqoverError(f"the {unfit[0].name} probe has no lm-eval tasks: {unfit[0].lm_eval_unfit}")
    if dataset is not None and len(probes) > 1:
        raise UnqoverError("--dataset names one probe's dataset: give one probe with it")
    return [
        write_tasks(
            p,
            output / p.name if len(probes) > 1 else output,
            dataset=dataset,
            word_lists=word_lists,
            size=groups,
            seed=seed,
        )
        for p in probes
    ]


def _task_yaml(
    name: str, kind: str, probe: ProbeDefinition, metrics, sample: str, note: str | None = None
) -> str:
    """A task's YAML config; ``note`` (a sample too small for some numbers) is said in its first lines and kept in
    its ``metadata``, which lm-eval writes into its results file beside the NaN."""
    what = "every document" if kind == "full" else f"the quick run's sample ({sample})"
    lines = [
        f"# {probe.title}: {what}. Written by `unqover lm-eval-tasks`; run with lm_eval --include_path.",
        *([f"# {note}"] if note else []),
        f"task: {name}",
        "class: !function unqover_tasks.UnqoverTask",
        "custom_dataset: !function unqover_tasks.load_docs",
        "dataset_kwargs:",
        f"  selection: {kind}",
        "test_split: test",
        "output_type: multiple_choice",
        "doc_to_text: !function unqover_tasks.doc_to_text",
        "doc_to_choice: !function unqover_tasks.choices",
        "doc_to_target: 0",
        "process_results: !function unqover_tasks.process_results",
    ]
    if probe.lm_eval_kind == "sentences":
        lines.append('target_delimiter: ""  # each choice is a whole sentence, scored after BOS')
    lines.append("metric_list:")
    for metric in metrics:
        lines += [
            f"  - metric: {metric}",
            f"    aggregation: !function unqover_tasks.{metric}",
            f"    higher_is_better: {'true' if metric.endswith('p_value') or metric.startswith('S') else 'false'}",
        ]
    lines += ["metadata:", "  version: 1.0"]
    if note:
        lines.append(f"  unqover_note: {json.dumps(note, ensure_ascii=False)}")
    return "\n".join(lines) + "\n"


def dataset_documents(record: dict):
    """The full task's documents of a task folder's record, refused if they are not the ones it was written for."""
    from unqover.generate.ids import dataset_fingerprint
    from unqover.probes.registry import probe_of

    probe = probe_of(record)
    check_rows_of(
        probe,
        (record.get("dataset") or {}).get("source"),
        "write the folder again with `unqover lm-eval-tasks` and a dataset of its rows",
    )
    try:
        documents, _ = _documents(probe, record)
    except UnqoverError as err:  # e.g. the dataset folder removed since the task folder was written
        raise UnqoverError(
            f"{err}; the task folder reads its documents from there: build the dataset there again, or write "
            "the folder again with `unqover lm-eval-tasks`"
        ) from None
    if (
        documents.num_rows != record["documents"]
        or dataset_fingerprint(documents["id"]) != record["fingerprint"]
    ):
        raise UnqoverError(
            f"the dataset {record['dataset'].get('source')} no longer holds the documents this task folder was "
            "written for: write the folder again with `unqover lm-eval-tasks`"
        )
    return documents
