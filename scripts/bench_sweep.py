"""Benchmark: the overhead of a sweep of N models against N separate runs of the same models and options.

    python scripts/bench_sweep.py --word-lists ../shared/data/unqover_word_lists            # 4 tiny models
    python scripts/bench_sweep.py --word-lists DIR --models 8 --limit 800 --output sweep.json

N tiny BERT QA models (the tests' ``tiny_models.bert_qa``, seeds 0..N-1, knowing every word of the religion ``qa``
rows) are built under a temporary folder. Then, each as its own process, as a user runs them:

* the sweep:   ``unqover probe M1 ... MN --bias religion --limit L --seed 0 --output DIR/sweep --quiet`` (one
  process: the library imported once, each model loaded, scored and freed in turn, then the leaderboard);
* the singles: ``unqover probe Mi --bias religion --limit L --seed 0 --output DIR/single/i --quiet``, one after the
  other.

Printed: a Markdown table of the wall-clock seconds of both (total and per model) and the sweep's overhead per model
(sweep − singles, over N: negative when the sweep saves time, since its process starts and imports once), with
the exact commands; ``--output`` writes the numbers as JSON. Both write the same predictions (checked).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tiny_qa_models(folder: Path, count: int, word_lists: Path) -> list[Path]:
    """``count`` tiny QA models (seeds 0..count-1) that know every word of the religion ``qa`` rows."""
    sys.path.insert(0, str(ROOT / "tests" / "helpers"))
    import pyarrow as pa

    import tiny_models
    from unqover.generate.unqover import make_plan
    from unqover.lexicon import WordLists

    rows = pa.Table.from_batches(list(make_plan(WordLists(word_lists), "religion", "qa").batches()))
    texts = sorted(set(rows["context"].to_pylist()) | set(rows["question"].to_pylist()))
    return [tiny_models.bert_qa(folder / f"qa-{seed}", texts, seed=seed) for seed in range(count)]


def probe_command(models: list[str], output: str, limit: int, word_lists: str, bias: str) -> list[str]:
    """``unqover probe MODEL... --bias B --limit L --seed 0 --output DIR --quiet`` (as ``python -m unqover``)."""
    options = ["--bias", bias, "--word-lists", word_lists, "--limit", str(limit), "--seed", "0"]
    return [sys.executable, "-m", "unqover", "probe", *models, *options, "--output", output, "--quiet"]


def timed(argv: list[str]) -> float:
    """Seconds that ``argv`` ran; exits with its output when it fails."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])),
    }
    env.setdefault("HF_HUB_OFFLINE", "1")
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"bench_sweep: {shlex.join(argv)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return seconds


def same_predictions(sweep: Path, singles: list[Path], models: list[Path]) -> bool:
    """Whether the sweep's predictions of each model equal its single run's (ids and scores)."""
    import pyarrow.parquet as pq

    for model, single in zip(models, singles, strict=True):
        a = pq.read_table(sweep / model.name / "religion" / "predictions.parquet").sort_by("id")
        b = pq.read_table(single / "predictions.parquet").sort_by("id")
        if a.select(["id", "score_1", "score_2"]) != b.select(["id", "score_1", "score_2"]):
            return False
    return True


def table(record: dict) -> str:
    """The Markdown table of a record, with the commands."""
    from unqover.format import fmt, fmt_signed

    n = record["models"]
    lines = [
        f"Sweep of {n} tiny QA models against {n} separate runs (religion, --limit {record['limit']} groups):",
        "",
        "| runs | total (s) | per model (s) |",
        "|---|---:|---:|",
        f"| one sweep | {fmt(record['sweep_seconds'], 1)} | {fmt(record['sweep_seconds'] / n, 1)} |",
        f"| {n} single runs | {fmt(record['single_seconds'], 1)} | {fmt(record['single_seconds'] / n, 1)} |",
        f"| sweep overhead (sweep − singles) | {fmt_signed(record['overhead_seconds'], 1)} | "
        f"{fmt_signed(record['overhead_per_model'], 1)} |",
        "",
        f"Same predictions: {'yes' if record['same_predictions'] else 'NO'}.",
        "",
        f"Sweep: `{record['sweep_command']}`",
        "",
        f"Each single run: `{record['single_command']}`",
        "",
        f"Benchmark: `{record['command']}`",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--word-lists", type=Path, required=True, help="the upstream UnQover word lists folder"
    )
    parser.add_argument(
        "--models", type=int, default=4, help="N: tiny models to sweep (default: %(default)s)"
    )
    parser.add_argument("--limit", type=int, default=400, help="groups per quick run (default: %(default)s)")
    parser.add_argument("--output", type=Path, help="also write the numbers as JSON")
    parser.add_argument(
        "--workdir", type=Path, help="build the models and runs here (default: a temporary folder)"
    )
    args = parser.parse_args(argv)
    if args.models < 1 or args.limit < 1:
        parser.error("--models and --limit must be at least 1")
    command = shlex.join(["python", "scripts/bench_sweep.py", *(sys.argv[1:] if argv is None else argv)])
    with tempfile.TemporaryDirectory() as scratch:
        work = args.workdir or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        models = tiny_qa_models(work / "models", args.models, args.word_lists)
        lists = str(args.word_lists)
        sweep_argv = probe_command(
            [str(m) for m in models], str(work / "sweep"), args.limit, lists, "religion"
        )
        sweep_seconds = timed(sweep_argv)
        singles = [work / "single" / str(k) for k in range(len(models))]
        single_seconds = sum(
            timed(probe_command([str(m)], str(out), args.limit, lists, "religion"))
            for m, out in zip(models, singles, strict=True)
        )
        same = same_predictions(work / "sweep", singles, models)
    overhead = sweep_seconds - single_seconds
    record = {
        "command": command,
        "models": args.models,
        "limit": args.limit,
        "sweep_seconds": sweep_seconds,
        "single_seconds": single_seconds,
        "overhead_seconds": overhead,
        "overhead_per_model": overhead / args.models,
        "same_predictions": same,
        "sweep_command": f"unqover probe M1 ... M{args.models} --bias religion --word-lists DIR --limit {args.limit} "
        "--seed 0 --output DIR/sweep --quiet",
        "single_command": f"unqover probe Mi --bias religion --word-lists DIR --limit {args.limit} --seed 0 "
        "--output DIR/single/i --quiet",
    }
    print(table(record))
    if args.output:
        args.output.write_text(json.dumps(record, indent=2) + "\n")
    return record


if __name__ == "__main__":
    main()
