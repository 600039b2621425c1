"""What a run says of its own speed: the projected time of a long run, once its first batches are timed, and the
tokens per second a causal LM ran at, when it ends.

Both come from measurements of this run on this host (:class:`unqover.scoring.runner.Timed`, the engine's token
counts of :mod:`unqover.scoring.throughput`), never from a constant: the same run is minutes on a GPU, an hour on
a CPU with bf16 matrix units and several on one without.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from unqover.format import fmt_count, fmt_duration, fmt_seconds, fmt_significant
from unqover.scoring.runner import Timed
from unqover.scoring.throughput import Throughput

#: A run projected to take at least this many seconds of scoring says so, with a quick run's command.
LONG_RUN_SECONDS = 3600.0


def projection_line(
    timed: Timed,
    inputs_left: int,
    rows_left: int,
    device: str | None,
    quick_run: str | Callable[[float], str],
    tokens: Throughput | None = None,
) -> str | None:
    """The line a long run prints once its first batches are timed: rows and inputs left, tokens where the
    engine counts them, the measured rate and how it was measured, the projected time, and a quick run
    (``quick_run``: its options, or a function of the seconds a row takes that says the quick run's command and
    time); None for a run projected under :data:`LONG_RUN_SECONDS`."""
    seconds = inputs_left / timed.rate
    if seconds < LONG_RUN_SECONDS:
        return None
    batches = (
        f"batch {timed.first}"
        if timed.batches == 1
        else f"batches {timed.first}-{timed.first + timed.batches - 1}"
    )
    where = f"on the {'CPU' if device == 'cpu' else device}" if device else "here"
    token_part = ""
    if tokens is not None and tokens.inputs:
        per_input = tokens.tokens / tokens.inputs
        token_part = (
            f", about {fmt_count(round(inputs_left * per_input))} tokens at "
            f"{fmt_count(round(timed.rate * per_input))} tokens/s"
        )
    quick = quick_run(seconds / rows_left) if callable(quick_run) else f"add {quick_run}"
    faster = "a GPU is far faster, or " if device == "cpu" else ""
    return (
        f"unqover: about {fmt_duration(seconds)} to score {fmt_count(rows_left)} rows {where}: "
        f"{fmt_count(inputs_left)} inputs{token_part}, at {fmt_significant(timed.rate)} inputs/s as measured over {batches} "
        f"of this run ({fmt_count(timed.inputs)} inputs in {fmt_seconds(timed.seconds)}); {faster}for a quick estimate "
        f"of the same numbers {quick}"
    )


def throughput_line(record: Throughput, device: str | None, dtype: str | None, threads: int | None) -> str:
    """The line a causal-LM run prints at its end: the tokens the model ran and the wall seconds of scoring
    them, so that a larger run can be projected."""
    setting = ", ".join(
        part
        for part in (device, dtype, None if threads is None or device != "cpu" else f"{threads} threads")
        if part
    )
    return (
        f"unqover: the model ran {fmt_count(record.tokens)} tokens in {fmt_seconds(record.seconds)} of scoring: "
        f"{fmt_count(round(record.tokens_per_second))} tokens/s on this host ({setting}); a run of N tokens takes "
        "about N / that many seconds"
    )


def say(line: str | None) -> None:
    """A line on stderr (none for None)."""
    if line is not None:
        print(line, file=sys.stderr, flush=True)
