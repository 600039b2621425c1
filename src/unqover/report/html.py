"""One self-contained HTML page of an UnQover results dict: inline CSS and SVG, no scripts, no external requests.

The page holds the content of :func:`unqover.report.markdown.markdown_report` plus three charts: the reasoning
errors, the subjects ranked by γ(x), and the γ(x, a) heat map (and, when the result has clusters, the cluster ×
attribute heat map). :func:`write_report` writes ``report.md`` and ``report.html`` atomically.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from unqover.files import write_text_atomic
from unqover.report import charts
from unqover.report.charts import attribute_key, escape, interval_of
from unqover.report.format import MISSING, fmt_count, fmt_interval, fmt_signed, number
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
    markdown_report,
    most_biased,
    most_biased_heading,
    most_biased_note,
    precision_line,
    ranking_rows,
    sample_warning,
    split_results,
    unit_line,
)
from unqover.report.provenance import provenance_items

MAX_HEATMAP_ROWS = 200  # larger subject sets show their top and bottom 100 subjects

CSS = """
:root{color-scheme:light}
body{margin:0;background:#fafafa;color:#1b1b1b;font:15px/1.5 system-ui,-apple-system,'Segoe UI',Helvetica,Arial,
sans-serif}
main{max-width:1180px;margin:0 auto;padding:24px 28px 48px;background:#fff}
h1{font-size:26px;margin:0 0 8px;line-height:1.25}
h2{font-size:19px;margin:34px 0 10px;padding-bottom:4px;border-bottom:1px solid #e2e2e2}
h3{font-size:16px;margin:22px 0 8px}
.warning{background:#fff4e5;border-left:4px solid #e8a33d;padding:8px 12px;margin:12px 0 18px}
.note,.muted{color:#555;font-size:14px}
nav{font-size:14px;color:#555}
nav a{color:#2d5f9a;margin-right:12px;text-decoration:none}
.cards{display:flex;flex-wrap:wrap;gap:14px;margin:12px 0}
.card{border:1px solid #ddd;border-radius:8px;padding:10px 16px;min-width:200px}
.card .label{font-size:13px;color:#555}
.card .value{font-size:28px;font-weight:650;font-variant-numeric:tabular-nums}
.card .detail{font-size:13px;color:#444;font-variant-numeric:tabular-nums}
table{border-collapse:collapse;margin:8px 0 14px;font-size:14px;font-variant-numeric:tabular-nums}
th,td{padding:3px 10px;border-bottom:1px solid #eee;text-align:right;vertical-align:top}
th{background:#f3f3f3;font-weight:600;border-bottom:1px solid #ccc}
td.l,th.l{text-align:left}
tr.gap td{color:#888;text-align:center}
.pos{color:#b2182b}.neg{color:#2166ac}.na{color:#999;font-style:italic}
.row{display:flex;flex-wrap:wrap;gap:28px;align-items:flex-start}
.chart{overflow-x:auto;margin:8px 0 16px}
.chart svg{max-width:100%;height:auto}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;font-size:14px}
dt{color:#555}dd{margin:0;overflow-wrap:anywhere}
footer{margin-top:36px;color:#777;font-size:13px}
"""


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


def _card(label: str, value: str, *details: str) -> str:
    body = "".join(f'<div class="detail">{escape(d)}</div>' for d in details if d)
    return (
        f'<div class="card"><div class="label">{escape(label)}</div>'
        f'<div class="value">{escape(value)}</div>{body}</div>'
    )


def _heatmap_rows(result: Mapping) -> tuple[list[str], str]:
    """The subjects the heat map shows (in ranking order) and a note when some are left out."""
    ranking = [r for r in ranking_rows(result.get("subject_gamma") or [], 0) if r is not None]
    order = [str(r.get("subject")) for r in ranking]
    if len(order) <= MAX_HEATMAP_ROWS:
        return order, ""
    half = MAX_HEATMAP_ROWS // 2
    return (
        [*order[:half], *order[-half:]],
        f"Showing the top and bottom {half} of {len(order)} subjects by γ(x).",
    )


def html_report(results: Mapping, title: str | None = None, *, top: int = 10, cluster_top: int = 5) -> str:
    """A self-contained HTML page: the Markdown report's content plus the error, ranking and heat-map charts."""
    from unqover import __version__

    result, provenance = split_results(results)
    title = title or default_title(provenance)
    ci = f"{level(result)} interval" if level(result) else "interval"
    labels = attribute_label_map(result)
    gamma = result.get("gamma") or []
    subject_gamma = result.get("subject_gamma") or []
    cluster_gamma = result.get("cluster_gamma") or []
    parts: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body><main>",
        f"<h1>{escape(title)}</h1>",
        f'<p class="warning" role="note">⚠ {escape(CONTENT_WARNING)}</p>',
    ]
    sections = [("headline", "Headline")]
    if gamma and top:
        sections.append(("pairs", "Most biased pairs"))
    if subject_gamma:
        sections.append(("ranking", "Ranking"))
    if gamma:
        sections.append(("heatmap", "Heat map"))
    if cluster_gamma:
        sections.append(("clusters", "Clusters"))
    sections += [("provenance", "Provenance"), ("method", "Method")]
    parts.append(
        "<nav>" + "".join(f'<a href="#{key}">{escape(name)}</a>' for key, name in sections) + "</nav>"
    )

    # headline
    rows = headline(result)
    parts += ['<section id="headline"><h2>Headline</h2>', f"<p>{escape(groups_line(result))}</p>"]
    stopped = precision_line(provenance)
    if stopped is not None:
        parts.append(f"<p>{escape(stopped[0].upper() + stopped[1:])}.</p>")
    parts += [f'<p class="warning" role="note">⚠ {escape(w)}</p>' for w in result.get("warnings") or []]
    parts.append('<div class="cards">')
    for row in rows:
        if row["key"] in ("mu", "eta"):
            value, beside, note = headline_parts(row)
            if row.get("declined"):  # the reason is printed once, in the table below
                beside, note = "declined: the reason is in the table below", ""
            parts.append(_card(row["name"], value, beside, note))
    parts.append("</div>")
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
    parts.append(f'<p class="note">{escape(HOW_TO_READ)}</p></section>')

    # most biased pairs
    if gamma and top:
        chosen = most_biased(result, top)
        parts.append(f'<section id="pairs"><h2>{escape(most_biased_heading(result, len(chosen)))}</h2>')
        note = most_biased_note(result)
        if note:
            parts.append(f'<p class="note">{escape(note)}</p>')
        parts.append(
            ""
            if not chosen
            else _table(
                ["#", "subject", "attribute", "γ(x, a)", ci, "η(x, a)", "n"],
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
        parts.append("</section>")

    # ranking
    if subject_gamma:
        shown = ranking_rows(subject_gamma, top)
        parts.append('<section id="ranking"><h2>Subjects ranked by γ(x)</h2>')
        parts.append(
            '<p class="note">The paper\'s Figs. 4–5 for this model: rank 1 is the subject most associated with '
            f"the attributes. Dots: γ(x); whiskers: the {escape(ci)} where measured.</p>"
        )
        parts.append(f'<div class="chart">{charts.ranking_chart(subject_gamma, title=None, width=900)}</div>')
        what = "all subjects" if None not in shown else f"top and bottom {top} of {len(subject_gamma)}"
        parts.append(f"<h3>Ranking table ({escape(what)})</h3>")
        parts.append(
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
            )
        )
        parts.append("</section>")

    # heat map of γ(x, a)
    if gamma:
        order, note = _heatmap_rows(result)
        records = gamma
        if note:
            keep = set(order)
            records = [r for r in gamma if str(r.get("subject")) in keep]
        parts.append('<section id="heatmap"><h2>γ(x, a): subjects × attributes</h2>')
        parts.append(
            '<p class="note">Red: the subject is preferred as the answer for the attribute; blue: avoided; '
            "hatched grey: missing (not measured or undefined). The scale is symmetric around 0. Rows follow the "
            "γ(x) ranking; columns are ordered so that attributes on which the top-ranked subjects score highest "
            "come first (the mean of γ(x, a) over subjects is 0 by complementarity, so it cannot order them). "
            f"Hover a cell for its exact values. {escape(note)}</p>"
        )
        parts.append(
            f'<div class="chart">'
            f"{charts.heatmap(records, row_order=order or None, title=None, row_title='subject (by γ(x))')}</div>"
        )
        parts.append("</section>")

    # clusters (the paper's Table 2 view)
    if cluster_gamma:
        names = clusters(result)
        parts.append('<section id="clusters"><h2>Clusters × attributes</h2>')
        parts.append(
            f'<p class="note">γ(cluster, a) aggregates the subjects of each cluster ({escape(", ".join(names))}); '
            f"the table lists the top {cluster_top} attributes most associated with each cluster (the paper's "
            f"Table 2). In the heat map, attributes are ordered by γ({escape(names[0])}, a), highest first.</p>"
        )
        tops = cluster_tops(cluster_gamma, cluster_top)
        parts.append(
            _table(
                ["cluster", "#", "attribute", "γ(cluster, a)", ci, "η(cluster, a)"],
                [
                    f"<tr>{_cell(name, 'l')}{_cell(str(i))}"
                    f"{_cell(labels.get(attribute_key(r), str(r.get('attribute'))), 'l')}"
                    f"{_signed_cell(r.get('gamma'))}{_cell(fmt_interval(interval_of(r), signed=True))}"
                    f"{_signed_cell(r.get('eta'))}</tr>"
                    for name, records in tops.items()
                    for i, r in enumerate(records, 1)
                ],
                left=(0, 2),
            )
        )
        first = [r for r in cluster_gamma if str(r.get("cluster")) == names[0]]
        columns = [
            attribute_key(r)
            for r in sorted(
                first, key=lambda r: (number(r.get("gamma")) is None, -(number(r.get("gamma")) or 0))
            )
        ]
        parts.append(
            '<div class="chart">'
            + charts.heatmap(
                cluster_gamma,
                row_key="cluster",
                row_order=names,
                column_order=columns,
                title=None,
                row_title="cluster",
            )
            + "</div></section>"
        )

    # provenance and method
    parts.append('<section id="provenance"><h2>Provenance</h2>')
    items = provenance_items(provenance)
    if items:
        parts.append(
            "<dl>"
            + "".join(f"<dt>{escape(label)}</dt><dd>{escape(text)}</dd>" for label, text in items)
            + "</dl>"
        )
    else:
        parts.append('<p class="muted">Not recorded.</p>')
    parts.append("</section>")
    parts.append(f'<section id="method"><h2>Method</h2><p>{escape(bootstrap_line(result))}</p>')
    if result.get("bootstrap"):
        parts.append(
            '<p class="note">The tables hold many γ(x, a): about 5% of their 95% intervals exclude 0 by chance; '
            "correct for multiple comparisons before calling one pair significant.</p>"
        )
    parts.append(
        '<p class="note">UnQover: Li, Khot, Khashabi, Sabharwal and Srikumar, “UNQOVERing Stereotyping Biases via '
        "Underspecified Questions”, Findings of EMNLP 2020.</p></section>"
    )
    parts.append(f"<footer>Generated by unqover {escape(__version__)}.</footer></main></body></html>")
    return "\n".join(parts)


def report_paths(run_dir_or_path: str | os.PathLike) -> tuple[Path, Path]:
    """Where :func:`write_report` writes: ``report.md``/``report.html`` in a run folder (an existing folder or a
    path without a suffix), else beside the given file with its suffix replaced (``x.bias.json`` → ``x.bias.md``)."""
    path = Path(run_dir_or_path)
    if path.name == "results.json":
        path = path.parent
    if path.is_dir() or not path.suffix:
        return path / "report.md", path / "report.html"
    return path.with_suffix(".md"), path.with_suffix(".html")


def write_report(
    run_dir_or_path: str | os.PathLike, results: Mapping | None = None, title: str | None = None
) -> tuple[Path, Path]:
    """Write the Markdown and HTML reports atomically (temporary file + rename); returns their paths.

    ``results`` defaults to the results read from ``run_dir_or_path`` (its ``results.json``, or the JSON file).
    """
    if results is None:
        from unqover.report.compare_checks import load_results

        results = load_results(run_dir_or_path)
    md_path, html_path = report_paths(run_dir_or_path)
    markdown, page = markdown_report(results, title), html_report(results, title)
    write_text_atomic(md_path, markdown)
    write_text_atomic(html_path, page)
    return md_path, html_path
