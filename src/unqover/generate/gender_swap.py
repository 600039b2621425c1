"""Gender-swap augmentation for NLI debiasing (Sharma, Dey & Sinha 2021, §4).

The paper builds "a dictionary of gendered terms and their opposites (his↔her, he↔she etc.)", swaps the
training sentences that mention an occupation, and **adds** the swapped copies to the training set. The
dictionary is unpublished; ``GENDER_PAIRS`` below is ours, written in the spirit of the WinoBias swap lists with
their known defects fixed: every pair is symmetric, there are no typos, and no pair touches one of the probe's 38
occupations (so ``tailor``/``seamstress`` is left out on purpose: swapping it would change the probe's subject).
Names are left alone.

Rules of :func:`swap_gender`:

- Only whole words are swapped: a word is a maximal run of ASCII letters not glued to a digit or underscore, so
  ``the``, ``shell``, ``manager``, ``mankind`` and ``Hector`` are untouched, while ``man's`` becomes ``woman's``
  and ``father-in-law`` becomes ``mother-in-law``.
- Case is kept: ``he``→``she``, ``He``→``She``, ``HE``→``SHE``.
- The pronouns that English does not pair one-to-one are resolved from the next word, since no part-of-speech
  tagger is available offline. A word is *noun-ish* when it directly follows (only whitespace between) and is not
  in ``FUNCTION_WORDS`` (articles, prepositions, conjunctions, pronouns, auxiliaries, common adverbs and time
  words) and does not end in ``ly``.

  ===========  ============================  =========================================
  word         followed by a noun-ish word   otherwise (punctuation, end, function word)
  ===========  ============================  =========================================
  ``her``      ``his`` (possessive: her car)  ``him`` (object: saw her, gave her the book)
  ``his``      ``her`` (his car)              ``hers`` (the car is his.)
  ``him``      ``her``                        ``her``
  ``hers``     ``his``                        ``his``
  ===========  ============================  =========================================

  Known misses: ``her`` before a bare verb (``let her go``, ``made her cry``) is read as possessive and becomes
  ``his``; ``her`` before an adverb not ending in ``ly`` and not listed is read the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from unqover.errors import UnqoverError
from unqover.generate.text import BE_FORMS

# (male, female): one-to-one pairs. The pronouns him/his/her/hers are handled by rule (see the module docstring).
GENDER_PAIRS: tuple[tuple[str, str], ...] = (
    # pronouns
    ("he", "she"),
    ("himself", "herself"),
    # people
    ("man", "woman"),
    ("men", "women"),
    ("boy", "girl"),
    ("boys", "girls"),
    ("gentleman", "lady"),
    ("gentlemen", "ladies"),
    ("guy", "gal"),
    ("guys", "gals"),
    ("male", "female"),
    ("males", "females"),
    ("masculine", "feminine"),
    ("manhood", "womanhood"),
    ("boyhood", "girlhood"),
    # family
    ("father", "mother"),
    ("fathers", "mothers"),
    ("dad", "mom"),
    ("dads", "moms"),
    ("daddy", "mommy"),
    ("papa", "mama"),
    ("son", "daughter"),
    ("sons", "daughters"),
    ("brother", "sister"),
    ("brothers", "sisters"),
    ("husband", "wife"),
    ("husbands", "wives"),
    ("uncle", "aunt"),
    ("uncles", "aunts"),
    ("nephew", "niece"),
    ("nephews", "nieces"),
    ("grandfather", "grandmother"),
    ("grandfathers", "grandmothers"),
    ("grandpa", "grandma"),
    ("grandson", "granddaughter"),
    ("grandsons", "granddaughters"),
    ("stepfather", "stepmother"),
    ("stepson", "stepdaughter"),
    ("stepbrother", "stepsister"),
    ("fatherhood", "motherhood"),
    ("brotherhood", "sisterhood"),
    ("paternal", "maternal"),
    ("boyfriend", "girlfriend"),
    ("boyfriends", "girlfriends"),
    ("groom", "bride"),
    ("grooms", "brides"),
    ("fiance", "fiancee"),
    ("widower", "widow"),
    ("widowers", "widows"),
    # titles and address
    ("mr", "mrs"),
    ("sir", "madam"),
    ("king", "queen"),
    ("kings", "queens"),
    ("prince", "princess"),
    ("princes", "princesses"),
    ("duke", "duchess"),
    ("emperor", "empress"),
    ("monk", "nun"),
    ("monks", "nuns"),
    ("hero", "heroine"),
    ("heroes", "heroines"),
    # gendered role nouns (none is one of the probe's occupations)
    ("actor", "actress"),
    ("actors", "actresses"),
    ("waiter", "waitress"),
    ("waiters", "waitresses"),
    ("chairman", "chairwoman"),
    ("chairmen", "chairwomen"),
    ("businessman", "businesswoman"),
    ("businessmen", "businesswomen"),
    ("policeman", "policewoman"),
    ("policemen", "policewomen"),
    ("spokesman", "spokeswoman"),
    ("spokesmen", "spokeswomen"),
)

# Words after her/his that mark the object (her) or standalone (his) use rather than the possessive one.
FUNCTION_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "this",
        "that",
        "these",
        "those",
        "some",
        "any",
        "no",
        "every",
        "each",
        "all",
        "both",
        "either",
        "neither",
        "another",
        "such",
        "what",
        "which",
        "whose",
        "i",
        "me",
        "my",
        "mine",
        "you",
        "your",
        "yours",
        "he",
        "him",
        "his",
        "she",
        "her",
        "hers",
        "it",
        "its",
        "we",
        "us",
        "our",
        "ours",
        "they",
        "them",
        "their",
        "theirs",
        "myself",
        "yourself",
        "himself",
        "herself",
        "itself",
        "ourselves",
        "themselves",
        "who",
        "whom",
        "there",
        "here",
        "to",
        "of",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "about",
        "into",
        "onto",
        "over",
        "under",
        "after",
        "before",
        "during",
        "through",
        "between",
        "against",
        "among",
        "around",
        "behind",
        "beyond",
        "near",
        "off",
        "out",
        "up",
        "down",
        "upon",
        "within",
        "without",
        "toward",
        "towards",
        "across",
        "along",
        "since",
        "until",
        "till",
        "than",
        "as",
        "like",
        "via",
        "per",
        "and",
        "or",
        "but",
        "nor",
        "so",
        "yet",
        "if",
        "because",
        "although",
        "though",
        "while",
        "when",
        "where",
        "whether",
        "once",
        "unless",
        "am",
        *BE_FORMS,
        "do",
        "does",
        "did",
        "done",
        "have",
        "has",
        "had",
        "having",
        "will",
        "would",
        "shall",
        "should",
        "can",
        "could",
        "may",
        "might",
        "must",
        "not",
        "never",
        "too",
        "very",
        "quite",
        "rather",
        "really",
        "just",
        "also",
        "only",
        "even",
        "still",
        "again",
        "already",
        "always",
        "often",
        "sometimes",
        "soon",
        "later",
        "today",
        "tonight",
        "tomorrow",
        "yesterday",
        "now",
        "then",
        "away",
        "back",
        "home",
        "well",
        "anyway",
        "either",
        "instead",
        "enough",
        "much",
        "more",
        "most",
        "less",
        "least",
    ]
)

_WORD = re.compile(r"(?<![\w])[A-Za-z]+(?![\w])")
_NEXT_WORD = re.compile(r"\s+([A-Za-z]+)(?![\w])")
_AMBIGUOUS = frozenset({"her", "his", "him", "hers"})


def build_swap_map(pairs: Iterable[tuple[str, str]] = GENDER_PAIRS) -> dict[str, str]:
    """Lower-cased word → its opposite, both directions; refuses a word that maps to two different words."""
    swap: dict[str, str] = {}
    for male, female in pairs:
        m, f = male.lower(), female.lower()
        for a, b in ((m, f), (f, m)):
            if a in _AMBIGUOUS or b in _AMBIGUOUS:
                raise UnqoverError(f"{a!r}/{b!r}: her/his/him/hers are swapped by rule, not by the pair list")
            if swap.get(a, b) != b:
                raise UnqoverError(
                    f"{a!r} would swap to both {swap[a]!r} and {b!r}: the pairs must be one-to-one"
                )
            swap[a] = b
    return swap


SWAP_MAP: dict[str, str] = build_swap_map()


def _match_case(original: str, replacement: str) -> str:
    if len(original) > 1 and original.isupper():
        return replacement.upper()
    if original[0].isupper():
        return replacement[0].upper() + replacement[1:]
    return replacement


def _noun_follows(text: str, end: int) -> bool:
    """Whether a noun-ish word follows position ``end`` (see the module docstring)."""
    found = _NEXT_WORD.match(text, end)
    if found is None:
        return False
    word = found.group(1).lower()
    return word not in FUNCTION_WORDS and not word.endswith("ly")


def swap_gender(text: str, swap_map: dict[str, str] | None = None) -> str:
    """``text`` with every gendered word replaced by its opposite, keeping case and everything else."""
    table = SWAP_MAP if swap_map is None else swap_map

    def replace(match: re.Match) -> str:
        word = match.group(0)
        low = word.lower()
        if low == "her":
            new = "his" if _noun_follows(text, match.end()) else "him"
        elif low == "his":
            new = "her" if _noun_follows(text, match.end()) else "hers"
        elif low == "him":
            new = "her"
        elif low == "hers":
            new = "his"
        elif low in table:
            new = table[low]
        else:
            return word
        return _match_case(word, new)

    return _WORD.sub(replace, text)


def has_gendered_word(text: str, swap_map: dict[str, str] | None = None) -> bool:
    """Whether ``text`` has a word that :func:`swap_gender` would change."""
    table = SWAP_MAP if swap_map is None else swap_map
    return any(w.lower() in _AMBIGUOUS or w.lower() in table for w in _WORD.findall(text))


def _occupation_pattern(occupations: Iterable[str]) -> re.Pattern:
    words = sorted({o.strip().lower() for o in occupations if o.strip()}, key=len, reverse=True)
    if not words:
        raise UnqoverError("the occupation list is empty")
    parts = [r"\s+".join(re.escape(p) for p in w.split()) for w in words]
    return re.compile(r"(?<!\w)(?:" + "|".join(parts) + r")(?:s|es)?(?!\w)", re.IGNORECASE)


def augment_pairs(
    premises: Sequence[str],
    hypotheses: Sequence[str],
    labels: Sequence,
    occupations: Iterable[str] | None = None,
    swap_map: dict[str, str] | None = None,
) -> tuple[list[str], list[str], list]:
    """The pairs plus a gender-swapped copy of each pair that has a gendered word (paper §4: add, not replace).

    A copy swaps premise and hypothesis with the same map and keeps the label; copies follow the originals, in
    order. With ``occupations`` (e.g. :data:`unqover.generate.nli_occupations.PROBE_OCCUPATIONS`), only pairs
    whose premise or hypothesis mentions one of them (whole words, case-insensitive, plural ``s``/``es``
    allowed) get a copy.
    """
    premises, hypotheses, labels = list(premises), list(hypotheses), list(labels)
    if not len(premises) == len(hypotheses) == len(labels):
        raise UnqoverError(
            f"{len(premises)} premises, {len(hypotheses)} hypotheses and {len(labels)} labels: give one of each"
        )
    mentions = _occupation_pattern(occupations).search if occupations is not None else None
    new_p, new_h, new_l = [], [], []
    for p, h, label in zip(premises, hypotheses, labels, strict=True):
        if not (has_gendered_word(p, swap_map) or has_gendered_word(h, swap_map)):
            continue
        if mentions is not None and not (mentions(p) or mentions(h)):
            continue
        new_p.append(swap_gender(p, swap_map))
        new_h.append(swap_gender(h, swap_map))
        new_l.append(label)
    return premises + new_p, hypotheses + new_h, labels + new_l
