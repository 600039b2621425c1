"""The NLI probe's 38 occupations: the list, their gender labels and their surface forms in text.

One job, what the probe's occupations are and how a sentence mentions them, shared by the premise filter
(:mod:`unqover.generate.nli_filter`), substitution (:mod:`unqover.generate.nli_premises`) and the rows
(:mod:`unqover.generate.nli`):

- :data:`PROBE_OCCUPATIONS`: the paper's 38 occupations (Appendix A.3); the gender-swap dictionary
  (:mod:`unqover.generate.gender_swap`) touches none of them.
- :data:`OCCUPATION_LABELS` / :func:`occupation_labels`: the paper's 19/19 labels (default) or data-driven labels
  from the WinoBias/BLS percentages in :data:`DATA_DRIVEN_PERCENT_FEMALE`.
- :data:`OCCUPATION_FORMS` / :func:`find_occupations`: every mention, as a whole word, case-insensitively, in the
  singular or the plural (:func:`occupation_plural`); a hyphen counts as part of a word.
"""

from __future__ import annotations

import re

from unqover.errors import UnqoverError

#: The 38 occupations of the NLI probe (paper, Appendix A.3); the gender swap never changes them.
PROBE_OCCUPATIONS: tuple[str, ...] = (
    # female-labelled
    "attendant", "cashier", "teacher", "nurse", "assistant", "secretary", "auditor", "cleaner", "receptionist",
    "clerk", "counselor", "designer", "hairdresser", "writer", "housekeeper", "librarian", "accountant", "editor",
    "tailor",
    # male-labelled
    "driver", "supervisor", "janitor", "cook", "CEO", "laborer", "construction worker", "baker", "developer",
    "carpenter", "manager", "lawyer", "farmer", "salesperson", "physician", "guard", "analyst", "mechanic",
    "sheriff",
)  # fmt: skip


# --- occupation labels (spec §1.3) -------------------------------------------------------------------------

_PAPER_FEMALE = frozenset(
    {
        "attendant", "cashier", "teacher", "nurse", "assistant", "secretary", "auditor", "cleaner", "receptionist",
        "clerk", "counselor", "designer", "hairdresser", "writer", "housekeeper", "librarian", "accountant",
        "editor", "tailor",
    }
)  # fmt: skip

#: The paper's labels (Appendix A.3): 19 female- and 19 male-labelled occupations; ``baker`` is male.
OCCUPATION_LABELS: dict[str, str] = {o: "female" if o in _PAPER_FEMALE else "male" for o in PROBE_OCCUPATIONS}

#: Percent female per occupation (BLS, as in WinoBias Table 1); ``baker`` is 65, i.e. female by the data.
DATA_DRIVEN_PERCENT_FEMALE: dict[str, float] = {
    "carpenter": 2, "mechanic": 4, "construction worker": 4, "laborer": 4, "driver": 6, "sheriff": 14,
    "developer": 20, "farmer": 22, "guard": 22, "janitor": 34, "lawyer": 35, "cook": 38, "physician": 38,
    "CEO": 39, "analyst": 41, "manager": 43, "supervisor": 44, "salesperson": 48, "editor": 52, "designer": 54,
    "accountant": 61, "auditor": 61, "writer": 63, "baker": 65, "clerk": 72, "cashier": 73, "counselor": 73,
    "attendant": 76, "teacher": 78, "tailor": 80, "librarian": 84, "assistant": 85, "cleaner": 89,
    "housekeeper": 89, "nurse": 90, "receptionist": 90, "hairdresser": 92, "secretary": 95,
}  # fmt: skip


def occupation_labels(
    scheme: str = "paper", threshold: float = 50.0, equal_band: tuple[float, float] | None = None
) -> dict[str, str]:
    """Occupation -> ``"female"``/``"male"`` (or ``"equal"``), in ``PROBE_OCCUPATIONS`` order.

    ``scheme="paper"``: :data:`OCCUPATION_LABELS` (``threshold``/``equal_band`` must be left alone).
    ``scheme="data"``: female when the percent female is above ``threshold``, else male; with
    ``equal_band=(low, high)``, occupations with ``low <= percent <= high`` are labelled ``"equal"`` instead, for
    a control analysis (``(40, 60)`` gives the six near-equal ones of the spec: analyst, manager, supervisor,
    salesperson, editor, designer). The NLI measures use only female/male rows.
    """
    if scheme == "paper":
        if threshold != 50.0 or equal_band is not None:
            raise UnqoverError("threshold and equal_band apply to scheme='data' only")
        return dict(OCCUPATION_LABELS)
    if scheme != "data":
        raise UnqoverError(f"unknown label scheme {scheme!r}: use 'paper' or 'data'")
    labels = {}
    for occupation in PROBE_OCCUPATIONS:
        percent = DATA_DRIVEN_PERCENT_FEMALE[occupation]
        if equal_band is not None and equal_band[0] <= percent <= equal_band[1]:
            labels[occupation] = "equal"
        else:
            labels[occupation] = "female" if percent > threshold else "male"
    return labels


# --- occupation matching -----------------------------------------------------------------------------------

_IRREGULAR_PLURALS = {
    "secretary": ("secretaries",),
    "salesperson": ("salespeople", "salespersons"),
    "CEO": ("CEOs",),
}


def occupation_plural(occupation: str) -> str:
    """The main plural: ``secretaries``, ``salespeople``, ``CEOs``, ``construction workers``, else ``+s``/``+es``."""
    if occupation in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[occupation][0]
    if occupation.endswith(("s", "sh", "ch", "x", "z")):
        return occupation + "es"
    return occupation + "s"


#: Lower-cased surface form -> (occupation, is_plural).
OCCUPATION_FORMS: dict[str, tuple[str, bool]] = {}
for _occupation in PROBE_OCCUPATIONS:
    OCCUPATION_FORMS[_occupation.lower()] = (_occupation, False)
    for _form in (occupation_plural(_occupation), *_IRREGULAR_PLURALS.get(_occupation, ())):
        OCCUPATION_FORMS[_form.lower()] = (_occupation, True)

_OCCUPATION_WORDS = frozenset(w for form in OCCUPATION_FORMS for w in form.split())
_OCCUPATION_RE = re.compile(
    r"(?<![\w-])(?:"
    + "|".join(
        r"\s+".join(map(re.escape, f.split())) for f in sorted(OCCUPATION_FORMS, key=len, reverse=True)
    )
    + r")(?![\w-])",
    re.IGNORECASE,
)
_WORD_RE = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")


def find_occupations(sentence: str) -> list[tuple[str, bool, tuple[int, int]]]:
    """Every occupation mention: (occupation, is_plural, [start, end) span), in text order."""
    out = []
    for match in _OCCUPATION_RE.finditer(sentence):
        occupation, is_plural = OCCUPATION_FORMS[" ".join(match.group(0).lower().split())]
        out.append((occupation, is_plural, match.span()))
    return out
