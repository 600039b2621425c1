"""What a user-defined UnQover probe is once read: its subjects, attributes and templates, and their placeholders.

The checked form of a probe file (:func:`unqover.lexicon.custom.read_probe_file` reads and checks one): the keys a
file may hold, :class:`CustomProbeSpec` with its :class:`CustomAttribute` and :class:`CustomTemplate` items, its texts
as literal strings and :class:`~unqover.lexicon.wordlists.Slot` placeholders (:func:`segments`) for
:mod:`unqover.generate.custom` to fill, the masked-LM form of a "Who ...?" question (:func:`derive_masked`), and
the mapping a probe file holds (:func:`probe_to_dict`). Nothing here reads files, rows or models.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from unqover.lexicon.wordlists import Segment, Slot

#: Top-level keys of a probe file.
REQUIRED_KEYS = ("name", "subjects", "attributes", "templates")
OPTIONAL_KEYS = ("description", "license", "language", "fix_articles")
ATTRIBUTE_KEYS = ("positive", "negated", "cluster", "type")
TEMPLATE_KEYS = ("context", "question", "negated_question", "mlm", "mlm_negated")
#: ``type`` of an attribute, written to the rows' ``attribute_type`` like the built-in classes.
ATTRIBUTE_TYPES = ("p_act", "l_act")

SUBJECT_1 = Slot("subject", "subj1")
SUBJECT_2 = Slot("subject", "subj2")
ATTRIBUTE = Slot("attribute", "attribute")
ATTRIBUTE_NEGATED = Slot("attribute", "attribute", "neg")
MASK = Slot("mask", "mask")
PLACEHOLDERS = {"subject_1": SUBJECT_1, "subject_2": SUBJECT_2, "attribute": ATTRIBUTE, "mask": MASK}

#: Placeholders each template field may hold.
FIELD_PLACEHOLDERS = {
    "context": ("subject_1", "subject_2"),
    "question": ("attribute",),
    "negated_question": ("attribute",),
    "mlm": ("attribute", "mask"),
    "mlm_negated": ("attribute", "mask"),
}

_BRACES = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_WHO = re.compile(r"Who (?P<rest>.+)\?")


@dataclass(frozen=True)
class CustomAttribute:
    """An attribute: ``positive`` is its identity (the rows' ``attribute``); ``negated`` is None when the
    templates negate it (``negated_question``)."""

    positive: str
    negated: str | None = None
    cluster: str | None = None
    type: str = "p_act"


@dataclass(frozen=True)
class CustomTemplate:
    """A template: the context with ``{subject_1}``/``{subject_2}``, the question with ``{attribute}``, and
    optional template-level negation and masked-LM forms (``{mask}`` where the mask goes)."""

    context: str
    question: str
    negated_question: str | None = None
    mlm: str | None = None
    mlm_negated: str | None = None
    line: int | None = field(default=None, compare=False)

    @property
    def masked_question(self) -> str | None:
        """The masked-LM question: ``mlm``, else derived from ``question``; None when it cannot be derived."""
        return self.mlm if self.mlm is not None else derive_masked(self.question)

    @property
    def masked_negated_question(self) -> str | None:
        """The masked-LM negated question when the template negates (None: negate the attribute instead)."""
        if self.negated_question is None:
            return None
        if self.mlm_negated is not None:
            return self.mlm_negated
        return derive_masked(self.negated_question)

    @property
    def masked_derivable(self) -> bool:
        return self.masked_question is not None and (
            self.negated_question is None or self.masked_negated_question is not None
        )


@dataclass(frozen=True)
class CustomProbeSpec:
    """A user-defined UnQover probe, as read (and fully checked) by :func:`read_probe_file`.

    ``subjects`` lists every subject in file order; ``clusters`` is ``((cluster, members), ...)`` when the file
    gives clusters (pairs are formed across clusters) and None for a flat list (every pair).
    """

    name: str
    subjects: tuple[str, ...]
    clusters: tuple[tuple[str, tuple[str, ...]], ...] | None
    attributes: tuple[CustomAttribute, ...]
    templates: tuple[CustomTemplate, ...]
    description: str | None = None
    license: str | None = None
    language: str = "en"
    fix_articles: bool = False
    source: str = field(default="<probe>", compare=False)

    def cluster_of(self, subject: str) -> str | None:
        for cluster, members in self.clusters or ():
            if subject in members:
                return cluster
        return None

    @property
    def subject_clusters(self) -> tuple[str | None, ...]:
        """The cluster of each subject of :attr:`subjects` (all None for a flat list)."""
        return tuple(self.cluster_of(s) for s in self.subjects)


def derive_masked(question: str) -> str | None:
    """The masked-LM form of a QA question: ``"Who …?"`` -> ``"{mask} …."``; None for any other question."""
    match = _WHO.fullmatch(question)
    return None if match is None else "{mask} " + match["rest"] + "."


def segments(text: str) -> tuple[Segment, ...]:
    """A checked probe text as literal strings and :class:`Slot` placeholders (``{{``/``}}`` are braces)."""
    parts: list[Segment] = []
    literal: list[str] = []
    position = 0
    for match in _BRACES.finditer(text):
        literal.append(text[position : match.start()])
        token = match.group()
        if token in ("{{", "}}"):
            literal.append(token[0])
        else:
            if "".join(literal):
                parts.append("".join(literal))
            literal = []
            parts.append(PLACEHOLDERS[match[1]])
        position = match.end()
    literal.append(text[position:])
    if "".join(literal):
        parts.append("".join(literal))
    return tuple(parts)


def probe_to_dict(probe: CustomProbeSpec) -> dict[str, Any]:
    """The probe as the mapping a probe file holds (defaults left out); :func:`parse_probe` reads it back."""
    out: dict[str, Any] = {"name": probe.name}
    for key in OPTIONAL_KEYS:
        value = getattr(probe, key)
        if value not in (None, "en", False):
            out[key] = value
    out["subjects"] = (
        {cluster: list(members) for cluster, members in probe.clusters}
        if probe.clusters is not None
        else list(probe.subjects)
    )
    attributes: list[Any] = []
    for a in probe.attributes:
        item = {"positive": a.positive, "negated": a.negated, "cluster": a.cluster, "type": a.type}
        item = {k: v for k, v in item.items() if v is not None and not (k == "type" and v == "p_act")}
        attributes.append(item)
    out["attributes"] = attributes
    out["templates"] = [
        {k: getattr(t, k) for k in TEMPLATE_KEYS if getattr(t, k) is not None} for t in probe.templates
    ]
    return out


__all__ = [
    "ATTRIBUTE",
    "ATTRIBUTE_NEGATED",
    "MASK",
    "SUBJECT_1",
    "SUBJECT_2",
    "CustomAttribute",
    "CustomProbeSpec",
    "CustomTemplate",
    "derive_masked",
    "probe_to_dict",
    "segments",
]
