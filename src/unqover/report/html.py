"""One self-contained HTML page of an UnQover results dict: inline CSS and SVG, no scripts, no external requests.

The page holds the content of :func:`unqover.report.markdown.markdown_report` plus three charts: the reasoning
errors, the subjects ranked by γ(x), and the γ(x, a) heat map (and, when the result has clusters, the cluster ×
attribute heat map). The order of the heat map's rows and columns, like every number, is the measure's
(:func:`unqover.measure.layout.subject_heatmap`), handed in as data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from unqover.format import MISSING, fmt_count, fmt_interval, fmt_signed, number
from unqover.report import charts
from unqover.report.charts import escape
from unqover.report.markdown import (
    CONTENT_WARNING,
    HOW_TO_READ,
    attribute_label_map,
    bootstrap_line,
    cluster_tops,
    clusters,
    default_title,
    errors,
    groups_line,
    headline,
    headline_parts,
    level,
    most_biased,
    most_biased_heading,
    most_biased_note,
    precision_line,
    ranking_rows,
    sample_warning,
    unit_line,
)
from unqover.report.page import Section, card, cards_block, page, provenance_section, scope_line
from unqover.results import attribute_key, interval_of, split_results

MAX_HEATMAP_ROWS = 200  # larger subject sets show their top and bottom 100 subjects (the layout's ``most``)


def _cell(text: str, css: str = "") -> str:
    classes = " ".join(c for c in (css, "na" if text.startswith(MISSING) else "") if c)
    return f'<td class="{classes}">{escape(text)}</td>' if classes else f"<td>{escape(text)}</td>"


def _signed_cell(value: object) -> str:
    v = number(value)
    css = "" if v is None or v == 0 else "pos" if v > 0 else "neg"
    return _cell(fmt_signed(v), css)


def _table(header: Sequence[str], rows: Sequence[str], left: Sequence[int] = (0,)) -> str:
    head = "".join(
        f'<th class="l">{escape(h)}</th>' if i in left else f"<th>{escape(h)}</th>"
        for i, h in enumerate(header)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def html_report(
    results: Mapping, title: str | None = None, *, heatmap: Mapping, top: int = 10, cluster_top: int = 5
) -> str:
    """A self-contained HTML page: the Markdown report's content plus the error, ranking and heat-map charts;
    ``heatmap``: the subject heat map's ``rows``, ``columns`` and the number ``of`` subjects ranked, as
    :func:`unqover.measure.layout.subject_heatmap` lays it out with ``most`` :data:`MAX_HEATMAP_ROWS`."""
    result, provenance = split_results(results)
    title = title or default_title(provenance)
    sections = [_headline_section(result, provenance)]
    if result.get("gamma") and top:
        sections.append(_pairs_section(result, top))
    if result.get("subject_gamma"):
        sections.append(_ranking_section(result, top))
    if result.get("gamma"):
        sections.append(_heatmap_section(result, heatmap))
    if result.get("cluster_gamma"):
        sections.append(_clusters_section(result, cluster_top, heatmap["cluster_count"]))
    sections += [provenance_section(provenance), _method_section(result)]
    probe = results.get("probe") if isinstance(results.get("probe"), str) else None
    return page(title, sections, warning=CONTENT_WARNING, scope=scope_line(probe, provenance))


def _ci(result: Mapping) -> str:
    return f"{level(result)} interval" if level(result) else "interval"


def _headline_section(result: Mapping, provenance: Mapping) -> Section:
    """μ and η in cards, every headline number in a table, and the reasoning errors with their chart."""
    rows = headline(result)
    parts = [f"<p>{escape(groups_line(result))}</p>"]
    stopped = precision_line(provenance)
    if stopped is not None:
        parts.append(f"<p>{escape(stopped[0].upper() + stopped[1:])}.</p>")
    parts += [f'<p class="warning" role="note">⚠ {escape(w)}</p>' for w in result.get("warnings") or []]
    cards = []
    for row in rows:
        if row["key"] in ("mu", "eta"):
            value, beside, note = headline_parts(row)
            if row.get("declined"):  # the reason is printed once, in the table below
                beside, note = "declined: the reason is in the table below", ""
            cards.append(card(row["name"], value, beside, note))
    parts.append(cards_block(cards))
    warning = sample_warning(result)
    if warning:
        parts.append(f'<p class="warning" role="note">⚠ {escape(warning)}</p>')
    parts.append(
        _table(
            ["measure", "value"],
            [f'<tr><td class="l">{escape(r["name"])}</td>{_cell(r["text"], "l")}</tr>' for r in rows],
            left=(0, 1),
        )
    )
    parts.append(f'<p class="note">{escape(unit_line(result))}</p>')
    parts.append('<div class="row"><div>')
    parts.append(
        _table(
            ["reasoning errors", "value"],
            [f'<tr><td class="l">{escape(n)}</td>{_cell(v)}</tr>' for n, v in errors(result)],
        )
    )
    parts.append('</div><div class="chart">')
    parts.append(
        charts.error_bars(
            result.get("positional_error"), result.get("attributive_error"), result.get("mean_score")
        )
    )
    parts.append("</div></div>")
    parts.append(f'<p class="note">{escape(HOW_TO_READ)}</p>')
    return Section("headline", "Headline", "Headline", "\n".join(parts))


def _pairs_section(result: Mapping, top: int) -> Section:
    """The most biased subject–attribute pairs."""
    labels = attribute_label_map(result)
    chosen = most_biased(result, top)
    parts = []
    note = most_biased_note(result)
    if note:
        parts.append(f'<p class="note">{escape(note)}</p>')
    if chosen:
        parts.append(
            _table(
                ["#", "subject", "attribute", "γ(x, a)", _ci(result), "η(x, a)", "n"],
                [
                    f"<tr>{_cell(str(i))}{_cell(str(r.get('subject')), 'l')}"
                    f"{_cell(labels.get(attribute_key(r), str(r.get('attribute'))), 'l')}"
                    f"{_signed_cell(r.get('gamma'))}{_cell(fmt_interval(interval_of(r), signed=True))}"
                    f"{_signed_cell(r.get('eta'))}{_cell(fmt_count(r.get('count')))}</tr>"
                    for i, r in enumerate(chosen, 1)
                ],
                left=(1, 2),
            )
        )
    return Section("pairs", "Most biased pairs", most_biased_heading(result, len(chosen)), "\n".join(parts))


def _ranking_section(result: Mapping, top: int) -> Section:
    """The subjects ranked by γ(x): the chart and the table (top and bottom ``top``)."""
    subject_gamma = result.get("subject_gamma") or []
    shown = ranking_rows(subject_gamma, top)
    ci = _ci(result)
    what = "all subjects" if None not in shown else f"top and bottom {top} of {len(subject_gamma)}"
    parts = [
        '<p class="note">The paper\'s Figs. 4–5 for this model: rank 1 is the subject most associated with '
        f"the attributes. Dots: γ(x); whiskers: the {escape(ci)} where measured.</p>",
        f'<div class="chart">{charts.ranking_chart(subject_gamma, title=None, width=900)}</div>',
        f"<h3>Ranking table ({escape(what)})</h3>",
        _table(
            ["rank", "subject", "γ(x)", ci, "η(x)", "n"],
            [
                '<tr class="gap"><td colspan="6">…</td></tr>'
                if r is None
                else f"<tr>{_cell(fmt_count(r.get('rank')))}{_cell(str(r.get('subject')), 'l')}"
                f"{_signed_cell(r.get('gamma'))}{_cell(fmt_interval(interval_of(r), signed=True))}"
                f"{_signed_cell(r.get('eta'))}{_cell(fmt_count(r.get('count')))}</tr>"
                for r in shown
            ],
            left=(1,),
        ),
    ]
    return Section("ranking", "Ranking", "Subjects ranked by γ(x)", "\n".join(parts))


def _heatmap_section(result: Mapping, layout: Mapping) -> Section:
    """The heat map of γ(x, a): subjects × attributes, in the measure's layout."""
    order, records, note = list(layout["rows"]), result.get("gamma") or [], ""
    if len(order) < layout["of"]:
        keep = set(order)
        records = [r for r in records if str(r.get("subject")) in keep]
        note = f"Showing the top and bottom {len(order) // 2} of {layout['of']} subjects by γ(x)."
    parts = [
        '<p class="note">Red: the subject is preferred as the answer for the attribute; blue: avoided; '
        "hatched grey: missing (not measured or undefined). The scale is symmetric around 0. Rows follow the "
        "γ(x) ranking; columns are ordered so that attributes on which the top-ranked subjects score highest "
        "come first (the mean of γ(x, a) over subjects is 0 by complementarity, so it cannot order them). "
        f"Hover a cell for its exact values. {escape(note)}</p>",
        '<div class="chart">'
        + charts.heatmap(
            records,
            row_order=order,
            column_order=layout["columns"],
            usual_count=layout["count"],
            title=None,
            row_title="subject (by γ(x))",
        )
        + "</div>",
    ]
    return Section("heatmap", "Heat map", "γ(x, a): subjects × attributes", "\n".join(parts))


def _clusters_section(result: Mapping, cluster_top: int, usual_count: int | None) -> Section:
    """The paper's Table 2 view: the attributes most associated with each cluster, and their heat map."""
    cluster_gamma = result.get("cluster_gamma") or []
    labels = attribute_label_map(result)
    names = clusters(result)
    tops = cluster_tops(cluster_gamma, cluster_top)
    columns = [
        attribute_key(r) for r in cluster_gamma if str(r.get("cluster")) == names[0]
    ]  # γ highest first
    parts = [
        f'<p class="note">γ(cluster, a) aggregates the subjects of each cluster ({escape(", ".join(names))}); '
        f"the table lists the top {cluster_top} attributes most associated with each cluster (the paper's "
        f"Table 2). In the heat map, attributes are ordered by γ({escape(names[0])}, a), highest first.</p>",
        _table(
            ["cluster", "#", "attribute", "γ(cluster, a)", _ci(result), "η(cluster, a)"],
            [
                f"<tr>{_cell(name, 'l')}{_cell(str(i))}"
                f"{_cell(labels.get(attribute_key(r), str(r.get('attribute'))), 'l')}"
                f"{_signed_cell(r.get('gamma'))}{_cell(fmt_interval(interval_of(r), signed=True))}"
                f"{_signed_cell(r.get('eta'))}</tr>"
                for name, records in tops.items()
                for i, r in enumerate(records, 1)
            ],
            left=(0, 2),
        ),
        '<div class="chart">'
        + charts.heatmap(
            cluster_gamma,
            row_key="cluster",
            row_order=names,
            column_order=columns,
            usual_count=usual_count,
            title=None,
            row_title="cluster",
        )
        + "</div>",
    ]
    return Section("clusters", "Clusters", "Clusters × attributes", "\n".join(parts))


def _method_section(result: Mapping) -> Section:
    """How the intervals were computed, and the paper."""
    parts = [f"<p>{escape(bootstrap_line(result))}</p>"]
    if result.get("bootstrap"):
        parts.append(
            '<p class="note">The tables hold many γ(x, a): about 5% of their 95% intervals exclude 0 by chance; '
            "correct for multiple comparisons before calling one pair significant.</p>"
        )
    parts.append(
        '<p class="note">UnQover: Li, Khot, Khashabi, Sabharwal and Srikumar, “UNQOVERing Stereotyping Biases via '
        "Underspecified Questions”, Findings of EMNLP 2020.</p>"
    )
    return Section("method", "Method", "Method", "\n".join(parts))
