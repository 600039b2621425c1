"""The one page design of every HTML report (UnQover, NLI, emotion, person): self-contained (inline CSS and SVG, no
scripts, no external resources), with a header naming the probe, model, dataset and selection, the headline numbers
in cards, the tables and charts in sections, the provenance section and the footer.

Reports written as Markdown (NLI, emotion, person) are rendered by markdown-it-py (CommonMark with tables) with raw
HTML switched off, so text from the data (model, dataset and word-list names) can never become markup: ``<script>``
in a word shows as ``<script>``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache
from typing import NamedTuple

from markdown_it import MarkdownIt

from unqover.format import fmt_count
from unqover.report.charts import escape
from unqover.report.provenance import provenance_items

CSS = """
:root{color-scheme:light}
body{margin:0;background:#fafafa;color:#1b1b1b;font:15px/1.5 system-ui,-apple-system,'Segoe UI',Helvetica,Arial,
sans-serif}
main{max-width:1180px;margin:0 auto;padding:24px 28px 48px;background:#fff}
h1{font-size:26px;margin:0 0 8px;line-height:1.25}
h2{font-size:19px;margin:34px 0 10px;padding-bottom:4px;border-bottom:1px solid #e2e2e2}
h3{font-size:16px;margin:22px 0 8px}
.warning,blockquote{background:#fff4e5;border-left:4px solid #e8a33d;padding:8px 12px;margin:12px 0 18px}
blockquote p{margin:0}
.note,.muted,.scope{color:#555;font-size:14px}
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


class Section(NamedTuple):
    """One section of a page: its anchor, its name in the navigation, its heading and its HTML."""

    key: str
    nav: str
    heading: str
    body: str


# ---------------------------------------------------------------------------------------------------------------
# Markdown


def _cell_open(self, tokens, idx, options, env) -> str:  # markdown-it's render-rule signature
    """A table cell's tag with a class instead of an inline style: right-aligned columns (``---:``) take the page's
    default (numbers), every other column is ``class="l"`` (text, left)."""
    token = tokens[idx]
    right = "right" in str(token.attrGet("style") or "")
    return f"<{token.tag}>" if right else f'<{token.tag} class="l">'


@cache
def _parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark", {"html": False}).enable("table")
    parser.add_render_rule("th_open", _cell_open)
    parser.add_render_rule("td_open", _cell_open)
    return parser


def render_markdown(markdown: str) -> str:
    """Markdown as an HTML fragment (raw HTML in the text is escaped, not passed through)."""
    return _parser().render(markdown)


def markdown_page(markdown: str, title: str, extra: Sequence[str] = ()) -> str:
    """A plain Markdown document (a summary of several runs) as a page of this design, then ``extra`` HTML."""
    return page(title, [Section("", "", "", render_markdown(markdown) + "".join(extra))], heading=False)


# ---------------------------------------------------------------------------------------------------------------
# the parts of a page


def card(label: str, value: str, *details: str) -> str:
    """One headline card: the number's name, its value large, then the details (interval, notes) below."""
    body = "".join(f'<div class="detail">{escape(d)}</div>' for d in details if d)
    return (
        f'<div class="card"><div class="label">{escape(label)}</div>'
        f'<div class="value">{escape(value)}</div>{body}</div>'
    )


def cards_block(cards: Sequence[str]) -> str:
    """The headline block: the cards side by side."""
    return f'<div class="cards">{"".join(cards)}</div>'


def headline_cards(headline: Mapping[str, str]) -> str:
    """The cards of a probe's headline numbers in the words its reports print them with (name -> words): the value
    large, what follows it (``[low, high]``, ``(p = …)``, ``(no interval)``) below."""
    cards = []
    for label, words in headline.items():
        split = re.fullmatch(r"(.*?) ([\[(].*)", str(words))
        cards.append(card(label, *(split.groups() if split else (str(words),))))
    return cards_block(cards)


def selection_words(selection: object) -> str:
    """A recorded selection, short: ``every row``, ``quick run (limit 200, seed 0)``, ``subset (why)``."""
    if not isinstance(selection, Mapping) or selection.get("kind") == "full":
        return "every row"
    if selection.get("kind") == "subset":
        return f"subset ({selection.get('why')})"
    parts = [
        f"{key} {fmt_count(value) if isinstance(value, int) else value}"
        for key in ("limit", "sample", "precision", "seed")
        if isinstance(value := selection.get(key), int | float) and not isinstance(value, bool)
    ]
    return "quick run" + (f" ({', '.join(parts)})" if parts else "")


def scope_line(probe: str | None, provenance: Mapping) -> str:
    """The header's line: which probe, model, dataset and selection the page is about (what was recorded)."""
    items = dict(provenance_items(provenance))
    parts = [("probe", probe or provenance.get("probe"))]
    parts += [(name, items.get(name)) for name in ("model", "dataset")]
    if "selection" in provenance:
        parts.append(("selection", selection_words(provenance["selection"])))
    return " · ".join(f"{name}: {escape(text)}" for name, text in parts if text)


def provenance_section(provenance: Mapping) -> Section:
    """The provenance section of every page: one line per recorded fact."""
    items = provenance_items(provenance)
    body = (
        "<dl>"
        + "".join(f"<dt>{escape(label)}</dt><dd>{escape(text)}</dd>" for label, text in items)
        + "</dl>"
        if items
        else '<p class="muted">Not recorded.</p>'
    )
    return Section("provenance", "Provenance", "Provenance", body)


def page(
    title: str,
    sections: Sequence[Section],
    *,
    warning: str | None = None,
    scope: str = "",
    heading: bool = True,
) -> str:
    """The page: the title, the content warning, the scope line, the navigation of the sections, the sections
    and the footer. ``heading=False``: no ``<h1>`` (the body has its own) and no navigation."""
    from unqover import __version__

    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body><main>",
    ]
    if heading:
        parts.append(f"<h1>{escape(title)}</h1>")
    if warning:
        parts.append(f'<p class="warning" role="note">⚠ {escape(warning)}</p>')
    if scope:
        parts.append(f'<p class="scope">{scope}</p>')
    if heading:
        parts.append(
            "<nav>" + "".join(f'<a href="#{s.key}">{escape(s.nav)}</a>' for s in sections if s.key) + "</nav>"
        )
    for s in sections:
        if not s.key:
            parts.append(s.body)
            continue
        parts.append(f'<section id="{s.key}"><h2>{escape(s.heading)}</h2>{s.body}</section>')
    parts.append(f"<footer>Generated by unqover {escape(__version__)}.</footer></main></body></html>")
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------------------------------
# a report written as Markdown


def _key(heading: str, taken: set[str]) -> str:
    """An anchor for a heading, unique on the page."""
    base = re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-") or "section"
    key, n = base, 2
    while key in taken:
        key, n = f"{base}-{n}", n + 1
    taken.add(key)
    return key


def markdown_parts(markdown: str) -> tuple[str, str | None, list[tuple[str, str]]]:
    """(title, content warning, sections) of a report's Markdown: its ``# `` title, the ``> `` note before anything
    else, and its ``## `` sections as (heading, Markdown) with the part before the first one under the heading
    ``""``; the ``## Provenance`` section is left out (the page shows the recorded provenance itself)."""
    lines = markdown.splitlines()
    title = lines.pop(0)[2:] if lines and lines[0].startswith("# ") else ""
    while lines and not lines[0].strip():
        lines.pop(0)
    warning = None
    if lines and lines[0].startswith("> "):
        warning = lines.pop(0)[2:]
    sections: list[tuple[str, list[str]]] = [("", [])]
    for line in lines:
        if line.startswith("## "):
            sections.append((line[3:].strip(), []))
        else:
            sections[-1][1].append(line)
    return title, warning, [(h, "\n".join(body)) for h, body in sections if h != "Provenance"]


def markdown_report_page(
    markdown: str,
    results: Mapping,
    headline: Mapping[str, str],
    charts: Sequence[str] = (),
    charts_heading: str = "Charts",
) -> str:
    """A probe's report written as Markdown on the page design: the header, the headline numbers in cards
    (``headline``: name -> the words the reports print), the Markdown's part before its first section under
    "Headline", each of its sections, the charts, then the recorded provenance."""
    title, warning, parts = markdown_parts(markdown)
    provenance = results.get("provenance") or {}
    taken = {"headline", "charts", "provenance"}
    sections = [
        Section("headline", "Headline", "Headline", headline_cards(headline) + render_markdown(parts[0][1]))
    ]
    sections += [Section(_key(h, taken), h, h, render_markdown(body)) for h, body in parts[1:]]
    if charts:
        body = "".join(f'<div class="chart">{chart}</div>' for chart in charts)
        sections.append(Section("charts", charts_heading, charts_heading, body))
    sections.append(provenance_section(provenance))
    scope = scope_line(results.get("probe"), provenance)
    return page(title, sections, warning=warning, scope=scope)
