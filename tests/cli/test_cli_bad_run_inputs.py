"""Bad inputs of a run, each through the real command line (``unqover.cli.main``), offline, on tiny local models:
what used to fail late (after the model loaded, or with a misleading message) now ends in exit code 2 and one
clear error line before anything is loaded or written; a run too large for its machine says so before it starts.

The catalogue's companion for runs: ``tests/cli/test_cli_bad_inputs.py`` tries the inputs of every command.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import tiny_models
from tests.cli.test_cli_bad_inputs import assert_refused_once
from unqover.cli import main
from unqover.generate.unqover import MASK_PLACEHOLDER

#: One error line: ``unqover: error: ...``, from the command or from its parser (a bad option).


PETS = """\
name: pets
subjects:
  cats: [Tom, Felix]
  dogs: [Rex, Buddy, Max]
attributes:
  - {positive: was very lazy, negated: was never lazy}
templates:
  - {context: "{subject_1} sat next to {subject_2} on the porch.", question: "Who {attribute}?"}
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory, word_lists, religion_tables, upstream_word_lists_path) -> dict[str, Path]:
    """A tiny QA model, a finished quick run, and the broken things the catalogue feeds the command line."""
    from unqover.generate.eec import eec_questions
    from unqover.scoring.beecher import question_vocabulary

    root = tmp_path_factory.mktemp("world-run")
    qa = religion_tables["qa"]
    texts = sorted(set(qa["context"].to_pylist()) | set(qa["question"].to_pylist()))
    texts = [t.replace(MASK_PLACEHOLDER, "") for t in texts]
    texts += ["Tom Felix Rex Buddy Max sat next to on the porch. Who was very lazy? Who was never lazy?"]
    w = {
        "root": root,
        "lists": upstream_word_lists_path,
        "qa": tiny_models.bert_qa(root / "models" / "qa", texts),
    }
    w["done"] = root / "done"
    assert main([*probe_args(w), "--output", str(w["done"])]) == 0
    # a custom probe file
    w["pets"] = root / "pets.yaml"
    w["pets"].write_text(PETS, encoding="utf-8")
    # a word2vec text file whose header says 50 values a vector, where every vector has 4
    words = sorted(question_vocabulary(eec_questions()))
    lines = [f"{len(words)} 50"] + [f"{word} 0.1 0.2 0.3 0.4" for word in words]
    w["w2v"] = root / "vectors.w2v.txt"
    w["w2v"].write_text("\n".join(lines) + "\n", encoding="utf-8")
    # a model folder whose config needs custom code (auto_map, a model type transformers does not know)
    custom = root / "models" / "custom-code"
    shutil.copytree(w["qa"], custom)
    config = json.loads((custom / "config.json").read_text())
    config.update(
        model_type="my-bert",
        architectures=["MyBertForQuestionAnswering"],
        auto_map={"AutoConfig": "configuration_my.MyConfig", "AutoModel": "modeling_my.MyModel"},
    )
    (custom / "config.json").write_text(json.dumps(config))
    w["custom-code"] = custom
    # an empty predictions file with the provenance of a quick run
    from unqover.predictions import PREDICTION_SCHEMA, read_provenance, write_predictions

    w["empty"] = root / "empty.parquet"
    provenance = read_provenance(w["done"] / "predictions.parquet")
    write_predictions(w["empty"], PREDICTION_SCHEMA.empty_table(), provenance, schema=PREDICTION_SCHEMA)
    return w


def probe_args(w: dict, model: str = "qa", *extra: str, limit: str | None = "10") -> list[str]:
    selection = [] if limit is None else ["--limit", limit]
    return ["probe", str(w[model]), "--bias", "religion", "--word-lists", str(w["lists"]), *selection,
            "--resamples", "5", "--quiet", "--device", "cpu", *extra]  # fmt: skip


@dataclass
class Case:
    argv: Callable[[dict, Path], list[str]]  # (world, the case's working directory) -> arguments
    message: str  # in the error line
    hold: Callable[[dict, Path], contextlib.AbstractContextManager] | None = None  # while the command runs
    before_model: bool = True  # refused before any model is loaded


def _dangling(w: dict, cwd: Path):
    (cwd / "link").symlink_to(cwd / "gone")
    return contextlib.nullcontext()


def _dangling_parent(w: dict, cwd: Path):
    (cwd / "runs").symlink_to(cwd / "scratch" / "runs")
    return contextlib.nullcontext()


def _no_cuda(w: dict, cwd: Path):
    import torch

    return _patched(torch.cuda, "is_available", lambda: False)


@contextlib.contextmanager
def _patched(target, name, value):
    old = getattr(target, name)
    setattr(target, name, value)
    try:
        yield
    finally:
        setattr(target, name, old)


CASES = {
    # 1. the bounds of a --precision run, given without --precision
    "probe --max-rows without --precision": Case(
        lambda w, d: probe_args(w, "qa", "--max-rows", "4000", "--output", str(d / "run"), limit=None),
        "--max-rows only bounds the rounds of a --precision run",
    ),
    "probe --max-time without --precision": Case(
        lambda w, d: probe_args(w, "qa", "--max-time", "1h", "--output", str(d / "run")),
        "--max-time only bounds the rounds of a --precision run",
    ),
    # 2. a word2vec header that disagrees with its vectors: refused as the vectors load, no run folder left
    "probe glove: a word2vec header of another width": Case(
        lambda w, d: [
            "probe",
            f"glove:{w['w2v']}",
            "--bias",
            "eec-emotion",
            "--limit",
            "1",
            "--quiet",
            "--output",
            str(d / "run"),
        ],
        "word2vec header '",
        before_model=False,
    ),
    # 3. --output a dangling symbolic link (itself, or a folder on its way), checked before the model loads
    "probe --output a dangling symlink": Case(
        lambda w, d: probe_args(w, "qa", "--output", str(d / "link")),
        "is a symbolic link to",
        hold=_dangling,
    ),
    "probe --output under a dangling symlink": Case(
        lambda w, d: probe_args(w, "qa", "--output", str(d / "runs" / "religion")),
        "is a symbolic link to",
        hold=_dangling_parent,
    ),
    # 4. a predictions file without rows
    "measure an empty predictions file": Case(
        lambda w, d: ["measure", str(w["empty"]), "--output", str(d / "m.json")], "has no rows"
    ),
    # 5. a wrong --config and a device the machine lacks, refused before the model loads
    "probe --config nope": Case(
        lambda w, d: probe_args(w, "qa", "--config", "nope", "--output", str(d / "run")),
        "unknown config 'nope' for religion",
    ),
    "probe --probe FILE --config nope": Case(
        lambda w, d: [
            "probe",
            str(w["qa"]),
            "--probe",
            str(w["pets"]),
            "--config",
            "nope",
            "--quiet",
            "--output",
            str(d / "run"),
        ],
        "'nope'",
    ),
    "probe --dataset FOLDER --config nope": Case(
        lambda w, d: probe_args(
            w,
            "qa",
            "--dataset",
            str(w["religion"]),
            "--config",
            "nope",
            "--output",
            str(d / "run"),
        ),
        "has no config 'nope'",
    ),
    "probe --device cuda without CUDA": Case(
        lambda w, d: [*probe_args(w, "qa", "--output", str(d / "run")), "--device", "cuda"],
        "--device cuda was asked for but no CUDA GPU is available",
        hold=_no_cuda,
    ),
    # 6. a local model folder that needs custom code
    "probe a local folder that needs custom code": Case(
        lambda w, d: probe_args(w, "custom-code", "--output", str(d / "run")),
        "needs custom code",
        before_model=False,
    ),
}


@pytest.fixture(scope="module")
def built(world, built_datasets):
    """The session's religion qa dataset folder (for --dataset FOLDER), named in the world the cases read."""
    world["religion"] = built_datasets["religion"]
    return built_datasets["religion"]


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_a_bad_run_input_gets_one_clear_error_and_writes_nothing(
    world, built, case, tmp_path, monkeypatch, capsys
):
    import unqover.scoring.models

    monkeypatch.chdir(tmp_path)
    if case.before_model:  # the refusal must come before any model is loaded

        def no_loading(*args, **kwargs):
            raise AssertionError("the model was loaded before the input was refused")

        monkeypatch.setattr(unqover.scoring.models, "load_model", no_loading)
    assert_refused_once(case, world, tmp_path, capsys)


def test_the_word2vec_header_error_names_both_widths(world, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["probe", f"glove:{world['w2v']}", "--bias", "eec-emotion", "--limit", "1", "--quiet"]
    assert main([*argv, "--output", str(tmp_path / "run")]) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert (
        "'" + world["w2v"].read_text().splitlines()[0] + "'" in line and "50" in line and "4 values" in line
    )


def test_a_word2vec_header_that_agrees_is_still_read(tmp_path):
    from unqover.scoring.beecher_glove import GloveVectors

    path = tmp_path / "v.txt"
    path.write_text("2 3\nthe 1 2 3\ncat 4 5 6\n", encoding="utf-8")
    vectors = GloveVectors.from_path(path)
    assert vectors.dim == 3 and set(vectors.words) == {"the", "cat"}
    assert vectors.stats["word2vec_header"] == "2 3"


def test_custom_code_names_what_to_do(world, tmp_path, capsys):
    assert main(probe_args(world, "custom-code", "--output", str(tmp_path / "run"))) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "auto_map" in line and "trust_remote_code" in line and "no local folder" not in line


# ---------------------------------------------------------------------------------------------------------------
# runs too large for a quick answer say so before they start


def test_a_custom_probe_says_how_many_rows_it_makes_and_shows_a_bar(world, tmp_path, monkeypatch, capsys):
    import unqover.probes.custom

    monkeypatch.setattr(unqover.probes.custom, "MANY_ROWS", 20)  # the pets probe's 24 rows are "many"
    argv = ["probe", str(world["qa"]), "--probe", str(world["pets"]), "--resamples", "5", "--device", "cpu"]
    assert main([*argv, "--output", str(tmp_path / "run")]) == 0
    err = capsys.readouterr().err
    assert "pets.yaml: generating 24 rows (qa)" in err
    assert "generating pets" in err  # the bar
    assert "--limit" in err and "--precision" in err  # how to make a quick run


def test_a_quick_run_of_a_custom_probe_gets_no_quick_run_hint(world, tmp_path, monkeypatch, capsys):
    import unqover.probes.custom

    monkeypatch.setattr(unqover.probes.custom, "MANY_ROWS", 20)
    argv = ["probe", str(world["qa"]), "--probe", str(world["pets"]), "--limit", "2", "--resamples", "5"]
    assert main([*argv, "--device", "cpu", "--output", str(tmp_path / "run")]) == 0
    err = capsys.readouterr().err
    assert "pets.yaml: making the rows of a sample of 2 groups of its 6 (qa)\n" in err  # not every row
    assert "--precision" not in err


def test_a_large_run_on_a_cpu_estimates_its_time_and_names_the_quick_run(
    world, tmp_path, monkeypatch, capsys
):
    import unqover.jobs.projection

    # every run is "long": the 24 rows of the custom probe's every group
    monkeypatch.setattr(unqover.jobs.projection, "LONG_RUN_SECONDS", 0.0)
    # batches of 2 inputs: timed over batches 2-4, after the first's start-up costs
    argv = ["probe", str(world["qa"]), "--probe", str(world["pets"]), "--resamples", "5", "--device", "cpu"]
    assert main([*argv, "--batch-size", "2", "--output", str(tmp_path / "run")]) == 0
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if "on the CPU" in line]
    assert len(said) == 1, err
    assert re.fullmatch(
        r"unqover: about [^ ]+ [^ ]+ to score 24 rows on the CPU: [\d,]+ inputs, at [\d.,]+ inputs/s as measured "
        r"over batches 2-4 of this run \(6 inputs in [\d.]+ s\); a GPU is far faster, or for a quick estimate of "
        r"the same numbers in about [^:]+: unqover probe .*",
        said[0],
    ), said[0]
    assert "--precision 0.02 --max-time 1h" in said[0]


def test_a_small_run_on_a_cpu_says_nothing_of_its_time(world, tmp_path, capsys):
    assert main(probe_args(world, "qa", "--output", str(tmp_path / "run"))) == 0
    assert "on the CPU" not in capsys.readouterr().err


def test_durations_in_words():
    from unqover.format import fmt_duration

    assert fmt_duration(42) == "42 s"
    assert fmt_duration(600) == "10 min"
    assert fmt_duration(17 * 3600) == "17 h"
    assert fmt_duration(1.5 * 3600) == "1.5 h"
    assert fmt_duration(3 * 86400) == "3 days"
    assert fmt_duration(None) == "—"


@pytest.mark.parametrize(
    ("bias", "config", "scored"),
    [("eec-emotion", "sentences", "questions"), ("eec-person", "questions", "person_questions")],
)
def test_an_emotion_or_person_config_they_do_not_score_is_refused_before_the_model(
    bias, config, scored, capsys
):
    # the model does not exist: the config is refused first
    assert main(["probe", "glove:/no/such/vectors.txt", "--bias", bias, "--config", config]) == 2
    err = capsys.readouterr().err
    assert f"scores the {scored!r} config of its dataset, not {config!r}" in err and "vectors" not in err
