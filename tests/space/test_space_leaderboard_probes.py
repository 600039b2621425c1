"""The Space's Leaderboard tab over emotion runs: by default it ranks the runs the probe's leaderboard ranks (full
runs; Cramér's V from a sample has no covering interval), with the numbers `unqover leaderboard` gives."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.jobs.test_jobs_leaderboard_full_nli_emotion import emotion_sweeps  # noqa: F401
from unqover.cli import main
from unqover.space import results
from unqover.space.app import Space

pytestmark = pytest.mark.slow

PROBE = "eec-emotion"


@pytest.fixture(scope="module")
def root(emotion_sweeps, tmp_path_factory) -> Path:  # noqa: F811
    """A results folder with the two models' full runs (full-0, full-1) and quick runs (quick-0, quick-1)."""
    root = tmp_path_factory.mktemp("space-emotion-board")
    for kind in ("full", "quick"):
        for k, run in enumerate(sorted(emotion_sweeps[kind].glob(f"*/{PROBE}/results.json"))):
            shutil.copytree(run.parent, root / f"{kind}-{k}")
    return root


def test_the_default_ranks_full_runs_only_with_the_clis_numbers(root, tmp_path):
    space = Space(cache_dir=tmp_path / "cache", results_root=root, results_repos=())
    status, update = space.leaderboard_runs("", PROBE)
    assert update["choices"] == ["full-0", "full-1", "quick-0", "quick-1"]
    assert update["value"] == ["full-0", "full-1"] and "2 of them ranked" in status

    runs, where = space._runs("")
    board = results.rank_runs(runs, [], where, PROBE)
    output = tmp_path / "board.json"
    assert main(["leaderboard", str(root / "full-0"), str(root / "full-1"), "--output", str(output)]) == 0
    cli = json.loads(output.read_text())
    assert [(m["value"], m["rank"], m["interval"]) for m in board["models"]] == [
        (m["value"], m["rank"], m["interval"]) for m in cli["models"]
    ]
    assert [m["run"] for m in board["models"]] == [Path(m["run"]).name for m in cli["models"]]
