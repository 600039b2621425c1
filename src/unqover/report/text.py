"""Plain-text summary of an UnQover result for the terminal.

The headline numbers print as in the Markdown and HTML reports (:func:`unqover.report.markdown.fmt_headline`):
a quick run's estimates of the full-dataset values with their intervals and "estimated from n of M groups", or a
full run's values over all groups with the generalisation interval beside its own estimate.
"""

from __future__ import annotations

from unqover.format import MISSING, fmt_interval, fmt_signed
from unqover.measure.unqover import UnqoverBias
from unqover.report.markdown import (
    HEADLINE_NAMES,
    bootstrap_line,
    errors,
    groups_line,
    headline,
    most_biased,
    most_biased_heading,
    most_biased_note,
    sample_warning,
    unit_line,
)

# the scalar fields of an UnqoverBias that the headline reads, with their defaults (older results lack some)
_FIELDS = {
    "mode": "default",
    "num_groups": None,
    "dropped_groups": 0,
    "positional_error": None,
    "attributive_error": None,
    "mean_score": None,
    "mu": None,
    "eta": None,
    "mu_unit": "subject",
    "subject_mu": None,
    "subject_eta": None,
    "position_consistency": {},
    "intervals": {},
    "bias_corrected": {},
    "bootstrap": {},
    "paper_inconsistent_pairs": None,
    "interval_kind": None,
    "interval_estimates": {},
    "sample": None,
    "declined": {},
}


_LABELS = {key: HEADLINE_NAMES[key] for key in ("mu", "eta")}  # their unit is on its own line


def _scalars(result: UnqoverBias) -> dict:
    """The headline fields of ``result`` as a results dict (without the tables)."""
    out = {name: getattr(result, name, default) for name, default in _FIELDS.items()}
    table = getattr(result, "cluster_gamma", None)
    if table is not None and "cluster" in getattr(table, "columns", ()):
        out["cluster_gamma"] = [{"cluster": name} for name in dict.fromkeys(table["cluster"].astype(str))]
    return out


def summary(result: UnqoverBias, top: int = 10) -> str:
    """Headline numbers with intervals, the most biased subject–attribute pairs, and the subject ranking ends."""
    scalars = _scalars(result)
    lines = [f"UnQover bias: {groups_line(scalars)}"]
    warning = sample_warning(scalars)
    if warning:
        lines.append(f"  warning: {warning}")
    lines += [f"  warning: {w}" for w in getattr(result, "warnings", None) or []]  # a degenerate run's
    for row in headline(scalars):
        label = _LABELS.get(row["key"], row["name"])
        lines.append(f"  {label:<20} {row['text']}")
    lines.append(f"  {unit_line(scalars)}")
    lines += [f"  {name}: {value}" for name, value in errors(scalars)]
    lines.append(f"  {bootstrap_line(scalars)}")
    if top:
        listed = {"gamma": result.gamma.to_dict(orient="records")}
        if isinstance(getattr(result, "most_biased", None), list):  # results from before the list: none
            listed.update(most_biased=result.most_biased, most_biased_rule=result.most_biased_rule)
        chosen = most_biased(listed, top)
        lines += ["", f"{most_biased_heading(listed, len(chosen))}:"]
        note = most_biased_note(listed)
        if note:
            lines.append(f"  {note}")
        for row in chosen:
            ci = fmt_interval([row.get("gamma_low"), row.get("gamma_high")], signed=True)
            ci = "" if ci == MISSING else f"  {ci}"
            lines.append(
                f"  {fmt_signed(row['gamma'])}{ci}  η {fmt_signed(row['eta'])}  {row['subject']} — {row['attribute']}"
            )
        ranking = result.subject_gamma.to_dict(orient="records")
        shown = ranking if len(ranking) <= 2 * 5 else [*ranking[:5], None, *ranking[-5:]]
        lines += ["", "Subjects ranked by γ(x) (rank 1: most associated with the attributes):"]
        for row in shown:
            lines.append(
                "  ..."
                if row is None
                else f"  {row['rank']:>3}. {fmt_signed(row['gamma'])}  {row['subject']}"
            )
    return "\n".join(lines)
