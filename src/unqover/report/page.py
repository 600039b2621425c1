"""A self-contained HTML page (no scripts, no external resources) from a simple Markdown report.

Understands what the reports write: ``# `` and ``## `` headings, ``> `` notes, ``- `` bullet lists, pipe tables
and paragraphs, and inline ``**bold**``, `` `code` `` and backslash escapes (a backslash before a character).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}"
    "table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.2rem .5rem;text-align:left}"
    ".warning{background:#fff4e5;padding:.5rem}"
)


_CODE = re.compile(r"`([^`]*)`")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>])")


def inline(text: str) -> str:
    """Markdown inline text as HTML: code spans verbatim, ``**bold**``, backslash escapes undone, the rest escaped."""
    out = []
    for k, part in enumerate(_CODE.split(text)):
        if k % 2:  # inside backticks
            out.append(f"<code>{html.escape(part)}</code>")
            continue
        escaped = html.escape(_ESCAPED.sub(lambda m: "\x00" + str(ord(m[1])) + "\x00", part))
        escaped = _BOLD.sub(r"<strong>\1</strong>", escaped)
        out.append(re.sub("\x00(\\d+)\x00", lambda m: html.escape(chr(int(m[1]))), escaped))
    return "".join(out)


def _table_row(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [inline(c.strip()) for c in cells]


def markdown_page(markdown: str, title: str, extra: Sequence[str] = ()) -> str:
    """The Markdown's headings, notes, tables and paragraphs as HTML, then the ``extra`` HTML fragments."""
    body: list[str] = []
    in_table = in_list = False
    for line in markdown.splitlines():
        if in_list and not line.startswith("- "):
            body.append("</ul>")
            in_list = False
        if line.startswith("- "):
            if not in_list:
                body.append("<ul>")
                in_list = True
            body.append(f"<li>{inline(line[2:])}</li>")
            continue
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
            body.append(f"<h1>{inline(line[2:])}</h1>")
        elif line.startswith("## "):
            body.append(f"<h2>{inline(line[3:])}</h2>")
        elif line.startswith("> "):
            body.append(f'<p class="warning">{inline(line[2:])}</p>')
        elif line:
            body.append(f"<p>{inline(line)}</p>")
    if in_table:
        body.append("</table>")
    if in_list:
        body.append("</ul>")
    body.extend(extra)
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{STYLE}</style></head><body>{''.join(body)}</body></html>"
    )
