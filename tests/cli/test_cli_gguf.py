"""GGUF checkpoints at the command line, end to end and offline, on the session's tiny chat Llama written as a GGUF
file (``gguf_model``): ``unqover probe FILE.gguf``, a folder holding one ``.gguf`` and ``FOLDER --gguf-file NAME``
score exactly as the same model saved as a transformers folder; the run records the file (its name, SHA-256,
quantization and architecture); an interrupted run resumes to the uninterrupted predictions; another GGUF file
into the same run folder is refused; bad files and options end in one line, exit 2 and nothing written.

The loader-level tests (model arguments, bad files): tests/scoring/test_scoring_gguf.py.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.cli.test_cli_bad_data import files, refused
from unqover.cli import main
from unqover.predictions import read_predictions

pytest.importorskip("gguf", reason="the gguf package is in the models extra")

GROUPS = 30  # a quick run: μ and η need 1,375 groups and are declined, δ and ε are measured


@pytest.fixture(scope="module")
def religion(built_datasets) -> Path:
    """The session's religion dataset folder (qa), read-only."""
    return built_datasets["religion"]


def probe_argv(model: Path | str, religion: Path, output: Path, *extra: str) -> list[str]:
    return ["probe", str(model), "--bias", "religion", "--dataset", str(religion), "--limit", str(GROUPS),
            "--device", "cpu", "--batch-size", "8", "--resamples", "20", "--quiet", "--output", str(output),
            *extra]  # fmt: skip


def scores(run: Path) -> pa.Table:
    """A run's predictions: (id, score_1, score_2) in id order."""
    table, _ = read_predictions(run / "predictions.parquet")
    return table.select(["id", "score_1", "score_2"]).sort_by("id")


@pytest.fixture(scope="module")
def file_run(gguf_model, religion, tmp_path_factory) -> Path:
    """``unqover probe FILE.gguf``: the run every other form must match."""
    run = tmp_path_factory.mktemp("gguf-run") / "run"
    assert main(probe_argv(gguf_model, religion, run)) == 0
    return run


def record_of(path: Path) -> dict:
    return {
        "file": path.name,
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "quantization": "F32",
        "architecture": "llama",
    }


@pytest.mark.slow
def test_a_gguf_file_runs_end_to_end_and_scores_as_its_transformers_twin(
    gguf_model, religion, file_run, tmp_path
):
    record = record_of(gguf_model)
    model = json.loads((file_run / "run.json").read_text())["model"]
    assert model["gguf"] == record
    assert model["path"] == str(gguf_model.resolve()) and model["family"] == "causal"
    provenance = json.loads((file_run / "results.json").read_text())["provenance"]["model"]
    assert provenance["gguf"] == record and provenance["weights_sha256"] == record["sha256"]
    assert provenance["path"] == str(gguf_model.resolve())
    result = json.loads((file_run / "results.json").read_text())["result"]
    assert result["positional_error"] is not None and result["attributive_error"] is not None

    twin = tmp_path / "hf"
    assert main(probe_argv(gguf_model.parent / "hf", religion, twin)) == 0
    assert "gguf" not in json.loads((twin / "run.json").read_text())["model"]
    ours, theirs = scores(file_run), scores(twin)
    assert ours.num_rows == 4 * GROUPS and ours.equals(theirs)


@pytest.mark.slow
@pytest.mark.parametrize("form", ["folder", "folder --gguf-file NAME"])
def test_a_folder_of_one_gguf_file_and_gguf_file_name_score_as_the_file(
    gguf_model, religion, file_run, tmp_path, form
):
    folder = tmp_path / "one"
    folder.mkdir()
    shutil.copy(gguf_model, folder / gguf_model.name)
    extra = ("--gguf-file", gguf_model.name) if form != "folder" else ()
    run = tmp_path / "run"
    assert main(probe_argv(folder, religion, run, *extra)) == 0
    model = json.loads((run / "run.json").read_text())["model"]
    assert model["gguf"] == record_of(gguf_model)
    assert model["path"] == str((folder / gguf_model.name).resolve())
    assert scores(run).equals(scores(file_run))


@pytest.mark.slow
def test_an_interrupted_gguf_run_resumes_to_the_uninterrupted_predictions(
    gguf_model, religion, file_run, tmp_path, monkeypatch, capsys
):
    """Ctrl-C on the third batch, with a checkpoint after every batch: the same command resumes from the
    checkpoint (it scores only the batches left) and ends with the predictions of the uninterrupted run."""
    import unqover.probes.base
    from unqover.scoring.causal import CausalScorer

    @dataclass
    class EveryBatch(unqover.probes.base.RunOptions):
        checkpoint_seconds: float = 0.0  # a checkpoint after every batch (the default is once a minute)

    monkeypatch.setattr(unqover.probes.base, "RunOptions", EveryBatch)
    real = CausalScorer.score
    calls = {"n": 0}

    def counting(self, rows):
        calls["n"] += 1
        return real(self, rows)

    monkeypatch.setattr(CausalScorer, "score", counting)
    assert main(probe_argv(gguf_model, religion, tmp_path / "whole")) == 0
    batches, calls["n"] = calls["n"], 0
    assert batches > 3

    def interrupted(self, rows):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(self, rows)

    monkeypatch.setattr(CausalScorer, "score", interrupted)
    run = tmp_path / "run"
    argv = probe_argv(gguf_model, religion, run)
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert f"are kept in {run}: run the same command again to resume" in err and "Traceback" not in err
    assert not (run / "predictions.parquet").exists()
    assert list(run.rglob("partial-*.parquet")), "no checkpoint was kept"

    calls["n"] = 0
    monkeypatch.setattr(CausalScorer, "score", counting)
    assert main(argv) == 0
    assert calls["n"] == batches - 2  # resumed: the two batches scored before Ctrl-C are not scored again
    assert scores(run).equals(scores(file_run))
    assert json.loads((run / "run.json").read_text()) == json.loads((file_run / "run.json").read_text())


@pytest.fixture(scope="module")
def other_gguf(tmp_path_factory, religion_tables) -> Path:
    """The same tiny chat Llama with other weights (seed 1), written as a GGUF file of the same name and size."""
    import tiny_models

    rows = religion_tables["qa"]
    texts = sorted(set(rows["context"].to_pylist()[:4000]) | set(rows["question"].to_pylist()[:4000]))
    texts.append("Answer with the name or group from the text.")
    return tiny_models.gguf_causal_lm(tmp_path_factory.mktemp("gguf-seed1"), texts, seed=1)


@pytest.mark.slow
@pytest.mark.parametrize("where", ["in place", "elsewhere"])
def test_another_gguf_file_into_the_same_run_folder_is_refused(
    gguf_model, other_gguf, religion, file_run, tmp_path, capsys, where
):
    """A GGUF file with other weights, run into a finished run's folder, is refused by the run folder's identity
    check before it loads (its SHA-256 against the run's), and nothing in the folder changes: whether it replaced
    the run's file in place (the same path and name: only its SHA-256 differs) or lies elsewhere."""
    other = record_of(other_gguf)
    assert other["file"] == gguf_model.name and other["sha256"] != record_of(gguf_model)["sha256"]
    run = tmp_path / "run"
    if where == "in place":
        model = tmp_path / "model" / gguf_model.name
        model.parent.mkdir()
        shutil.copy(gguf_model, model)
        assert main(probe_argv(model, religion, run)) == 0
        assert scores(run).equals(scores(file_run))
        shutil.copy(other_gguf, model)
        second = model
    else:
        shutil.copytree(file_run, run)
        second = other_gguf
    before = {path: path.read_bytes() for path in files(run) if path.is_file()}
    line = refused(probe_argv(second, religion, run), capsys, "holds another run")
    assert line == (
        f"unqover: error: {run} holds another run (it differs in model); choose another --output or remove "
        "that folder"
    )
    assert {path: path.read_bytes() for path in files(run) if path.is_file()} == before


@dataclass
class Bad:
    """A bad GGUF model or option: the arguments before the common ones, and the whole error line (a regex)."""

    argv: list[str]
    line: str


def bad_cases(gguf_model: Path, root: Path) -> dict[str, Bad]:
    """The bad files (written under ``root``) and options the catalogue feeds ``unqover probe``."""
    whole = gguf_model.read_bytes()
    (root / "cut").mkdir(parents=True)
    (root / "cut" / "x.gguf").write_bytes(whole[: len(whole) - 1000])
    (root / "zip").mkdir()
    (root / "zip" / "x.gguf").write_bytes(b"PK\x03\x04" + whole[4:200])
    (root / "two").mkdir()
    for name in ("a.gguf", "b.gguf"):
        shutil.copy(gguf_model, root / "two" / name)
    two, one = root / "two", gguf_model.parent
    name = gguf_model.name
    return {
        "a truncated GGUF file": Bad(
            [str(root / "cut" / "x.gguf")],
            rf"cannot load the GGUF file x\.gguf: it is cut short \({len(whole) - 1000:,} bytes, its tensors "
            rf"need {len(whole):,}\); download it again",
        ),
        "a file named x.gguf that is no GGUF": Bad(
            [str(root / "zip" / "x.gguf")],
            rf"cannot load the GGUF file x\.gguf: {re.escape(str((root / 'zip' / 'x.gguf').resolve()))} does not "
            r"start with the GGUF magic bytes, so it is not a GGUF file\.",
        ),
        "a folder of two GGUF files and no config.json": Bad(
            [str(two)],
            rf"the model folder {re.escape(str(two))} holds 2 GGUF files \(a\.gguf, b\.gguf\) and no "
            r"config\.json: choose one with --gguf-file NAME",
        ),
        "--gguf-file ../x.gguf": Bad(
            [str(two), "--gguf-file", "../a.gguf"],
            r"--gguf-file '\.\./a\.gguf' cannot be used: it names a \.gguf file inside the model folder or Hub "
            r"repo \(a relative path ending in \.gguf\)",
        ),
        "--gguf-file a file the folder lacks": Bad(
            [str(two), "--gguf-file", "c.gguf"],
            rf"no GGUF file c\.gguf in the model folder {re.escape(str(two))} \(it holds a\.gguf, b\.gguf\)",
        ),
        "--gguf-file beside a .gguf file": Bad(
            [str(gguf_model), "--gguf-file", name],
            rf"--gguf-file names a file inside a model folder or Hub repo, and {re.escape(str(gguf_model))} is "
            r"a file already: leave --gguf-file out",
        ),
        "--gguf-file with a sweep of two models": Bad(
            [str(one), str(two), "--gguf-file", name],
            r"--gguf-file names the GGUF file of one model: in a sweep, give each GGUF file's path as a model",
        ),
    }


BAD = [
    "a truncated GGUF file",
    "a file named x.gguf that is no GGUF",
    "a folder of two GGUF files and no config.json",
    "--gguf-file ../x.gguf",
    "--gguf-file a file the folder lacks",
    "--gguf-file beside a .gguf file",
    "--gguf-file with a sweep of two models",
]


@pytest.mark.parametrize("case", BAD)
def test_a_bad_gguf_file_or_option_gets_one_line_and_writes_nothing(
    gguf_model, religion, tmp_path, monkeypatch, capsys, case
):
    monkeypatch.chdir(tmp_path)
    bad = bad_cases(gguf_model, tmp_path / "models")[case]
    argv = ["probe", *bad.argv]
    if "--bias" not in bad.argv:
        argv += ["--bias", "religion", "--dataset", str(religion), "--limit", str(GROUPS)]
    output = tmp_path / "out"
    before = files(tmp_path, gguf_model.parent)
    line = refused([*argv, "--device", "cpu", "--quiet", "--output", str(output)], capsys, "")
    assert re.fullmatch(r"unqover: error: " + bad.line, line), line
    assert not output.exists() and files(tmp_path, gguf_model.parent) == before


@pytest.mark.slow
@pytest.mark.parametrize("bias", ["eec-emotion", "eec-person"])
def test_the_fill_in_probes_ask_a_gguf_chat_model_as_a_chat(gguf_model, tmp_path, bias):
    """The emotion and person probes on the GGUF file (its ChatML template): each question a chat prompt, each
    choice the reply, scored as its transformers twin scores them and as the reply scored by hand; run.json
    records the template (read from the file) and the question."""
    from tests.scoring.test_scoring_eec_chat import by_hand, sentences_by_id
    from unqover.probes.registry import get_probe
    from unqover.scoring.eec_chat import filled_words
    from unqover.scoring.models import load_model

    def run(model: Path, name: str) -> Path:
        argv = ["probe", str(model), "--bias", bias, "--limit", "1", "--device", "cpu", "--quiet",
                "--permutations", "20", "--resamples", "20", "--output", str(tmp_path / name)]  # fmt: skip
        assert main(argv) == 0
        return tmp_path / name

    ours, twin = run(gguf_model, "gguf"), run(gguf_model.parent / "hf", "hf")
    prompt = json.loads((ours / "run.json").read_text())["prompt"]
    assert prompt == json.loads((twin / "run.json").read_text())["prompt"]
    assert prompt["template_sha256"] is not None and prompt["question"] == get_probe(bias).chat_question
    tables = [pq.read_table(r / "predictions.parquet").sort_by("id") for r in (ours, twin)]
    assert tables[0]["id"].equals(tables[1]["id"]) and tables[0]["tokens"].equals(tables[1]["tokens"])
    gap = np.abs(tables[0]["log_likelihood"].to_numpy() - tables[1]["log_likelihood"].to_numpy())
    assert gap.max() <= 1e-5
    loaded = load_model(str(gguf_model.parent / "hf"), device="cpu")
    answers = pq.read_table(ours / "answers.parquet")
    texts = dict(zip(answers["question_id"].to_pylist(), answers["text"].to_pylist(), strict=True))
    sentences = sentences_by_id(bias)
    for row in tables[0].to_pylist()[::97]:
        text = texts[row["question_id"]]
        total, count = by_hand(
            loaded, text, filled_words(text, sentences[row["id"]]), get_probe(bias).chat_question
        )
        assert row["tokens"] == count and row["log_likelihood"] == pytest.approx(total, abs=1e-4)
