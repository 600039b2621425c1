"""NLI probe premises: the :class:`Premise` type, occupation substitution, and equalization to N per occupation.

Equalization (:func:`equalize`): for each occupation, its own kept sentences come first (a seeded sample of
``n_per_occupation`` in input order when there are more); the rest is filled with copies of other occupations'
original sentences, drawn in a seeded random order, with the occupation replaced: the number
(singular/plural) is kept, the capitalization of the first letter is kept, and an ``a``/``an`` directly before
a singular occupation is fixed ("an accountant", "a teacher", "a CEO"). A copy whose text equals one already
chosen for that occupation is skipped. The paper gives no rule against substituting into sentences whose rest
is occupation-specific ("The nurse gave the patient an injection"); neither do we (say so in dataset cards).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from unqover.errors import UnqoverError
from unqover.generate.nli_filter import FilteredPremise
from unqover.generate.nli_occupations import PROBE_OCCUPATIONS, occupation_plural


@dataclass(frozen=True)
class Premise:
    """A probe premise: ``text`` mentions ``occupation`` once, at ``span``.

    ``source_text`` is the sentence it was made from (itself unless substituted; the frame for synthetic
    premises) and ``source_occupation`` the occupation that sentence mentioned.
    """

    text: str
    occupation: str
    is_plural: bool
    span: tuple[int, int]
    source: str
    source_text: str
    source_occupation: str
    is_substituted: bool = False

    @classmethod
    def from_filtered(cls, item: FilteredPremise) -> Premise:
        if not item.kept or item.occupation is None or item.span is None:
            raise UnqoverError(f"not a kept premise: {item.sentence!r} ({item.reason})")
        return cls(
            item.sentence,
            item.occupation,
            item.is_plural,
            item.span,
            item.source,
            item.sentence,
            item.occupation,
        )


def _article(occupation: str) -> str:
    return "an" if occupation[0].lower() in "aeiou" and occupation != "CEO" else "a"


def substitute(premise: Premise, target: str) -> Premise:
    """``premise`` with its occupation replaced by ``target``, keeping number and first-letter case, fixing a/an."""
    start, end = premise.span
    mention = premise.text[start:end]
    form = occupation_plural(target) if premise.is_plural else target
    if mention[0].isupper() and form[0].islower():
        form = form[0].upper() + form[1:]
    before = premise.text[:start]
    if not premise.is_plural:
        article = re.search(r"(?<![\w'-])(an?)(\s+)$", before, re.IGNORECASE)
        if article is not None:
            new = _article(target)
            if article.group(1)[0].isupper():
                new = new.capitalize()
            before = before[: article.start()] + new + article.group(2)
    text = before + form + premise.text[end:]
    return Premise(
        text=text,
        occupation=target,
        is_plural=premise.is_plural,
        span=(len(before), len(before) + len(form)),
        source=premise.source,
        source_text=premise.source_text,
        source_occupation=premise.source_occupation,
        is_substituted=True,
    )


def _as_premises(premises: Iterable[FilteredPremise | Premise]) -> list[Premise]:
    out = []
    for item in premises:
        if isinstance(item, FilteredPremise):
            if item.kept:
                out.append(Premise.from_filtered(item))
        else:
            out.append(item)
    return out


def equalize(
    premises: Iterable[FilteredPremise | Premise],
    n_per_occupation: int = 50,
    seed: int = 0,
    occupations: Sequence[str] = PROBE_OCCUPATIONS,
) -> list[Premise]:
    """Exactly ``n_per_occupation`` premises per occupation, grouped by occupation in ``occupations`` order.

    Rejected :class:`FilteredPremise` items are ignored. Originals come first; the rest are substituted copies
    of other occupations' original sentences in a seeded order (see the module docstring). Raises
    :class:`UnqoverError` when the sentences cannot make ``n_per_occupation`` distinct premises.
    """
    if n_per_occupation < 1:
        raise UnqoverError("n_per_occupation must be at least 1")
    originals = [p for p in _as_premises(premises) if not p.is_substituted]
    by_occupation: dict[str, list[int]] = {o: [] for o in occupations}
    for i, p in enumerate(originals):
        if p.occupation in by_occupation:
            by_occupation[p.occupation].append(i)
    out: list[Premise] = []
    for k, occupation in enumerate(occupations):
        rng = np.random.default_rng([seed, k])
        own = by_occupation[occupation]
        if len(own) > n_per_occupation:
            own = sorted(rng.choice(own, size=n_per_occupation, replace=False).tolist())
        chosen = [originals[i] for i in own]
        texts = {p.text for p in chosen}
        donors = [i for i, p in enumerate(originals) if p.occupation != occupation]
        for i in rng.permutation(donors).tolist() if len(chosen) < n_per_occupation else []:
            copy = substitute(originals[i], occupation)
            if copy.text in texts:
                continue
            chosen.append(copy)
            texts.add(copy.text)
            if len(chosen) == n_per_occupation:
                break
        if len(chosen) < n_per_occupation:
            raise UnqoverError(
                f"only {len(chosen)} distinct premises for {occupation!r}, {n_per_occupation} asked: "
                "give more sentences or ask for fewer per occupation"
            )
        out.extend(chosen)
    return out
