"""What a report lays out beside the measures: a table's row totals and shares, and the layout of a γ(x, a) heat
map (which subjects it shows, the order of its rows and columns).

A total, a share or an order is a result a reader reads (attributes on which the top-ranked subjects score highest
come first), so it is computed here, with the numbers, and reaches :mod:`unqover.report` as data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from unqover.format import number
from unqover.results import attribute_key

Column = tuple[str, str | None]


def row_totals(table: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Each row's total of a table given as row -> column -> count (the "total" column of a report's table)."""
    return {row: sum(values.values()) for row, values in table.items()}


def count_shares(table: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float | None]]:
    """Each row's counts (row -> column -> count) as shares of the row's total, None where it has none."""
    totals = row_totals(table)
    return {
        row: {c: (v / totals[row] if totals[row] else None) for c, v in values.items()}
        for row, values in table.items()
    }


def _mean(values) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def heatmap_order(
    records: Sequence[Mapping], row_key: str = "subject", row_order: Sequence[str] | None = None
) -> tuple[list[str], list[Column]]:
    """The rows and columns of a heat map of ``records`` (``row_key``, ``attribute``, ``attribute_type``,
    ``gamma``).

    * Rows follow ``row_order`` (e.g. the γ(x) ranking; rows not in it are appended), else their mean γ, highest
      first.
    * Columns follow the rows: by Σ_x (s(x) − s̄)·γ(x, a) with s the row score (its mean γ), so attributes on which
      the top rows score highest come first. (The plain mean of γ(x, a) over subjects is 0 by complementarity on
      complete data, so it cannot order them; it is the tie-breaker.)
    """
    gamma: dict[tuple[str, Column], float | None] = {}
    for record in records:
        gamma[(str(record.get(row_key)), attribute_key(record))] = number(record.get("gamma"))
    rows = list(dict.fromkeys(row for row, _ in gamma))
    columns = list(dict.fromkeys(column for _, column in gamma))
    row_score = {row: _mean(gamma.get((row, c)) for c in columns) for row in rows}
    if row_order is not None:
        position = {str(name): i for i, name in enumerate(row_order)}
        rows.sort(key=lambda r: (r not in position, position.get(r, 0)))
    else:
        rows.sort(key=lambda r: (row_score[r] is None, -(row_score[r] or 0.0)))
    scored = [row_score[r] for r in rows if row_score[r] is not None]
    centre = sum(scored) / len(scored) if scored else 0.0

    def loading(column: Column) -> tuple[float, float]:
        follow = sum(
            (row_score[r] - centre) * gamma[(r, column)]
            for r in rows
            if row_score[r] is not None and gamma.get((r, column)) is not None
        )
        mean = _mean(gamma.get((r, column)) for r in rows) or 0.0
        return (-round(follow, 12), -mean)

    return rows, sorted(columns, key=loading)


def usual_count(records: Sequence[Mapping], row_key: str = "subject") -> int | None:
    """The most common ``count`` of a heat map's cells (one per row and attribute, the last record of each), which
    its legend states once; None when no cell has one."""
    cells = {(str(r.get(row_key)), attribute_key(r)): r.get("count") for r in records}
    counts = [c for c in cells.values() if c is not None]
    return max(set(counts), key=counts.count) if counts else None


def subject_heatmap(result: Mapping, most: int) -> dict:
    """The subjects × attributes heat map of an UnQover result: ``rows`` (the γ(x) ranking; when there are more
    than ``most`` subjects, its top and bottom ``most // 2``), ``columns`` (:func:`heatmap_order`) and ``of``, the
    number of subjects ranked; ``count``, the usual count of its cells (:func:`usual_count`), and
    ``cluster_count``, that of the clusters × attributes map."""
    ranking = [str(r.get("subject")) for r in result.get("subject_gamma") or []]
    records = result.get("gamma") or []
    if len(ranking) > most:
        ranking_shown = [*ranking[: most // 2], *ranking[-(most // 2) :]]
        kept = set(ranking_shown)
        records = [r for r in records if str(r.get("subject")) in kept]
    rows, columns = heatmap_order(
        records, "subject", (ranking_shown if len(ranking) > most else ranking) or None
    )
    return {
        "rows": rows,
        "columns": columns,
        "of": len(ranking),
        "count": usual_count(records),
        "cluster_count": usual_count(result.get("cluster_gamma") or [], "cluster"),
    }
