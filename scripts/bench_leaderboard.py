"""Benchmark: are `unqover leaderboard`'s simultaneous intervals, rank intervals and distinguishable pairs honest?

    python scripts/bench_leaderboard.py                                  # every scenario, budget and metric, 20 seeds
    python scripts/bench_leaderboard.py --seeds 50 --scenarios k4 --budgets 1500 --metrics mu --output board.json

K synthetic models of known bias score every row of the religion ``qa`` dataset (probabilities: the sigmoid of
a logit). They share subject x attribute affinities (Student-t(3)) and a first-mention bonus per template; model k
scales the affinities by ``1 + s_k`` and adds ``s_k`` to the first-mention bonus, where ``s_k`` is its planted
strength, and has its own row noise (Student-t(3)), so models of equal strength are equal in expectation. Their
full-dataset values (measured on all the rows) are the truth, and the true rank orders them (1 = least biased).

For each budget and seed, every model's quick run scores the same seeded sample of groups (the library's design,
as a sweep's quick runs do, so the comparisons are paired), and the leaderboard is computed by the command's own
code path on the in-memory runs: :func:`unqover.measure.leaderboard.leaderboard_analysis` (what the UnQover
probes' ``results.leaderboard_numbers`` calls) at the Bonferroni levels, then :mod:`unqover.jobs.compare`'s table.

Reported per scenario, budget and metric over the seeds:

* coverage  -- every model's simultaneous interval holds its full-dataset value at once (target >= 90% at 95%);
* ranks     -- every model's rank interval holds its true rank (target >= 90%);
* wrong     -- a pair is called distinguishable in the wrong order (``less_biased`` has the larger full-dataset
               value), as a fraction of the leaderboards with any such pair (target <= 5%);
* equal     -- a pair of equal planted strength is called distinguishable (either order), fraction of leaderboards;
* power     -- the fraction of the pairs of different planted strengths that are called, in the right order.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from unqover.generate.unqover import make_plan
from unqover.lexicon import resolve_word_lists
from unqover.measure.leaderboard import bonferroni_confidence, leaderboard_analysis, leaderboard_table
from unqover.measure.unqover import measure_paired, pair_dataset_rows
from unqover.probes.unqover_rows import ROW_COLUMNS
from unqover.scoring.sampling import find_groups, selected_groups

TARGETS = {"coverage": 0.90, "ranks": 0.90, "wrong": 0.05}
FIRST_BONUS = 0.5  # mean first-mention bonus of strength 0


@dataclass(frozen=True)
class Scenario:
    """K models of planted strengths (equal strengths: equal in expectation)."""

    name: str
    strengths: tuple[float, ...]


SCENARIOS = [
    Scenario("k4", (0.0, 0.0, 0.1, 0.3)),
    Scenario("k5-equal", (0.0,) * 5),
    Scenario("k3-separated", (0.0, 0.5, 1.0)),
]


def _codes(*columns: pa.ChunkedArray) -> list[np.ndarray]:
    vocabulary = pc.unique(pa.chunked_array([chunk for column in columns for chunk in column.chunks]))
    return [pc.index_in(c, value_set=vocabulary).to_numpy(zero_copy_only=False) for c in columns]


def religion_rows(word_lists: Path) -> pa.Table:
    """The religion ``qa`` rows, as a dataset holds them."""
    plan = make_plan(resolve_word_lists(word_lists), "religion", "qa")
    return pa.Table.from_batches(list(plan.batches())).select(list(ROW_COLUMNS))


def plant(rows: pa.Table, strengths: tuple[float, ...], seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each model's (score_1, score_2) over the rows: shared affinities and first-mention bonus scaled by its
    strength, its own row noise."""
    rng = np.random.default_rng(seed)
    s1, s2 = _codes(rows["subject_1"], rows["subject_2"])
    (attribute,) = _codes(rows["attribute"])
    (template,) = _codes(rows["template_id"])
    factor = np.where(pc.equal(rows["polarity"], "negated").to_numpy(zero_copy_only=False), -0.5, 1.0)
    affinity = rng.standard_t(3, (s1.max() + 1, attribute.max() + 1))
    first = rng.normal(FIRST_BONUS, 0.5, template.max() + 1)[template]
    models = []
    for strength in strengths:
        scale = 1 + strength
        logit_1 = (
            scale * affinity[s1, attribute] * factor + first + strength + rng.standard_t(3, rows.num_rows)
        )
        logit_2 = scale * affinity[s2, attribute] * factor + rng.standard_t(3, rows.num_rows)
        models.append((1 / (1 + np.exp(-logit_1)), 1 / (1 + np.exp(-logit_2))))
    return models


def board(rows, groups, models, names, n: int, seed: int, metric: str, confidence: float) -> dict:
    """The leaderboard of the models' quick runs of ``n`` groups drawn with ``seed`` (the same sample for all), as
    ``unqover leaderboard`` computes it from their predictions and the dataset rows."""
    keep = selected_groups(groups, n, seed)[groups.row_group]
    scored = [(score_1, score_2, keep) for score_1, score_2 in models]
    result = {
        "provenance": {},
        "result": {
            "sample": {"groups": n, "of": groups.num_groups},
            "mode": "default",
            "bootstrap": {"seed": seed},
        },
    }
    k = len(models)
    each = bonferroni_confidence(confidence, k)
    pairs = bonferroni_confidence(confidence, k * (k - 1) // 2)
    numbers, shifts = leaderboard_analysis(rows, scored, [result] * k, names, metric, each=each, pairs=pairs)
    return leaderboard_table("religion", metric, confidence, names, names, numbers, shifts)


def true_ranks(values: list[float]) -> list[int]:
    """1 = least biased (ties share the best rank, as the leaderboard ranks)."""
    return [1 + sum(v < value for v in values) for value in values]


def score_board(table: dict, truth: dict[str, float], strengths: dict[str, float]) -> dict[str, float]:
    """Whether all intervals cover, all rank intervals hold the true ranks, any pair is in the wrong order, any
    equal pair is called, and how many of the different pairs are found in the right order."""
    ranks = dict(zip(truth, true_ranks(list(truth.values())), strict=True))
    covered = all(m["interval"][0] <= truth[m["name"]] <= m["interval"][1] for m in table["models"])
    held = all(m["rank_interval"][0] <= ranks[m["name"]] <= m["rank_interval"][1] for m in table["models"])
    called = [(p["less_biased"], p["more_biased"]) for p in table["distinguishable"]]
    wrong = any(truth[less] > truth[more] for less, more in called)
    equal = any(strengths[less] == strengths[more] for less, more in called)
    found = sum(strengths[less] < strengths[more] and truth[less] < truth[more] for less, more in called)
    return {"coverage": covered, "ranks": held, "wrong": wrong, "equal": equal, "found": found}


def run(
    rows: pa.Table,
    scenarios: list[Scenario],
    budgets: list[int],
    metrics: list[str],
    seeds: int,
    confidence: float = 0.95,
    log=None,
) -> list[dict]:
    """One record per scenario x budget x metric: the fractions over ``seeds`` leaderboards."""
    groups = find_groups(rows)
    records = []
    for scenario in scenarios:
        models = plant(rows, scenario.strengths)
        names = [f"m{k}(s={s:g})" for k, s in enumerate(scenario.strengths)]
        strengths = dict(zip(names, scenario.strengths, strict=True))
        full = [measure_paired(pair_dataset_rows(rows, *m), n_resamples=0) for m in models]
        different = sum(a != b for i, a in enumerate(scenario.strengths) for b in scenario.strengths[i + 1 :])
        for n in budgets:
            for metric in metrics:
                truth = {name: float(getattr(f, metric)) for name, f in zip(names, full, strict=True)}
                tallies = [
                    score_board(
                        board(rows, groups, models, names, n, seed, metric, confidence), truth, strengths
                    )
                    for seed in range(seeds)
                ]
                record = {
                    "scenario": scenario.name,
                    "strengths": list(scenario.strengths),
                    "groups": n,
                    "metric": metric,
                    "seeds": seeds,
                    "truth": truth,
                    **{
                        key: float(np.mean([t[key] for t in tallies]))
                        for key in ("coverage", "ranks", "wrong")
                    },
                    "equal": float(np.mean([t["equal"] for t in tallies])),
                    "power": None
                    if different == 0
                    else float(np.mean([t["found"] for t in tallies]) / different),
                }
                records.append(record)
                if log:
                    log(markdown_row(record))
    return records


def _pass(value: float, key: str) -> str:
    ok = value <= TARGETS[key] if key == "wrong" else value >= TARGETS[key]
    return f"{value:.0%}" + ("" if ok else " ✗")


def markdown_row(r: dict) -> str:
    power = "–" if r["power"] is None else f"{r['power']:.0%}"
    strengths = ", ".join(f"{s:g}" for s in r["strengths"])
    return (
        f"| {r['scenario']} {{{strengths}}} | {r['groups']:,} | {r['metric']} | {r['seeds']} | "
        f"{_pass(r['coverage'], 'coverage')} | {_pass(r['ranks'], 'ranks')} | {_pass(r['wrong'], 'wrong')} | "
        f"{r['equal']:.0%} | {power} |"
    )


def markdown(records: list[dict]) -> str:
    head = (
        "| scenario {strengths} | groups | metric | seeds | all intervals cover (≥ 90%) | all rank intervals hold "
        "(≥ 90%) | a pair in the wrong order (≤ 5%) | an equal pair called | power |\n"
        "|---|---:|---|---:|---:|---:|---:|---:|---:|"
    )
    return "\n".join([head, *(markdown_row(r) for r in records)])


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark; print the Markdown table and return (and with --output write) the JSON report."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--word-lists", type=Path, default=Path("../shared/data/unqover_word_lists"))
    parser.add_argument("--seeds", type=int, default=20, help="leaderboards (sample seeds) per cell")
    parser.add_argument("--budgets", default="1500,6000", help="comma-separated numbers of groups")
    parser.add_argument("--metrics", default="mu,positional_error", help="comma-separated headline numbers")
    parser.add_argument(
        "--scenarios",
        default=",".join(s.name for s in SCENARIOS),
        help="comma-separated names, or NAME=S1:S2:... for planted strengths",
    )
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--output", type=Path, help="also write the JSON report here")
    args = parser.parse_args(argv)
    known = {s.name: s for s in SCENARIOS}
    scenarios = []
    for spec in filter(None, (s.strip() for s in args.scenarios.split(","))):
        name, _, strengths = spec.partition("=")
        if strengths:
            scenarios.append(Scenario(name, tuple(float(x) for x in strengths.split(":"))))
        elif name in known:
            scenarios.append(known[name])
        else:
            parser.error(f"unknown scenario {name!r}; have {list(known)} or NAME=S1:S2:...")
    budgets = [int(b) for b in args.budgets.split(",") if b.strip()]
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]

    started = time.perf_counter()
    rows = religion_rows(args.word_lists)
    records = run(rows, scenarios, budgets, metrics, args.seeds, args.confidence, log=_log)
    wall = time.perf_counter() - started
    command = shlex.join(
        ["python", "scripts/bench_leaderboard.py", *(sys.argv[1:] if argv is None else argv)]
    )
    report = {
        "command": command,
        "confidence": args.confidence,
        "targets": TARGETS,
        "wall_seconds": wall,
        "records": records,
    }
    print(f"`{command}` ({wall:.0f} s)\n\n{markdown(records)}")
    if args.output:
        args.output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
    sys.exit(0)
