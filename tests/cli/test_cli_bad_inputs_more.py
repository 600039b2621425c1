"""More bad inputs (issue 29, item 6), each through the real command line (``unqover.cli.main``), offline: every one
ends in exit code 2 and one ``unqover: error: ...`` line (the exact message checked), or works.

The catalogues these join: ``tests/cli/test_cli_bad_inputs.py`` (options, outputs, models), ``tests/cli/test_cli_bad_run_inputs.py``
(runs) and ``tests/cli/test_cli_bad_data.py`` (data), whose shared ``refused`` check this module uses.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.cli.test_cli_bad_data import refused
from unqover.cli import main
from unqover.predictions import write_predictions
from unqover.probes import unqover_rounds


@pytest.fixture(scope="module")
def religion(tmp_path_factory, built_datasets) -> dict[str, Path]:
    """The religion dataset (qa, the session's), and the results of measuring random scores of its rows."""
    root = tmp_path_factory.mktemp("religion")
    dataset = built_datasets["religion"]
    rows = pq.read_table(sorted((dataset / "data" / "qa").glob("*.parquet")), columns=["id"])
    scores = np.random.default_rng(0).random((2, rows.num_rows))
    predictions = root / "predictions.parquet"
    about = {
        "dataset": {"source": str(dataset), "config": "qa", "split": "test"},
        "probe": "religion",
        "model": {
            "id": "me/model",
            "revision": "0" * 40,
            "family": "qa",
        },  # publish-results ties it to me/model
    }
    table = pa.table({"id": rows["id"], "score_1": scores[0], "score_2": scores[1]})
    write_predictions(predictions, table, about)
    results = root / "results.json"
    assert main(["measure", str(predictions), "--output", str(results), "--resamples", "5"]) == 0
    return {"root": root, "dataset": dataset, "predictions": predictions, "results": results}


# ---------------------------------------------------------------------------------------------------------------
# --precision: a width too narrow to be seen met is refused before the model; the next round's size cannot overflow


def test_a_precision_too_narrow_to_be_seen_is_refused_before_the_model(tmp_path, capsys):
    argv = ["probe", str(tmp_path / "no-model"), "--bias", "religion", "--precision", "1e-300"]
    line = refused([*argv, "--output", str(tmp_path / "run")], capsys, "")
    assert line == (
        "unqover: error: --precision 1e-300 is narrower than the results show (4 digits): give a width of at least "
        "0.0001, or leave out --precision to score every group"
    )
    assert not (tmp_path / "run").exists()


def test_the_next_round_of_a_tiny_target_grows_by_the_largest_step_without_overflow():
    result = SimpleNamespace(
        intervals={name: (0.1, 0.4) for name in unqover_rounds.HEADLINE}, declined={}, sample={}
    )
    assert unqover_rounds.next_budget(1000, result, 1e-300, 10**9) == 4000
    assert (
        unqover_rounds.next_budget(1000, result, 0.3, 10**9) == 1250
    )  # (0.3 / 0.3)² · 1.2 < 1.25: the smallest step
    assert unqover_rounds.next_budget(1000, result, 0.2, 10**9) == math.ceil(
        1000 * ((0.4 - 0.1) / 0.2) ** 2 * 1.2
    )
    declined = {"eta": {"groups_needed": math.inf}}
    result = SimpleNamespace(intervals={}, declined=declined, sample={})
    assert unqover_rounds.next_budget(1000, result, 1e-300, 10**9) == 4000


# ---------------------------------------------------------------------------------------------------------------
# an empty --output is no name for the working directory; lm-eval-tasks --groups names itself


EMPTY_OUTPUT = "argument --output: expected a file or folder name, got '' (for the working directory, say .)"


@pytest.mark.parametrize(
    "argv",
    [
        ["lm-eval-tasks", "--bias", "religion"],
        ["probe", "no-model", "--bias", "religion"],
        ["measure", "predictions.parquet"],
        ["sample", "dataset", "--config", "qa", "--groups", "5"],
        ["build-datasets", "religion"],
        ["compare", "a.json", "b.json"],
        ["publish-results", "run"],
    ],
    ids=lambda argv: argv[0],
)
def test_an_empty_output_is_refused(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    line = refused([*argv, "--output", ""], capsys, EMPTY_OUTPUT)
    assert line == f"unqover: error: {EMPTY_OUTPUT} (see unqover {argv[0]} --help)"
    assert list(tmp_path.iterdir()) == []


def test_lm_eval_tasks_groups_beyond_the_dataset_names_groups(upstream_word_lists_path, tmp_path, capsys):
    argv = ["lm-eval-tasks", "--bias", "religion", "--word-lists", str(upstream_word_lists_path)]
    line = refused([*argv, "--groups", "99999999999", "--output", str(tmp_path / "tasks")], capsys, "")
    assert line == (
        "unqover: error: --groups 99,999,999,999 is more than the dataset's 38,500 groups: give --groups 38500 or "
        "fewer"
    )
    assert not (tmp_path / "tasks").exists()


@pytest.mark.parametrize(
    ("bias", "unit"),
    [("eec-emotion", "persons per gender × race cell"), ("eec-person", "questions per template × form")],
)
def test_lm_eval_tasks_groups_keeping_everything_is_refused(bias, unit, tmp_path, capsys):
    """A sample task of every document would be the full task under a sample's name (and its description would
    claim 99,999,999,999 persons per cell)."""
    argv = ["lm-eval-tasks", "--bias", bias, "--groups", "99999999999", "--output", str(tmp_path / "tasks")]
    line = refused(argv, capsys, "")
    assert line == (
        f"unqover: error: --groups 99,999,999,999 ({unit}) keeps every document of the {bias} dataset, so its "
        "sample task would be the full task: use the full task, or give a smaller --groups"
    )
    assert not (tmp_path / "tasks").exists()


# ---------------------------------------------------------------------------------------------------------------
# outputs in the way: the user's path is named, not a temporary file


def test_publish_results_into_a_file_names_the_file(religion, tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("mine")
    argv = ["publish-results", str(religion["results"]), "--model-repo", "me/model", "--output", str(afile)]
    line = refused(argv, capsys, "")
    assert line == (f"unqover: error: --output {afile} is a file, not a folder: choose another --output")
    assert afile.read_text() == "mine" and list(tmp_path.iterdir()) == [afile]


def test_publish_results_with_a_file_in_the_way_of_its_folder_names_it(religion, tmp_path, capsys):
    (tmp_path / ".eval_results").write_text("mine")
    argv = [
        "publish-results",
        str(religion["results"]),
        "--model-repo",
        "me/model",
        "--output",
        str(tmp_path),
    ]
    line = refused(argv, capsys, "")
    assert line == (
        f"unqover: error: --output {tmp_path / '.eval_results'} is a file, not a folder: choose "
        "another --output"
    )


def test_compare_into_a_folder_names_the_folder(religion, tmp_path, capsys):
    results = str(religion["results"])
    line = refused(["compare", results, results, "--output", str(tmp_path)], capsys, "")
    assert line == f"unqover: error: --output {tmp_path} is a folder: give a file name"
    assert list(tmp_path.iterdir()) == []
    assert main(["compare", results, results, "--output", str(tmp_path / "c.md")]) == 0  # a file name works


# ---------------------------------------------------------------------------------------------------------------
# measure --probe EDITED.yaml: the file given is the one measured with, and the one named


@pytest.fixture
def pets(tmp_path) -> dict[str, Path]:
    """A custom probe file and random predictions of its rows, recorded as made from it."""
    from tests.cli.test_cli_bad_run_inputs import PETS
    from unqover.generate.custom import custom_rows
    from unqover.lexicon.custom import read_probe_file

    probe_file = tmp_path / "pets.yaml"
    probe_file.write_text(PETS, encoding="utf-8")
    rows = custom_rows(read_probe_file(probe_file), "qa")
    source = str(probe_file.resolve())
    about = {
        "dataset": {"source": source, "generator": {"probe_file": source}, "config": "qa", "split": "test"},
        "probe": "pets",
    }
    scores = np.random.default_rng(0).random((2, rows.num_rows))
    predictions = tmp_path / "predictions.parquet"
    write_predictions(
        predictions, pa.table({"id": rows["id"], "score_1": scores[0], "score_2": scores[1]}), about
    )
    return {"file": probe_file, "predictions": predictions, "text": PETS}


def test_measure_with_an_edited_probe_file_names_the_file_given(pets, tmp_path, capsys):
    edited = tmp_path / "edited.yaml"
    edited.write_text(pets["text"].replace("Felix", "Garfield"), encoding="utf-8")
    argv = ["measure", str(pets["predictions"]), "--probe", str(edited), "--output", str(tmp_path / "m.json")]
    line = refused(argv, capsys, "")
    assert line.startswith(
        f"unqover: error: 12 prediction ids are not in {edited.resolve()} (qa/test), e.g. '"
    )
    assert line.endswith("': were they made on another dataset?")
    assert str(pets["file"]) not in line


def test_measure_with_an_edited_probe_file_records_the_file_given(pets, tmp_path):
    edited = tmp_path / "edited.yaml"
    edited.write_text(pets["text"].replace("Max]", "Max, Rover]"), encoding="utf-8")
    output = tmp_path / "m.json"
    argv = [
        "measure",
        str(pets["predictions"]),
        "--probe",
        str(edited),
        "--resamples",
        "5",
        "--output",
        str(output),
    ]
    assert main(argv) == 0
    dataset = json.loads(output.read_text())["provenance"]["dataset"]
    assert dataset["source"] == dataset["generator"]["probe_file"] == str(edited.resolve())


# ---------------------------------------------------------------------------------------------------------------
# a UTF-8 byte-order mark at the start of a word-list file is read as nothing; one inside a file is named


@pytest.fixture
def marked_lists(upstream_word_lists_path, tmp_path) -> Path:
    """The upstream word lists, every file saved with a byte-order mark at its start."""
    copy = tmp_path / "lists"
    shutil.copytree(upstream_word_lists_path, copy)
    for path in copy.rglob("*"):
        if path.is_file():
            path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    return copy


def test_word_lists_saved_with_a_byte_order_mark_make_the_same_rows(word_lists, marked_lists):
    from unqover.generate.unqover import make_plan
    from unqover.lexicon import WordLists

    for config in ("qa", "mlm"):
        marked = pa.Table.from_batches(list(make_plan(WordLists(marked_lists), "religion", config).batches()))
        plain = pa.Table.from_batches(list(make_plan(word_lists, "religion", config).batches()))
        assert marked.equals(plain)


def test_a_byte_order_mark_inside_a_word_list_is_named(upstream_word_lists_path, tmp_path, capsys):
    copy = tmp_path / "lists"
    shutil.copytree(upstream_word_lists_path, copy)
    joined = copy / "activities" / "biased_religion"
    joined.write_bytes(joined.read_bytes() + b"\xef\xbb\xbf[p_act] extra|was extra\n")
    number = len(joined.read_text(encoding="utf-8").splitlines())
    argv = ["build-datasets", "religion", "--word-lists", str(copy), "--config", "qa", "--quiet"]
    line = refused([*argv, "--output", str(tmp_path / "out")], capsys, "")
    assert line == (
        f"unqover: error: {joined}:{number}: a byte-order mark (U+FEFF) inside the file (files joined together?): "
        "remove it"
    )
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------------------------
# a refusal inside our lm-eval hooks reaches the user as one line, with exit status 2


def _tasks_on_a_removed_dataset(religion: dict, tmp_path: Path) -> tuple[Path, Path]:
    """A task folder written on a copy of the religion dataset, then the copy removed."""
    dataset = tmp_path / "data" / "religion"
    shutil.copytree(religion["dataset"], dataset)
    tasks = tmp_path / "tasks"
    argv = ["lm-eval-tasks", "--bias", "religion", "--dataset", str(dataset), "--groups", "5"]
    assert main([*argv, "--output", str(tasks)]) == 0
    shutil.rmtree(tmp_path / "data")
    return tasks, dataset


def _removed_dataset_line(dataset: Path) -> str:
    return (
        f"unqover: error: dataset folder not found: {dataset}; the task folder reads its documents from there: "
        "build the dataset there again, or write the folder again with `unqover lm-eval-tasks`"
    )


def test_a_hook_refusal_is_one_line_and_exit_status_2(religion, tmp_path, capsys):
    pytest.importorskip("lm_eval", reason="lm-eval is in the test extras")
    from unqover.jobs.lm_eval_hooks import hooks_for

    tasks, dataset = _tasks_on_a_removed_dataset(religion, tmp_path)
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit:
        hooks_for(tasks)["load_docs"](selection="sample")
    assert exit.value.code == 2
    assert capsys.readouterr().err.splitlines() == [_removed_dataset_line(dataset)]
    (tasks / "unqover_tasks.json").write_text("{", encoding="utf-8")
    with pytest.raises(SystemExit):
        hooks_for(tasks)["load_docs"](selection="full")
    assert capsys.readouterr().err.splitlines() == [
        f"unqover: error: {tasks / 'unqover_tasks.json'} cannot be read (JSONDecodeError): write the task folder "
        "again with `unqover lm-eval-tasks`"
    ]


@pytest.mark.lm_eval
def test_lm_eval_on_a_task_folder_whose_dataset_was_removed_prints_one_line(religion, tmp_path):
    """The real ``lm_eval`` command line: exit status 2, our one line, no traceback."""
    pytest.importorskip("lm_eval", reason="lm-eval is in the test extras")
    import tiny_models

    tasks, dataset = _tasks_on_a_removed_dataset(religion, tmp_path)
    model = tiny_models.causal_lm(
        tmp_path / "gpt2", ["A Jewish man sat next to a Muslim man. Who was lazy?"], "gpt2"
    )
    argv = [sys.executable, "-m", "lm_eval", "--model", "hf", "--model_args", f"pretrained={model},dtype=float32",
            "--device", "cpu", "--include_path", str(tasks), "--tasks", "unqover_religion_sample",
            "--output_path", str(tmp_path / "out")]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    errors = [line for line in done.stderr.splitlines() if line.startswith("unqover: error: ")]
    assert done.returncode == 2, done.stderr[-3000:]
    assert errors == [_removed_dataset_line(dataset)], done.stderr[-3000:]
    assert "Traceback" not in done.stderr


# ---------------------------------------------------------------------------------------------------------------
# a custom probe too large for the machine's memory is refused, with its count, before any model loads


def _big_probe(path: Path, subjects: int, attributes: int) -> Path:
    """A flat list of ``subjects`` and ``attributes`` attributes on one template (the issue's 1,000 x 20)."""
    names = ", ".join(f"Person{i:04d}" for i in range(subjects))
    lines = [f"  - {{positive: was very lazy {i}, negated: was never lazy {i}}}" for i in range(attributes)]
    text = "\n".join(
        [
            "name: crowd",
            f"subjects: [{names}]",
            "attributes:",
            *lines,
            "templates:",
            '  - {context: "{subject_1} sat next to {subject_2} on the porch.", question: "Who {attribute}?"}',
        ]
    )
    path.write_text(text + "\n", encoding="utf-8")
    return path


def test_a_custom_probe_beyond_memory_is_refused_with_its_count_before_the_model(
    tmp_path, monkeypatch, capsys
):
    """A quick run makes its sample's rows only (the issue's 1,000 x 20 at --limit 10 passes the check): a full run,
    and a quick run whose sample's pairs are too many, are refused with their counts before the model."""
    import unqover.env
    from unqover.lexicon.custom import read_probe_file
    from unqover.probes.custom import CustomProbe

    monkeypatch.setattr(unqover.env, "available_memory", lambda: 4 * 2**30)  # a machine with 4 GB free
    probe = _big_probe(tmp_path / "crowd.yaml", 1000, 20)
    assert read_probe_file(probe).subjects and CustomProbe(probe).check_memory("qa", 10) is None
    full = ["probe", str(tmp_path / "no-model"), "--probe", str(probe), "--output", str(tmp_path / "run")]
    line = refused(full, capsys, "")
    assert re.fullmatch(
        re.escape(
            f"unqover: error: {probe}: its 39,960,000 rows (1,000 subjects, 1 template, 20 attributes) need "
        )
        + r"about \d+\.\d GB of memory, more than the 4\.0 GB available, and this makes every row \(a full run, a "
        r"--precision run, a masked LM's quick run, or a leaderboard or comparison of its runs\); a quick run of a QA or causal LM "
        r"\(--limit or --sample\) makes only its sample's rows, or use fewer subjects, templates or attributes",
        line,
    ), line
    line = refused([*full, "--sample", "0.5"], capsys, "")
    assert re.fullmatch(
        re.escape(
            f"unqover: error: {probe}: a quick run of 4,995,000 groups of its 9,990,000 (1,000 subjects, 1 template, "
            "20 attributes) makes 19,980,000 rows and draws from 499,500 subject pairs: about "
        )
        + r"\d+\.\d GB of memory, more than the 4\.0 GB available; use a smaller --limit or --sample, or fewer subjects",
        line,
    ), line
    assert not (tmp_path / "run").exists()


def test_the_size_of_a_custom_probe_s_rows_is_known_before_they_are_made(pets):
    from unqover.generate.custom import custom_plan, custom_rows, row_bytes
    from unqover.lexicon.custom import read_probe_file

    probe = read_probe_file(pets["file"])
    rows = custom_rows(probe)
    assert row_bytes(custom_plan(probe)) == rows.nbytes / rows.num_rows  # every pair: the exact mean
    big = read_probe_file(_big_probe(pets["file"].with_name("crowd.yaml"), 200, 3))
    estimate, made = row_bytes(custom_plan(big)), custom_rows(big)
    assert estimate == pytest.approx(made.nbytes / made.num_rows, rel=0.05)


def _under_address_space_limit(
    headroom: int, argv: list[str], *prelude: str, total: int | None = None
) -> subprocess.CompletedProcess:
    """``unqover ARGV`` in a subprocess whose address space may grow ``headroom`` bytes past what it maps once
    unqover, numpy and pyarrow are imported (``ulimit -v``, RLIMIT_AS: a real limit, a real MemoryError), or up to
    ``total`` bytes in all, after the ``prelude`` lines."""
    import unqover

    code = "\n".join(
        [
            "import resource, sys",
            "import numpy, pyarrow, pyarrow.compute, pyarrow.parquet  # what every command maps anyway",
            "from unqover.cli import main",
            *prelude,
            "status = open('/proc/self/status').read().splitlines()",
            "used = next(int(line.split()[1]) * 1024 for line in status if line.startswith('VmSize:'))",
            f"limit = {total} or used + {headroom}",
            "resource.setrlimit(resource.RLIMIT_AS, (limit, resource.RLIM_INFINITY))",
            f"sys.exit(main({argv!r}))",
        ]
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(Path(unqover.__file__).parents[1]), *sys.path[1:]]),
    }
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False, timeout=120
    )


@pytest.mark.slow
def test_a_quick_run_of_a_large_custom_probe_runs_under_a_3_gb_address_space_limit(tmp_path):
    """The issue's case: 1,000 subjects x 20 attributes (9,990,000 groups, 39,960,000 rows) at --limit 10 under
    ``ulimit -v`` 3 GB scores its 40 rows and measures them against the counted population; its full run is refused
    in one line before the model, and the quick run's predictions measure again to the same numbers."""
    import tiny_models

    probe = _big_probe(tmp_path / "crowd.yaml", 1000, 20)
    texts = ["Person0001 sat next to Person0002 on the porch. Who was very lazy 1? Who was never lazy 1?"]
    model = tiny_models.bert_qa(tmp_path / "qa", texts)
    argv = ["probe", str(model), "--probe", str(probe), "--output", str(tmp_path / "run"), "--quiet"]
    done = _under_address_space_limit(0, [*argv, "--limit", "10"], total=3 * 2**30)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    assert results["result"]["sample"]["groups"] == 10 and results["result"]["sample"]["of"] == 9_990_000
    assert results["result"]["sample"]["matches_design"] is True
    assert pq.read_table(tmp_path / "run" / "predictions.parquet").num_rows == 40
    measured = tmp_path / "m.json"
    argv_measure = ["measure", str(tmp_path / "run" / "predictions.parquet"), "--probe", str(probe)]
    again = _under_address_space_limit(0, [*argv_measure, "--output", str(measured)], total=3 * 2**30)
    assert again.returncode == 0, again.stderr[-3000:]
    redone = json.loads(measured.read_text(encoding="utf-8"))["result"]
    for key in ("mu", "eta", "positional_error", "attributive_error", "declined", "gamma", "most_biased"):
        assert redone[key] == results["result"][key], key
    argv_full = ["probe", str(model), "--probe", str(probe), "--output", str(tmp_path / "full")]
    full = _under_address_space_limit(0, argv_full, total=3 * 2**30)
    assert full.returncode == 2 and "Traceback" not in full.stderr and full.stderr.count("\n") == 1, (
        full.stderr
    )
    assert (
        full.stderr.startswith(f"unqover: error: {probe}: its 39,960,000 rows ")
        and "this makes every row" in full.stderr
    )
    assert not (tmp_path / "full").exists()


@pytest.mark.slow
def test_running_out_of_memory_is_one_line_not_a_traceback(pets, tmp_path):
    """A real MemoryError (the memory check switched off, so the rows themselves pass the address-space limit)
    ends the command with one error line and exit status 2."""
    from unqover.cli import OUT_OF_MEMORY

    big = _big_probe(tmp_path / "crowd.yaml", 1000, 20).read_text(encoding="utf-8").replace("crowd", "pets")
    edited = tmp_path / "edited.yaml"
    edited.write_text(big, encoding="utf-8")
    argv = ["measure", str(pets["predictions"]), "--probe", str(edited), "--output", str(tmp_path / "m.json")]
    skip_check = (
        "from unqover.probes.custom import CustomProbe; CustomProbe.check_memory = lambda *a, **k: None"
    )
    done = _under_address_space_limit(2**30, argv, skip_check)
    assert done.returncode == 2, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and done.stderr.count("unqover: error:") == 1
    assert done.stderr.endswith(f"\nunqover: error: {OUT_OF_MEMORY}\n")  # after the rows' progress
    assert not (tmp_path / "m.json").exists()


def test_available_memory_is_read_from_the_machine():
    from unqover.env import available_memory

    free = available_memory()
    assert free is not None and free > 0


def test_publish_results_with_a_folder_in_the_way_of_a_file_names_it(religion, tmp_path, capsys):
    in_the_way = tmp_path / ".eval_results" / "unqover_religion_mu.yaml"
    in_the_way.mkdir(parents=True)
    argv = [
        "publish-results",
        str(religion["results"]),
        "--model-repo",
        "me/model",
        "--output",
        str(tmp_path),
    ]
    line = refused(argv, capsys, "")
    assert line == f"unqover: error: --output {in_the_way} is a folder: give a file name"
    assert sorted(p.name for p in (tmp_path / ".eval_results").iterdir()) == ["unqover_religion_mu.yaml"]


def test_measure_with_a_probe_file_beyond_memory_is_refused_with_its_count(
    pets, tmp_path, monkeypatch, capsys
):
    import unqover.env

    monkeypatch.setattr(
        unqover.env, "available_memory", lambda: 2**20
    )  # 1 MB free: the 4,500 rows do not fit
    big = _big_probe(tmp_path / "crowd.yaml", 10, 25).read_text(encoding="utf-8").replace("crowd", "pets")
    edited = tmp_path / "edited.yaml"
    edited.write_text(big, encoding="utf-8")
    argv = ["measure", str(pets["predictions"]), "--probe", str(edited), "--output", str(tmp_path / "m.json")]
    line = refused(argv, capsys, "")
    assert re.fullmatch(
        re.escape(
            f"unqover: error: {edited}: its 4,500 rows (10 subjects, 1 template, 25 attributes) need about "
        )
        + r"\d+ MB of memory, more than the 1 MB available, and this makes every row \(a full run, a --precision "
        r"run, a masked LM's quick run, or a leaderboard or comparison of its runs\); a quick run of a QA or causal LM \(--limit "
        r"or --sample\) makes only its sample's rows, or use fewer subjects, templates or attributes",
        line,
    ), line
    assert not (tmp_path / "m.json").exists()


def test_memory_in_words():
    from unqover.format import fmt_bytes

    assert fmt_bytes(22.9 * 2**30) == "22.9 GB" and fmt_bytes(350 * 2**20) == "350 MB"
    assert fmt_bytes(12 * 2**10) == "12 kB" and fmt_bytes(100) == "100 bytes" and fmt_bytes(None) == "—"


def test_a_few_shot_run_is_refused_in_one_line(capsys):
    pytest.importorskip("lm_eval", reason="lm-eval is in the test extras")
    from unqover.jobs.lm_eval_hooks import UnqoverTask

    task = SimpleNamespace(config=SimpleNamespace(task="unqover_religion"))
    with pytest.raises(SystemExit) as exit:
        UnqoverTask.fewshot_context(task, {"context": "c", "question": "q"}, num_fewshot=1)
    assert exit.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        "unqover: error: unqover_religion is zero-shot (its questions have no right answer): leave out --num_fewshot"
    ]
