"""The first ten minutes, through the real command line (``unqover.cli.main``), offline, on a tiny local QA model:
``UNQOVER_WORD_LISTS`` stands in for ``--word-lists`` wherever it is accepted; a missing dataset or a bad output is
found before any model loads; a missing model folder is refused as one; a ``--limit`` too small for μ and η says so
before scoring; the summary of several probes uses the reports' symbols.

The subprocess companions (SIGTERM, argument errors): ``tests/test_first_minutes_cli.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import tiny_models
from unqover.cli import main
from unqover.generate.unqover import make_plan

BAD_LISTS = (
    "unqover: error: UNQOVER_WORD_LISTS={value} is not a folder: set it to a word_lists/ folder (with nouns/, "
    "slots/, ...) or unset it"
)


@pytest.fixture(scope="module")
def qa_model(tmp_path_factory, word_lists) -> Path:
    """A tiny extractive-QA model whose vocabulary covers the religion rows."""
    rows = pa.Table.from_batches(list(make_plan(word_lists, "religion", "qa").batches()))
    texts = sorted(set(rows["context"].to_pylist()[:400]) | set(rows["question"].to_pylist()[:400]))
    return tiny_models.bert_qa(tmp_path_factory.mktemp("first") / "qa", texts)


def quick(model: Path, output: Path, *extra: str) -> list[str]:
    return ["probe", str(model), "--bias", "religion", "--limit", "2", "--resamples", "0", "--quiet",
            "--device", "cpu", "--output", str(output), *extra]  # fmt: skip


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("unqover: error:")]


# ---------------------------------------------------------------------------------------------------------------
# UNQOVER_WORD_LISTS


def test_the_variable_stands_in_for_word_lists(qa_model, upstream_word_lists_path, tmp_path, monkeypatch):
    monkeypatch.setenv("UNQOVER_WORD_LISTS", str(upstream_word_lists_path))
    monkeypatch.chdir(tmp_path)  # no local build in datasets/unqover
    assert main(quick(qa_model, tmp_path / "run")) == 0
    recorded = json.loads((tmp_path / "run" / "run.json").read_text())["dataset"]
    assert recorded["generator"]["word_lists"] == str(upstream_word_lists_path.resolve())


def test_word_lists_given_wins_over_the_variable(qa_model, upstream_word_lists_path, tmp_path, monkeypatch):
    monkeypatch.setenv("UNQOVER_WORD_LISTS", str(tmp_path / "nowhere"))
    argv = quick(qa_model, tmp_path / "run", "--word-lists", str(upstream_word_lists_path))
    assert main(argv) == 0


@pytest.mark.parametrize(
    "argv",
    [
        ["probe", "MODEL", "--bias", "religion", "--limit", "2", "--output", "OUT/run"],
        ["build-datasets", "religion", "--config", "qa", "--output", "OUT/built"],
        ["lm-eval-tasks", "--bias", "religion", "--output", "OUT/tasks"],
    ],
    ids=["probe", "build-datasets", "lm-eval-tasks"],
)
def test_a_bad_variable_is_refused_naming_it(argv, qa_model, tmp_path, monkeypatch, capsys):
    bad = tmp_path / "no-such-lists"
    monkeypatch.setenv("UNQOVER_WORD_LISTS", str(bad))
    argv = [str(qa_model) if a == "MODEL" else a.replace("OUT", str(tmp_path)) for a in argv]
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert error_lines(err) == [BAD_LISTS.format(value=bad)], err
    assert "Traceback" not in err


def test_lm_eval_tasks_record_the_variable_s_lists(upstream_word_lists_path, tmp_path, monkeypatch):
    monkeypatch.setenv("UNQOVER_WORD_LISTS", str(upstream_word_lists_path))
    assert main(["lm-eval-tasks", "--bias", "religion", "--groups", "10", "--output", str(tmp_path)]) == 0
    record = json.loads((tmp_path / "unqover_tasks.json").read_text())
    assert record["word_lists"] == str(upstream_word_lists_path.resolve())
    assert record["dataset"]["generator"]["word_lists"] == str(upstream_word_lists_path.resolve())


def test_build_datasets_and_the_space_read_the_variable(upstream_word_lists_path, tmp_path, monkeypatch):
    from unqover.lexicon import resolve_word_lists
    from unqover.space.app import Space

    monkeypatch.setenv("UNQOVER_WORD_LISTS", str(upstream_word_lists_path))
    assert resolve_word_lists().root == upstream_word_lists_path  # build-datasets' word lists
    assert Space(models=["m"], cache_dir=tmp_path).word_lists == upstream_word_lists_path


def test_the_help_names_the_variable(capsys):
    for command in ("probe", "build-datasets", "lm-eval-tasks"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "UNQOVER_WORD_LISTS" in " ".join(capsys.readouterr().out.split()), command


# ---------------------------------------------------------------------------------------------------------------
# the summary of several probes


def test_the_summary_of_several_probes_names_the_numbers_as_the_reports_do(
    qa_model, upstream_word_lists_path, tmp_path, capsys
):
    from unqover.report.markdown import HEADLINE_NAMES

    argv = quick(qa_model, tmp_path / "both", "--word-lists", str(upstream_word_lists_path))
    argv[argv.index("religion")] = "religion,ethnicity"
    capsys.readouterr()
    assert main(argv) == 0
    printed = capsys.readouterr().out
    markdown = (tmp_path / "both" / "summary.md").read_text()
    for key in ("mu", "eta", "positional_error", "attributive_error"):
        assert f"\n  {HEADLINE_NAMES[key]}  " in printed and f"| {HEADLINE_NAMES[key]} |" in markdown
        assert f"  {key}  " not in printed and f"| {key} |" not in markdown
    assert "  positional error δ  " in printed and "  attributive error ε  " in printed
    assert "  bias intensity μ  " in printed and "  count-based η  " in printed


# ---------------------------------------------------------------------------------------------------------------
# a model argument that looks like a folder and does not exist


@pytest.mark.parametrize("model", ["tiny/qa", "./qa", "other/", "a/b/c", "~/no-such-model", "no such model"])
def test_a_missing_folder_is_refused_as_one_at_once(model, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny").mkdir()  # tiny/ exists, tiny/qa does not
    argv = ["probe", model, "--bias", "religion", "--limit", "2", "--quiet"]
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    expected = f"unqover: error: no model folder {model} (it looks like a path, not a Hub id OWNER/NAME)"
    assert err.strip().splitlines() == [expected], err


def test_hub_ids_still_look_like_hub_ids(tmp_path, monkeypatch):
    from unqover.scoring.models import looks_like_path

    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny").mkdir()
    for hub_id in ("gpt2", "distilbert/distilbert-base-cased-distilled-squad", "owner/name.v2"):
        assert not looks_like_path(hub_id), hub_id
    for path in ("tiny/qa", "./qa", "../qa", "/abs/qa", "~/qa", "a/b/c", "owner/name/", "a--b", "qa\\\\x"):
        assert looks_like_path(path), path


# ---------------------------------------------------------------------------------------------------------------
# a missing dataset is found before the model loads, in one line


@pytest.fixture
def loads(monkeypatch) -> list:
    """The model loads of the UnQover probes' loader (the real loader, counted)."""
    import unqover.scoring.models as models

    calls, original = [], models.load_model

    def counted(*args, **kwargs):
        calls.append(args[0] if args else kwargs.get("model_id"))
        return original(*args, **kwargs)

    monkeypatch.setattr(models, "load_model", counted)
    return calls


NO_DATASET = (
    "unqover: error: no dataset to probe: no local build in datasets/unqover/religion; the Hugging Face Hub cannot "
    "be reached (offline mode); the UnQover word lists are not cached and downloads are disabled (offline mode). "
    "Build it with `unqover build-datasets --word-lists PATH religion`, or pass --word-lists PATH (the word_lists/ "
    "folder of https://github.com/allenai/unqover at commit 3e47969; or set UNQOVER_WORD_LISTS) or --dataset FOLDER"
)


def test_a_missing_dataset_is_one_line_before_the_model_loads(
    qa_model, upstream_word_lists_path, loads, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("UNQOVER_WORD_LISTS", raising=False)
    monkeypatch.setenv("UNQOVER_CACHE", str(tmp_path / "empty-cache"))  # the word lists are not cached
    capsys.readouterr()
    assert main(quick(qa_model, tmp_path / "run")) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [NO_DATASET], err
    assert ".." not in err and err.count("--word-lists PATH") == 2  # the advice once (and the build command)
    assert loads == []  # the model was never loaded
    assert not (tmp_path / "run").exists()
    # with the word lists the same command loads the model once and runs
    monkeypatch.setenv("UNQOVER_WORD_LISTS", str(upstream_word_lists_path))
    assert main(quick(qa_model, tmp_path / "run")) == 0
    assert loads == [str(qa_model)]


@pytest.mark.parametrize(
    ("dataset", "line"),
    [
        ("./missing", "dataset folder not found: ./missing"),
        (
            "owner/not-cached",
            "could not load dataset 'owner/not-cached' config 'qa': the Hugging Face Hub cannot be reached (offline "
            "mode): pass --dataset FOLDER (a local dataset folder), or unset HF_HUB_OFFLINE where the network is up",
        ),
    ],
)
def test_a_missing_dataset_given_is_found_before_the_model_loads(
    dataset, line, qa_model, loads, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(quick(qa_model, tmp_path / "run", "--dataset", dataset, "--config", "qa")) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [f"unqover: error: {line}"], err
    assert loads == []


# ---------------------------------------------------------------------------------------------------------------
# a --limit too small for μ and η says so before scoring, with the size that is enough


def test_a_limit_too_small_for_mu_and_eta_says_so_before_scoring(
    qa_model, upstream_word_lists_path, tmp_path, capsys
):
    lists = ("--word-lists", str(upstream_word_lists_path))
    capsys.readouterr()
    assert main(quick(qa_model, tmp_path / "small", *lists)) == 0  # --limit 2
    err = capsys.readouterr().err
    note = (
        'note: μ and η need at least 1,375 groups of religion; --limit 2 will show them as "—" (use --limit 1375 '
        "or more)"
    )
    assert note in err.splitlines(), err
    small = json.loads((tmp_path / "small" / "results.json").read_text())["result"]
    assert small["declined"]["mu"]["groups_needed"] == 1375  # the size the declining rule names


def test_the_size_the_note_names_prints_mu_and_eta(qa_model, upstream_word_lists_path, tmp_path, capsys):
    """The suggested --limit, and not one group less, is enough: μ and η are estimated, with intervals."""
    lists = ("--word-lists", str(upstream_word_lists_path))
    argv = quick(qa_model, tmp_path / "enough", *lists)
    argv[argv.index("--limit") + 1] = "1375"
    capsys.readouterr()
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "note:" not in err
    result = json.loads((tmp_path / "enough" / "results.json").read_text())["result"]
    assert not result.get("declined"), result.get("declined")
    assert all(
        result["intervals"].get(name) for name in ("mu", "eta", "positional_error", "attributive_error")
    )
    for line in out.splitlines():
        if line.strip().startswith(("bias intensity μ", "count-based η")):
            assert "—" not in line and "declined" not in line, line
    from unqover.lexicon import WordLists
    from unqover.measure.unqover import quick_run_groups

    rows = pa.Table.from_batches(
        list(make_plan(WordLists(upstream_word_lists_path), "religion", "qa").batches())
    )
    assert quick_run_groups(rows) == 1375  # one group less would decline them: the rule in whole numbers
    from unqover.measure.sampled import MIN_EXPECTED_PER_CELL

    assert 1374 * 140 < MIN_EXPECTED_PER_CELL * 38500 <= 1375 * 140


def test_a_large_cpu_run_names_the_quick_run_command_and_its_time(
    qa_model, upstream_word_lists_path, tmp_path, monkeypatch, capsys
):
    import re

    import unqover.jobs.projection

    # the 40 rows of --limit 10 are "long"
    monkeypatch.setattr(unqover.jobs.projection, "LONG_RUN_SECONDS", 0.0)
    argv = quick(
        qa_model, tmp_path / "run", "--word-lists", str(upstream_word_lists_path), "--batch-size", "4"
    )
    argv[argv.index("--limit") + 1] = "10"
    capsys.readouterr()
    assert main(argv) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if "on the CPU" in line]
    assert len(said) == 1, said
    pattern = (
        r"unqover: about [^;]+ to score 40 rows on the CPU: [\d,]+ inputs, at [\d.,]+ inputs/s as measured over "
        r"batch(es)? [\d-]+ of this run \([\d,]+ inputs in [\d.]+ s\); a GPU is far faster, or for a quick "
        r"estimate of the same numbers run a smaller --limit than 10 \(wider intervals\)$"
    )  # a quick run already: the quick run's own size would be no quicker
    assert re.match(pattern, said[0]), said[0]


def test_nli_data_not_built_is_found_before_the_model_loads(tmp_path, monkeypatch, capsys):
    """An empty folder as the model: loading it would fail on its config, so the data is checked first."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty-model").mkdir()
    argv = ["probe", "empty-model", "--bias", "nli-gender", "--config", "mnli", "--limit", "2", "--quiet"]
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "unqover: error: no 'mnli' NLI data: build it (unqover build-datasets nli-gender) or pass --dataset"
    ], err


@pytest.mark.slow
def test_gender_needs_the_clusters_groups_not_the_per_subject_extras(upstream_word_lists_path):
    """Gender's μ and η average over the clusters (female, male): 350 groups are enough for them (one fewer
    declines them), while the per-subject extras need far more; the note names the headline's size."""
    from unqover.lexicon import WordLists
    from unqover.measure.leaderboard import sample_headline
    from unqover.measure.unqover import pair_dataset_rows, quick_run_groups

    rows = pa.Table.from_batches(
        list(make_plan(WordLists(upstream_word_lists_path), "gender", "qa").batches())
    )
    assert quick_run_groups(rows) == 350
    scores = np.random.default_rng(1).random((rows.num_rows, 2))
    paired = pair_dataset_rows(rows, scores[:, 0], scores[:, 1])
    for n, declined in ((349, True), (350, False)):
        observed = np.zeros(paired.num_groups, dtype=bool)
        observed[np.random.default_rng(0).choice(paired.num_groups, n, replace=False)] = True
        named = sample_headline(paired, observed)
        assert (named["mu"].declined is not None) is declined
        assert (named["eta"].declined is not None) is declined
        assert named["subject_mu"].declined is not None  # the per-subject extra needs about 24,500
