"""lm-evaluation-harness tasks (``unqover lm-eval-tasks``), run by the installed ``lm_eval`` command line.

On a random causal model and a religion sample, lm-eval's table (μ, η, δ, ε and their bounds), ``unqover measure``
on lm-eval's logged samples and ``unqover probe`` give the same numbers within 1e-4, and the same log S per row;
under ``--apply_chat_template --system_instruction`` lm-eval scores the prompts and answers ``unqover probe
--chat-template auto --system-prompt`` scores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tiny_models
from unqover.cli import main
from unqover.errors import UnqoverError
from unqover.jobs.lm_eval_tasks import METRICS, write_tasks
from unqover.predictions import read_lm_eval_samples, read_predictions
from unqover.probes.registry import get_probe
from unqover.scoring.causal import CausalScorer, encode_pair
from unqover.scoring.mlm import surfaces
from unqover.scoring.models import load_model

pytest.importorskip("lm_eval", reason="lm-eval is in the test extras")

GROUPS, SEED = 2000, 3  # the quick-run size: μ and η get values, not a "declined"
HEADLINE = {"mu": "mu", "eta": "eta", "delta": "positional_error", "epsilon": "attributive_error"}


@pytest.fixture(scope="module")
def religion(built_datasets) -> Path:
    """The session's religion dataset folder (qa), read-only."""
    return built_datasets["religion"]


@pytest.fixture(scope="module")
def models(tmp_path_factory, religion) -> dict[str, Path]:
    """A tiny GPT-2 (no chat template) and a Llama whose tokenizer adds BOS and whose ChatML template ends with a
    newline (the whitespace lm-eval moves into the answer), both trained on the religion texts."""
    rows = pq.read_table(
        sorted((religion / "data" / "qa").glob("*.parquet"))[0], columns=["context", "question"]
    )
    texts = sorted(set(rows["context"].to_pylist()[:4000]) | set(rows["question"].to_pylist()[:4000]))
    root = tmp_path_factory.mktemp("models")
    return {
        "gpt2": tiny_models.causal_lm(root / "gpt2", texts, "gpt2"),
        "llama-chat": tiny_models.causal_lm(root / "llama-chat", texts, "llama", chat="qwen", bos=True),
    }


@pytest.fixture(scope="module")
def probed(religion, models, tmp_path_factory) -> Path:
    """`unqover probe --limit GROUPS --seed SEED` of the GPT-2 on religion: the numbers every route must give."""
    run = tmp_path_factory.mktemp("probe") / "run"
    argv = ["probe", str(models["gpt2"]), "--bias", "religion", "--dataset", str(religion), "--device", "cpu"]
    assert main([*argv, "--limit", str(GROUPS), "--seed", str(SEED), "--output", str(run), "--quiet"]) == 0
    return run


def assert_same_numbers(probed: dict, measured: dict) -> None:
    """μ, η, δ, ε and their interval bounds within 1e-4 (and 1e-3 relative: δ is about 1e-4 here)."""
    for name in HEADLINE.values():
        assert np.isfinite([probed[name], *probed["intervals"][name]]).all(), name
        assert measured[name] == pytest.approx(probed[name], rel=1e-3, abs=1e-9), name
        assert abs(measured[name] - probed[name]) <= 1e-4, name
        assert np.abs(np.subtract(measured["intervals"][name], probed["intervals"][name])).max() <= 1e-4, name


def assert_same_scores(run: Path, predictions: pa.Table) -> None:
    """The same rows, and the same log S for each within 1e-4."""
    ours, _ = read_predictions(run / "predictions.parquet")
    ours, theirs = ours.sort_by("id"), predictions.sort_by("id")
    assert ours["id"].equals(theirs["id"]) and ours.num_rows == 4 * GROUPS
    for column in ("score_1", "score_2"):
        gap = np.abs(np.log(ours[column].to_numpy()) - np.log(theirs[column].to_numpy()))
        assert gap.max() <= 1e-4, column


def lm_eval(folder: Path, model: Path, task: str, output: Path, *extra: str) -> dict:
    """``lm_eval --model hf`` with the task folder and --log_samples; lm-eval's results JSON."""
    argv = [
        sys.executable,
        "-m",
        "lm_eval",
        "--model",
        "hf",
        "--model_args",
        f"pretrained={model},dtype=float32",
        "--device",
        "cpu",
        "--batch_size",
        "64",
        "--include_path",
        str(folder),
        "--tasks",
        task,
        "--log_samples",
        "--output_path",
        str(output),
        *extra,
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(argv, cwd=output.parent, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    (results,) = output.rglob("results_*.json")
    return json.loads(results.read_text())


def samples_file(output: Path) -> Path:
    (samples,) = output.rglob("samples_*.jsonl")
    return samples


@pytest.mark.lm_eval
def test_lm_eval_table_logged_samples_and_probe_give_the_same_numbers(
    religion, models, probed, tmp_path, capsys
):
    tasks = tmp_path / "tasks"
    argv = ["lm-eval-tasks", "--bias", "religion", "--dataset", str(religion), "--groups", str(GROUPS)]
    assert main([*argv, "--seed", str(SEED), "--output", str(tasks)]) == 0
    assert (
        "unqover_religion_sample (8,000 documents: 2,000 of 38,500 groups, seed 3)" in capsys.readouterr().out
    )
    assert {p.name for p in tasks.iterdir()} >= {"unqover_religion.yaml", "unqover_religion_sample.yaml"}

    name = "unqover_religion_sample"
    table = lm_eval(tasks, models["gpt2"], name, tmp_path / "out")["results"][name]
    samples = samples_file(tmp_path / "out")
    measured = tmp_path / "measured.json"
    assert main(["measure", str(samples), "--output", str(measured)]) == 0

    theirs, provenance = read_lm_eval_samples(samples)
    assert provenance["selection"] == {
        "design": "stratified-prn-v1",
        "seed": SEED,
        "groups": GROUPS,
        "of": 38500,
    }
    assert provenance["lm_eval"]["model"] == "hf"
    assert_same_scores(probed, theirs)
    expected = json.loads((probed / "results.json").read_text())["result"]
    assert_same_numbers(expected, json.loads(measured.read_text())["result"])
    from_table = {name: table[f"{short},none"] for short, name in HEADLINE.items()} | {
        "intervals": {
            name: [table[f"{short}_low,none"], table[f"{short}_high,none"]]
            for short, name in HEADLINE.items()
        }
    }
    assert_same_numbers(expected, from_table)
    assert all(table[f"{short}_stderr,none"] == "N/A" for short in HEADLINE)  # no bootstrap of lm-eval's own
    assert set(table) >= {f"{metric},none" for metric in METRICS["subjects"]}


@pytest.mark.lm_eval
def test_chat_template_and_system_instruction_are_probe_s_prompts(religion, models, tmp_path):
    """lm-eval's --apply_chat_template and --system_instruction score what CausalScorer scores with the model's
    template and that system prompt; lm-eval's --limit (the first N documents, not a sample) gives no numbers."""
    tasks = tmp_path / "tasks"
    assert (
        main(["lm-eval-tasks", "--bias", "religion", "--dataset", str(religion), "--output", str(tasks)]) == 0
    )
    system = "You answer questions about short texts."
    extra = ("--apply_chat_template", "--system_instruction", system, "--limit", "40")
    table = lm_eval(tasks, models["llama-chat"], "unqover_religion_sample", tmp_path / "out", *extra)
    assert all(
        np.isnan(table["results"]["unqover_religion_sample"][f"{m},none"]) for m in METRICS["subjects"]
    )

    logged = [json.loads(line) for line in samples_file(tmp_path / "out").read_text().splitlines()]
    assert len(logged) == 40
    loaded = load_model(str(models["llama-chat"]), device="cpu", dtype="float32")
    scorer = CausalScorer(loaded, chat_template="auto", system_prompt=system)
    assert scorer.chat
    docs = [sample["doc"] for sample in logged]
    rows = pa.Table.from_pylist(
        [{k: doc[k] for k in ("context", "question", "subject_1_span", "subject_2_span")} for doc in docs]
    )
    prompts = [
        scorer.prompt(c, q)
        for c, q in zip(rows["context"].to_pylist(), rows["question"].to_pylist(), strict=True)
    ]
    answers = [[scorer.answer(s) for s in surfaces(rows, k)] for k in (1, 2)]
    assert prompts[0].endswith("<|im_start|>assistant\n") and system in prompts[0]
    for i, sample in enumerate(logged):
        for k in (0, 1):
            context, continuation = sample["arguments"][f"gen_args_{k}"].values()
            assert (context, continuation) == (prompts[i], answers[k][i])
    # the tokenization: lm-eval's pair encoding is encode_pair's (the BOS this tokenizer adds, the moved newline)
    _, answer_ids = encode_pair(loaded.tokenizer, prompts * 2, answers[0] + answers[1])
    assert all(ids[0] == loaded.tokenizer.convert_tokens_to_ids("Ċ") for ids in answer_ids)
    log_s = np.log(scorer.score(rows))
    lm = np.array([[float(sample["filtered_resps"][k][0]) for k in (0, 1)] for sample in logged])
    assert np.abs(log_s - lm).max() <= 1e-4


def test_bad_sizes_and_options_are_refused(religion, upstream_word_lists_path, tmp_path, capsys):
    argv = [
        "lm-eval-tasks",
        "--bias",
        "religion",
        "--dataset",
        str(religion),
        "--output",
        str(tmp_path / "t"),
    ]
    assert main([*argv, "--groups", "40000"]) == 2
    assert "more than the dataset's 38,500 groups" in capsys.readouterr().err
    lists = ["--word-lists", str(upstream_word_lists_path)]
    assert main(["lm-eval-tasks", "--bias", "eec-emotion", *lists, "--output", str(tmp_path / "e")]) == 2
    assert "--word-lists applies to the UnQover probes, not eec-emotion" in capsys.readouterr().err


def test_word_lists_and_several_probes_write_a_folder_each(upstream_word_lists_path, tmp_path):
    lists = ["--word-lists", str(upstream_word_lists_path), "--groups", "10"]
    assert main(["lm-eval-tasks", "--bias", "religion,ethnicity", *lists, "--output", str(tmp_path)]) == 0
    for name, documents in (("religion", 154000), ("ethnicity", 294000)):
        record = json.loads((tmp_path / name / "unqover_tasks.json").read_text())
        assert record["dataset"]["generator"]["word_lists"] == str(upstream_word_lists_path.resolve())
        assert record["documents"] == documents and record["selection"]["groups"] == 10
        assert (tmp_path / name / f"unqover_{name}_sample.yaml").is_file()


def test_a_task_folder_refuses_a_dataset_that_changed(religion, tmp_path):
    from unqover.jobs.lm_eval_tasks import dataset_documents

    written = write_tasks(get_probe("religion"), tmp_path / "tasks", dataset=str(religion), size=10)
    record = json.loads((written.folder / "unqover_tasks.json").read_text())
    assert dataset_documents(record).num_rows == written.documents == 154000
    with pytest.raises(UnqoverError, match="no longer holds the documents"):
        dataset_documents({**record, "fingerprint": "0" * 32})


def test_logged_samples_that_cannot_be_measured_are_refused(tmp_path):
    about = json.dumps({"probe": "religion", "dataset": {"source": "x", "config": "qa", "split": "test"}})

    def line(doc_id: str, first: str = "-1.0", about: str = about) -> str:
        doc = {"id": doc_id, "unqover": about}
        return json.dumps({"doc": doc, "filtered_resps": [[first, "False"], ["-2.0", "False"]]})

    cases = {
        "not json": ("{", "line 1: not a logged sample"),
        "no unqover": (json.dumps({"doc": {"id": "a"}, "filtered_resps": []}), "line 1: not a logged sample"),
        "nan": (line("a", "nan"), "not a finite number"),
        "two tasks": (line("a") + "\n" + line("b", about=about.replace("qa", "mlm")), "mixes the samples"),
        "empty": ("", "has no logged samples"),
    }
    for name, (text, message) in cases.items():
        path = tmp_path / f"{name.replace(' ', '_')}.jsonl"
        path.write_text(text + "\n")
        with pytest.raises(UnqoverError, match=message):
            read_predictions(path)


@pytest.mark.lm_eval
@pytest.mark.parametrize(("bias", "size"), [("eec-emotion", 2), ("eec-person", 10)])
def test_emotion_and_person_tasks_give_the_probe_s_tests(models, tmp_path, bias, size):
    """The fill-in tasks rank each question's sentences by total log-likelihood (`--length-rule sum`: lm-eval
    logs no token counts): lm-eval's table, `unqover measure` on its samples and `unqover probe` agree."""
    tasks = tmp_path / "tasks"
    assert (
        main(["lm-eval-tasks", "--bias", bias, "--groups", str(size), "--seed", "1", "--output", str(tasks)])
        == 0
    )
    name = "unqover_" + bias.replace("-", "_") + "_sample"
    table = lm_eval(tasks, models["gpt2"], name, tmp_path / "out")["results"][name]
    measured = tmp_path / "measured.json"
    assert main(["measure", str(samples_file(tmp_path / "out")), "--output", str(measured)]) == 0
    run = tmp_path / "run"
    argv = ["probe", str(models["gpt2"]), "--bias", bias, "--limit", str(size), "--seed", "1"]
    assert main([*argv, "--length-rule", "sum", "--device", "cpu", "--output", str(run), "--quiet"]) == 0
    probe = get_probe(bias)
    headlines = [
        probe.results.headline(json.loads(path.read_text())) for path in (measured, run / "results.json")
    ]
    assert headlines[0] == headlines[1]
    finite = 0
    for metric, (key, end) in METRICS["sentences"].items():
        value, interval = headlines[1].get(key, (None, None))
        expected = value if end is None else (interval[end] if interval else None)
        got = table[f"{metric},none"]
        if expected is None:
            assert np.isnan(got), metric
        else:
            assert abs(got - expected) <= 1e-4, metric
            finite += 1
    assert finite >= 2  # the gender test at least


@pytest.mark.parametrize(
    ("flags", "given"),
    [
        ({"apply_chat_template": True}, "--apply_chat_template is"),
        ({"system_instruction": "Be fair."}, "--system_instruction is"),
        (
            {"apply_chat_template": True, "system_instruction": "Be fair."},
            "--apply_chat_template and --system_",
        ),
    ],
)
def test_sentence_tasks_refuse_a_chat_prompt_in_one_line(flags, given, capsys):
    """An emotion or person document's choices are whole sentences after BOS, which is not what `unqover probe`
    asks a chat model: lm-eval's prompt flags are refused in one line saying what to run instead."""
    from types import SimpleNamespace

    from unqover.jobs.lm_eval_hooks import UnqoverTask

    task = SimpleNamespace(config=SimpleNamespace(task="unqover_eec_person"))
    doc = {"sentences": ["He feels angry."], "unqover": json.dumps({"probe": "eec-person"})}
    assert UnqoverTask.fewshot_context(task, doc, 0) == ""
    with pytest.raises(SystemExit) as stopped:
        UnqoverTask.fewshot_context(task, doc, 0, **flags)
    assert stopped.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"unqover: error: {given}") and "refused by unqover_eec_person" in line
    assert "--bias eec-person --chat-template none --length-rule sum" in line


@pytest.mark.lm_eval
def test_lm_eval_refuses_a_chat_template_on_the_emotion_task(models, tmp_path):
    tasks = tmp_path / "tasks"
    assert main(["lm-eval-tasks", "--bias", "eec-emotion", "--groups", "1", "--output", str(tasks)]) == 0
    argv = [sys.executable, "-m", "lm_eval", "--model", "hf", "--model_args", f"pretrained={models['llama-chat']}",
            "--device", "cpu", "--include_path", str(tasks), "--tasks", "unqover_eec_emotion_sample",
            "--apply_chat_template", "--output_path", str(tmp_path / "out")]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 2, done.stderr[-3000:]
    # lm-eval's progress bar may share the line (it ends none)
    errors = [line for line in done.stderr.splitlines() if "unqover: error:" in line]
    assert len(errors) == 1 and "--apply_chat_template is refused by unqover_eec_emotion_sample" in errors[0]
    assert "Traceback" not in done.stderr


def test_the_aggregations_are_registered_with_lm_eval_by_name():
    """lm-eval 0.4.13 registers aggregations (not tasks) from installed code: ours are there as unqover_<metric>."""
    from lm_eval.api.registry import get_aggregation

    import unqover.jobs.lm_eval_hooks  # noqa: F401  (registers on import)

    for metrics in METRICS.values():
        for metric in metrics:
            assert get_aggregation(f"unqover_{metric}").__name__ == f"unqover_{metric}"
