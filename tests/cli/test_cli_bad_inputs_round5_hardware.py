"""Issue 45's hardware cases (items 1, 2 and 18) through the real command line, offline, on tiny local models:

* ``--dtype bfloat16`` on a CPU where a bf16 matrix product is slower than fp32 (no bf16 matrix units: AVX2 only)
  warns in one line, with the measured ratio, before the model loads, and the run goes on; fp32 runs and GPU runs
  measure nothing. The decision is tested on injected measurements (any test host), the real probe on this host's;
* a causal-LM run prints the tokens per second its engine ran at and records them in its provenance; a QA run,
  which counts no tokens, does neither;
* a run projected to take an hour or more says so once its first batches are timed: rows, inputs, tokens (causal
  LMs), the rate and how it was measured, and a quick run's command.

Companions: ``tests/cli/test_cli_bad_run_inputs.py`` (a long QA run's projection), ``tests/scoring/test_scoring_runner.py``.
"""

from __future__ import annotations

import json
import re
import time

import numpy as np
import pyarrow.parquet as pq
import pytest

from tests.jobs.test_run_validates_before_writing import models, probe_args, religion  # noqa: F401 (fixtures)
from unqover.cli import main
from unqover.scoring import cpu_bf16
from unqover.scoring.cpu_bf16 import Bf16Speed, slow_bfloat16_line, warn_slow_bfloat16

#: an AVX2-only CPU as issue 45 measured it: 1.1 GFLOP/s in bf16 against 45 in fp32
AVX2_ONLY = Bf16Speed("AVX2", (), 2, fp32_gflops=45.0, bf16_gflops=1.1)
#: a CPU with AMX tiles
AMX = Bf16Speed("AVX512", ("AMX", "AVX-512 BF16"), 2, fp32_gflops=120.0, bf16_gflops=450.0)

SLOW_BF16 = (
    "unqover: warning: --dtype bfloat16 is slower than float32 on this CPU (AVX2, no bf16 matrix units, 2 threads): "
    "a bf16 matrix product ran at 0.024x the speed of float32 here (1.1 against 45 GFLOP/s, measured just now); "
    "leave --dtype out for float32, the reference and the faster here"
)


def test_bf16_slower_than_fp32_is_said_with_the_measured_ratio():
    assert slow_bfloat16_line(AVX2_ONLY) == SLOW_BF16
    assert AVX2_ONLY.ratio == pytest.approx(1.1 / 45)


def test_bf16_at_least_as_fast_as_fp32_says_nothing():
    assert slow_bfloat16_line(AMX) is None
    assert AMX.features() == "AVX512, bf16 units: AMX, AVX-512 BF16, 2 threads"
    assert slow_bfloat16_line(Bf16Speed("AVX512", (), 2, 50.0, 50.0)) is None  # equal speed: no warning


def test_only_cpu_runs_in_bf16_measure(monkeypatch, capsys):
    calls = []

    def measured():
        calls.append(1)
        return AVX2_ONLY

    assert warn_slow_bfloat16("float32", "cpu", measured) is None
    assert warn_slow_bfloat16("auto", "cpu", measured) is None  # auto on a CPU is fp32
    monkeypatch.setattr("unqover.scoring.models.choose_device", lambda device: "cuda")
    assert warn_slow_bfloat16("bfloat16", "auto", measured) is None  # a GPU run
    assert calls == [] and capsys.readouterr().err == ""
    monkeypatch.undo()
    assert warn_slow_bfloat16("bfloat16", "cpu", measured) is AVX2_ONLY
    assert capsys.readouterr().err == SLOW_BF16 + "\n"
    assert calls == [1]


def test_the_real_probe_on_this_host_is_cheap_cached_and_agrees_with_torch():
    import torch

    cpu_bf16.measure.cache_clear()
    began = time.perf_counter()
    speed = cpu_bf16.measure()
    took = time.perf_counter() - began
    assert took < 2.0, took  # an emulated bf16 product of this shape takes about 0.2 s on an AVX2-only CPU
    assert cpu_bf16.measure() is speed  # once per process
    assert speed.capability == torch.backends.cpu.get_cpu_capability()
    assert speed.threads == torch.get_num_threads()
    assert np.isfinite(speed.fp32_gflops) and speed.fp32_gflops > 0
    assert np.isfinite(speed.bf16_gflops) and speed.bf16_gflops > 0
    amx = getattr(torch.cpu, "_is_amx_tile_supported", lambda: False)()
    assert ("AMX" in speed.units) == amx
    line = slow_bfloat16_line(speed)
    assert (line is None) == (speed.bf16_gflops >= speed.fp32_gflops)


def test_a_bf16_cpu_run_on_a_slow_cpu_warns_before_the_model_loads(
    models,  # noqa: F811
    upstream_word_lists_path,
    tmp_path,
    monkeypatch,
    capsys,
):
    import unqover.scoring.models

    order = []
    monkeypatch.setattr(cpu_bf16, "_SAID", set())  # said once a process: this test's process may have said it
    monkeypatch.setattr(cpu_bf16, "measure", lambda: order.append("measured") or AVX2_ONLY)
    loading = unqover.scoring.models.load_model
    monkeypatch.setattr(
        unqover.scoring.models, "load_model", lambda *a, **k: order.append("loaded") or loading(*a, **k)
    )
    argv = probe_args(models["gpt2"], upstream_word_lists_path, "--dtype", "bfloat16")
    assert main([*argv, "--output", str(tmp_path / "run")]) == 0
    err = capsys.readouterr().err
    assert err.splitlines().count(SLOW_BF16) == 1, err
    assert order == ["measured", "loaded"]
    cpu_bf16.warn_slow_bfloat16("bfloat16", "cpu")  # a sweep's next model: measured (cached), not said again
    assert SLOW_BF16 not in capsys.readouterr().err


def test_an_fp32_run_measures_nothing(models, upstream_word_lists_path, tmp_path, monkeypatch, capsys):  # noqa: F811
    def never():
        raise AssertionError("an fp32 run measured bf16")

    monkeypatch.setattr(cpu_bf16, "measure", never)
    argv = probe_args(models["gpt2"], upstream_word_lists_path)
    assert main([*argv, "--output", str(tmp_path / "run")]) == 0
    assert "bfloat16" not in capsys.readouterr().err


def tokens_of_the_run(model_dir, rows, ids, batch_size: int) -> int:
    """The tokens the shared computation runs for the rows ``ids`` in batches of ``batch_size`` inputs (one
    chunk), replayed from the runner's plan and the packed token tree's shape (rows × width)."""
    import pyarrow as pa

    from unqover.scoring.causal import CausalScorer
    from unqover.scoring.models import load_model
    from unqover.scoring.run_plan import plan_chunks
    from unqover.scoring.shared_prefix import packed_shape

    chosen = rows.filter(pa.compute.is_in(rows["id"], value_set=pa.array(ids)))
    scorer = CausalScorer(load_model(str(model_dir), device="cpu", dtype="float32"))
    plan = plan_chunks(chosen, scorer)
    total = 0
    for lo in range(0, plan.num_inputs, batch_size):
        batch = chosen.take(plan.representative[lo : lo + batch_size])
        requests = scorer.encode(batch)
        prompts, answers, answer_prompt = requests.prompts, requests.answers, requests.answer_prompt
        packed, width = packed_shape(prompts, answers, answer_prompt, requests.groups)
        total += packed * width
    return total


def test_a_causal_run_prints_and_records_its_tokens_per_second(
    models,  # noqa: F811
    religion,  # noqa: F811
    upstream_word_lists_path,
    tmp_path,
    capsys,
):
    run = tmp_path / "run"
    argv = probe_args(models["gpt2"], upstream_word_lists_path, "--batch-size", "4")
    assert main([*argv, "--output", str(run)]) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if "tokens/s" in line]
    assert len(said) == 1, said
    match = re.fullmatch(
        r"unqover: the model ran ([\d,]+) tokens in ([\d.]+) s of scoring: ([\d,]+) tokens/s on this host \(cpu, "
        r"float32, \d+ threads\); a run of N tokens takes about N / that many seconds",
        said[0],
    )
    assert match, said[0]
    record = json.loads((run / "results.json").read_text())["provenance"]["throughput"]
    ids = pq.read_table(run / "predictions.parquet", columns=["id"])["id"].to_pylist()
    assert record["tokens"] == tokens_of_the_run(models["gpt2"], religion, ids, 4)
    assert f"{record['tokens']:,}" == match[1]
    assert record["tokens_per_second"] == pytest.approx(
        record["tokens"] / record["scoring_seconds"], rel=1e-2
    )
    report = (run / "report.md").read_text(encoding="utf-8")
    assert re.search(r"throughput\.tokens\\?_per\\?_second", report)  # in the report's provenance


def test_a_qa_run_counts_no_tokens(models, upstream_word_lists_path, tmp_path, capsys):  # noqa: F811
    run = tmp_path / "run"
    assert main([*probe_args(models["qa"], upstream_word_lists_path), "--output", str(run)]) == 0
    assert "tokens/s" not in capsys.readouterr().err
    assert "throughput" not in json.loads((run / "results.json").read_text())["provenance"]


def test_a_long_causal_run_projects_its_time_and_tokens_from_its_first_batches(
    models,  # noqa: F811
    upstream_word_lists_path,
    tmp_path,
    monkeypatch,
    capsys,
):
    import unqover.jobs.projection

    monkeypatch.setattr(unqover.jobs.projection, "LONG_RUN_SECONDS", 0.0)  # every run is "long"
    argv = probe_args(models["gpt2"], upstream_word_lists_path, "--batch-size", "1")
    assert main([*argv, "--output", str(tmp_path / "run")]) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if "to score" in line]
    assert len(said) == 1, said
    measured, advice = said[0].split("; ")
    match = re.fullmatch(
        r"unqover: about .+ to score 8 rows on the CPU: (\d+) inputs, about ([\d,]+) tokens at [\d,]+ tokens/s, at "
        r"[\d.,]+ inputs/s as measured over batches 2-4 of this run \(3 inputs in [\d.]+ s\)",
        measured,
    )
    assert match, said[0]
    assert int(match[1]) <= 8  # inputs: rows with equal text are scored once
    assert int(match[2].replace(",", "")) > int(match[1])  # every input is several tokens
    # a --limit run already: a smaller one is the quicker
    assert (
        advice
        == "a GPU is far faster, or for a quick estimate of the same numbers run a smaller --limit than 2 (wider intervals)"
    )


def test_a_short_run_projects_nothing(monkeypatch):
    from unqover.jobs.projection import projection_line
    from unqover.scoring.runner import Timed

    timed = Timed(inputs=192, seconds=9.6, batches=3, first=2)  # 20 inputs/s
    assert projection_line(timed, 71_000, 71_000, "cpu", "--limit N") is None  # 59 min
    line = projection_line(timed, 73_000, 73_000, "cpu", "--limit N")  # 61 min
    assert line == (
        "unqover: about 1 h to score 73,000 rows on the CPU: 73,000 inputs, at 20 inputs/s as measured over "
        "batches 2-4 of this run (192 inputs in 9.6 s); a GPU is far faster, or for a quick estimate of the same "
        "numbers add --limit N"
    )


def test_an_hour_is_an_hour():
    from unqover.format import fmt_duration

    assert fmt_duration(3650) == "1 h"  # was "1 day"
    assert fmt_duration(86400) == "1 day"


@pytest.mark.slow
def test_the_real_probe_finds_bf16_slower_where_the_cpu_cannot_run_it(
    models,  # noqa: F811
    upstream_word_lists_path,
    tmp_path,
):
    """oneDNN held to AVX2 (``ONEDNN_MAX_CPU_ISA``) emulates bf16, as an AVX2-only CPU does: a bf16 CPU run there
    measures it, warns before the model loads, and still runs."""
    import os
    import platform
    import subprocess
    import sys

    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("ONEDNN_MAX_CPU_ISA=AVX2 holds x86 CPUs only")
    env = {**os.environ, "ONEDNN_MAX_CPU_ISA": "AVX2", "ATEN_CPU_CAPABILITY": "avx2"}
    argv = probe_args(
        models["gpt2"], upstream_word_lists_path, "--dtype", "bfloat16", "--output", str(tmp_path / "run")
    )
    done = subprocess.run(
        [sys.executable, "-m", "unqover", *argv], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "--dtype bfloat16 is slower" in line]
    assert len(said) == 1, done.stderr
    assert re.fullmatch(
        r"unqover: warning: --dtype bfloat16 is slower than float32 on this CPU \(AVX2, [^)]+\): a bf16 matrix "
        r"product ran at [\d.e-]+x the speed of float32 here \([\d.e+-]+ against [\d.e+-]+ GFLOP/s, measured just "
        r"now\); leave --dtype out for float32, the reference and the faster here",
        said[0],
    ), said[0]
    assert (tmp_path / "run" / "results.json").is_file()
