"""A precision target: score a growing sample of groups in rounds until every headline interval is narrow enough.

The sampling design is nested (``unqover.scoring.sampling``): with one seed, the sample of n groups contains the
sample of any smaller n. Round k therefore scores only the groups that the round's budget adds, in its own
resumable runner folder ``rounds/<k>/``, and the estimates after each round use every group scored so far. The
next budget assumes widths shrink as 1/sqrt(n): n_next = n · (widest / target)² · 1.2, at least 1.25 n, at most
4 n, and at least what a declined μ or η said it needs. A run stopped at any point and started again replays
the finished rounds from disk (the same scores give the same budgets) and goes on.

When the rounds stop, one line says whether the target was met (:func:`outcome`): ``target met: every headline
interval is at most W wide``, or ``target not met: widest interval X (name)`` (or the declined values and the
groups they need) and why the rounds stopped: ``--max-rows`` reached, the next round would pass ``--max-time``, or
the whole dataset is scored. ``--max-time`` bounds the whole command's wall time from its start (model and data
loading included): before each round after the first, the time spent so far plus the round's scoring ETA and an
allowance for measuring (twice the last round's measure step: the round's own and the final one that writes the
results) must fit in it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa

from unqover.errors import UnqoverError
from unqover.format import DIGITS, fmt, fmt_count, fmt_interval, fmt_percent
from unqover.measure.diagnostics import ROWS_PER_GROUP
from unqover.measure.sampled import HEADLINE
from unqover.probes.base import score_for_run
from unqover.scoring.run_folder import claim
from unqover.scoring.runner import merge_shards
from unqover.scoring.sampling import find_groups, priorities

FIRST_ROUND_GROUPS = 1000
#: the narrowest target: the results show 4 digits, so a narrower interval could not be seen to be met
MIN_WIDTH = 10.0**-DIGITS
GROWTH = (1.25, 4.0)
HEADLINE_SYMBOLS = dict(zip(HEADLINE, "δεμη", strict=True))
#: the wall clock ``--max-time`` reads (tests replace it); ``RunOptions.started`` is a reading of it
clock = time.monotonic


def check_width(width) -> None:
    """Refuse a target that is no width in (0, 1), or one too narrow to be seen met (:data:`MIN_WIDTH`)."""
    if isinstance(width, bool) or not isinstance(width, int | float) or not 0 < width < 1:
        raise UnqoverError(f"--precision is an interval width in (0, 1), got {width!r}")
    if width < MIN_WIDTH:
        raise UnqoverError(
            f"--precision {width!r} is narrower than the results show ({DIGITS} digits): give a width of at "
            f"least {MIN_WIDTH:g}, or leave out --precision to score every group"
        )


def check_options(run, settings: dict) -> None:
    """Refuse what does not go with a precision target, before any model or data is loaded."""
    check_width(settings["precision"])
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
    ratio = widest / target if math.isfinite(widest) and target > 0 else math.inf
    # clamped before squaring: a tiny target cannot overflow, and any ratio past the clamp grows by GROWTH[1]
    wanted = n * min(ratio, math.sqrt(GROWTH[1])) ** 2 * 1.2
    for name in declined:
        needed = result.declined[name].get("groups_needed") or 0
        if math.isfinite(needed):
            wanted = max(wanted, 1.1 * needed)
    wanted = min(max(wanted, n * GROWTH[0]), n * GROWTH[1])
    return int(min(cap, math.ceil(wanted)))


def _line(k: int, result, n: int, total: int) -> str:
    if result.sample is None:
        values = ", ".join(
            f"{label} {fmt(getattr(result, name))}" for name, label in HEADLINE_SYMBOLS.items()
        )
        return f"round {k}: all {fmt_count(total)} groups: {values}"
    parts = []
    for name, label in HEADLINE_SYMBOLS.items():
        if name in result.declined:
            parts.append(f"{label} declined")
        else:
            parts.append(f"{label} {fmt(getattr(result, name))} {fmt_interval(result.intervals[name])}")
    head = f"round {k}: {fmt_count(n)} of {fmt_count(total)} groups ({fmt_percent(n / total)})"
    return f"{head}: {', '.join(parts)}"


def outcome(result, target: float, why: str) -> dict:
    """Whether the rounds met ``target``, in one line and as a record: ``stopped`` (why they stopped),
    ``target_met``, ``widest`` ({name, width} of the widest headline interval; None where μ or η is declined or
    the whole dataset is scored), ``declined`` (name -> groups needed) and ``outcome`` (the line)."""
    if result.sample is None:  # every group scored: the values are the dataset's own, with no sampling error
        line = (
            f"target met: every headline interval is at most {fmt(target)} wide (the whole dataset is scored: "
            "the values are exact)"
        )
        return {"stopped": why, "target_met": True, "widest": None, "declined": {}, "outcome": line}
    declined = {
        name: result.declined[name].get("groups_needed") for name in HEADLINE if name in result.declined
    }
    widths = {
        name: result.intervals[name][1] - result.intervals[name][0]
        for name in HEADLINE
        if name not in declined and name in result.intervals
    }
    widest = max(widths, key=widths.get) if widths else None
    record = None if declined or widest is None else {"name": widest, "width": float(widths[widest])}
    met = record is not None and record["width"] <= target
    if met:
        line = f"target met: every headline interval is at most {fmt(target)} wide"
    elif declined:
        needs = [
            f"{HEADLINE_SYMBOLS[name]} declined"
            + ("" if groups is None else f" (needs {fmt_count(groups)} groups)")
            for name, groups in declined.items()
        ]
        line = f"target not met: {', '.join(needs)}; stopped: {why}"
    elif record is None:
        line = f"target not met: no headline interval; stopped: {why}"
    else:
        line = (
            f"target not met: widest interval {fmt(record['width'])} ({HEADLINE_SYMBOLS[widest]}), target {fmt(target)}; "
            f"stopped: {why}"
        )
    return {"stopped": why, "target_met": met, "widest": record, "declined": declined, "outcome": line}


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
    is at most ``target`` wide, ``settings["max_rows"]`` rows are scored or the next round would end past
    ``settings["max_seconds"]`` of wall time since ``run.started`` (a :data:`clock` reading at the start of the
    command; None: now). Returns the rows scored, their scores and how it stopped (:func:`outcome`, and the
    ``groups`` scored, for the run's selection)."""
    started = getattr(run, "started", None)
    started = clock() if started is None else started
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
    rate, measuring = None, 0.0
    while True:
        round_rows = population.filter(pa.array((row_rank >= done) & (row_rank < n)))
        round_folder = folder / "rounds" / f"{k:02d}"
        start = clock()
        score_for_run(round_rows, scorer, round_folder, run)
        scored.append(merge_shards(round_rows, round_folder, 1))
        spent = clock() - start
        if spent > 1:  # a round replayed from disk takes no time: it says nothing of the rate
            rate = round_rows.num_rows / spent
        scores = pa.concat_tables(scored)
        start = clock()
        result = measure(scores)
        measuring = clock() - start
        done = n
        widest, declined = _widest(result)
        print(_line(k, result, n, total), flush=True)  # the estimates after each round, also with --quiet
        reason = None
        if result.sample is None:
            reason = "the whole dataset is scored"
        elif not declined and widest <= target:
            reason = f"every headline interval is at most {fmt(target)} wide"
        elif n >= cap:
            reason = (
                "the whole dataset is scored"
                if max_rows is None
                else f"--max-rows {fmt_count(max_rows)} reached"
            )
        if reason is None:
            following = next_budget(n, result, target, cap)
            eta = None if rate is None else (following - n) * ROWS_PER_GROUP / rate
            if max_seconds is not None:
                # the round's scoring, its measure and the final measure that writes the results
                needed, elapsed = (eta or 0.0) + 2 * measuring, clock() - started
                if elapsed + needed > max_seconds:
                    what = (
                        f"the next round's measuring alone (about {fmt_count(needed)} s)"
                        if eta is None
                        else f"the next round (about {fmt_count(needed)} s: {fmt_count(eta)} s scoring, "
                        f"{fmt_count(2 * measuring)} s measuring)"
                    )
                    reason = (
                        f"{what} would pass --max-time {fmt_count(max_seconds)} s ({fmt_count(elapsed)} s spent "
                        "since the command started)"
                    )
        if reason is not None:
            stopped = outcome(result, target, reason)
            print(stopped["outcome"], flush=True)
            break
        when = "unknown" if eta is None else f"about {fmt_count(eta)} s"
        print(
            f"  next round: {fmt_count(following)} groups (+{fmt_count(following - n)}), ETA {when}",
            flush=True,
        )
        n, k = following, k + 1
    kept = population.filter(pa.array(row_rank < n))
    return kept, scores, {**stopped, "groups": n}
