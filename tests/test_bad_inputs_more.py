"""More bad inputs (issue 29, item 6), each through the real command line (``unqover.cli.main``), offline: every one
ends in exit code 2 and one ``unqover: error: ...`` line (the exact message checked), or works.

The catalogues these join: ``tests/test_bad_inputs.py`` (options, outputs, models), ``tests/test_bad_inputs_run.py``
(runs) and ``tests/test_bad_inputs_data.py`` (data), whose shared ``refused`` check this module uses.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from test_bad_inputs_data import refused
from unqover.probes import precision

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
        intervals={name: (0.1, 0.4) for name in precision.HEADLINE}, declined={}, sample={}
    )
    assert precision.next_budget(1000, result, 1e-300, 10**9) == 4000
    assert (
        precision.next_budget(1000, result, 0.3, 10**9) == 1250
    )  # (0.3 / 0.3)² · 1.2 < 1.25: the smallest step
    assert precision.next_budget(1000, result, 0.2, 10**9) == math.ceil(1000 * ((0.4 - 0.1) / 0.2) ** 2 * 1.2)
    declined = {"eta": {"groups_needed": math.inf}}
    result = SimpleNamespace(intervals={}, declined=declined, sample={})
    assert precision.next_budget(1000, result, 1e-300, 10**9) == 4000


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
    assert line == f"unqover {argv[0]}: error: {EMPTY_OUTPUT}"
    assert list(tmp_path.iterdir()) == []


def test_lm_eval_tasks_groups_beyond_the_dataset_names_groups(upstream_word_lists_path, tmp_path, capsys):
    argv = ["lm-eval-tasks", "--bias", "religion", "--word-lists", str(upstream_word_lists_path)]
    line = refused([*argv, "--groups", "99999999999", "--output", str(tmp_path / "tasks")], capsys, "")
    assert line == (
        "unqover: error: --groups 99,999,999,999 is more than the dataset's 38,500 groups: give --groups 38500 or "
        "fewer"
    )
    assert not (tmp_path / "tasks").exists()
