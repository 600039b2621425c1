"""Results dicts (``results.json``) as what the Space shows: headline Markdown, a table of pairs, SVG charts.

Everything here reuses :mod:`unqover.report`; only the choice of pieces and the size caps for a web page are new.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import pandas as pd

from unqover.format import fmt_count, fmt_interval, fmt_signed
from unqover.report import charts
from unqover.report.markdown import (
    attribute_label_map,
    bootstrap_line,
    default_title,
    errors,
    groups_line,
    headline,
    md_text,
    most_biased,
    most_biased_heading,
    most_biased_note,
    ranking_rows,
    sample_warning,
    scope_notes,
    unit_line,
)
from unqover.results import attribute_key, interval_of, split_results
from unqover.space import live

MAX_CHART_ROWS = 60  # larger subject sets show their top and bottom 30
MOST_BIASED_ROWS = 10  # the pairs results.json lists (unqover.measure.most_biased.TOP)
#: the columns of the table of most biased pairs (shown with no rows before a run and after a failure)
PAIR_COLUMNS = ["subject", "attribute", "γ(x, a)", "interval", "η(x, a)", "n"]
#: the header of the table beside a report whose probe lists no rows there
NO_ROWS = "no rows to list for this run"
_SVG = re.compile(r"<svg\b.*?</svg>", re.S)
#: the mark before a message that says a request worked: a text glyph that common fonts (DejaVu Sans) draw, like
#: the reports' ⚠ (the emoji ✅ has no glyph in them and shows as a box where no emoji font is installed)
DONE = "✓"


def probe_of_results(results: Mapping):
    """The probe definition that wrote ``results`` (its ``"probe"`` key; older UnQover results by their shape);
    a run of a probe the Space does not offer is refused in web terms."""
    from unqover.space.results import offered_probe

    return offered_probe(results)


def empty_pairs() -> pd.DataFrame:
    """The pairs table with its headers and no rows."""
    return pd.DataFrame(columns=PAIR_COLUMNS)


def run_title(results: Mapping) -> str:
    """The heading of a run: the report's title with the probe's name where the report names its dataset's
    source (a word-lists folder, a dataset path): ``UnQover bias report: MODEL on gender``."""
    _, provenance = split_results(results)
    return default_title({**provenance, "dataset": {"source": probe_of_results(results).name}})


def unqover_kind(probe) -> bool:
    """Whether a probe writes UnQover results (μ, η, γ over groups of four): its definition builds its rows from
    word lists (the UnQover bias classes and custom UnQover-style probes)."""
    return "word_lists" in probe.settings


def unqover_headline(results: Mapping) -> str:
    """The headline as in the reports: a quick run's estimates of the full-dataset values ("estimated from n of M
    groups", declined values with the reason), or a full run's values over all groups."""
    result, _ = split_results(results)
    lines = [f"### {md_text(run_title(results))}", "", groups_line(result), ""]
    lines += scope_notes(None, [md_text(w) for w in result.get("warnings") or []])  # a degenerate run's
    warning = sample_warning(result)
    if warning:
        lines += [f"> warning: {md_text(warning)}", ""]
    lines += ["| measure | value |", "|---|---|"]
    lines += [f"| {row['name']} | {md_text(row['text'])} |" for row in headline(result)]
    lines += [f"| {name} | {md_text(value)} |" for name, value in errors(result)]
    lines += ["", unit_line(result), "", bootstrap_line(result)]
    if result.get("gamma"):
        heading = most_biased_heading(result, len(most_biased(result, MOST_BIASED_ROWS)))
        lines += ["", f"**{md_text(heading)}.** {md_text(most_biased_note(result) or '')}"]
    return "\n".join(lines)


def quick_run_web_line(results: Mapping) -> str | None:
    """What a quick run's numbers come from ("estimated from n of M groups", or the NLI/emotion probe's line);
    None for a full run."""
    line = probe_of_results(results).results.quick_run_line(results.get("result", results))
    return None if line is None else live.web_text(line)


def pairs_frame(results: Mapping, k: int = MOST_BIASED_ROWS) -> pd.DataFrame:
    """The k most biased subject–attribute pairs: γ(x, a) with its interval, η and the count."""
    result = results.get("result", results)
    labels = attribute_label_map(result)
    records = most_biased(result, k)
    return pd.DataFrame(
        [
            {
                "subject": r.get("subject"),
                "attribute": labels.get(attribute_key(r), r.get("attribute")),
                "γ(x, a)": fmt_signed(r.get("gamma")),
                "interval": fmt_interval(interval_of(r), signed=True),
                "η(x, a)": fmt_signed(r.get("eta")),
                "n": fmt_count(r.get("count")),
            }
            for r in records
        ],
        columns=PAIR_COLUMNS,
    )


def unqover_charts(results: Mapping) -> str:
    """The γ(x) ranking with intervals and the γ(x, a) heat map, as inline SVG."""
    result = results.get("result", results)
    ranking = [r for r in ranking_rows(result.get("subject_gamma") or [], 0) if r is not None]
    if len(ranking) > MAX_CHART_ROWS:
        half = MAX_CHART_ROWS // 2
        ranking = [*ranking[:half], *ranking[-half:]]
    layout = probe_of_results(results).results.heatmap_layout(results, MAX_CHART_ROWS)  # the measure's order
    shown = set(layout["rows"])
    gamma = [r for r in result.get("gamma") or [] if str(r.get("subject")) in shown]
    heatmap = charts.heatmap(
        gamma, row_order=layout["rows"], column_order=layout["columns"], usual_count=layout["count"]
    )
    return (
        f'<div class="unqover-chart">{charts.ranking_chart(ranking)}</div>'
        f'<div class="unqover-chart">{heatmap}</div>'
    )


def svg_parts(page: str) -> str:
    """The SVG charts of a self-contained report page (its styles would restyle the whole Space)."""
    return "".join(f'<div class="unqover-chart">{svg}</div>' for svg in _SVG.findall(page))


def view(results: Mapping) -> tuple[str, pd.DataFrame, str]:
    """(headline Markdown, table of the most biased pairs, charts HTML) of any probe's results."""
    probe = probe_of_results(results)
    if unqover_kind(probe):
        return live.web_text(unqover_headline(results)), pairs_frame(results), unqover_charts(results)
    reports = probe.results.reports(results)
    rows = probe.results.highlights(results)
    table = pd.DataFrame(rows) if rows else pd.DataFrame(columns=[NO_ROWS])
    return live.web_text(reports["report.md"]), table, svg_parts(reports["report.html"])
