"""The first ten minutes at the command line: a mistyped option gets its command's usage and the closest option;
SIGTERM (``kill PID``) is handled as Ctrl-C: what is scored is kept and the same command resumes.

The in-process companions (word lists, checks before the model loads, quick-run sizes): tests/test_first_minutes.py.
"""

from __future__ import annotations

import pytest

from unqover.cli import main


def argument_error(argv: list[str], capsys) -> list[str]:
    """The lines argparse prints for a refused command line (exit code 2)."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit:
        main(argv)
    assert exit.value.code == 2
    return capsys.readouterr().err.splitlines()


def test_a_mistyped_option_gets_the_command_s_usage_and_a_suggestion(capsys):
    lines = argument_error(["probe", "some/model", "--bias", "religion", "--limt", "200"], capsys)
    assert lines[0].startswith("usage: unqover probe ")
    assert lines[-1] == "unqover probe: error: unrecognized arguments: --limt 200 (did you mean --limit?)"
    assert not any(line.startswith("usage: unqover [-h]") for line in lines)


def test_several_mistyped_options_each_get_their_suggestion(capsys):
    lines = argument_error(["probe", "m", "--bias", "religion", "--limt=200", "--quite"], capsys)
    assert lines[-1] == (
        "unqover probe: error: unrecognized arguments: --limt=200 --quite (did you mean --limit for --limt, "
        "--quiet for --quite?)"
    )


def test_an_unknown_argument_of_another_command_gets_that_command_s_usage(capsys):
    lines = argument_error(["measure", "p.parquet", "--bais", "religion"], capsys)
    assert lines[0].startswith("usage: unqover measure ")
    assert (
        lines[-1] == "unqover measure: error: unrecognized arguments: --bais religion (did you mean --bias?)"
    )
    lines = argument_error(
        ["sample", "d", "--config", "qa", "--groups", "2", "--output", "o", "--zzz"], capsys
    )
    assert lines[0].startswith("usage: unqover sample ")
    assert lines[-1] == "unqover sample: error: unrecognized arguments: --zzz"
