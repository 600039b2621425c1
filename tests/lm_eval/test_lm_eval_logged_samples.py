"""lm-eval's logged samples (``lm_eval --log_samples``) measured by ``unqover measure``: each logged document is
checked against the dataset row of its id, and lm-eval's ``--limit`` (read from the results file beside the
samples) labels the measured rows as a subset that matches no design.

The samples come from one real ``lm_eval`` run of a religion sample task on a tiny GPT-2; the bad inputs are that
run's files edited as a user (or a script) might: ids shuffled, a text changed, the run cut short by ``--limit``.
The catalogue's companion for logged samples: ``tests/cli/test_cli_bad_inputs.py`` tries the inputs of every command.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import tiny_models
from tests.cli.test_cli_bad_inputs import Case, assert_refused_once
from unqover.cli import main
from unqover.predictions import lm_eval_subset
from unqover.scoring.sampling import DESIGN

pytest.importorskip("lm_eval", reason="lm-eval is in the test extras")

GROUPS = 50  # the sample task's groups: 200 documents
LIMIT = 150  # lm-eval's --limit: the first 150 documents (some groups whole, others in part)
TASK = "unqover_religion_sample"
#: what a document's prompt and choices are built from (the UnQover tasks' checked fields, in checking order)
FIELDS = ("subject_1", "subject_2", "template_id", "attribute", "polarity", "context", "question")
FIELDS += ("subject_1_span", "subject_2_span")
REFUSED = "does not match the dataset row of its id"
ADVICE = (
    "its scores would be measured as another row's; measure the samples file lm-eval wrote, unedited, against "
    "its task's dataset"
)


def lm_eval(folder: Path, model: Path, output: Path) -> None:
    """``lm_eval --model hf`` on the sample task of ``folder`` with --log_samples (as tests/lm_eval/test_lm_eval_tasks.py)."""
    argv = [sys.executable, "-m", "lm_eval", "--model", "hf", "--model_args", f"pretrained={model},dtype=float32",
            "--device", "cpu", "--batch_size", "64", "--include_path", str(folder), "--tasks", TASK,
            "--log_samples", "--output_path", str(output)]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(argv, cwd=output.parent, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]


def copy_run(samples: Path, folder: Path, lines: list[str], results: dict | None, task: str = TASK) -> Path:
    """The samples ``lines`` of ``task`` (and ``results``, if any) under ``folder`` with lm-eval's file names."""
    folder.mkdir(parents=True)
    copied = folder / samples.name.replace(TASK, task)
    copied.write_text("\n".join(lines) + "\n")
    if results is not None:
        stamp = samples.stem.rsplit("_", 1)[-1]
        (folder / f"results_{stamp}.json").write_text(json.dumps(results))
    return copied


def edited(line: str, **doc) -> str:
    sample = json.loads(line)
    sample["doc"] |= doc
    return json.dumps(sample)


@pytest.fixture(scope="module")
def world(tmp_path_factory, word_lists, religion_tables, upstream_word_lists_path) -> dict:
    """One real lm-eval run of a 50-group religion sample task, and its files edited."""
    root = tmp_path_factory.mktemp("world-logged")
    rows = religion_tables["qa"]
    texts = sorted(set(rows["context"].to_pylist()[:4000]) | set(rows["question"].to_pylist()[:4000]))
    model = tiny_models.causal_lm(root / "models" / "gpt2", texts, "gpt2")
    tasks = root / "tasks"
    argv = ["lm-eval-tasks", "--bias", "religion", "--word-lists", str(upstream_word_lists_path)]
    assert main([*argv, "--groups", str(GROUPS), "--output", str(tasks)]) == 0
    lm_eval(tasks, model, root / "out")
    (samples,) = (root / "out").rglob("samples_*.jsonl")
    (results_file,) = (root / "out").rglob("results_*.json")
    results = json.loads(results_file.read_text())
    lines = samples.read_text().splitlines()
    docs = [json.loads(line)["doc"] for line in lines]
    w = {"root": root, "samples": samples, "lines": lines, "docs": docs, "results": results}

    # two documents' ids swapped (lines 2 and 7): each text now claims the other's row
    swapped = list(lines)
    swapped[1], swapped[6] = edited(lines[1], id=docs[6]["id"]), edited(lines[6], id=docs[1]["id"])
    w["shuffled"] = copy_run(samples, root / "shuffled", swapped, results)
    # a context changed on line 3, a polarity flipped on line 5
    text = [*lines[:2], edited(lines[2], context=docs[2]["context"].replace(" man", " woman")), *lines[3:]]
    w["text"] = copy_run(samples, root / "text", text, results)
    flipped = {"positive": "negated", "negated": "positive"}[docs[4]["polarity"]]
    polarity = [*lines[:4], edited(lines[4], polarity=flipped), *lines[5:]]
    w["polarity"] = copy_run(samples, root / "polarity", polarity, results)
    # lm-eval --limit LIMIT: the task's first LIMIT documents, and the results file saying so
    first = [line for line in lines if json.loads(line)["doc_id"] < LIMIT]
    limited = results | {
        "config": results["config"] | {"limit": float(LIMIT)},
        "n-samples": {TASK: {"original": len(lines), "effective": LIMIT}},
    }
    w["limited"] = copy_run(samples, root / "limited", first, limited)
    # the same without the results file (left behind when the samples were copied)
    w["limited_alone"] = copy_run(samples, root / "limited_alone", first, None)
    # a limit at or above the task's size, from an lm-eval that records no n-samples: every document scored
    w["limit_all"] = copy_run(
        samples, root / "limit_all", lines, {"config": results["config"] | {"limit": 1e4}}
    )
    # documents as lm-eval logs them (the hooks' load_docs), with made-up log-likelihoods: the full religion
    # task cut by --limit LIMIT, and an emotion sample task with two ids swapped, then cut by --limit 3
    from unqover.jobs.lm_eval_hooks import load_docs

    full = load_docs(tasks, "full")["test"].select(range(LIMIT)).to_list()
    cut = {"config": results["config"] | {"limit": float(LIMIT)}}
    cut["n-samples"] = {"unqover_religion": {"original": 154000, "effective": LIMIT}}
    w["full_limited"] = copy_run(samples, root / "full_limited", as_lines(full), cut, "unqover_religion")
    emotion = root / "emotion-tasks"
    assert main(["lm-eval-tasks", "--bias", "eec-emotion", "--groups", "2", "--output", str(emotion)]) == 0
    documents = load_docs(emotion, "sample")["test"].to_list()
    name = "unqover_eec_emotion_sample"
    cut = {"config": results["config"] | {"limit": 3.0}}
    cut["n-samples"] = {name: {"original": len(documents), "effective": 3}}
    w["emotion_documents"] = len(documents)
    w["emotion_limited"] = copy_run(samples, root / "emotion_limited", as_lines(documents[:3]), cut, name)
    documents[0]["id"], documents[1]["id"] = documents[1]["id"], documents[0]["id"]
    w["emotion_shuffled"] = copy_run(samples, root / "emotion", as_lines(documents), None, name)
    w["emotion_ids"] = [doc["id"] for doc in documents]
    return w


def as_lines(documents: list[dict]) -> list[str]:
    """Documents as lm-eval logs them, each choice with a made-up log-likelihood."""
    lines = []
    for i, doc in enumerate(documents):
        count = len(doc["sentences"]) if "sentences" in doc else 2
        resps = [[str(-1.0 - 0.1 * k - 0.01 * (i % 7)), "False"] for k in range(count)]
        lines.append(json.dumps({"doc_id": i, "doc": doc, "filtered_resps": resps}))
    return lines


def whole_groups(docs: list[dict]) -> int:
    """The groups (subject pair, template, attribute) of which ``docs`` hold all four rows."""
    groups = Counter(
        (frozenset((d["subject_1"], d["subject_2"])), d["template_id"], d["attribute"]) for d in docs
    )
    return sum(count == 4 for count in groups.values())


def differing(a: dict, b: dict) -> str:
    return ", ".join(field for field in FIELDS if a[field] != b[field])


@pytest.mark.lm_eval
def test_shuffled_ids_are_refused_with_the_first_id_that_differs(world, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    docs = world["docs"]
    message = (
        f"{world['shuffled']}, line 2: the logged document {docs[6]['id']!r} {REFUSED} (it differs in "
        f"{differing(docs[1], docs[6])}): {ADVICE}"
    )
    assert differing(docs[1], docs[6])  # two documents of different rows
    assert_refused_once(Case(lambda w, d: ["measure", str(w["shuffled"])], message), world, tmp_path, capsys)


@pytest.mark.lm_eval
@pytest.mark.parametrize(
    ("name", "line", "index", "field"),
    [("text", 3, 2, "context"), ("polarity", 5, 4, "polarity")],
)
def test_a_logged_text_contradicting_its_row_is_refused(
    world, tmp_path, monkeypatch, capsys, name, line, index, field
):
    monkeypatch.chdir(tmp_path)
    path = world[name]
    doc_id = world["docs"][index]["id"]
    message = (
        f"{path}, line {line}: the logged document {doc_id!r} {REFUSED} (it differs in {field}): {ADVICE}"
    )
    case = Case(lambda w, d: ["measure", str(path), "--output", str(d / "m.json")], message)
    assert_refused_once(case, world, tmp_path, capsys)
    assert not (tmp_path / "m.json").exists()


@pytest.mark.lm_eval
def test_an_emotion_task_s_shuffled_documents_are_refused(world, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    path = world["emotion_shuffled"]
    message = (
        f"{path}, line 1: the logged document {world['emotion_ids'][0]!r} {REFUSED} (it differs in "
        f"sentence_ids, sentences): {ADVICE}"
    )
    assert_refused_once(Case(lambda w, d: ["measure", str(path)], message), world, tmp_path, capsys)


@pytest.mark.lm_eval
def test_the_unedited_samples_measure_as_the_design_s_sample(world, tmp_path):
    out = tmp_path / "m.json"
    assert main(["measure", str(world["samples"]), "--output", str(out)]) == 0
    written = json.loads(out.read_text())
    sample = written["result"]["sample"]
    assert sample["matches_design"] is True and (sample["design"], sample["seed"]) == (DESIGN, 0)
    assert sample["groups"] == GROUPS and "kind" not in sample
    assert written["provenance"]["selection"] == {
        "design": DESIGN,
        "seed": 0,
        "groups": GROUPS,
        "of": 38500,
        "kind": "design",
    }
    assert written["provenance"]["lm_eval"]["limit"] is None


@pytest.mark.lm_eval
def test_lm_eval_limit_is_a_subset_that_matches_no_design(world, tmp_path, capsys):
    """lm-eval --limit 150 on the 200 documents of a 50-group sample task, measured with --drop-incomplete: its
    whole groups, labelled a subset with why (it was `matches_design: true, seed 0` before)."""
    out = tmp_path / "m.json"
    assert main(["measure", str(world["limited"]), "--drop-incomplete", "--output", str(out)]) == 0
    why = f"lm-eval's --limit {LIMIT} scored the first {LIMIT} of the task's 200 documents"
    printed = capsys.readouterr().out
    assert (
        f"warning: {why}, which are no design's sample; the intervals assume an equal-probability" in printed
    )
    assert "sample: design" not in printed
    written = json.loads(out.read_text())
    sample = written["result"]["sample"]
    assert sample["groups"] == whole_groups(world["docs"][:LIMIT]) and sample["matches_design"] is False
    assert (sample["kind"], sample["why"], sample["design"], sample["seed"]) == ("subset", why, None, None)
    selection = written["provenance"]["selection"]
    assert selection["kind"] == "subset" and selection["why"] == why
    assert selection["drawn_from"] == {"design": DESIGN, "seed": 0, "groups": GROUPS, "of": 38500}
    assert written["provenance"]["lm_eval"]["documents"] == {"original": 200, "effective": LIMIT}


@pytest.mark.lm_eval
def test_part_of_a_sample_without_its_results_file_is_a_subset_too(world, tmp_path):
    out = tmp_path / "m.json"
    assert main(["measure", str(world["limited_alone"]), "--drop-incomplete", "--output", str(out)]) == 0
    sample = json.loads(out.read_text())["result"]["sample"]
    assert sample["matches_design"] is False and sample["kind"] == "subset"
    whole = whole_groups(world["docs"][:LIMIT])
    assert 0 < whole < GROUPS
    assert sample["why"] == f"{whole} of the sample's {GROUPS} groups were scored whole"


def test_a_limit_that_scored_every_document_is_no_subset():
    run = {"limit": 1000.0, "documents": {"original": 800, "effective": 800}}
    assert lm_eval_subset({"lm_eval": run}) is None
    assert lm_eval_subset({"lm_eval": {"limit": None}}) is None
    assert (
        lm_eval_subset({"lm_eval": {"limit": 0.5}})
        == "lm-eval's --limit 0.5 scored the task's first documents"
    )


@pytest.mark.lm_eval
def test_the_results_file_missing_or_foreign_changes_nothing_else(world, tmp_path):
    """A results file that is not lm-eval's JSON is ignored (no limit read), as before."""
    folder = tmp_path / "run"
    copied = copy_run(world["samples"], folder, world["lines"], None)
    stamp = copied.stem.rsplit("_", 1)[-1]
    (folder / f"results_{stamp}.json").write_text("[1, 2]")
    out = tmp_path / "m.json"
    assert main(["measure", str(copied), "--output", str(out)]) == 0
    assert json.loads(out.read_text())["result"]["sample"]["matches_design"] is True
    shutil.rmtree(folder)


@pytest.mark.lm_eval
def test_a_limit_that_left_nothing_out_is_the_design_s_sample(world, tmp_path):
    out = tmp_path / "m.json"
    assert main(["measure", str(world["limit_all"]), "--output", str(out)]) == 0
    sample = json.loads(out.read_text())["result"]["sample"]
    assert sample["matches_design"] is True and (sample["design"], sample["seed"]) == (DESIGN, 0)


@pytest.mark.lm_eval
def test_the_full_task_cut_by_lm_eval_limit_is_refused_naming_the_limit(world, tmp_path, monkeypatch, capsys):
    """The full task's first documents (lm-eval --limit on `unqover_religion`) hold no whole group."""
    monkeypatch.chdir(tmp_path)
    path = world["full_limited"]
    why = f"lm-eval's --limit {LIMIT} scored the first {LIMIT} of the task's 154,000 documents"
    message = (
        "none of the 75 groups scored is complete (each needs all four rows: both subject orders x both "
        f"polarities), so dropping the incomplete ones leaves nothing to measure ({why}); for a quick run use the "
        "_sample task (unqover lm-eval-tasks --groups N)"
    )
    case = Case(lambda w, d: ["measure", str(path), "--drop-incomplete"], message)
    assert_refused_once(case, world, tmp_path, capsys)


@pytest.mark.lm_eval
def test_an_emotion_task_cut_by_lm_eval_limit_is_refused_naming_the_limit(
    world, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    path = world["emotion_limited"]
    message = (
        f"{path} does not score every choice sentence of its questions (lm-eval's --limit 3 scored the first 3 of "
        f"the task's {world['emotion_documents']:,} documents): run the task without --limit (its _sample task is "
        "the quick run)"
    )
    assert_refused_once(Case(lambda w, d: ["measure", str(path)], message), world, tmp_path, capsys)
