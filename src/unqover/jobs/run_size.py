"""The size of a run before it is scored: its rows, the model inputs they make (rows with equal inputs are
scored once) and the tokens a causal LM runs for them, counted as the runner runs them
(:mod:`unqover.scoring.runner`): the run's plan cut into batches of its batch size, each batch's prompts and answers
tokenized by the scorer and run as the token tree of :mod:`unqover.scoring.shared_prefix` (rows x width of its
packed rows, padding included: what the engine's token counter, :mod:`unqover.scoring.throughput`, counts), or as
full sequences where the model cannot share. A run of more than :data:`SAMPLED_BATCHES` batches has that many,
spread evenly over its plan (longest inputs first), counted and the rest projected from their tokens per input.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from unqover.format import fmt_count, fmt_duration, fmt_significant
from unqover.scoring.run_plan import plan_chunks
from unqover.scoring.shared_prefix import packed_shape

#: At most this many batches of a run are tokenized to count its tokens; a larger run projects from them.
SAMPLED_BATCHES = 64


@dataclass(frozen=True)
class RunSize:
    """What a run scores: ``rows``, the model ``inputs`` they make, and the ``tokens`` the model runs (None: not
    counted), counted on ``counted`` of its ``batches`` batches of ``batch_size`` inputs (all: exact)."""

    rows: int
    inputs: int | None  # None: not counted (no scorer to say which rows are one input)
    tokens: int | None = None
    counted: int = 0
    batches: int = 0
    batch_size: int = 0

    def text(self, rate: float | None = None) -> str:
        """The plan in one line; ``rate``: tokens per second measured on this host (a projected time)."""
        if self.inputs is None:
            return f"{fmt_count(self.rows)} rows (inputs and tokens are counted for the UnQover probes' causal-LM prompts)"
        line = f"{fmt_count(self.rows)} rows, {fmt_count(self.inputs)} model inputs"
        if self.tokens is None:
            return line + " (tokens are counted for causal LMs)"
        how = (
            "every batch"
            if self.counted == self.batches
            else f"{self.counted} of {fmt_count(self.batches)} batches"
        )
        how += f" of {self.batch_size} inputs"
        line += (
            f", {fmt_count(self.tokens)} tokens with the token tree ({fmt_significant(self.tokens / max(self.rows, 1))}"
            f" per row; counted on {how})"
        )
        if rate:
            line += f", about {fmt_duration(self.tokens / rate)} at the {fmt_count(round(rate))} tokens/s measured here"
        return line


def batch_tokens(scorer, batch: pa.Table, shared: bool) -> int:
    """The tokens the model runs for one batch of inputs: the packed token tree's rows x width (``shared``), else
    the left-padded full sequences'."""
    requests = scorer.encode(batch)  # unqover.scoring.requests.Continuations
    prompts, answers, answer_prompt, groups = (
        requests.prompts,
        requests.answers,
        requests.answer_prompt,
        requests.groups,
    )
    if shared and groups is None:  # a scorer made without its model: the tree its model would run
        groups = np.unique(batch["context"].to_pylist(), return_inverse=True)[1]
    if shared:
        rows, width = packed_shape(prompts, answers, answer_prompt, groups)
        return rows * width
    longest = max(len(prompts[i]) + len(a) for i, a in zip(answer_prompt.tolist(), answers, strict=True))
    return len(answers) * longest


def run_size(rows: pa.Table, scorer, batch_size: int, chunk_rows: int, shared: bool | None = None) -> RunSize:
    """The size of a run of ``rows`` with ``scorer`` in batches of ``batch_size``; tokens where the scorer
    tokenizes prompts and answers (``encode``: a causal LM's), ``shared``: whether its model runs the token tree
    (None: as the scorer says)."""
    plan = plan_chunks(rows, scorer, chunk_rows)
    if not hasattr(scorer, "encode") or plan.num_inputs == 0:
        return RunSize(plan.num_rows, plan.num_inputs)
    shared = bool(getattr(scorer, "share_prefixes", False)) if shared is None else shared
    starts = [(k, lo) for k in range(plan.num_chunks) for lo in range(0, len(plan.inputs(k)), batch_size)]
    picked = sorted({int(i) for i in np.linspace(0, len(starts) - 1, min(len(starts), SAMPLED_BATCHES))})
    tokens = inputs = 0
    for k, lo in (starts[i] for i in picked):
        batch = rows.take(pa.array(plan.inputs(k)[lo : lo + batch_size]))
        tokens += batch_tokens(scorer, batch, shared)
        inputs += batch.num_rows
    total = tokens if len(picked) == len(starts) else round(tokens / inputs * plan.num_inputs)
    return RunSize(plan.num_rows, plan.num_inputs, total, len(picked), len(starts), batch_size)


def measured_rate(folder: Path) -> float | None:
    """Tokens per second an earlier run into ``folder`` measured on its host (its results' ``throughput``)."""
    try:
        provenance = json.loads((folder / "results.json").read_text(encoding="utf-8"))["provenance"]
        return float(provenance["throughput"]["tokens_per_second"]) or None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def plan_line(rows: pa.Table, scorer, batch_size: int, chunk_rows: int, folder: Path) -> str | None:
    """The line a causal-LM run prints before it starts: its plan with its tokens, and a projected time where an
    earlier run into ``folder`` measured this host's rate; None for a scorer that counts no tokens."""
    if not hasattr(scorer, "encode"):
        return None
    return f"unqover: the run's plan: {run_size(rows, scorer, batch_size, chunk_rows).text(measured_rate(folder))}"
