"""Commands that hand their options to a job by name (``cli._as_parsed``) give every parameter the job takes: an
option renamed on one side alone would otherwise leave the job at its default, silently ignoring what was typed."""

from __future__ import annotations

import argparse
import inspect

import pytest

from unqover.cli import build_parser
from unqover.jobs.lm_eval_tasks import write_task_folders
from unqover.jobs.publish_results import publish_results
from unqover.jobs.sample import write_sample


def command_destinations(command: str) -> set[str]:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    return {action.dest for action in commands[command]._actions} | set(commands[command]._defaults)


@pytest.mark.parametrize(
    ("command", "job"),
    [("sample", write_sample), ("lm-eval-tasks", write_task_folders), ("publish-results", publish_results)],
)
def test_every_parameter_of_the_job_is_an_option_of_its_command(command, job):
    missing = set(inspect.signature(job).parameters) - command_destinations(command)
    assert not missing, f"`unqover {command}` gives {job.__name__} no {sorted(missing)}"
