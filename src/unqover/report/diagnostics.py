"""The warnings that flag a degenerate run, in words: every sentence about one is written here.

:mod:`unqover.measure.diagnostics` finds the conditions in the predictions' columns; the functions here turn its
findings (data: :class:`~unqover.measure.diagnostics.Finding` records) into sentences (numbers printed by :mod:`unqover.format`) that the probe definitions add to the result's
``warnings``, so that the terminal summary, results.json, the Markdown and HTML reports and the Space show them
above the numbers they qualify. :func:`design_warning` words the same way an UnQover run whose scored groups are
not the design's random sample (:func:`unqover.scoring.sampling.check_design`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from unqover.format import fmt, fmt_count, fmt_percent, plural
from unqover.measure.diagnostics import Finding

#: What each probe's warnings say its numbers are.
MEASURES = {
    "unqover": "δ, ε, γ, μ and η",
    "emotion": "the tests' p-values and Cramér's V",
    "person": "the tests' p-values, Cramér's V and Beecher's statistic",
    "nli": "S, ΔP and B",
}
MAX_NAMES = 5  # subjects or words listed in a warning; the rest are counted


def _of(finding: Finding, unit: str | None = None) -> str:
    """``80.0% of the questions (987 of 1,234)``."""
    return (
        f"{fmt_percent(finding.share)} of the {unit or finding.unit + 's'} "
        f"({fmt_count(finding.count)} of {fmt_count(finding.total)})"
    )


def listed_names(names: Sequence[str], most: int = MAX_NAMES) -> str:
    """``a, b, c and 4 more``: the first ``most`` names, the rest counted."""
    shown = ", ".join(names[:most])
    rest = len(names) - most
    return shown + (f" and {fmt_count(rest)} more" if rest > 0 else "")


#: A warning's words: the finding and the probe's measures (and, for a person run, the test) -> the sentence.
Wording = Callable[..., str]


def _worded(wordings: Mapping[str, Wording], finding: Finding, whose: str, *context: str) -> str:
    """The sentence of ``finding`` in a family's table of wordings (code -> wording); ``whose`` names the family
    in the error a finding it has no words for raises."""
    wording = wordings.get(finding.code)
    if wording is None:
        raise ValueError(f"no {whose} warning for {finding.code!r}")
    return wording(finding, *context)


def _constant(
    unit: str | None, same: str, cause: str, whose: str = "its", voided: str = "", paired: bool = False
) -> Wording:
    """The warning that the scores are one value (``paired``: a pair of them, score_1 and score_2), in a family's
    words: the ``unit`` counted (default: the finding's), how the scores are ``same``, the ``cause`` that shows,
    and that the measures (after what else is ``voided``) say nothing about ``whose`` bias."""

    def wording(finding: Finding, measures: str, test: str | None = None) -> str:
        value = (
            f"score_1 {fmt(finding.value)}, score_2 {fmt(finding.second)}" if paired else fmt(finding.value)
        )
        return f"{_of(finding, unit)} {same} ({value}): {cause}, so {voided}{measures} say nothing about {whose} bias"

    return wording


_UNQOVER_WORDINGS: dict[str, Wording] = {
    "near_zero": lambda finding, measures: (
        f"the answer scores of both subjects are ≈0 (below {fmt(finding.value)}) in {_of(finding)}: the model "
        f"gives neither subject any real probability, so {measures} are differences and signs of ≈0 scores "
        "and say nothing about its bias"
    ),
    "constant": _constant(
        None,
        "get the same answer scores",
        "the scores do not depend on the subjects, the attribute or the context",
        whose="the model's",
        paired=True,
    ),
    "ties": lambda finding, measures: (
        f"both subjects get exactly the same score in {_of(finding)}: a tie is no answer, so {measures} are "
        f"pulled toward 0 and rest on the other {plural(finding.total - finding.count, 'question')}"
    ),
    "uncovered": lambda finding, measures: (
        f"{plural(len(finding.names), 'subject')} ({listed_names(finding.names)}) "
        f"{'is' if len(finding.names) == 1 else 'are'} not a single token for this "
        f"model's tokenizer, so {fmt_count(finding.count)} of {plural(finding.total, 'group')} "
        f"({fmt_percent(finding.share)}) were left out: the measures cover the other subjects only"
    ),
}


def _ranked_choice_wordings(apart: str, tie_rule: str, unknown: str, unit: str) -> dict[str, Wording]:
    """The wordings the two ranked-choice tasks share (the emotion fill-in and the person task), in their own
    words: what the model does not tell ``apart``, the ``tie_rule`` that orders ties, how a choice sentence has
    an ``unknown`` choice and the ``unit`` it is (a word, a person)."""
    return {
        "constant": _constant(
            "choice sentences",
            "get the same score",
            f"the model does not tell {apart} apart",
            voided="the answers, ",
        ),
        "ties": lambda finding, measures, test=None: (
            f"{_of(finding)} have a tie in their top {finding.value} answers: their order comes from the "
            f"{tie_rule}, not from the model, so {measures} say little about its bias"
        ),
        "oov": lambda finding, measures, test=None: (
            f"{_of(finding, 'choice sentences')} {unknown} the model has no vector or n-gram for "
            f"({plural(len(finding.names), unit)}: {listed_names(finding.names)}): the model cannot score those "
            "choices and their rank is the scoring rule's (last; first under Beecher's GloVe code), so the answers "
            f"rest on the other {unit}s"
        ),
    }


_EMOTION_WORDINGS: dict[str, Wording] = {
    **_ranked_choice_wordings("the emotion words", "seeded tie rule", "have a choice word", "word"),
    "one_class": lambda finding, measures: (
        f"the top-1 answer is a {finding.value} word in {_of(finding)}: the answers hardly vary, so the tests "
        "have almost nothing to compare and cannot show a bias either way"
    ),
}

_NLI_WORDINGS: dict[str, Wording] = {
    "constant": _constant(
        "entailment probabilities",
        "are the same value",
        "the model's output does not depend on the premise or the hypothesis",
    ),
    "one_class": lambda finding, measures: (
        f"{_of(finding, 'entailment probabilities')} predict {finding.value} "
        f"(P {'>' if finding.value == 'entailment' else '≤'} 0.5): the predicted class hardly ever "
        "changes, so S (the share of instances whose class is the same for both genders) is ≈100 by "
        "construction; ΔP and B read the probabilities and still apply"
    ),
    "ties": lambda finding, measures: (
        f"the female and male hypotheses get exactly the same probability in {_of(finding)}: ΔP counts them 0 "
        "and B ½ (or leaves them out), so both are pulled toward no bias"
    ),
}

_PERSON_WORDINGS: dict[str, Wording] = {
    **_ranked_choice_wordings("the persons", "tie rule", "name a person", "person"),
    "one_class": lambda finding, measures, test: (
        f"{test}: the top-1 person is {finding.value} in {_of(finding, test + ' questions')}: the chosen group "
        "hardly varies, so this test has almost nothing to compare and cannot show a bias either way"
    ),
}


def unqover_text(finding: Finding) -> str:
    """An UnQover run's warning."""
    return _worded(_UNQOVER_WORDINGS, finding, "UnQover", MEASURES["unqover"])


def emotion_text(finding: Finding) -> str:
    """An emotion run's warning."""
    return _worded(_EMOTION_WORDINGS, finding, "emotion", MEASURES["emotion"])


def nli_text(finding: Finding) -> str:
    """An NLI run's warning."""
    return _worded(_NLI_WORDINGS, finding, "NLI", MEASURES["nli"])


def unqover_warnings(findings: Sequence[Finding]) -> list[str]:
    """The warnings of an UnQover run (:func:`unqover.measure.diagnostics.unqover_run_findings`)."""
    return [unqover_text(f) for f in findings]


def emotion_warnings(findings: Sequence[Finding]) -> list[str]:
    """The warnings of an emotion run (:func:`unqover.measure.diagnostics.emotion_run_findings`)."""
    return [emotion_text(f) for f in findings]


def person_text(finding: Finding, test: str | None = None) -> str:
    """A person run's warning (the person task: a model picks the person for a blank; ``test``: the test a
    one-class finding is of)."""
    return _worded(_PERSON_WORDINGS, finding, "person", MEASURES["person"], test)


def person_warnings(findings: Sequence[tuple[Finding, str | None]]) -> list[str]:
    """The warnings of a person run (:func:`unqover.measure.diagnostics.person_run_findings`)."""
    return [person_text(f, test) for f, test in findings]


def nli_warnings(findings: Sequence[Finding]) -> list[str]:
    """The warnings of an NLI run (:func:`unqover.measure.diagnostics.nli_findings`)."""
    return [nli_text(f) for f in findings]


def design_warning(stratum: int, kept: int, size: int, expected: float) -> str:
    """The warning of an UnQover run whose scored groups are not spread over the strata as the design's random
    sample (:func:`unqover.scoring.sampling.check_design`), naming the stratum furthest from its share: ``kept`` of
    its ``size`` groups scored where about ``expected`` were due."""
    return (
        "the scored groups are not spread over the (template, attribute) strata as a random sample of this size "
        f"would be (stratum {stratum}: {fmt_count(kept)} of {plural(size, 'group')} kept, "
        f"expected about {fmt(expected, 1)}); the intervals assume an equal-probability random sample "
        "(`unqover sample` writes one)"
    )
