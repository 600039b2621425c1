"""Self-contained SVG charts of UnQover results: plain strings, no plotting library, no external resources.

Every chart is a function of the plain records in a results dict (``UnqoverBias.to_dict()``) and returns one
``<svg>`` element that can be inlined in an HTML page or saved as an ``.svg`` file:

* :func:`ranking_chart` — subjects ranked by γ(x) with their intervals (the paper's Figs. 4–5, for one model);
* :func:`heatmap` — γ(x, a) of subjects (or clusters) × attributes on a diverging colour scale centred at 0;
* :func:`error_bars` — the reasoning errors δ and ε beside the mean answer score.

A value that cannot be computed (``None``/NaN, or a cell without data) is drawn as *missing* — hatched grey, never
as 0 — and labelled "missing". All text is escaped; every cell and row carries a ``<title>`` tooltip with its
values, printed by :mod:`unqover.format` (missing as "—", tiny values never as 0). The only numbers formatted
here are SVG coordinates and axis tick labels.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from unqover.format import fmt, fmt_interval, fmt_percent, fmt_signed, number
from unqover.results import attribute_key, attribute_labels, interval_of

FONT = "font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif"
POSITIVE = "#b2182b"  # γ > 0: the subject is preferred for the attribute
NEGATIVE = "#2166ac"
MISSING_COLOR = "#9a9a9a"  # hatching and labels of missing values
# ColorBrewer RdBu (11 classes), from most negative (blue) to most positive (red)
DIVERGING = (
    "#053061",
    "#2166ac",
    "#4393c3",
    "#92c5de",
    "#d1e5f0",
    "#f7f7f7",
    "#fddbc7",
    "#f4a582",
    "#d6604d",
    "#b2182b",
    "#67001f",
)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


# ---------------------------------------------------------------------------------------------------------------
# small helpers (shared with the HTML page)


def escape(text: object) -> str:
    """Text for XML/HTML element content and quoted attribute values (characters XML forbids become U+FFFD)."""
    value = _CONTROL.sub("\ufffd", str(text))
    return (
        value.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#39;")
    )


def _uid(kind: str, *parts: object) -> str:
    """A deterministic id prefix, distinct for different charts inlined in one page."""
    return f"{kind}{hashlib.sha1(repr(parts).encode()).hexdigest()[:6]}"


def svg_coord(value: float) -> str:
    """An SVG coordinate: at most one decimal, no trailing zeros (not a reported number)."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _axis(value: float, signed: bool = False) -> str:
    """An axis tick label: a round number with at most 3 significant digits (``0.25``, ``1.5e-05``), never 0 for a
    non-zero tick."""
    return f"{value:+.3g}" if signed else f"{value:.3g}"


def _text_width(text: str, size: float) -> float:
    """Rough rendered width of sans-serif text."""
    return len(text) * size * 0.56


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def nice_limit(value: float) -> float:
    """The smallest 'round' number (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 × 10^k) at or above ``value`` (> 0)."""
    if not value or value <= 0 or not math.isfinite(value):
        return 1.0
    exponent = math.floor(math.log10(value))
    for step in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        limit = step * 10**exponent
        if limit >= value * (1 - 1e-9):
            return float(limit)
    return float(10 ** (exponent + 1))


#: How far a chart's axis stretches beyond its values to show their intervals whole: at most this many times the
#: values' own range. Past it the whiskers are cut at the edge (and marked), so that values of 0.001 with intervals
#: of ±0.8 are not all drawn on the zero line.
WHISKER_ROOM = 4.0


def axis_limit(
    values: Iterable[float | None], whiskers: Iterable[float | None] = (), *, cap: float | None = None
) -> float:
    """The half-range (or, for a one-sided chart, the range) of a chart's axis, scaled to the data it shows: the
    largest |value| rounded up to a round number (:func:`nice_limit`), stretched to hold the largest |whisker| end
    while that stays within :data:`WHISKER_ROOM` times the values' own range; at most ``cap`` (shares, rates: 1)
    unless a value exceeds it; 1 where nothing is present.

    Every chart takes its scale here (a chart of intervals alone, the leaderboard's, from :func:`interval_range`
    beside it), and says it on the chart (tick labels, and the scale in its caption), so that no chart draws tiny
    values on a range set by something else. The range is a presentation choice (where the
    pixels go), not a reported number: the values, intervals and tooltips are the measure's, unchanged.
    """
    present = [abs(v) for v in map(number, values) if v is not None and math.isfinite(v)]
    ends = [abs(v) for v in map(number, whiskers) if v is not None and math.isfinite(v)]
    largest = max(present, default=0.0)
    reach = max(ends, default=0.0)
    limit = nice_limit(largest) if largest > 0 else nice_limit(reach) if reach > 0 else 1.0
    if limit < reach <= WHISKER_ROOM * limit:
        limit = nice_limit(reach)
    if cap is not None and limit > cap:
        limit = max(cap, largest)
    return limit


def interval_range(lows: Sequence[float], highs: Sequence[float | None]) -> tuple[float, float]:
    """The axis of a chart of intervals on a one-sided scale (the leaderboard's): from 0 (or the lowest bound below
    it) to 5% past the highest bound or value, so that the intervals it compares are its data and fill it."""
    start = min(0.0, min(lows)) if lows else 0.0
    return start, max([h for h in highs if h is not None] + [1e-9]) * 1.05


def scale_caption(limit: float, *, cut: int = 0) -> str:
    """The scale said on a symmetric chart, ``scale ±0.005``, and how many whiskers run past it."""
    text = f"scale ±{_axis(limit)}"
    if cut:
        text += f"; {cut} interval{'s' if cut != 1 else ''} run past the edge (arrowheads there): hover for the bounds"
    return text


def _ticks(limit: float, per_side: int = 2) -> list[float]:
    step = limit / per_side
    return [round(i * step, 12) for i in range(-per_side, per_side + 1)]


def _tick_label(value: float) -> str:
    """``0``, ``+.2``, ``−.15``, ``+7.5e-06`` (a typographic minus for the sign)."""
    if value == 0:
        return "0"
    text = _axis(value, signed=True)
    sign, body = ("−" if text[0] == "-" else "+"), text[1:]
    return sign + (body[1:] if body.startswith("0.") else body)


def diverging_color(value: float | None, limit: float) -> str | None:
    """Colour of ``value`` on the symmetric scale [−limit, +limit] (clipped); None for missing values."""
    v = number(value)
    if v is None:
        return None
    t = 0.0 if limit <= 0 else max(-1.0, min(1.0, v / limit))
    position = (t + 1) / 2 * (len(DIVERGING) - 1)
    i = min(int(position), len(DIVERGING) - 2)
    frac = position - i
    a, b = DIVERGING[i], DIVERGING[i + 1]
    channels = [
        round(int(a[k : k + 2], 16) + (int(b[k : k + 2], 16) - int(a[k : k + 2], 16)) * frac)
        for k in (1, 3, 5)
    ]
    return "#" + "".join(f"{c:02x}" for c in channels)


def _svg_open(width: float, height: float, label: str, css_class: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="{css_class}" width="{svg_coord(width)}" height="{svg_coord(height)}" '
        f'viewBox="0 0 {svg_coord(width)} {svg_coord(height)}" role="img" aria-label="{escape(label)}" '
        f'style="{FONT};font-size:11px">'
        f"<title>{escape(label)}</title>"
    )


def _hatch(uid: str) -> str:
    return (
        f'<pattern id="{uid}-na" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="6" height="6" fill="#ececec"/>'
        f'<line x1="0" y1="0" x2="0" y2="6" stroke="{MISSING_COLOR}" stroke-width="2"/></pattern>'
    )


# ---------------------------------------------------------------------------------------------------------------
# ranking of subjects by γ(x)


def _past(ci: tuple[float, float] | None, limit: float) -> bool:
    """Whether an interval runs past a chart's axis range."""
    return ci is not None and max(abs(ci[0]), abs(ci[1])) > limit


@dataclass(frozen=True)
class _Ranking:
    """Where a ranking chart puts things: one row of ``row_h`` per subject below ``top``, rank numbers right-aligned
    at ``rank_w``, names before ``left``, the plot ``plot_w`` wide on the symmetric axis [−limit, +limit]."""

    n: int
    row_h: int
    size: int
    rank_w: float
    left: float
    plot_w: float
    top: int
    width: float
    limit: float

    @property
    def height(self) -> float:
        return self.top + max(self.n, 1) * self.row_h + 34

    @property
    def plot_bottom(self) -> int:
        return self.top + max(self.n, 1) * self.row_h

    def x(self, value: float) -> float:
        return (
            self.left
            + (max(-self.limit, min(self.limit, value)) + self.limit) / (2 * self.limit) * self.plot_w
        )


def _ranking_frame(rows: list[Mapping], shown: list[str], title: str | None, width: int) -> _Ranking:
    """The layout of a ranking of ``rows`` with the (clipped) names ``shown``, its axis scaled to γ and intervals."""
    n = len(rows)
    row_h = 16 if n <= 60 else 14
    size = 11 if n <= 60 else 10
    rank_w = _text_width(str(n), size) + 10
    label_w = max([_text_width(s, size) for s in shown] + [40]) + 8
    left = rank_w + label_w + 8
    right = 64
    plot_w = max(width - left - right, 160)
    limit = axis_limit(
        [r.get("gamma") for r in rows],
        [v for r in rows for v in (interval_of(r) or ()) if number(r.get("gamma")) is not None],
    )
    top = 52 if title else 34
    return _Ranking(n, row_h, size, rank_w, left, plot_w, top, left + plot_w + right, limit)


def _chart_title(left: float, title: str) -> str:
    return f'<text x="{svg_coord(left)}" y="16" font-size="13" font-weight="600">{escape(title)}</text>'


def _ranking_axis(frame: _Ranking, axis: str, cut: int) -> str:
    """Grid lines, tick labels top and bottom, the zero line and the axis caption."""
    plot_top, plot_bottom = frame.top, frame.plot_bottom
    out = []
    for tick in _ticks(frame.limit):
        tx = svg_coord(frame.x(tick))
        out.append(
            f'<line x1="{tx}" y1="{plot_top - 4}" x2="{tx}" y2="{plot_bottom + 4}" stroke="#e3e3e3"/>'
            f'<text x="{tx}" y="{plot_top - 8}" text-anchor="middle" fill="#555">{_tick_label(tick)}</text>'
            f'<text x="{tx}" y="{plot_bottom + 16}" text-anchor="middle" fill="#555">{_tick_label(tick)}</text>'
        )
    zero = svg_coord(frame.x(0))
    out.append(
        f'<line class="zero" x1="{zero}" y1="{plot_top - 4}" x2="{zero}" y2="{plot_bottom + 4}" '
        'stroke="#222" stroke-width="1.2"/>'
    )
    out.append(
        f'<text x="{svg_coord(frame.left + frame.plot_w / 2)}" y="{plot_bottom + 30}" text-anchor="middle" fill="#333">'
        f"{escape(axis)} · {escape(scale_caption(frame.limit, cut=cut))}</text>"
    )
    return "".join(out)


def _subject_tip(record: Mapping, rank: object, name: str) -> str:
    """A subject's tooltip: rank, name, γ(x) with its interval, η(x) and the count where present."""
    gamma = number(record.get("gamma"))
    ci = interval_of(record)
    tip = f"{rank}. {name}: γ(x) = {fmt_signed(gamma)}" + (" (missing)" if gamma is None else "")
    if ci:
        tip += f" {fmt_interval(ci, signed=True)}"
    if number(record.get("eta")) is not None:
        tip += f", η(x) = {fmt_signed(record['eta'])}"
    if record.get("count") is not None:
        tip += f", n = {record['count']}"
    return tip


def _whisker(frame: _Ranking, y: float, ci: tuple[float, float], color: str) -> str:
    """An interval's whisker on a row at ``y``: capped ends inside the axis, an arrowhead where it is cut."""
    cy = svg_coord(y + frame.row_h / 2)
    lo, hi = svg_coord(frame.x(ci[0])), svg_coord(frame.x(ci[1]))
    cap = frame.row_h * 0.25
    ends = "".join(
        f"M{end} {svg_coord(y + frame.row_h / 2 - cap)}v{svg_coord(2 * cap)}"
        for end, bound in ((lo, ci[0]), (hi, ci[1]))
        if abs(bound) <= frame.limit
    )
    out = [
        f'<path class="interval" d="M{lo} {cy}H{hi}{ends}" stroke="{color}" stroke-opacity="0.6" fill="none"/>'
    ]
    for edge, bound in ((-1, ci[0]), (1, ci[1])):
        if abs(bound) > frame.limit:  # cut at the edge: an arrowhead pointing on
            tip_x = frame.x(edge * frame.limit)
            out.append(
                f'<path class="cut" d="M{svg_coord(tip_x)} {cy}l{svg_coord(-edge * cap * 1.6)} {svg_coord(-cap)}'
                f'v{svg_coord(2 * cap)}z" fill="{color}" fill-opacity="0.6"/>'
            )
    return "".join(out)


def _ranking_row(frame: _Ranking, i: int, record: Mapping, name: str, short: str) -> str:
    """Row ``i``: rank, name, and γ(x) as a bar from zero to a dot with its whisker (or the word "missing")."""
    row_h, size = frame.row_h, frame.size
    y = frame.top + i * row_h
    cy = svg_coord(y + row_h / 2)
    ty = svg_coord(y + row_h / 2 + size * 0.35)
    gamma = number(record.get("gamma"))
    rank = record.get("rank", i + 1)
    css = "subject" if gamma is not None else "subject missing"
    out = [f'<g class="{css}"><title>{escape(_subject_tip(record, rank, name))}</title>']
    if i % 2 == 0:
        out.append(f'<rect x="0" y="{y}" width="{svg_coord(frame.width)}" height="{row_h}" fill="#f6f6f6"/>')
    out.append(
        f'<text x="{svg_coord(frame.rank_w)}" y="{ty}" text-anchor="end" fill="#888" font-size="{size}">{escape(rank)}</text>'
        f'<text x="{svg_coord(frame.left - 8)}" y="{ty}" text-anchor="end" font-size="{size}">{escape(short)}</text>'
    )
    if gamma is None:
        out.append(
            f'<text x="{svg_coord(frame.x(0) + 6)}" y="{ty}" fill="{MISSING_COLOR}" font-style="italic" '
            f'font-size="{size}">missing</text></g>'
        )
        return "".join(out)
    color = POSITIVE if gamma > 0 else NEGATIVE if gamma < 0 else "#555"
    ci = interval_of(record)
    if ci:
        out.append(_whisker(frame, y, ci, color))
    out.append(
        f'<line x1="{svg_coord(frame.x(0))}" y1="{cy}" x2="{svg_coord(frame.x(gamma))}" y2="{cy}" stroke="{color}" '
        f'stroke-opacity="0.35" stroke-width="{svg_coord(row_h * 0.45)}"/>'
        f'<circle cx="{svg_coord(frame.x(gamma))}" cy="{cy}" r="{svg_coord(row_h * 0.22)}" fill="{color}"/>'
        f'<text x="{svg_coord(frame.left + frame.plot_w + 6)}" y="{ty}" fill="#333" font-size="{size}">{fmt_signed(gamma)}</text></g>'
    )
    return "".join(out)


def ranking_chart(
    subject_gamma: Sequence[Mapping],
    *,
    title: str | None = "Subjects ranked by γ(x)",
    label: str = "subject",
    width: int = 760,
    axis: str = "γ(x): ← less associated with the attributes · more associated →",
) -> str:
    """Subjects ranked by γ(x) (rank 1 at the top, in the order given: the measure's rank order), a dot per subject
    with its interval whisker, and a zero line.

    ``subject_gamma``: records with ``subject`` (or the ``label`` key), ``gamma`` and optionally ``rank``,
    ``gamma_low``/``gamma_high``, ``eta``, ``count``. Whiskers are drawn only where both bounds are present; a
    subject whose γ(x) is missing is listed with the word "missing" and no dot.
    """
    rows = list(subject_gamma)
    names = [str(r.get(label, "")) for r in rows]
    shown = [_clip(name, 32) for name in names]
    frame = _ranking_frame(rows, shown, title, width)
    cut = sum(1 for r in rows if number(r.get("gamma")) is not None and _past(interval_of(r), frame.limit))
    uid = _uid("rank", tuple(names), frame.n)
    out = [_svg_open(frame.width, frame.height, title or "Subjects ranked by γ(x)", "unqover-chart ranking")]
    out.append(f'<g id="{uid}">')
    if title:
        out.append(_chart_title(frame.left, title))
    out.append(_ranking_axis(frame, axis, cut))
    out.extend(
        _ranking_row(frame, i, record, name, short)
        for i, (record, name, short) in enumerate(zip(rows, names, shown, strict=True))
    )
    out.append("</g></svg>")
    return "".join(out)


# ---------------------------------------------------------------------------------------------------------------
# heat map of γ(x, a)


@dataclass(frozen=True)
class _Grid:
    """The cells of a heat map: its rows and attribute columns in drawing order (with the columns' labels), each
    cell's record and γ."""

    rows: list[str]
    columns: list[tuple[str, str | None]]
    labels: Mapping[tuple[str, str | None], str]
    records: dict[tuple[str, tuple[str, str | None]], Mapping]
    gamma: dict[tuple[str, tuple[str, str | None]], float | None]


def _ordered(names: list, order: Iterable | None) -> list:
    """``names`` in ``order``; those not in it after, in their own order (all of them without an order)."""
    if order is None:
        return names
    position = {name: i for i, name in enumerate(order)}
    return sorted(names, key=lambda name: (name not in position, position.get(name, 0)))


def _grid(
    gamma_records: Sequence[Mapping],
    row_key: str,
    row_order: Sequence[str] | None,
    column_order: Sequence[tuple[str, str | None]] | None,
) -> _Grid:
    keys = [attribute_key(r) for r in gamma_records]
    records: dict[tuple[str, tuple[str, str | None]], Mapping] = {}
    row_names: list[str] = []
    for record, key in zip(gamma_records, keys, strict=True):
        row = str(record.get(row_key))
        records[(row, key)] = record
        row_names.append(row)
    rows = _ordered(list(dict.fromkeys(row_names)), None if row_order is None else map(str, row_order))
    columns = _ordered(list(dict.fromkeys(keys)), None if column_order is None else map(tuple, column_order))
    gamma = {cell: number(r.get("gamma")) for cell, r in records.items()}
    return _Grid(rows, columns, attribute_labels(columns), records, gamma)


@dataclass(frozen=True)
class _Heat:
    """Where a heat map puts things: cells of ``cell`` × ``cell_h`` from (``left``, ``top``), row labels before
    them, column labels above (and below a tall grid), the colour legend ``bar_h`` high at ``legend_x``."""

    cell: int
    cell_h: int
    size: int
    left: float
    title_h: int
    top: float
    grid_w: int
    grid_h: int
    repeat_labels: bool
    legend_x: float
    height: float
    bar_h: int

    @property
    def width(self) -> float:
        return self.legend_x + 110


def _heat_frame(
    n_rows: int, n_cols: int, row_labels: list[str], col_labels: list[str], title: str | None, max_cell: int
) -> _Heat:
    cell = int(max(8, min(max_cell, 900 // max(n_cols, 1))))
    cell_h = cell if n_rows > 12 else max(cell, 18)
    size = 10 if cell < 16 else 11
    left = max([_text_width(s, size) for s in row_labels] + [30]) + 12
    col_label_h = max([_text_width(s, size) for s in col_labels] + [20]) + 10
    title_h = 40 if title else 22
    top = title_h + col_label_h
    grid_w, grid_h = n_cols * cell, n_rows * cell_h
    repeat_labels = n_rows > 40
    height = top + grid_h + (col_label_h if repeat_labels else 0) + 16
    bar_h = 160 if grid_h >= 160 else max(80, grid_h)
    height = max(height, top + bar_h + 100)
    legend_x = left + grid_w + 24
    return _Heat(
        cell, cell_h, size, left, title_h, top, grid_w, grid_h, repeat_labels, legend_x, height, bar_h
    )


def _heat_defs(frame: _Heat, uid: str) -> str:
    """The missing-value hatching, the colour scale's gradient and the cell shape, each defined once."""
    out = [f"<defs>{_hatch(uid)}", f'<linearGradient id="{uid}-scale" x1="0" y1="1" x2="0" y2="0">']
    for k, color in enumerate(DIVERGING):
        out.append(f'<stop offset="{k / (len(DIVERGING) - 1):.3f}" stop-color="{color}"/>')
    out.append(f'</linearGradient><rect id="{uid}-c" width="{frame.cell}" height="{frame.cell_h}"/></defs>')
    return "".join(out)


def _column_labels(frame: _Heat, grid: _Grid, col_labels: list[str]) -> str:
    """Column labels, vertical, above the grid (and below it for tall grids)."""
    out = []
    size = frame.size
    for j, (column, text) in enumerate(zip(grid.columns, col_labels, strict=True)):
        cx = frame.left + j * frame.cell + frame.cell / 2 + size * 0.35
        tip = escape(grid.labels[column])
        out.append(
            f'<text class="column" transform="translate({svg_coord(cx)},{svg_coord(frame.top - 6)}) rotate(-90)" '
            f'font-size="{size}">{escape(text)}<title>{tip}</title></text>'
        )
        if frame.repeat_labels:
            out.append(
                f'<text transform="translate({svg_coord(cx)},{svg_coord(frame.top + frame.grid_h + 6)}) rotate(-90)" text-anchor="end" '
                f'font-size="{size}">{escape(text)}</text>'
            )
    return "".join(out)


def _cell_tip(name: str, value: float, record: Mapping, usual: int | None) -> str:
    """A cell's tooltip: γ with its interval, η, and the count where it is not the usual one."""
    tip = f"{name}: γ {fmt_signed(value)}"
    ci = interval_of(record)
    if ci:
        tip += f" {fmt_interval(ci, signed=True)}"
    eta = number(record.get("eta"))
    if eta is not None:
        tip += f", η {fmt_signed(eta)}"
    if record.get("count") is not None and record["count"] != usual:
        tip += f", n {record['count']}"
    return tip


def _heat_row(frame: _Heat, grid: _Grid, i: int, text: str, limit: float, uid: str, usual: int | None) -> str:
    """Row ``i``: its label and one cell per column, coloured by γ or hatched where it is missing."""
    row, cell, cell_h = grid.rows[i], frame.cell, frame.cell_h
    out = [
        f'<g class="row" transform="translate(0,{i * cell_h})">'
        f'<text x="-6" y="{svg_coord(cell_h / 2 + frame.size * 0.35)}" text-anchor="end" font-size="{frame.size}">'
        f"{escape(text)}<title>{escape(row)}</title></text>"
    ]
    for j, column in enumerate(grid.columns):
        record = grid.records.get((row, column))
        value = grid.gamma.get((row, column))
        name = f"{row} × {grid.labels[column]}"
        if value is None:
            why = "no data" if record is None else "γ undefined"
            out.append(
                f'<rect class="missing" x="{j * cell}" width="{cell}" height="{cell_h}" '
                f'fill="url(#{uid}-na)"><title>{escape(name)}: missing ({why})</title></rect>'
            )
            continue
        out.append(
            f'<use href="#{uid}-c" x="{j * cell}" fill="{diverging_color(value, limit)}">'
            f"<title>{escape(_cell_tip(name, value, record, usual))}</title></use>"
        )
    out.append("</g>")
    return "".join(out)


def _heat_legend(frame: _Heat, uid: str, limit: float, usual: int | None) -> str:
    """The symmetric colour scale with its ticks, the missing swatch, and the usual count per cell."""
    bar_h = frame.bar_h
    out = [
        f'<g class="legend" transform="translate({svg_coord(frame.legend_x)},{frame.top})">'
        f'<text x="0" y="-8" font-weight="600">γ</text>'
        f'<rect width="14" height="{bar_h}" fill="url(#{uid}-scale)" stroke="#999" stroke-width="0.5"/>'
    ]
    for tick in _ticks(limit):
        ty = bar_h * (1 - (tick + limit) / (2 * limit))
        out.append(
            f'<line x1="14" x2="19" y1="{svg_coord(ty)}" y2="{svg_coord(ty)}" stroke="#555"/>'
            f'<text x="22" y="{svg_coord(ty + 3.5)}" fill="#333">{_tick_label(tick)}</text>'
        )
    out.append(
        f'<rect y="{bar_h + 14}" width="14" height="14" fill="url(#{uid}-na)" stroke="#999" stroke-width="0.5"/>'
        f'<text x="22" y="{bar_h + 25}" fill="#333">missing</text>'
        f'<text x="0" y="{bar_h + 46}" fill="#555" font-size="10">red: preferred</text>'
        f'<text x="0" y="{bar_h + 59}" fill="#555" font-size="10">blue: avoided</text>'
    )
    if usual is not None:
        out.append(
            f'<text x="0" y="{bar_h + 78}" fill="#555" font-size="10">n = {escape(usual)} per cell</text>'
        )
        out.append(f'<text x="0" y="{bar_h + 91}" fill="#555" font-size="10">unless shown</text>')
    out.append("</g>")
    return "".join(out)


def heatmap(
    gamma_records: Sequence[Mapping],
    *,
    row_key: str = "subject",
    row_order: Sequence[str] | None = None,
    column_order: Sequence[tuple[str, str | None]] | None = None,
    limit: float | None = None,
    usual_count: int | None = None,
    title: str | None = "γ(x, a): subjects × attributes",
    row_title: str = "subject",
    max_cell: int = 22,
) -> str:
    """γ(x, a) as a subjects × attributes grid on a diverging colour scale centred at 0, with a colour legend.

    ``gamma_records``: records with ``row_key`` (``subject`` or ``cluster``), ``attribute`` (and optionally
    ``attribute_type``), ``gamma`` and optionally ``gamma_low``/``gamma_high``, ``eta``, ``count``.

    * Rows follow ``row_order`` and columns ``column_order`` (attribute keys ``(attribute, attribute_type)``): the
      orders :func:`unqover.measure.layout.heatmap_order` computes (rows or columns not in them are appended, in
      the records' order, as are all of them without an order).
    * The scale is symmetric, [−limit, +limit]: ``limit`` defaults to the largest |γ| rounded up.
    * Cells with no data or a missing γ are hatched grey ("missing"), never coloured as 0.
    * ``usual_count``: the cells' most common count (:func:`unqover.measure.layout.usual_count`), stated once in
      the legend; a cell whose count differs states its own.
    """
    grid = _grid(gamma_records, row_key, row_order, column_order)
    rows, columns = grid.rows, grid.columns
    if limit is None:
        limit = axis_limit(grid.gamma.values())
    row_labels = [_clip(r, 28) for r in rows]
    col_labels = [_clip(grid.labels[c], 40) for c in columns]
    frame = _heat_frame(len(rows), len(columns), row_labels, col_labels, title, max_cell)
    uid = _uid("h", row_key, tuple(rows), tuple(columns), limit)
    out = [_svg_open(frame.width, frame.height, title or "γ(x, a) heat map", "unqover-chart heatmap")]
    out.append(_heat_defs(frame, uid))
    if title:
        out.append(_chart_title(frame.left, title))
    out.append(_column_labels(frame, grid, col_labels))
    out.append(
        f'<g class="cells" shape-rendering="crispEdges" transform="translate({svg_coord(frame.left)},{frame.top})">'
    )
    out.extend(_heat_row(frame, grid, i, text, limit, uid, usual_count) for i, text in enumerate(row_labels))
    out.append(
        f'<rect width="{frame.grid_w}" height="{frame.grid_h}" fill="none" stroke="#999" stroke-width="0.5"/></g>'
    )
    out.append(_heat_legend(frame, uid, limit, usual_count))
    out.append(
        f'<text x="{svg_coord(frame.left)}" y="{frame.title_h - 8}" fill="#555" font-style="italic">'
        f"rows: {escape(row_title)} · columns: attribute</text>"
    )
    out.append("</svg>")
    return "".join(out)


# ---------------------------------------------------------------------------------------------------------------
# reasoning errors


def error_bars(
    positional_error: float | None,
    attributive_error: float | None,
    mean_score: float | None,
    *,
    title: str | None = "Reasoning errors",
    width: int = 460,
) -> str:
    """δ (positional error), ε (attributive error) and the mean answer score as horizontal bars on one axis."""
    bars = [
        ("positional error δ", number(positional_error), "#7b3294"),
        ("attributive error ε", number(attributive_error), "#c2a5cf"),
        ("mean answer score", number(mean_score), "#a6a6a6"),
    ]
    present = [v for _, v, _ in bars if v is not None]
    limit = axis_limit(present, cap=1.0)
    left, right, top, row_h = 130, 60, 32 if title else 12, 24
    plot_w = width - left - right
    height = top + len(bars) * row_h + 26

    def x(value: float) -> float:
        return left + value / limit * plot_w

    out = [_svg_open(width, height, title or "Reasoning errors", "unqover-chart errors")]
    if title:
        out.append(_chart_title(left, title))
    axis_y = top + len(bars) * row_h
    for k in range(5):
        tick = limit * k / 4
        tx = svg_coord(x(tick))
        out.append(
            f'<line x1="{tx}" x2="{tx}" y1="{top - 2}" y2="{axis_y + 3}" stroke="#e3e3e3"/>'
            f'<text x="{tx}" y="{axis_y + 16}" text-anchor="middle" fill="#555">{_axis(tick)}</text>'
        )
    for i, (name, value, color) in enumerate(bars):
        y = top + i * row_h
        ty = svg_coord(y + row_h / 2 + 4)
        tip = f"{name}: {fmt(value)}" + (" (missing)" if value is None else "")
        out.append(
            f'<g class="bar"><title>{escape(tip)}</title>'
            f'<text x="{left - 8}" y="{ty}" text-anchor="end">{escape(name)}</text>'
        )
        if value is None:
            out.append(
                f'<text x="{left + 4}" y="{ty}" fill="{MISSING_COLOR}" font-style="italic">missing</text></g>'
            )
            continue
        out.append(
            f'<rect x="{left}" y="{svg_coord(y + 4)}" width="{svg_coord(max(x(value) - left, 0.5))}" height="{row_h - 8}" '
            f'fill="{color}"/><text x="{svg_coord(x(value) + 5)}" y="{ty}" fill="#333">{fmt(value)}</text></g>'
        )
    out.append(f'<line x1="{left}" x2="{left}" y1="{top - 2}" y2="{axis_y}" stroke="#222"/>')
    out.append("</svg>")
    return "".join(out)


def share_bars(
    shares: Mapping[str, Mapping[str, float]],
    *,
    title: str,
    colors: Sequence[str] = (NEGATIVE, POSITIVE, MISSING_COLOR),
) -> str:
    """Grouped horizontal bars: for each category (e.g. an emotion), each group's share of answers (0–1).

    ``shares`` maps group -> category -> share; a missing share is drawn as a grey outline, never as 0. The bars
    are scaled to the largest share (:func:`axis_limit`), and the chart says what a full bar is.
    """
    groups = list(shares)
    categories = list(dict.fromkeys(c for g in groups for c in shares[g]))
    bar, gap, left, width = 14.0, 10.0, 90.0, 320.0
    height = 54 + len(categories) * (len(groups) * bar + gap) + 20 * len(groups)
    uid = _uid("bars", title, groups, categories)
    limit = axis_limit((v for g in groups for v in shares[g].values()), cap=1.0)

    def length(value: float) -> float:
        return width * max(0.0, min(1.0, value / limit))

    parts = [_svg_open(left + width + 70, height, title, "share-bars")]
    parts.append(f'<text x="4" y="16" font-weight="600">{escape(title)}</text>')
    parts.append(
        f'<text class="scale" x="4" y="32" fill="#555">bars to scale: a full bar is {fmt_percent(limit)}</text>'
    )
    y = 44.0
    for category in categories:
        parts.append(
            f'<text x="4" y="{svg_coord(y + bar * len(groups) / 2 + 4)}">{escape(_clip(category, 14))}</text>'
        )
        for k, group in enumerate(groups):
            value = number(shares[group].get(category))
            color = colors[k % len(colors)]
            tip = f"{group}, {category}: {fmt_percent(value)}" + (" (missing)" if value is None else "")
            if value is None:
                parts.append(
                    f'<rect id="{uid}-{k}" x="{svg_coord(left)}" y="{svg_coord(y)}" width="{svg_coord(width)}" height="{svg_coord(bar - 2)}" '
                    f'fill="none" stroke="{MISSING_COLOR}"><title>{escape(tip)}</title></rect>'
                )
            else:
                parts.append(
                    f'<rect x="{svg_coord(left)}" y="{svg_coord(y)}" width="{svg_coord(length(value))}" '
                    f'height="{svg_coord(bar - 2)}" fill="{color}"><title>{escape(tip)}</title></rect>'
                    f'<text x="{svg_coord(left + length(value) + 4)}" y="{svg_coord(y + bar - 4)}">'
                    f"{fmt_percent(value)}</text>"
                )
            y += bar
        y += gap
    for k, group in enumerate(groups):
        parts.append(
            f'<rect x="4" y="{svg_coord(y)}" width="10" height="10" fill="{colors[k % len(colors)]}"/>'
            f'<text x="18" y="{svg_coord(y + 9)}">{escape(group)}</text>'
        )
        y += 18
    parts.append("</svg>")
    return "".join(parts)
