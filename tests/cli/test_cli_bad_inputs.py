"""A catalogue of bad inputs, each through the real command line (``unqover.cli.main``), offline, on tiny local
models: every one ends with exit code 2, exactly one clear error line, no traceback and nothing written.

Beside it, what users do next with good inputs: measuring a probe's predictions again from any working directory,
resuming after Ctrl-C, default run folders of other selections, and ``--quiet``.
"""

from __future__ import annotations

import contextlib
import json
import pickle
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import tiny_models
from unqover.cli import main
from unqover.generate.unqover import MASK_PLACEHOLDER

#: One error line: ``unqover: error: ...``, from the command or from its parser (a bad option).
ERROR_LINE = re.compile(r"^unqover: error: ")


class Evil:
    """A pickle that runs a command when loaded: torch's weights-only loader must refuse it."""

    def __reduce__(self):
        import os

        return (os.system, ("echo pwned > pwned.txt",))


@pytest.fixture(scope="module")
def world(tmp_path_factory, word_lists, religion_tables, upstream_word_lists_path) -> dict[str, Path]:
    """Tiny models, a finished run and the broken things the catalogue feeds the command line."""
    root = tmp_path_factory.mktemp("world")
    qa = religion_tables["qa"]
    mlm = religion_tables["mlm"]
    texts = sorted(
        set(qa["context"].to_pylist()) | set(qa["question"].to_pylist()) | set(mlm["question"].to_pylist())
    )
    texts = [t.replace(MASK_PLACEHOLDER, "") for t in texts]
    w = {
        "root": root,
        "lists": upstream_word_lists_path,
        "qa": tiny_models.bert_qa(root / "models" / "qa", texts),
        "mlm": tiny_models.bert_mlm(root / "models" / "mlm", texts),
    }
    # a model whose pickled weights run code when loaded
    evil = root / "models" / "evil"
    shutil.copytree(w["qa"], evil)
    (evil / "model.safetensors").unlink()
    (evil / "pytorch_model.bin").write_bytes(pickle.dumps(Evil(), protocol=2))
    w["evil"] = evil
    # word lists with an entry appended to a last line that had no line break
    glued = root / "glued"
    shutil.copytree(upstream_word_lists_path, glued)
    with open(glued / "activities" / "biased_religion", "a", encoding="utf-8") as file:
        file.write("[p_act] brokenline_without_pipe\n")
    w["glued"] = glued
    w["done"] = root / "done"
    assert main([*probe_args(w, "qa"), "--output", str(w["done"])]) == 0
    (root / "corrupt").mkdir()
    (root / "corrupt" / "run.json").write_text('{"probe": "religion", ')
    (root / "foreign").mkdir()
    (root / "foreign" / "notes.txt").write_text("mine")
    (root / "afile").write_text("not a folder")
    return w


def probe_args(w: dict, model: str = "qa", *extra: str, limit: str = "10", lists: str = "lists") -> list[str]:
    return ["probe", str(w[model]), "--bias", "religion", "--word-lists", str(w[lists]), "--limit", limit,
            "--resamples", "5", "--quiet", *extra]  # fmt: skip


@dataclass
class Case:
    argv: Callable[[dict, Path], list[str]]  # (world, the case's working directory) -> arguments
    message: str  # in the error line
    hold: Callable[[dict, Path], contextlib.AbstractContextManager] | None = None  # while the command runs


def _lock(w: dict, cwd: Path):
    from filelock import FileLock

    return FileLock(w["done"] / "shards" / "0-of-1" / "run.lock", timeout=0)


def _models_folder(w: dict, cwd: Path):
    (cwd / "models").mkdir()
    return contextlib.nullcontext()


CASES = {
    # options (argparse)
    "probe --seed -1": Case(
        lambda w, d: probe_args(w, "qa", "--seed", "-1"), "argument --seed: must be >= 0"
    ),
    "probe --limit abc": Case(
        lambda w, d: probe_args(w, limit="abc"), "argument --limit: expected a whole number, got 'abc'"
    ),
    "probe --limit 0": Case(lambda w, d: probe_args(w, limit="0"), "argument --limit: must be >= 1"),
    "probe --shard 2/2": Case(lambda w, d: probe_args(w, "qa", "--shard", "2/2"), "out of range"),
    "probe --sample for nli-gender": Case(
        lambda w, d: ["probe", str(w["qa"]), "--bias", "nli-gender", "--sample", "0.1", "--quiet"],
        "--sample do(es) not apply to the nli-gender probe",
    ),
    "measure --seed -1": Case(
        lambda w, d: ["measure", str(w["done"] / "predictions.parquet"), "--seed", "-1"], "must be >= 0"
    ),
    # outputs that cannot be written, checked before anything is loaded
    "probe --output FILE": Case(
        lambda w, d: probe_args(w, "qa", "--output", str(w["root"] / "afile")), "is a file, not a folder"
    ),
    "probe --output FILE/sub": Case(
        lambda w, d: probe_args(w, "qa", "--output", str(w["root"] / "afile" / "run")),
        "is a file, not a folder",
    ),
    "probe --output unwritable": Case(
        lambda w, d: probe_args(w, "qa", "--output", "/proc/unqover-run"), "no file can be created in /proc"
    ),
    "probe --output corrupt run.json": Case(
        lambda w, d: probe_args(w, "qa", "--output", str(w["root"] / "corrupt")), "run.json is unreadable"
    ),
    "probe --output someone else's folder": Case(
        lambda w, d: probe_args(w, "qa", "--output", str(w["root"] / "foreign")),
        "is not an unqover run folder",
    ),
    "probe --output another run": Case(
        lambda w, d: probe_args(w, "mlm", "--output", str(w["done"])), "holds another run"
    ),
    "measure --output FOLDER": Case(
        lambda w, d: ["measure", str(w["done"] / "predictions.parquet"), "--output", str(w["root"])],
        "is a folder: give a file name",
    ),
    "measure --output unwritable": Case(
        lambda w, d: ["measure", str(w["done"] / "predictions.parquet"), "--output", "/proc/unqover.json"],
        "no file can be created in /proc",
    ),
    "build-datasets --output FILE": Case(
        lambda w, d: [
            "build-datasets",
            "religion",
            "--word-lists",
            str(w["lists"]),
            "--output",
            str(w["root"] / "afile"),
            "--quiet",
        ],
        "is a file, not a folder",
    ),
    "build-datasets --output unwritable": Case(
        lambda w, d: [
            "build-datasets",
            "religion",
            "--word-lists",
            str(w["lists"]),
            "--output",
            "/proc/unqover-datasets",
            "--quiet",
        ],
        "no file can be created in /proc",
    ),
    "sample --output unwritable": Case(
        lambda w, d: [
            "sample",
            str(w["root"]),
            "--config",
            "qa",
            "--groups",
            "5",
            "--output",
            "/proc/ids.parquet",
        ],
        "no file can be created in /proc",
    ),
    # models
    "probe models/nope (a missing relative folder)": Case(
        lambda w, d: ["probe", "models/nope", "--bias", "religion", "--quiet"],
        "no model folder models/nope (it looks like a path, not a Hub id OWNER/NAME)",
        hold=_models_folder,
    ),
    "probe ./nope": Case(
        lambda w, d: ["probe", "./nope", "--bias", "religion"],
        "no model folder ./nope (it looks like a path, not a Hub id OWNER/NAME)",
    ),
    "probe a file as the model": Case(
        lambda w, d: ["probe", str(w["qa"] / "config.json"), "--bias", "religion"],
        "is a file: a model is a folder",
    ),
    "probe a malicious pickle with --allow-pickle": Case(
        lambda w, d: probe_args(w, "evil", "--allow-pickle", "--output", str(d / "run")),
        "pickled (.bin) weights hold more than tensors",
    ),
    # rows the model cannot score: a silent wrong result before
    "probe a QA model on masked-LM rows": Case(
        lambda w, d: probe_args(w, "qa", "--config", "mlm", "--output", str(d / "run")),
        "the 'mlm' rows are for masked LMs",
    ),
    "probe a masked LM on QA rows": Case(
        lambda w, d: probe_args(w, "mlm", "--config", "qa", "--output", str(d / "run")),
        "have no [MASK] in their question",
    ),
    "probe word lists with two entries glued on one line": Case(
        lambda w, d: probe_args(w, "qa", "--output", str(d / "run"), lists="glued"),
        "[p_act] inside the text",
    ),
    # datasets and predictions
    "probe --dataset ./missing": Case(
        lambda w, d: probe_args(w, "qa", "--dataset", "./missing"), "dataset folder not found: ./missing"
    ),
    "measure a missing file": Case(lambda w, d: ["measure", "nope.parquet"], "predictions file not found"),
    "measure a file that is no Parquet": Case(
        lambda w, d: ["measure", str(w["root"] / "afile"), "--output", str(d / "m.json")],
        "is not a readable Parquet predictions file",
    ),
    "build-datasets an unknown name": Case(lambda w, d: ["build-datasets", "nope"], "unknown dataset nope"),
    # two identical commands into one folder: the second is refused while the first scores
    "probe into a folder another process is scoring": Case(
        lambda w, d: probe_args(w, "qa", "--output", str(w["done"])),
        "another unqover process is scoring",
        hold=_lock,
    ),
}


def _files(*roots: Path) -> set[Path]:
    return {p for root in roots for p in root.rglob("*")}


def assert_refused_once(case, world: dict, cwd: Path, capsys) -> None:
    """Run ``case`` in ``cwd``: exit status 2, one ``unqover: error:`` line holding ``case.message``, no
    traceback or usage block, and nothing written (no run folder, predictions or results)."""
    hold = case.hold(world, cwd) if case.hold else contextlib.nullcontext()
    before = _files(world["root"], cwd)
    with hold:
        try:
            code = main(case.argv(world, cwd))
        except SystemExit as exit:  # argparse
            code = exit.code
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if ERROR_LINE.match(line)]
    assert code == 2, err
    assert len(errors) == 1 and case.message in errors[0], err
    assert "Traceback" not in err and not any(line.startswith("usage:") for line in err.splitlines()), err
    assert _files(world["root"], cwd) == before


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_a_bad_input_gets_one_clear_error_and_writes_nothing(world, case, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert_refused_once(case, world, tmp_path, capsys)
    assert not (tmp_path / "pwned.txt").exists()


@pytest.mark.slow
def test_measure_finds_a_relative_dataset_again_from_any_directory(world, tmp_path, monkeypatch, capsys):
    """`--dataset data/religion` is recorded as an absolute path, so `unqover measure` finds it from elsewhere."""
    monkeypatch.chdir(tmp_path)
    built = ["build-datasets", "religion", "--word-lists", str(world["lists"]), "--config", "qa"]
    assert main([*built, "--output", "data", "--quiet"]) == 0
    args = ["probe", str(world["qa"]), "--bias", "religion", "--dataset", "data/religion", "--limit", "10"]
    assert main([*args, "--resamples", "5", "--quiet", "--output", "run"]) == 0
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["provenance"]["dataset"]["source"] == str((tmp_path / "data" / "religion").resolve())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    capsys.readouterr()
    measured = [
        "measure",
        str(tmp_path / "run" / "predictions.parquet"),
        "--resamples",
        "5",
        "--output",
        "m.json",
    ]
    assert main(measured) == 0, capsys.readouterr().err
    again = json.loads((elsewhere / "m.json").read_text())
    assert again["result"]["mu"] == pytest.approx(results["result"]["mu"])
    # and a probe's predictions generated from word lists, measured from another directory
    assert (
        main(
            ["measure", str(world["done"] / "predictions.parquet"), "--resamples", "5", "--output", "g.json"]
        )
        == 0
    )


def test_nli_and_emotion_datasets_are_recorded_as_absolute_paths(tmp_path, monkeypatch):
    from unqover.probes.eec_rows import load_eec_questions
    from unqover.probes.nli_rows import load_nli_rows

    monkeypatch.chdir(tmp_path)
    assert main(["build-datasets", "nli-gender", "eec-emotion", "--output", "data", "--quiet"]) == 0
    _, nli = load_nli_rows("nli-gender", "data/nli-gender", "synthetic")
    _, eec = load_eec_questions("eec-emotion", "data/eec-emotion")
    assert nli["source"] == str((tmp_path / "data" / "nli-gender").resolve())
    assert eec["source"] == str((tmp_path / "data" / "eec-emotion").resolve())


@pytest.mark.slow
def test_ctrl_c_before_the_first_checkpoint_says_nothing_is_kept(world, tmp_path, monkeypatch, capsys):
    from unqover.scoring.qa import QAScorer

    real = QAScorer.score
    calls = {"n": 0}

    def interrupted(self, rows):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(self, rows)

    monkeypatch.setattr(QAScorer, "score", interrupted)
    args = probe_args(world, "qa", "--output", str(tmp_path / "run"), "--batch-size", "8")
    assert main(args) == 130
    err = capsys.readouterr().err
    # two batches scored, but no chunk finished and no checkpoint written yet (one a minute): nothing was kept
    assert "unqover: interrupted before any scores were kept: there is nothing to resume" in err
    assert "run the same command again to resume" not in err and "Traceback" not in err
    assert not (tmp_path / "run" / "predictions.parquet").exists()
    monkeypatch.setattr(QAScorer, "score", real)
    assert main(args) == 0
    assert (tmp_path / "run" / "predictions.parquet").is_file()


@pytest.mark.slow
def test_default_run_folders_follow_the_selection(world, tmp_path, monkeypatch, capsys):
    """`--limit 10` then `--limit 12` get folders of their own instead of a refusal."""
    monkeypatch.chdir(tmp_path)
    assert main(probe_args(world, "qa")) == 0
    assert main(probe_args(world, "qa", limit="12")) == 0
    names = sorted(p.name for p in (tmp_path / "runs" / "qa").iterdir())
    assert names == ["religion-qa-limit10-seed0", "religion-qa-limit12-seed0"]


def test_quiet_silences_the_weight_loading_bar(world, tmp_path, capfd):
    assert main(probe_args(world, "qa", "--output", str(tmp_path / "run"))) == 0
    assert "Loading weights" not in capfd.readouterr().err
