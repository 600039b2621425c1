"""The first ten minutes at the command line: a refused command line is one `unqover: error:` line naming the
closest option and its command's help (no usage block), from every parser of the command line; SIGTERM (``kill PID``) is handled as Ctrl-C: what is scored is kept and the same command resumes.

The in-process companions (word lists, checks before the model loads, quick-run sizes): tests/test_first_minutes.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tiny_models
from unqover.cli import main
from unqover.generate.unqover import make_plan

SRC = Path(__file__).resolve().parents[2] / "src"


def argument_error(argv: list[str], capsys) -> list[str]:
    """The lines printed for a command line the parser refuses (exit code 2)."""
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as exit:
        code = exit.code
    assert code == 2
    return capsys.readouterr().err.splitlines()


def test_a_mistyped_option_gets_one_line_with_a_suggestion_and_the_command_s_help(capsys):
    lines = argument_error(["probe", "some/model", "--bias", "religion", "--limt", "200"], capsys)
    assert lines == [
        "unqover: error: unrecognized arguments: --limt 200 (did you mean --limit?) (see unqover probe --help)"
    ]


def test_several_mistyped_options_each_get_their_suggestion(capsys):
    lines = argument_error(["probe", "m", "--bias", "religion", "--limt=200", "--quite"], capsys)
    assert lines == [
        "unqover: error: unrecognized arguments: --limt=200 --quite (did you mean --limit for --limt, "
        "--quiet for --quite?) (see unqover probe --help)"
    ]


def test_an_unknown_argument_of_another_command_names_that_command_s_help(capsys):
    lines = argument_error(["measure", "p.parquet", "--bais", "religion"], capsys)
    assert lines == [
        "unqover: error: unrecognized arguments: --bais religion (did you mean --bias?) (see unqover measure --help)"
    ]
    lines = argument_error(
        ["sample", "d", "--config", "qa", "--groups", "2", "--output", "o", "--zzz"], capsys
    )
    assert lines == ["unqover: error: unrecognized arguments: --zzz (see unqover sample --help)"]


ARGUMENT_ERRORS = {  # every parser of the command line: a bad value, a missing argument, an unknown option
    "no command": ([], "the following arguments are required: COMMAND (see unqover --help)"),
    "unknown command": (["probs"], "argument COMMAND: invalid choice: 'probs'"),
    "probe: bad value": (["probe", "m", "--bias", "religion", "--limit", "x"], "argument --limit: "),
    "probe: missing --bias": (["probe", "m"], "one of the arguments --bias --probe is required"),
    "measure: missing file": (["measure"], "the following arguments are required"),
    "compare: missing run": (["compare", "a"], "the following arguments are required: RUN_B"),
    "compare: bad value": (["compare", "a", "b", "--top", "x"], "argument --top: "),
    "leaderboard: bad value": (["leaderboard", "a", "b", "--confidence", "x"], "argument --confidence: "),
    "leaderboard: unknown option": (["leaderboard", "a", "--zz"], "unrecognized arguments: --zz"),
    "publish: unknown option": (["publish", "--zz"], "unrecognized arguments: --zz"),
    "publish: bad value": (["publish", "--what", "nothing"], "argument --what: 'nothing': choose from"),
}


@pytest.mark.parametrize("case", list(ARGUMENT_ERRORS), ids=list(ARGUMENT_ERRORS))
def test_every_argument_error_is_one_unqover_error_line_without_the_usage_block(case, capsys):
    argv, message = ARGUMENT_ERRORS[case]
    lines = argument_error(argv, capsys)
    command = " ".join(["unqover", *argv[:1]]) if argv and argv[0] != "probs" else "unqover"
    assert len(lines) == 1, lines
    assert lines[0].startswith("unqover: error: ") and message in lines[0], lines
    assert lines[0].endswith(f" (see {command} --help)"), lines


# ---------------------------------------------------------------------------------------------------------------
# SIGTERM as Ctrl-C


@pytest.fixture(scope="module")
def qa_model(tmp_path_factory, word_lists) -> Path:
    rows = pa.Table.from_batches(list(make_plan(word_lists, "religion", "qa").batches()))
    texts = sorted(set(rows["context"].to_pylist()[:400]) | set(rows["question"].to_pylist()[:400]))
    return tiny_models.bert_qa(tmp_path_factory.mktemp("sigterm") / "qa", texts)


def scored_files(folder: Path) -> dict[str, int]:
    """The finished chunks and checkpoints of a run folder, with their modification times."""
    files = [*folder.rglob("chunk-*.parquet"), *folder.rglob("partial-*.parquet")]
    return {str(path.relative_to(folder)): path.stat().st_mtime_ns for path in files}


@pytest.mark.slow
def test_sigterm_keeps_the_scores_and_the_same_command_resumes(qa_model, upstream_word_lists_path, tmp_path):
    """A run of 16,800 rows (three chunks) is sent SIGTERM once its first scores are on disk: it stops as Ctrl-C
    stops it (exit 130, the same one line), keeps them, and the same command finishes the run from there."""
    out = tmp_path / "run"
    argv = [sys.executable, "-m", "unqover", "probe", str(qa_model), "--bias", "religion", "--word-lists",
            str(upstream_word_lists_path), "--limit", "4200", "--resamples", "0", "--quiet", "--device", "cpu",
            "--output", str(out)]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    env |= {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    process = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 400
    while not scored_files(out) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert process.poll() is None, "the run ended before it was sent SIGTERM: make it longer"
    kept = scored_files(out)
    assert kept, "nothing was scored in time"
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=120)
    err = err.decode()
    assert process.returncode == 130, err
    assert err.strip().splitlines()[-1] == (
        f"unqover: interrupted; the scores up to the last checkpoint (at most about a minute back) are kept in "
        f"{out}: run the same command again to resume where it stopped"
    )
    assert "Traceback" not in err
    assert not (out / "predictions.parquet").exists()
    chunks = {name: mtime for name, mtime in kept.items() if "chunk-" in name}
    assert {name: scored_files(out)[name] for name in chunks} == chunks  # kept as they were
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert pq.read_metadata(out / "predictions.parquet").num_rows == 4 * 4200
    after = scored_files(out)
    assert all(after.get(name) == mtime for name, mtime in chunks.items())  # resumed, not scored again


# ---------------------------------------------------------------------------------------------------------------
# the Hub unreachable (no offline flag, connections refused): one line at once, no retry noise


def unreachable_env(tmp_path: Path) -> dict:
    """No offline flag and no proxy; the Hub and the word lists' host refuse connections at once."""
    drop = {
        "HF_HUB_OFFLINE",
        "HF_DATASETS_OFFLINE",
        "TRANSFORMERS_OFFLINE",
        "UNQOVER_OFFLINE",
        "UNQOVER_WORD_LISTS",
    }
    drop |= {name for name in os.environ if name.lower().endswith("_proxy")}
    env = {name: value for name, value in os.environ.items() if name not in drop}
    return env | {
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
        "HF_ENDPOINT": "http://127.0.0.1:9",
        "UNQOVER_WORD_LISTS_URL": "http://127.0.0.1:9/word_lists",
        "HF_HOME": str(tmp_path / "hf"),
        "UNQOVER_CACHE": str(tmp_path / "cache"),
    }


def run_unreachable(argv: list[str], tmp_path: Path) -> tuple[list[str], float]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "unqover", *argv], cwd=tmp_path, env=unreachable_env(tmp_path),
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 2, done.stderr[-3000:]
    return done.stderr.strip().splitlines(), time.monotonic() - started


@pytest.mark.slow  # a subprocess with the network refused
def test_an_unreachable_hub_is_one_line_at_once(qa_model, tmp_path):
    from unqover.lexicon.upstream import UPSTREAM_SHA256

    first = next(iter(UPSTREAM_SHA256))
    argv = ["probe", str(qa_model), "--bias", "religion", "--limit", "2", "--output", str(tmp_path / "run")]
    lines, seconds = run_unreachable(argv, tmp_path)
    assert lines == [
        "unqover: error: no dataset to probe: no local build in datasets/unqover/religion; the Hugging Face Hub "
        "cannot be reached (connection refused); could not download the UnQover word lists "
        f"(http://127.0.0.1:9/word_lists/{first}: <urlopen error [Errno 111] Connection refused>). Build it with "
        "`unqover build-datasets --word-lists PATH religion`, or pass --word-lists PATH (the word_lists/ folder of "
        "https://github.com/allenai/unqover at commit 3e47969; or set UNQOVER_WORD_LISTS) or --dataset FOLDER"
    ]
    assert seconds < 25  # the libraries' retries alone took 30-50 s


@pytest.mark.slow  # a subprocess with the network refused
def test_an_unreachable_hub_model_or_dataset_is_one_line_at_once(upstream_word_lists_path, tmp_path):
    lists = ["--word-lists", str(upstream_word_lists_path), "--limit", "2", "--output", str(tmp_path / "run")]
    lines, seconds = run_unreachable(["probe", "owner/model", "--bias", "religion", *lists], tmp_path)
    assert lines == [
        "unqover: error: cannot load model 'owner/model': it is no local folder, and the Hugging Face Hub cannot be "
        "reached (connection refused); offline, give a local model folder instead (config.json, weights and "
        "tokenizer, e.g. from `hf download owner/model --local-dir DIR` on a machine with network)"
    ]
    assert seconds < 25
    lines, seconds = run_unreachable(["sample", "owner/data", "--config", "qa", "--groups", "2", "--output",
                                      str(tmp_path / "ids.parquet")], tmp_path)  # fmt: skip
    assert lines == [
        "unqover: error: could not load dataset 'owner/data' config 'qa': the Hugging Face Hub cannot be reached "
        "(connection refused): pass --dataset FOLDER (a local dataset folder), or set HF_HUB_OFFLINE=1 to use a "
        "cached copy"
    ]
    assert seconds < 25


def test_the_sigterm_handler_is_main_s_alone(tmp_path, capsys):
    """Installed while a command runs, restored after: a program that calls ``main`` keeps its own handler."""
    seen = []

    def own(signum, frame) -> None:
        seen.append(signum)

    previous = signal.signal(signal.SIGTERM, own)
    try:
        argv = [
            "lm-eval-tasks",
            "--bias",
            "eec-emotion",
            "--word-lists",
            str(tmp_path),
            "--output",
            str(tmp_path / "t"),
        ]
        assert main(argv) == 2  # --word-lists applies to the UnQover probes
        assert signal.getsignal(signal.SIGTERM) is own
    finally:
        signal.signal(signal.SIGTERM, previous)
