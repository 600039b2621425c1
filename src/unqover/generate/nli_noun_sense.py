"""The noun-reading guard of the NLI premise filter: is an occupation word used as a person noun here?

Rule ``non_noun_sense`` of :func:`unqover.generate.nli_filter.filter_premises`. No part-of-speech tagger is
available offline, so :func:`non_noun_sense` looks at the single word directly before and after the match
(lower-cased), against the word lists below (:data:`NOUN_SENSE_RULES` lists them for documentation and cards):

- *verb*: ``cook``/``guard``/``tailor``/``nurse`` (and ``cooks`` ...) after ``to``, a modal or ``do``
  (``to cook``, ``will guard``, ``didn't nurse``), or before an object word (``the``, ``a``, ``his``, ``it``,
  ``up``, ``dinner`` ...: ``cook the pasta``, ``guards the gate``). Known miss in the other direction:
  ``give the nurse a book`` is rejected.
- *compound*: a thing, not a person: ``text editor``, ``photo developer``, ``glass cleaner``, ``screw driver``,
  ``package manager``, ``voice assistant``, ``on guard``, ``designer jeans``, ``guard dog``,
  ``farmers market``, ``cook book``, ``assistant professor`` (there ``assistant`` modifies another noun).
- *adjective*: ``cleaner`` as a comparative (``cleaner than``, ``is cleaner``, ``much cleaner``). Known
  miss: an attributive comparative (``a cleaner kitchen``) is kept.
- *surname*: ``Baker``/``Cook``/``Farmer``/``Carpenter``/``Tailor`` capitalized anywhere but the first
  word, or first and followed by a capitalized word (``Baker Street``, ``Cook Islands``).
"""

from __future__ import annotations

from unqover.generate.nli_occupations import _WORD_RE
from unqover.generate.text import BE_FORMS

_VERB_OCCUPATIONS = frozenset({"cook", "guard", "tailor", "nurse"})
_VERB_BEFORE = frozenset(
    [
        "to",
        "will",
        "would",
        "can",
        "could",
        "shall",
        "should",
        "may",
        "might",
        "must",
        "do",
        "does",
        "did",
        "don't",
        "doesn't",
        "didn't",
        "won't",
        "can't",
        "cannot",
        "couldn't",
        "wouldn't",
        "shouldn't",
        "let's",
        "please",
    ]
)
_VERB_AFTER = frozenset(
    [
        "the",
        "a",
        "an",
        "his",
        "her",
        "their",
        "its",
        "our",
        "your",
        "my",
        "some",
        "them",
        "it",
        "us",
        "me",
        "him",
        "up",
        "dinner",
        "breakfast",
        "lunch",
        "meals",
        "food",
    ]
)
_COMPOUND_BEFORE = {
    "editor": frozenset(
        [
            "text",
            "code",
            "source",
            "html",
            "wysiwyg",
            "hex",
            "image",
            "graphics",
            "level",
            "map",
            "spreadsheet",
            "photo",
        ]
    ),
    "developer": frozenset(["photo", "film", "photographic", "color", "colour"]),
    "cleaner": frozenset(
        [
            "glass",
            "vacuum",
            "toilet",
            "oven",
            "drain",
            "floor",
            "carpet",
            "pipe",
            "household",
            "air",
            "surface",
            "hand",
            "kitchen",
            "bathroom",
            "dry",
        ]
    ),
    "driver": frozenset(
        ["screw", "device", "printer", "graphics", "usb", "kernel", "audio", "software", "pile"]
    ),
    "manager": frozenset(["package", "task", "file", "window", "password", "download", "boot"]),
    "assistant": frozenset(["voice", "digital", "google", "ai"]),
    "guard": frozenset(
        ["on", "off", "national", "coast", "shin", "mouth", "fire", "knee", "rear", "chin", "splash"]
    ),
}
_COMPOUND_AFTER = {
    "designer": frozenset(
        [
            "jeans",
            "clothes",
            "clothing",
            "label",
            "labels",
            "bag",
            "bags",
            "handbag",
            "handbags",
            "shoes",
            "dress",
            "dresses",
            "brand",
            "brands",
            "goods",
            "sunglasses",
            "drugs",
            "baby",
            "babies",
            "furniture",
            "suit",
            "suits",
            "watch",
            "watches",
            "stubble",
            "fashion",
            "outfit",
            "outfits",
        ]
    ),
    "guard": frozenset(["dog", "dogs", "rail", "rails", "against", "duty", "house", "post", "tower"]),
    "developer": frozenset(["solution", "fluid", "tray", "bath"]),
    "cook": frozenset(["book", "books", "top", "stove", "ware"]),
    "farmer": frozenset(["market", "markets"]),
    "assistant": frozenset(
        [
            "professor",
            "professors",
            "coach",
            "coaches",
            "director",
            "directors",
            "principal",
            "district",
            "attorney",
            "referee",
            "dean",
            "chief",
        ]
    ),
}
_ADJECTIVE_BEFORE = {
    "cleaner": frozenset(
        [
            *BE_FORMS,
            "much",
            "even",
            "far",
            "slightly",
            "bit",
            "lot",
            "look",
            "looks",
            "looked",
            "seem",
            "seems",
            "seemed",
            "get",
            "gets",
            "got",
            "getting",
            "become",
            "becomes",
            "became",
            "stay",
            "stays",
            "keep",
            "keeps",
            "kept",
            "make",
            "makes",
            "made",
            "feel",
            "feels",
            "felt",
            "smell",
            "smells",
        ]
    ),
}
_ADJECTIVE_AFTER = {"cleaner": frozenset({"than"})}
_SURNAMES = frozenset({"baker", "cook", "farmer", "carpenter", "tailor"})

#: The rule list of the noun-reading guard, as (sense, occupations, where, words), for documentation and cards.
NOUN_SENSE_RULES: tuple[tuple[str, str, str, str], ...] = (
    ("verb", ", ".join(sorted(_VERB_OCCUPATIONS)), "word before", " ".join(sorted(_VERB_BEFORE))),
    ("verb", ", ".join(sorted(_VERB_OCCUPATIONS)), "word after", " ".join(sorted(_VERB_AFTER))),
    *(("compound", o, "word before", " ".join(sorted(w))) for o, w in _COMPOUND_BEFORE.items()),
    *(("compound", o, "word after", " ".join(sorted(w))) for o, w in _COMPOUND_AFTER.items()),
    *(("adjective", o, "word before", " ".join(sorted(w))) for o, w in _ADJECTIVE_BEFORE.items()),
    *(("adjective", o, "word after", " ".join(sorted(w))) for o, w in _ADJECTIVE_AFTER.items()),
    ("surname", ", ".join(sorted(_SURNAMES)), "capitalized", "not first word, or first and before a capital"),
)


def _neighbours(sentence: str, span: tuple[int, int]) -> tuple[str | None, str | None]:
    before = _WORD_RE.findall(sentence[: span[0]])
    after = _WORD_RE.match(sentence[span[1] :].lstrip(" \t'\""))
    return (before[-1] if before else None), (after.group(0) if after else None)


def non_noun_sense(sentence: str, occupation: str, span: tuple[int, int]) -> str | None:
    """Why the mention at ``span`` is not an occupation noun (e.g. ``"verb: to cook"``), or None (module rules)."""
    key = occupation.lower()
    before, after = _neighbours(sentence, span)
    low_before = before.lower() if before else None
    low_after = after.lower() if after else None
    mention = sentence[span[0] : span[1]]
    if key in _SURNAMES and mention[0].isupper():
        first = not _WORD_RE.search(sentence[: span[0]])
        if not first or (after is not None and after[0].isupper()):
            return f"surname/proper noun: {mention!r}"
    if key in _VERB_OCCUPATIONS:
        if low_before in _VERB_BEFORE:
            return f"verb: {before} {mention}"
        if low_after in _VERB_AFTER:
            return f"verb: {mention} {after}"
    if low_before in _COMPOUND_BEFORE.get(key, ()):
        return f"compound: {before} {mention}"
    if low_after in _COMPOUND_AFTER.get(key, ()):
        return f"compound: {mention} {after}"
    if low_before in _ADJECTIVE_BEFORE.get(key, ()) or low_after in _ADJECTIVE_AFTER.get(key, ()):
        return f"adjective: {(before or '')} {mention} {(after or '')}".strip()
    return None
