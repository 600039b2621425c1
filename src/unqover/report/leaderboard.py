"""The words of ``unqover leaderboard``: the table of models (value with its simultaneous interval, rank, rank
interval, groups) and the distinguishable pairs, for the terminal and as Markdown. The data is
:func:`unqover.jobs.leaderboard.leaderboard`'s."""

from __future__ import annotations

from collections.abc import Mapping

from unqover.report.format import fmt_count, fmt_estimate, fmt_interval, fmt_level, fmt_p, fmt_signed


def _rank_span(model: Mapping) -> str:
    best, worst = model["rank_interval"]
    return str(best) if best == worst else f"{best}–{worst}"


def _pair_line(pair: Mapping) -> str:
    return (
        f"{pair['less_biased']} < {pair['more_biased']}: difference {fmt_signed(pair['difference'])} "
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
        f"| {m['rank']} | {_rank_span(m)} | {m['name']} | {fmt_estimate(m['value'], m['interval'])} | "
        f"{fmt_count(m['groups'])} |"
        for m in board["models"]
    ]
    lines += ["", "## Distinguishable pairs (Holm-corrected)", ""]
    lines += [f"- {_pair_line(p)}" for p in board["distinguishable"]] or [_none_line(board)]
    lines += ["", f"Method: {board['method']}.", ""]
    return "\n".join(lines)
