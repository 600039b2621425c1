"""scripts/bench_sweep.py: a smoke run of its main function (2 tiny models, a small quick run)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_sweep.py"


def load_script():
    spec = importlib.util.spec_from_file_location("bench_sweep", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # three `unqover probe` processes and two tiny models (about 30-60 s)
def test_main_times_a_sweep_against_single_runs(upstream_word_lists_path, tmp_path, capsys):
    bench = load_script()
    output = tmp_path / "sweep.json"
    argv = ["--word-lists", str(upstream_word_lists_path), "--models", "2", "--limit", "40"]
    record = bench.main([*argv, "--workdir", str(tmp_path / "work"), "--output", str(output)])
    assert json.loads(output.read_text()) == record
    assert record["models"] == 2 and record["limit"] == 40 and record["same_predictions"] is True
    assert record["sweep_seconds"] > 0 and record["single_seconds"] > 0
    assert record["overhead_per_model"] == pytest.approx(
        (record["sweep_seconds"] - record["single_seconds"]) / 2
    )
    for k in range(2):  # every single run and the sweep's run of each model were written
        assert (tmp_path / "work" / "single" / str(k) / "results.json").is_file()
        assert (tmp_path / "work" / "sweep" / f"qa-{k}" / "religion" / "results.json").is_file()
    assert (tmp_path / "work" / "sweep" / "index.html").is_file()
    table = capsys.readouterr().out
    assert "| one sweep |" in table and "| 2 single runs |" in table and "unqover probe M1 ... M2" in table


def test_bad_sizes_are_refused(upstream_word_lists_path, capsys):
    bench = load_script()
    with pytest.raises(SystemExit) as exit_:
        bench.main(["--word-lists", str(upstream_word_lists_path), "--models", "0"])
    assert exit_.value.code == 2 and "at least 1" in capsys.readouterr().err
