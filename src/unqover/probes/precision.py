"""A precision target: score a growing sample of groups in rounds until every headline interval is narrow enough.

The sampling design is nested (``unqover.probe.sampling``): with one seed, the sample of n groups contains the
sample of any smaller n. Round k therefore scores only the groups that the round's budget adds, in its own
resumable runner folder ``rounds/<k>/``, and the estimates after each round use every group scored so far. The
next budget assumes widths shrink as 1/sqrt(n): n_next = n · (widest / target)² · 1.2, at least 1.25 n, at most
4 n, and at least what a declined μ or η said it needs. A run stopped at any point and started again replays
the finished rounds from disk (the same scores give the same budgets) and goes on.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa

from unqover.errors import UnqoverError
from unqover.measure.sampled import HEADLINE
from unqover.probe.runner import merge_shards, run_shard
from unqover.probe.sampling import find_groups, priorities
from unqover.probes.job import claim

FIRST_ROUND_GROUPS = 1000
GROWTH = (1.25, 4.0)
ROWS_PER_GROUP = 4


def check_options(run, settings: dict) -> None:
    """Refuse what does not go with a precision target, before any model or data is loaded."""
    if not isinstance(settings["precision"], int | float) or not 0 < settings["precision"] < 1:
        raise UnqoverError(f"--precision is an interval width in (0, 1), got {settings['precision']!r}")
    if run.limit is not None or settings.get("sample") is not None:
        raise UnqoverError("--precision chooses the sample size itself: leave out --limit and --sample")
    if run.shard is not None:
        raise UnqoverError("--precision runs its rounds in one process: leave out --shard")
    if (
        settings.get("max_rows") is not None
        and settings["max_rows"] < FIRST_ROUND_GROUPS * ROWS_PER_GROUP // 10
    ):
        raise UnqoverError(f"--max-rows must be at least {FIRST_ROUND_GROUPS * ROWS_PER_GROUP // 10}")


def _widest(result) -> tuple[float, list[str]]:
    """The widest headline interval relative to nothing (inf when a value is declined) and the declined names."""
    declined = [name for name in HEADLINE if name in result.declined]
    widths = [
        result.intervals[name][1] - result.intervals[name][0]
        for name in HEADLINE
        if name not in result.declined and name in result.intervals
    ]
    return (math.inf if declined else max(widths, default=math.inf)), declined


def next_budget(n: int, result, target: float, cap: int) -> int:
    """The next round's number of groups (see the module docstring)."""
    widest, declined = _widest(result)
    wanted = n * GROWTH[1] if math.isinf(widest) else n * (widest / target) ** 2 * 1.2
    for name in declined:
        wanted = max(wanted, 1.1 * (result.declined[name].get("groups_needed") or 0))
    wanted = min(max(wanted, n * GROWTH[0]), n * GROWTH[1])
    return int(min(cap, math.ceil(wanted)))


def _line(k: int, result, n: int, total: int) -> str:
    if result.sample is None:
        values = ", ".join(
            f"{label} {getattr(result, name):.4f}" for name, label in zip(HEADLINE, "δεμη", strict=True)
        )
        return f"round {k}: all {total:,} groups: {values}"
    parts = []
    for name, label in zip(HEADLINE, "δεμη", strict=True):
        if name in result.declined:
            parts.append(f"{label} declined")
        else:
            low, high = result.intervals[name]
            parts.append(f"{label} {getattr(result, name):.4f} [{low:.4f}, {high:.4f}]")
    return f"round {k}: {n:,} of {total:,} groups ({n / total:.2%}): " + ", ".join(parts)


def score_in_rounds(
    population: pa.Table,
    scorer,
    folder: Path,
    identity: dict,
    run,
    target: float,
    settings: dict,
    measure: Callable[[pa.Table], object],
) -> tuple[pa.Table, pa.Table, dict]:
    """Score rounds of the nested sample of ``population`` until every headline interval of ``measure(scores)``
    is at most ``target`` wide, ``settings["max_rows"]`` rows are scored or ``settings["max_seconds"]`` of scoring
    time is spent. Returns the rows scored, their scores and why it stopped (for the run's selection)."""
    groups = find_groups(population)
    total = groups.num_groups
    order = np.lexsort((groups.identity, priorities(groups, run.seed)))
    rank = np.empty(total, dtype=np.int64)
    rank[order] = np.arange(total)
    row_rank = rank[groups.row_group]
    max_rows, max_seconds = settings.get("max_rows"), settings.get("max_seconds")
    cap = total if max_rows is None else max(1, min(total, max_rows // ROWS_PER_GROUP))
    n_strata = int(groups.stratum.max()) + 1
    claim(folder, identity)

    scored: list[pa.Table] = []
    done, n, k = 0, min(cap, max(n_strata, FIRST_ROUND_GROUPS)), 0
    seconds, rate = 0.0, None
    while True:
        round_rows = population.filter(pa.array((row_rank >= done) & (row_rank < n)))
        round_folder = folder / "rounds" / f"{k:02d}"
        start = time.monotonic()
        run_shard(
            round_rows,
            scorer,
            round_folder,
            batch_size=run.batch_size,
            chunk_rows=run.chunk_rows,
            checkpoint_seconds=run.checkpoint_seconds,
            progress=run.progress,
        )
        scored.append(merge_shards(round_rows, round_folder, 1))
        spent = time.monotonic() - start
        seconds += spent
        if spent > 1:
            rate = round_rows.num_rows / spent
        scores = pa.concat_tables(scored)
        result = measure(scores)
        done = n
        widest, declined = _widest(result)
        print(_line(k, result, n, total), flush=True)  # the estimates after each round, also with --quiet
        reason = None
        if result.sample is None:
            reason = "the whole dataset is scored"
        elif not declined and widest <= target:
            reason = f"every headline interval is at most {target} wide"
        elif n >= cap:
            reason = f"--max-rows {max_rows:,} reached"
        if reason is None:
            following = next_budget(n, result, target, cap)
            eta = None if rate is None else (following - n) * ROWS_PER_GROUP / rate
            if max_seconds is not None and eta is not None and seconds + eta > max_seconds:
                reason = f"the next round ({eta:,.0f} s) would pass --max-time {max_seconds:,.0f} s"
        if reason is not None:
            print(f"stopped: {reason}", flush=True)
            break
        when = "unknown" if eta is None else f"about {eta:,.0f} s"
        print(f"  next round: {following:,} groups (+{following - n:,}), ETA {when}", flush=True)
        n, k = following, k + 1
    kept = population.filter(pa.array(row_rank < n))
    return kept, scores, {"stopped": reason, "groups": n}
