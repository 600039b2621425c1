"""How a `probe --precision` run says where it stopped, and `--max-time` as a bound on the whole command."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pytest

from tests.jobs.test_quick_runs_unqover import PlantedScorer
from unqover.cli import main
from unqover.errors import UnqoverError
from unqover.probes import unqover_rounds
from unqover.probes.options import parse_duration
from unqover.probes.unqover_rounds import outcome
from unqover.report.charts import escape
from unqover.scoring.sampling import DESIGN

HEADLINE = ("positional_error", "attributive_error", "mu", "eta")


# ---------------------------------------------------------------------------------------------------------------
# --max-time: a duration with its unit


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("30m", 1800), ("30min", 1800), ("1h", 3600), ("1.5h", 5400), ("0.5m", 30), ("2H", 7200)],
)
def test_max_time_takes_a_duration_with_its_unit(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("2", "needs a unit"),
        ("1.5", "needs a unit"),
        ("0s", "must be a positive duration"),
        ("0h", "must be a positive duration"),
        ("-5m", "must be a positive duration"),
        ("abc", "takes a duration with its unit"),
        ("", "takes a duration with its unit"),
        ("5d", "takes a duration with its unit"),
        ("h", "takes a duration with its unit"),
        ("nan", "takes a duration with its unit"),
        ("1h30m", "takes a duration with its unit"),
    ],
)
def test_max_time_refuses_what_is_not_a_positive_duration_with_a_unit(text, says):
    with pytest.raises(UnqoverError, match=re.escape(says)):
        parse_duration(text)


def _refused_in_one_line(argv: list[str], tmp_path: Path, capsys) -> str:
    """Run the command; it must exit 2 with one `unqover: error:` line, print nothing else and write nothing."""
    before = sorted(tmp_path.rglob("*"))
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("unqover: error: "), captured.err
    assert sorted(tmp_path.rglob("*")) == before  # nothing written (no run folder, no run.json)
    return lines[0]


@pytest.mark.parametrize(
    ("value", "says"), [("2", "needs a unit"), ("0s", "positive"), ("soon", "with its unit")]
)
def test_a_bad_max_time_is_refused_in_one_line_before_anything_loads(value, says, tmp_path, capsys):
    out = tmp_path / "out"
    argv = [
        "probe",
        str(tmp_path / "no-model"),
        "--bias",
        "religion",
        "--precision",
        "0.05",
        "--output",
        str(out),
    ]
    line = _refused_in_one_line([*argv, "--max-time", value], tmp_path, capsys)
    assert "--max-time" in line and says in line and repr(value) in line


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--max-rows", "4000"], ["--max-rows"]),
        (["--max-time", "1h"], ["--max-time"]),
        (["--max-rows", "4000", "--max-time", "30m"], ["--max-rows", "--max-time"]),
    ],
)
def test_max_rows_and_max_time_without_precision_are_refused(extra, named, tmp_path, capsys):
    # the model does not exist: the refusal must come before any model is loaded
    argv = [
        "probe",
        str(tmp_path / "no-model"),
        "--bias",
        "religion",
        "--output",
        str(tmp_path / "out"),
        *extra,
    ]
    line = _refused_in_one_line(argv, tmp_path, capsys)
    assert all(option in line for option in named) and "--precision" in line
    assert "no-model" not in line


# ---------------------------------------------------------------------------------------------------------------
# the outcome line and record


def _result(intervals: dict, declined: dict | None = None, sample: dict | None = None):
    return SimpleNamespace(
        intervals=intervals,
        declined=declined or {},
        sample={"groups": 10, "of": 100} if sample is None else sample,
    )


def test_outcome_when_the_target_is_met():
    result = _result(
        {
            "positional_error": (0.1, 0.12),
            "attributive_error": (0.2, 0.25),
            "mu": (0.3, 0.34),
            "eta": (0.4, 0.43),
        }
    )
    said = outcome(result, 0.05, "every headline interval is at most 0.0500 wide")
    assert said["outcome"] == "target met: every headline interval is at most 0.0500 wide"
    assert said["target_met"] is True and said["declined"] == {}
    assert said["widest"]["name"] == "attributive_error" and said["widest"]["width"] == pytest.approx(0.05)


def test_outcome_names_the_widest_interval_and_why_it_stopped():
    result = _result(
        {
            "positional_error": (0.1, 0.12),
            "attributive_error": (0.2, 0.23),
            "mu": (0.3, 0.3712),
            "eta": (0.4, 0.45),
        }
    )
    said = outcome(result, 0.05, "--max-rows 4,000 reached")
    assert said["outcome"] == (
        "target not met: widest interval 0.0712 (μ), target 0.0500; stopped: --max-rows 4,000 reached"
    )
    assert said["target_met"] is False and said["stopped"] == "--max-rows 4,000 reached"
    assert said["widest"] == {"name": "mu", "width": pytest.approx(0.0712)}


def test_outcome_says_which_values_are_declined_and_the_groups_they_need():
    result = _result(
        {"positional_error": (0.1, 0.12), "attributive_error": (0.2, 0.23)},
        declined={"mu": {"reason": "too few", "groups_needed": 1375}, "eta": {"reason": "too few"}},
    )
    said = outcome(result, 0.05, "--max-rows 4,000 reached")
    assert said["outcome"] == (
        "target not met: μ declined (needs 1,375 groups), η declined; stopped: --max-rows 4,000 reached"
    )
    assert said["target_met"] is False and said["widest"] is None
    assert said["declined"] == {"mu": 1375, "eta": None}


def test_outcome_when_the_whole_dataset_is_scored():
    said = outcome(
        SimpleNamespace(intervals={}, declined={}, sample=None), 0.001, "the whole dataset is scored"
    )
    assert said["outcome"].startswith("target met: every headline interval is at most 0.0010 wide")
    assert "the whole dataset is scored" in said["outcome"] and said["target_met"] is True


# ---------------------------------------------------------------------------------------------------------------
# rounds on planted scores, with a clock the test controls


@pytest.fixture(scope="module")
def religion_rows(religion_tables) -> pa.Table:
    return religion_tables["qa"]


class Clock:
    """A wall clock that moves only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class TimedScorer(PlantedScorer):
    """Planted scores that take ``per_row`` seconds of the test's clock per row."""

    def __init__(self, clock: Clock, per_row: float) -> None:
        super().__init__()
        self.clock, self.per_row = clock, per_row

    def score(self, rows: pa.Table):
        self.clock.now += self.per_row * rows.num_rows
        return super().score(rows)


def timed_rounds(
    rows,
    folder,
    monkeypatch,
    *,
    target,
    seed,
    max_rows=None,
    max_seconds=None,
    loading=0.0,
    measuring=0.0,
    per_row=0.01,
):
    """Precision rounds on planted scores: ``loading`` seconds pass before the rounds (the model and the data),
    each scored row takes ``per_row`` seconds and each measure ``measuring`` seconds."""
    from unqover.probes.base import RunOptions
    from unqover.probes.unqover_rows import measure_scores

    clock = Clock()
    monkeypatch.setattr(unqover_rounds, "clock", clock)
    run = RunOptions(seed=seed, progress=False, resamples=0, started=clock.now)
    clock.now += loading
    identity = {"probe": "religion", "selection": {"precision": target, "seed": seed, "design": DESIGN}}
    info = {"seed": seed, "design": DESIGN, "matches_design": True}

    def measure(scores):
        clock.now += measuring
        return measure_scores(rows, scores, resamples=0, seed=seed, sample_info=info)

    settings = {"max_rows": max_rows, "max_seconds": max_seconds}
    scorer = TimedScorer(clock, per_row)
    _, _, stopped = unqover_rounds.score_in_rounds(
        rows, scorer, folder, identity, run, target, settings, measure
    )
    return stopped, scorer


def test_max_time_counts_the_whole_command_not_only_scoring(religion_rows, tmp_path, monkeypatch, capsys):
    # round 0: 4,000 rows in 40 s after 50 s of loading; round 1 would add 12,000 rows (120 s): 90 + 120 > 200,
    # though the scoring alone (40 + 120 = 160 s) would fit
    stopped, scorer = timed_rounds(
        religion_rows, tmp_path / "run", monkeypatch, target=0.001, seed=1, max_seconds=200, loading=50
    )
    printed = capsys.readouterr().out
    assert scorer.rows_scored == 4000 and stopped["groups"] == 1000 and "round 1:" not in printed
    assert (
        stopped["target_met"] is False
        and stopped["widest"] is None
        and set(stopped["declined"]) == {"mu", "eta"}
    )
    why = (
        "the next round (about 120 s: 120 s scoring, 0 s measuring) would pass --max-time 200 s (90 s spent since "
        "the command started)"
    )
    assert stopped["stopped"] == why
    line = (
        re.escape("target not met: μ declined (needs ")
        + r"[\d,]+"
        + re.escape(" groups), η declined (needs ")
    )
    line += r"[\d,]+" + re.escape(f" groups); stopped: {why}")
    assert re.fullmatch(line, stopped["outcome"]) and stopped["outcome"] in printed.splitlines()


def test_max_time_allows_for_measuring(religion_rows, tmp_path, monkeypatch, capsys):
    # 40 s scoring + 30 s measuring so far; round 1: 120 s scoring + 2 x 30 s measuring: 70 + 180 > 220 (the
    # scoring ETA alone, 70 + 120 = 190, would fit)
    stopped, _ = timed_rounds(
        religion_rows, tmp_path / "run", monkeypatch, target=0.001, seed=1, max_seconds=220, measuring=30
    )
    assert stopped["groups"] == 1000 and not stopped["target_met"]
    assert stopped["stopped"].startswith(
        "the next round (about 180 s: 120 s scoring, 60 s measuring) would pass"
    )
    assert "--max-time 220 s (70 s spent since the command started)" in capsys.readouterr().out


def test_a_round_that_fits_in_max_time_is_scored(religion_rows, tmp_path, monkeypatch, capsys):
    stopped, scorer = timed_rounds(
        religion_rows, tmp_path / "run", monkeypatch, target=0.001, seed=1, max_seconds=3600, max_rows=16_000
    )
    printed = capsys.readouterr().out
    assert "round 1: 4,000 of 38,500 groups" in printed and scorer.rows_scored == 16_000
    assert stopped["stopped"] == "--max-rows 16,000 reached" and stopped["groups"] == 4000
    assert stopped["target_met"] is False and stopped["widest"]["name"] in HEADLINE
    width = stopped["widest"]["width"]
    assert width > 0.001 and stopped["outcome"].startswith(
        f"target not met: widest interval {unqover_rounds.fmt(width)} ("
    )
    assert stopped["outcome"].endswith("target 0.0010; stopped: --max-rows 16,000 reached")


def test_a_loose_target_is_met(religion_rows, tmp_path, monkeypatch, capsys):
    stopped, _ = timed_rounds(
        religion_rows, tmp_path / "run", monkeypatch, target=0.3, seed=1, max_seconds=3600
    )
    assert stopped["target_met"] is True and stopped["widest"]["width"] <= 0.3
    assert stopped["outcome"] == "target met: every headline interval is at most 0.3000 wide"
    assert stopped["outcome"] in capsys.readouterr().out.splitlines()


# ---------------------------------------------------------------------------------------------------------------
# the command line on a tiny model: printed, recorded and reported


@pytest.fixture(scope="module")
def qa_model(religion_qa_model) -> Path:
    return religion_qa_model


def _precise(model: Path, word_lists: Path, out: Path, *extra: str) -> int:
    return main(
        ["probe", str(model), "--bias", "religion", "--word-lists", str(word_lists), "--output", str(out),
         "--quiet", "--top", "2", "--batch-size", "64", "--precision", "0.01", *extra]
    )  # fmt: skip


@pytest.mark.slow
def test_a_precision_run_stopped_by_max_rows_says_the_target_was_not_met(
    qa_model, upstream_word_lists_path, tmp_path, capsys
):
    out = tmp_path / "precise"
    assert _precise(qa_model, upstream_word_lists_path, out, "--max-rows", "4000", "--max-time", "1h") == 0
    printed = capsys.readouterr().out
    results = json.loads((out / "results.json").read_text())
    selection = results["provenance"]["selection"]
    # 1,000 groups leave 3.6 expected values per γ(x, a) cell, fewer than μ and η need (whatever the model)
    assert {"mu", "eta"} <= set(results["result"]["declined"])
    assert selection["outcome"] == (
        "target not met: μ declined (needs 1,375 groups), η declined (needs 1,375 groups); "
        "stopped: --max-rows 4,000 reached"
    )
    assert selection["stopped"] == "--max-rows 4,000 reached" and selection["groups"] == 1000
    assert selection["target_met"] is False and selection["widest"] is None and selection["precision"] == 0.01
    assert selection["declined"] == {"mu": 1375, "eta": 1375}
    lines = printed.splitlines()
    assert selection["outcome"] in lines  # when the rounds stop
    assert f"precision target 0.0100: {selection['outcome']}" in lines  # with the summary
    said = f"Precision target 0.0100: {selection['outcome']}."
    assert said in (out / "report.md").read_text()
    assert escape(said) in (out / "report.html").read_text()


@pytest.mark.slow
def test_a_precision_run_stopped_by_the_wall_clock_says_why(
    qa_model, upstream_word_lists_path, tmp_path, monkeypatch, capsys
):
    # the command seems to have started three hours ago: after round 0, the next round would pass --max-time 1h
    monkeypatch.setattr(unqover_rounds, "clock", lambda: time.monotonic() + 3 * 3600)
    out = tmp_path / "precise"
    assert _precise(qa_model, upstream_word_lists_path, out, "--max-rows", "40000", "--max-time", "1h") == 0
    printed = capsys.readouterr().out
    selection = json.loads((out / "results.json").read_text())["provenance"]["selection"]
    assert selection["groups"] == 1000 and "round 1:" not in printed
    assert re.fullmatch(
        r"the next round(?:'s measuring alone)? \(about [\d,]+ s.*\) would pass --max-time 3,600 s "
        r"\(10,[\d]{3} s spent since the command started\)",
        selection["stopped"],
    )
    assert selection["outcome"].startswith("target not met: μ declined (needs 1,375 groups)")
    assert selection["outcome"].endswith(f"; stopped: {selection['stopped']}")
    assert selection["outcome"] in printed.splitlines()


def test_the_command_passes_its_start_and_max_time_to_the_run(monkeypatch, tmp_path):
    import unqover.jobs.run

    seen = {}

    def run_probe(model_id, probe, run):
        seen.update(started=run.started, settings=probe.check_settings(run.settings))

    monkeypatch.setattr(unqover.jobs.run, "run_probe", run_probe)
    before = time.monotonic()
    argv = [
        "probe",
        "m",
        "--bias",
        "religion",
        "--precision",
        "0.05",
        "--max-time",
        "1.5h",
        "--max-rows",
        "8000",
    ]
    assert main([*argv, "--output", str(tmp_path / "out")]) == 0
    assert before <= seen["started"] <= time.monotonic()
    assert seen["settings"]["max_seconds"] == 5400 and seen["settings"]["max_rows"] == 8000
