"""A self-contained HTML page (no scripts, no external resources) from a simple Markdown report.

Understands what the reports write: ``# `` and ``## `` headings, ``> `` notes, pipe tables and paragraphs.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}"
    "table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.2rem .5rem;text-align:left}"
    ".warning{background:#fff4e5;padding:.5rem}"
)


def _table_row(line: str) -> list[str]:
    return [html.escape(c.strip()) for c in line.strip().strip("|").split("|")]


def markdown_page(markdown: str, title: str, extra: Sequence[str] = ()) -> str:
    """The Markdown's headings, notes, tables and paragraphs as HTML, then the ``extra`` HTML fragments."""
    body: list[str] = []
    in_table = False
    for line in markdown.splitlines():
        if line.startswith("|"):
            cells = _table_row(line)
            if set("".join(cells)) <= set("-:"):
                continue
            tag = "td" if in_table else "th"
            if not in_table:
                body.append("<table>")
                in_table = True
            body.append("<tr>" + "".join(f"<{tag}>{c}</{tag}>" for c in cells) + "</tr>")
            continue
        if in_table:
            body.append("</table>")
            in_table = False
        if line.startswith("# "):
            body.append(f"<h1>{html.escape(line[2:])}</h1>")
        elif line.startswith("## "):
            body.append(f"<h2>{html.escape(line[3:])}</h2>")
        elif line.startswith("> "):
            body.append(f'<p class="warning">{html.escape(line[2:])}</p>')
        elif line:
            body.append(f"<p>{html.escape(line)}</p>")
    if in_table:
        body.append("</table>")
    body.extend(extra)
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{STYLE}</style></head><body>{''.join(body)}</body></html>"
    )
