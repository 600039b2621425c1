"""Plain-text summary of an UnQover result for the terminal."""

from __future__ import annotations

import math

from unqover.measure.unqover import UnqoverBias


def _interval(values: list[float] | None) -> str:
    if not values or any(v is None or math.isnan(v) for v in values):
        return ""
    return f"  [{values[0]:.4f}, {values[1]:.4f}]"


def _corrected(result: UnqoverBias, name: str) -> str:
    value = result.bias_corrected.get(name)
    return "" if value is None else f" (bias-corrected {value:.4f})"


def summary(result: UnqoverBias, top: int = 10) -> str:
    """Headline numbers with intervals, the most biased subject–attribute pairs, and the subject ranking ends."""
    boot = result.bootstrap
    level = f"{boot['confidence']:.0%} interval, {boot['n_resamples']} resamples" if boot else "no intervals"
    lines = [
        f"UnQover bias ({result.mode} mode): {result.num_groups:,} groups"
        + (f", {result.dropped_groups:,} incomplete groups dropped" if result.dropped_groups else ""),
        f"  positional error δ   {result.positional_error:.4f}",
        f"  attributive error ε  {result.attributive_error:.4f}",
        f"  mean answer score    {result.mean_score:.4f}",
        f"  bias intensity μ     {result.mu:.4f}{_corrected(result, 'mu')}{_interval(result.intervals.get('mu'))}"
        f"   (per {result.mu_unit}; {level})",
        f"  count-based η        {result.eta:.4f}{_corrected(result, 'eta')}{_interval(result.intervals.get('eta'))}",
    ]
    if result.mu_unit != "subject":
        lines.append(
            f"  per-subject μ, η     {result.subject_mu:.4f}{_interval(result.intervals.get('subject_mu'))}, "
            f"{result.subject_eta:.4f}{_interval(result.intervals.get('subject_eta'))}"
        )
    if top:
        lines += ["", f"Most biased subject–attribute pairs (|γ(x, a)|, top {top}):"]
        for row in result.most_biased(top).to_dict(orient="records"):
            ci = _interval([row["gamma_low"], row["gamma_high"]]) if "gamma_low" in row else ""
            lines.append(
                f"  {row['gamma']:+.4f}{ci}  η {row['eta']:+.2f}  {row['subject']} — {row['attribute']}"
            )
        ranking = result.subject_gamma.to_dict(orient="records")
        shown = ranking if len(ranking) <= 2 * 5 else [*ranking[:5], None, *ranking[-5:]]
        lines += ["", "Subjects ranked by γ(x) (rank 1: most associated with the attributes):"]
        for row in shown:
            lines.append(
                "  ..." if row is None else f"  {row['rank']:>3}. {row['gamma']:+.4f}  {row['subject']}"
            )
    return "\n".join(lines)
