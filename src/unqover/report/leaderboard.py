"""The words of ``unqover leaderboard``: the table of models (value with its simultaneous interval, rank, rank
interval, groups) and the distinguishable pairs, for the terminal and as Markdown. The data is
:func:`unqover.jobs.compare.leaderboard`'s."""

from __future__ import annotations

from collections.abc import Mapping

from unqover.format import fmt, fmt_count, fmt_estimate, fmt_interval, fmt_level, fmt_p, fmt_signed
from unqover.report.charts import escape, interval_range, svg_coord
from unqover.report.markdown import md
from unqover.report.page import markdown_page


def _rank_span(model: Mapping) -> str:
    best, worst = model["rank_interval"]
    return str(best) if best == worst else f"{best}–{worst}"


def _pair_line(pair: Mapping, name=str) -> str:
    return (
        f"{name(pair['less_biased'])} < {name(pair['more_biased'])}: difference {fmt_signed(pair['difference'])} "
        f"{fmt_interval(pair['interval'], signed=True)}, Holm-adjusted p {fmt_p(pair['p_value'])}"
    )


def _intro(board: Mapping) -> str:
    level = fmt_level(board["confidence"])
    return (
        f"{board['probe']} by {board['metric']} (1 = least biased); intervals hold for all "
        f"{len(board['models'])} models at once at {level}, rank intervals from them."
    )


def _none_line(board: Mapping) -> str:
    return (
        "No pair is distinguishable at this confidence: the ranks above are not evidence of an order."
        if not board["distinguishable"]
        else ""
    )


def leaderboard_text(board: Mapping) -> str:
    """The leaderboard for the terminal: a table of models, then the pairs whose difference is not zero."""
    header = ("rank", "rank interval", "model", board["metric"] + " [simultaneous]", "groups")
    rows = [
        (
            str(m["rank"]),
            _rank_span(m),
            m["name"],
            fmt_estimate(m["value"], m["interval"]),
            fmt_count(m["groups"]),
        )
        for m in board["models"]
    ]
    widths = [max(len(r[k]) for r in (header, *rows)) for k in range(len(header))]
    lines = [_intro(board), ""]
    lines += [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in (header, *rows)
    ]
    lines += ["", "Distinguishable pairs (Holm-corrected):"]
    lines += [f"  {_pair_line(p)}" for p in board["distinguishable"]] or [f"  {_none_line(board)}"]
    return "\n".join(lines)


def leaderboard_markdown(board: Mapping) -> str:
    """The leaderboard as Markdown: the same table and pairs, and the method."""
    metric = board["metric"]
    lines = [f"# Leaderboard: {board['probe']}, {metric}", "", _intro(board), ""]
    lines += [
        f"| rank | rank interval | model | {metric} [simultaneous] | groups |",
        "|---:|---:|---|---|---:|",
    ]
    lines += [
        f"| {m['rank']} | {_rank_span(m)} | {md(m['name'])} | {fmt_estimate(m['value'], m['interval'])} | "
        f"{fmt_count(m['groups'])} |"
        for m in board["models"]
    ]
    lines += ["", "## Distinguishable pairs (Holm-corrected)", ""]
    lines += [f"- {_pair_line(p, md)}" for p in board["distinguishable"]] or [_none_line(board)]
    lines += ["", f"Method: {board['method']}.", ""]
    return "\n".join(lines)


def leaderboard_figure(board: Mapping, width: int = 760) -> str:
    """The paper-style figure as inline SVG: one row per model (least biased on top), its value as a dot on its
    simultaneous interval, and its rank interval beside it."""
    models = board["models"]
    start, limit = interval_range(
        [m["interval"][0] for m in models], [m["interval"][1] for m in models] + [m["value"] for m in models]
    )
    left, right, top, row_h = 230, 110, 34, 26
    plot_w = width - left - right
    height = top + len(models) * row_h + 30

    def x(value: float) -> str:
        return svg_coord(left + (value - start) / (limit - start) * plot_w)

    label = f"{board['metric']} with simultaneous intervals at {fmt_level(board['confidence'])}"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="unqover-chart leaderboard" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}" '
        'style="font-family:system-ui,sans-serif;font-size:12px">'
        f'<title>{escape(label)}</title><text x="{left}" y="16" font-size="13" font-weight="600">'
        f'{escape(label)}</text><text x="{width - right + 12}" y="{top - 8}" fill="#555">rank interval</text>'
    ]
    axis_y = top + len(models) * row_h
    for k in range(5):
        tick = start + (limit - start) * k / 4
        out.append(
            f'<line x1="{x(tick)}" x2="{x(tick)}" y1="{top - 4}" y2="{axis_y}" stroke="#e3e3e3"/>'
            f'<text x="{x(tick)}" y="{axis_y + 16}" text-anchor="middle" fill="#555">{fmt(tick, 3)}</text>'
        )
    for i, m in enumerate(models):
        y = top + i * row_h + row_h / 2
        low, high = m["interval"]
        tip = f"{m['name']}: {fmt_estimate(m['value'], m['interval'])}, rank {m['rank']} ({_rank_span(m)})"
        out.append(
            f'<g class="model"><title>{escape(tip)}</title>'
            f'<text x="{left - 8}" y="{svg_coord(y + 4)}" text-anchor="end">{escape(m["name"][-34:])}</text>'
            f'<line x1="{x(low)}" x2="{x(high)}" y1="{svg_coord(y)}" y2="{svg_coord(y)}" stroke="#2b6cb0" stroke-width="3"/>'
            f'<circle cx="{x(m["value"])}" cy="{svg_coord(y)}" r="5" fill="#1a365d"/>'
            f'<text x="{width - right + 12}" y="{svg_coord(y + 4)}">{escape(_rank_span(m))}</text></g>'
        )
    out.append("</svg>")
    return "".join(out)


def leaderboard_html(board: Mapping) -> str:
    """A self-contained page: the Markdown leaderboard and the figure."""
    title = f"Leaderboard: {board['probe']}, {board['metric']}"
    return markdown_page(leaderboard_markdown(board), title, extra=[leaderboard_figure(board)])
