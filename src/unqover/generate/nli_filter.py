"""The paper's premise filters for the NLI probe: a verdict, with its reason, for every candidate sentence.

Filter rules of :func:`filter_premises`, checked in this order; the first failing check is the rejection
``reason`` (``detail`` says more):

1. ``duplicate``: the same sentence (after whitespace normalization) was seen before in the input.
2. ``too_long``: more than ``max_words`` whitespace tokens, not counting tokens without a letter or digit
   (punctuation).
3. ``no_occupation`` / ``multiple_occupations`` / ``repeated_occupation``: occupations are matched as whole
   words, case-insensitively, in the singular or the plural
   (:data:`~unqover.generate.nli_occupations.OCCUPATION_FORMS`: ``+s``, ``secretaries``, ``CEOs``,
   ``salespeople``/``salespersons``, ``construction workers``). A hyphen counts as part of a word, so
   ``tailor-made``, ``co-editor`` and ``editor-in-chief`` do not match at all. A sentence is kept only with exactly
   one occupation mentioned exactly once (a second mention would be left behind by a substitution).
4. ``non_noun_sense``: the noun-reading guard, :func:`unqover.generate.nli_noun_sense.non_noun_sense` (its
   module lists the rules): the word before and the word after the match say whether the occupation word is a
   verb (``to cook``), part of a compound naming a thing (``text editor``), an adjective (``cleaner than``) or a
   surname (``Baker Street``).
5. ``gendered_word``: :func:`unqover.generate.gender_swap.has_gendered_word` (the swap dictionary and
   he/she/him/her/his/hers), plus :data:`EXTRA_GENDERED_WORDS` (titles such as ``ms``, ``miss``, ``ma'am``).
   ``miss`` the verb is dropped too (conservative).
6. ``person_name``: ``person_ner(sentence)`` returns True. The default, :func:`heuristic_person_ner`, is
   conservative: any capitalized word that is neither the first word of the sentence (or of a clause after
   ``.``/``!``/``?``/``:``/``;`` or an opening quote) nor an occupation word, a function word, a day/month name or an
   all-capitals acronym counts as a name. It therefore also rejects places and organizations ("Paris"), and it
   misses a lone name at the very start ("Anna is a teacher."): plug in a real NER (e.g. NLTK's ``ne_chunk``,
   which the paper used) for corpus work.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from unqover.generate.gender_swap import FUNCTION_WORDS, has_gendered_word
from unqover.generate.nli_noun_sense import non_noun_sense
from unqover.generate.nli_occupations import _OCCUPATION_WORDS, _WORD_RE, find_occupations

# --- gendered words and names ------------------------------------------------------------------------------

#: Titles and address forms checked on top of the gender-swap dictionary (which has mr, mrs, sir, madam).
EXTRA_GENDERED_WORDS = frozenset(
    {"mr", "mrs", "ms", "miss", "madam", "ma'am", "sir", "mister", "missus", "mx"}
)
_KNOWN_CAPITALIZED = frozenset(
    [
        "i",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ]
)


def gendered(sentence: str) -> bool:
    """Whether the sentence has a gendered word (swap dictionary, pronouns, or :data:`EXTRA_GENDERED_WORDS`)."""
    if has_gendered_word(sentence):
        return True
    return any(w.lower() in EXTRA_GENDERED_WORDS for w in _WORD_RE.findall(sentence))


def heuristic_person_ner(sentence: str) -> bool:
    """The default, conservative name test (see the module docstring): True when a word looks like a name."""
    clause_start = True
    for token in sentence.split():
        opens_quote = token[:1] in "\"'(“‘["
        word = token.strip("\"'()[]{}“”‘’.,!?;:")
        is_start = clause_start or opens_quote
        clause_start = token.rstrip("\"')]”’")[-1:] in (".", "!", "?", ":", ";")
        if not word or not word[0].isupper() or is_start:
            continue
        letters = re.sub(r"[^A-Za-z]", "", word)
        low = word.lower()
        if len(letters) >= 2 and letters.isupper():
            continue  # acronym (CEO, TV)
        if (
            low in _OCCUPATION_WORDS
            or low in FUNCTION_WORDS
            or low in _KNOWN_CAPITALIZED
            or low.split("'")[0] in _KNOWN_CAPITALIZED
        ):
            continue
        return True
    return False


# --- premise filtering -------------------------------------------------------------------------------------

REJECTION_REASONS = (
    "duplicate",
    "too_long",
    "no_occupation",
    "multiple_occupations",
    "repeated_occupation",
    "non_noun_sense",
    "gendered_word",
    "person_name",
)


@dataclass(frozen=True)
class FilteredPremise:
    """One input sentence and the filters' verdict: ``reason`` is None when it is kept."""

    sentence: str
    reason: str | None
    detail: str = ""
    occupation: str | None = None
    is_plural: bool = False
    span: tuple[int, int] | None = None
    source: str = "unknown"

    @property
    def kept(self) -> bool:
        return self.reason is None


def count_words(sentence: str) -> int:
    """Whitespace tokens with at least one letter or digit (punctuation tokens do not count)."""
    return sum(any(c.isalnum() for c in token) for token in sentence.split())


def filter_premises(
    sentences: Iterable[str],
    *,
    max_words: int = 10,
    person_ner: Callable[[str], bool] | None = None,
    source: str = "unknown",
) -> list[FilteredPremise]:
    """A verdict for every sentence, in input order; see the module docstring for the rules and reasons.

    ``person_ner(sentence) -> bool`` says whether a sentence names a person (None: :func:`heuristic_person_ner`).
    Use :func:`kept` for the accepted premises and :func:`rejection_counts` for the counts per reason.
    """
    ner = heuristic_person_ner if person_ner is None else person_ner
    seen: set[str] = set()
    out = []
    for raw in sentences:
        sentence = " ".join(str(raw).split())
        verdict = _verdict(sentence, seen, max_words, ner)
        out.append(FilteredPremise(sentence=sentence, source=source, **verdict))
        seen.add(sentence)
    return out


def _verdict(sentence: str, seen: set[str], max_words: int, ner: Callable[[str], bool]) -> dict:
    if sentence in seen:
        return {"reason": "duplicate"}
    words = count_words(sentence)
    if words > max_words:
        return {"reason": "too_long", "detail": f"{words} words > {max_words}"}
    mentions = find_occupations(sentence)
    distinct = sorted({m[0] for m in mentions})
    if not mentions:
        return {"reason": "no_occupation"}
    if len(distinct) > 1:
        return {"reason": "multiple_occupations", "detail": ", ".join(distinct)}
    if len(mentions) > 1:
        return {"reason": "repeated_occupation", "detail": distinct[0]}
    occupation, is_plural, span = mentions[0]
    found = {"occupation": occupation, "is_plural": is_plural, "span": span}
    sense = non_noun_sense(sentence, occupation, span)
    if sense is not None:
        return {"reason": "non_noun_sense", "detail": sense, **found}
    if gendered(sentence):
        return {"reason": "gendered_word", **found}
    if ner(sentence):
        return {"reason": "person_name", **found}
    return {"reason": None, **found}


def kept(results: Iterable[FilteredPremise]) -> list[FilteredPremise]:
    """The accepted premises."""
    return [r for r in results if r.kept]


def rejection_counts(results: Iterable[FilteredPremise]) -> dict[str, int]:
    """Number of rejected sentences per reason (every reason present, zeros included)."""
    counts = Counter(r.reason for r in results if r.reason is not None)
    return {reason: counts.get(reason, 0) for reason in REJECTION_REASONS}
