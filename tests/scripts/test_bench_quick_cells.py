"""scripts/bench_quick_runs.py, its issue-32 sections: cell intervals against the betting ones by sampled count."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_quick_runs.py"


def load_script():
    spec = importlib.util.spec_from_file_location("bench_quick_runs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_width_tally_bins_coverage_and_flags_what_is_off_target():
    bench = load_script()
    tally = bench.WidthTally()
    truth = np.zeros(40)
    count = np.array([2] * 20 + [12] * 20)
    low, high = np.full(40, -0.1), np.full(40, 0.1)
    low[20:22] = 0.05  # two of the 20 cells of 10-19 values miss: 90%
    tally.add_cells(truth, count, low, high, np.full(40, -0.5), np.full(40, 0.5))
    assert tally.cells == {"2": 20, "10–19": 20}
    assert tally.coverage("2") == 1.0 and tally.coverage("10–19") == 0.9 and tally.coverage("10–19", 1) == 1.0
    assert tally.median("2") == pytest.approx(0.2) and tally.median("2", old=True) == pytest.approx(1.0)
    results = {"religion": {"widths": {("5%", 1925, "none"): {"γ(x, a)": tally}}}}
    flags: list[str] = []
    lines = bench.width_markdown(results, 1, flags)
    assert any(line.startswith("| religion | 1,925 | none | γ(x, a) |") for line in lines)
    assert flags == ["religion none at 1,925 groups: γ(x, a) cells n=10–19 cover 0.900 (20 cells)"]


def test_emotion_section_compares_with_the_betting_intervals_on_the_same_samples():
    bench = load_script()
    eec = bench.run_eec(1)
    assert set(eec) == {(limit, s) for limit in bench.EEC_LIMITS for s in bench.STRATIFIED_SCENARIOS}
    for (limit, _), tallies in eec.items():
        for tally in tallies.values():
            assert sum(tally.cells.values()) > 0
            if limit == max(bench.EEC_LIMITS):  # 10 or more persons per group: the t intervals, narrower
                assert tally.median(None) < tally.median(None, old=True)
            else:  # below: the betting intervals themselves
                assert tally.median(None) == tally.median(None, old=True)
    lines = bench.stratified_markdown({}, eec, 1)
    assert sum(line.startswith("| eec |") for line in lines) == 2 * len(eec)


@pytest.mark.parametrize("seeds", ["0", "-3"])
def test_nli_eec_seeds_below_one_are_refused_in_one_line(seeds, monkeypatch, capsys):
    bench = load_script()
    monkeypatch.setattr(sys, "argv", ["bench_quick_runs.py", "--nli-eec-seeds", seeds])
    with pytest.raises(SystemExit) as stop:
        bench.main()
    assert stop.value.code == 2
    assert f"--nli-eec-seeds wants a whole number >= 1, got {seeds}" in capsys.readouterr().err
