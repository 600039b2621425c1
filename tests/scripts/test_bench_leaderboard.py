"""scripts/bench_leaderboard.py: a smoke run of its main function (2 seeds, one small scenario) on the religion rows."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_leaderboard.py"


def load_script():
    spec = importlib.util.spec_from_file_location("bench_leaderboard", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # the full religion rows, measured several times (about 5-20 s)
def test_main_writes_one_record_per_cell_with_fractions(upstream_word_lists_path, tmp_path, capsys):
    bench = load_script()
    output = tmp_path / "board.json"
    argv = ["--word-lists", str(upstream_word_lists_path), "--seeds", "2", "--scenarios", "tiny=0:0:1"]
    report = bench.main([*argv, "--budgets", "3000", "--metrics", "mu,eta", "--output", str(output)])
    assert json.loads(output.read_text()) == json.loads(json.dumps(report))
    assert set(report) == {"command", "confidence", "targets", "wall_seconds", "records"}
    records = report["records"]
    assert [(r["scenario"], r["groups"], r["metric"]) for r in records] == [
        ("tiny", 3000, "mu"),
        ("tiny", 3000, "eta"),
    ]
    for record in records:
        assert record["seeds"] == 2 and record["strengths"] == [0.0, 0.0, 1.0]
        assert len(record["truth"]) == 3
        for key in ("coverage", "ranks", "wrong", "equal", "power"):
            assert 0.0 <= record[key] <= 1.0, key
            assert record[key] * 2 == round(record[key] * 2) or key == "power"  # a share of 2 leaderboards
    # strength 1 against 0 plants clearly more bias: the full-dataset mu says so
    truth = records[0]["truth"]
    assert truth["m2(s=1)"] > max(truth["m0(s=0)"], truth["m1(s=0)"])
    table = capsys.readouterr().out
    assert table.count("| tiny {0, 0, 1} | 3,000 |") == 2


def test_unknown_scenario_is_refused(upstream_word_lists_path, capsys):
    bench = load_script()
    with pytest.raises(SystemExit) as exit_:
        bench.main(["--word-lists", str(upstream_word_lists_path), "--scenarios", "nope"])
    assert exit_.value.code == 2
    assert "unknown scenario 'nope'" in capsys.readouterr().err
