"""Template rendering and the original generator's article fix, with exact character offsets."""

from __future__ import annotations

from collections.abc import Mapping

from unqover.lexicon.wordlists import Segment, Slot

VOWELS = frozenset("aeiouAEIOU")

BE_FORMS = ("is", "are", "was", "were", "be", "been", "being")
"""The forms of *be* but the first person's ``am``: word lists of auxiliaries and linking verbs start from them."""


def render(
    segments: tuple[Segment, ...], values: Mapping[Slot, str]
) -> tuple[str, dict[Slot, tuple[int, int]]]:
    """Join literal text and slot values; return the text and the ``[start, end)`` of each slot's first use."""
    parts: list[str] = []
    spans: dict[Slot, tuple[int, int]] = {}
    position = 0
    for segment in segments:
        text = segment if isinstance(segment, str) else values[segment]
        if isinstance(segment, Slot) and segment not in spans:
            spans[segment] = (position, position + len(text))
        parts.append(text)
        position += len(text)
    return "".join(parts), spans


def fix_articles(text: str, first_token_fixable: bool = True) -> tuple[str, list[int]]:
    """The original's only grammar fix: a token ``a``/``A`` before a vowel-initial token becomes ``an``/``An``.

    Tokens are split on single spaces; the vowel test is on the next token's first letter only (so it writes
    "an European", and never turns "an" into "a"). The original runs this over the whole TAB-joined line, where
    the first token of a question is glued to the previous field's last token and is therefore never
    rewritten: pass ``first_token_fixable=False`` for questions. Returns the text and the positions (in the
    input) where an ``n`` was inserted, so that offsets can be shifted.
    """
    tokens = text.split(" ")
    inserted: list[int] = []
    start = 0
    for i, token in enumerate(tokens[:-1]):
        if token in ("a", "A") and tokens[i + 1][:1] in VOWELS and (i > 0 or first_token_fixable):
            tokens[i] = token + "n"
            inserted.append(start + 1)
        start += len(token) + 1
    return " ".join(tokens), inserted


def shift_span(span: tuple[int, int], inserted: list[int]) -> tuple[int, int]:
    """Move a ``[start, end)`` span past single-character insertions made at the given input positions."""
    start, end = span
    return start + sum(q <= start for q in inserted), end + sum(q < end for q in inserted)
