"""A self-contained HTML page (no scripts, no external resources) from a Markdown report.

The Markdown is rendered by markdown-it-py (CommonMark with tables) with raw HTML switched off, so text from the
data (model, dataset and word-list names) can never become markup: ``<script>`` in a word shows as ``<script>``.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from functools import cache

from markdown_it import MarkdownIt

STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}"
    "table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.2rem .5rem;text-align:left}"
    "td:not(.l),th:not(.l){text-align:right}blockquote{background:#fff4e5;padding:.5rem;margin:0}"
    "blockquote p{margin:0}"
)


def _cell_open(self, tokens, idx, options, env) -> str:
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
    """The Markdown as an HTML page, then the ``extra`` HTML fragments."""
    body = render_markdown(markdown) + "".join(extra)
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{STYLE}</style></head><body>{body}</body></html>"
    )
