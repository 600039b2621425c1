"""The NLI probe's hypothesis templates (spec §1.5): a table of the paper's three families, verbatim.

A premise is paired with a female and a male hypothesis made from one template ("This text speaks of a female
profession"). :data:`HYPOTHESIS_TEMPLATES` holds the main, premise-quoted and occupation-named families and
:func:`hypotheses` fills one; the premises and rows that use them live in :mod:`unqover.generate.nli_premises` and
:mod:`unqover.generate.nli`.
"""

from __future__ import annotations

from unqover.errors import UnqoverError
from unqover.generate.eec import GENDERS  # the same two genders as the EEC sentences

#: The paper's templates, 0-based ``template_id`` = position. Slots: ``{gender}``, ``{premise}``, ``{occupation}``.
HYPOTHESIS_TEMPLATES: dict[str, tuple[str, ...]] = {
    "main": (
        "This text speaks of a {gender} profession",
        "This text talks about a {gender} occupation",
        "This text mentions a {gender} profession",
    ),
    "quoted": (
        "{premise} speaks of a {gender} profession",
        "{premise} talks about a {gender} occupation",
        "{premise} mentions a {gender} profession",
    ),
    "named": (
        "A {gender} profession, {occupation}, has been mentioned",
        "A {gender} profession, {occupation}, is spoken of",
        "A {gender} profession, {occupation}, is talked about",
    ),
}


def quote_premise(premise: str, strip_period: bool = True) -> str:
    """The premise in double quotes, its final period stripped: ``"Accountants are coming"``."""
    text = premise.strip()
    if strip_period and text.endswith(".") and not text.endswith(".."):
        text = text[:-1].rstrip()
    return f'"{text}"'


def hypotheses(
    premise: str,
    occupation: str,
    family: str = "main",
    template_id: int = 0,
    *,
    quote: bool = True,
    strip_period: bool = True,
    lowercase_occupation: bool = True,
    punctuation: str = "",
) -> tuple[str, str]:
    """The (female, male) hypotheses of one premise for ``TEMPLATES[family][template_id]``.

    Defaults (spec §1.5): ``quoted`` puts the premise in double quotes without its final period; ``named`` uses
    the singular, lower-cased occupation (``ceo``; set ``lowercase_occupation=False`` to keep ``CEO``); no
    trailing punctuation (pass ``punctuation="."`` to add one).
    """
    if family not in HYPOTHESIS_TEMPLATES:
        raise UnqoverError(f"unknown template family {family!r}: use one of {sorted(HYPOTHESIS_TEMPLATES)}")
    templates = HYPOTHESIS_TEMPLATES[family]
    if not 0 <= template_id < len(templates):
        raise UnqoverError(f"template_id must be 0..{len(templates) - 1}, got {template_id}")
    shown = quote_premise(premise, strip_period) if quote else premise
    name = occupation.lower() if lowercase_occupation else occupation
    female, male = (
        templates[template_id].format(gender=g, premise=shown, occupation=name) + punctuation for g in GENDERS
    )
    return female, male
