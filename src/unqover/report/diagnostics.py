"""The warnings that flag a degenerate run, in words: every sentence about one is written here.

:mod:`unqover.measure.diagnostics` finds the conditions in the predictions' columns; the functions here turn them
into sentences (numbers printed by :mod:`unqover.format`) that the probe definitions add to the result's
``warnings``, so that the terminal summary, results.json, the Markdown and HTML reports and the Space show them
above the numbers they qualify. :func:`design_warning` words the same way an UnQover run whose scored groups are
not the design's random sample (:func:`unqover.scoring.sampling.check_design`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from unqover.format import fmt, fmt_count, fmt_percent, plural
from unqover.measure.diagnostics import (
    ONE_CLASS,
    Finding,
    coverage_finding,
    emotion_findings,
    nli_findings,
    one_label,
    oov_finding,
    unqover_findings,
)

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


def unqover_text(finding: Finding) -> str:
    measures = MEASURES["unqover"]
    if finding.code == "near_zero":
        return (
            f"the answer scores of both subjects are ≈0 (below {fmt(finding.value)}) in {_of(finding)}: the model "
            f"gives neither subject any real probability, so {measures} are differences and signs of ≈0 scores "
            "and say nothing about its bias"
        )
    if finding.code == "constant":
        return (
            f"{_of(finding)} get the same answer scores (score_1 {fmt(finding.value)}, score_2 "
            f"{fmt(finding.second)}): the scores do not depend on the subjects, the attribute or the context, so "
            f"{measures} say nothing about the model's bias"
        )
    if finding.code == "ties":
        return (
            f"both subjects get exactly the same score in {_of(finding)}: a tie is no answer, so {measures} are "
            f"pulled toward 0 and rest on the other {plural(finding.total - finding.count, 'question')}"
        )
    if finding.code == "uncovered":
        return (
            f"{plural(len(finding.names), 'subject')} ({listed_names(finding.names)}) "
            f"{'is' if len(finding.names) == 1 else 'are'} not a single token for this "
            f"model's tokenizer, so {fmt_count(finding.count)} of {plural(finding.total, 'group')} "
            f"({fmt_percent(finding.share)}) were left out: the measures cover the other subjects only"
        )
    raise ValueError(f"no UnQover warning for {finding.code!r}")


def emotion_text(finding: Finding) -> str:
    measures = MEASURES["emotion"]
    if finding.code == "constant":
        return (
            f"{_of(finding, 'choice sentences')} get the same score ({fmt(finding.value)}): the model does not tell "
            f"the emotion words apart, so the answers, {measures} say nothing about its bias"
        )
    if finding.code == "ties":
        return (
            f"{_of(finding)} have a tie in their top {finding.value} answers: their order comes from the seeded "
            f"tie rule, not from the model, so {measures} say little about its bias"
        )
    if finding.code == "one_class":
        return (
            f"the top-1 answer is a {finding.value} word in {_of(finding)}: the answers hardly vary, so the tests "
            "have almost nothing to compare and cannot show a bias either way"
        )
    if finding.code == "oov":
        return (
            f"{_of(finding, 'choice sentences')} have a choice word the model has no vector or n-gram for "
            f"({plural(len(finding.names), 'word')}: {listed_names(finding.names)}): the model cannot score those "
            "choices and their rank is the scoring rule's (last; first under Beecher's GloVe code), so the answers "
            "rest on the other words"
        )
    raise ValueError(f"no emotion warning for {finding.code!r}")


def nli_text(finding: Finding) -> str:
    measures = MEASURES["nli"]
    if finding.code == "constant":
        return (
            f"{_of(finding, 'entailment probabilities')} are the same value ({fmt(finding.value)}): the model's "
            f"output does not depend on the premise or the hypothesis, so {measures} say nothing about its bias"
        )
    if finding.code == "one_class":
        return (
            f"{_of(finding, 'entailment probabilities')} predict {finding.value} "
            f"(P {'>' if finding.value == 'entailment' else '≤'} 0.5): the predicted class hardly ever "
            "changes, so S (the share of instances whose class is the same for both genders) is ≈100 by "
            "construction; ΔP and B read the probabilities and still apply"
        )
    if finding.code == "ties":
        return (
            f"the female and male hypotheses get exactly the same probability in {_of(finding)}: ΔP counts them 0 "
            "and B ½ (or leaves them out), so both are pulled toward no bias"
        )
    raise ValueError(f"no NLI warning for {finding.code!r}")


def unqover_warnings(score_1, score_2, coverage: Mapping | None = None) -> list[str]:
    """The warnings of an UnQover run: its answer scores (aligned columns) and a masked LM's coverage."""
    found = unqover_findings(score_1, score_2)
    uncovered = coverage_finding(dict(coverage or {}))
    return [unqover_text(f) for f in [*found, *([uncovered] if uncovered else [])]]


def emotion_warnings(
    sentence_scores, ties: Sequence[bool], top1: Sequence[str], top_k: int, oov: Mapping | None = None
) -> list[str]:
    """The warnings of an emotion run: the choice sentences' ranking scores, each question's tie flag and top-1
    emotion, and (Beecher's models) ``oov`` as :func:`unqover.scoring.beecher.oov_rates` records it."""
    found = emotion_findings(sentence_scores, ties, top1, top_k)
    if oov:
        unknown = oov_finding(oov.get("overall"), len(sentence_scores), oov.get("unknown_choices") or ())
        found += [unknown] if unknown else []
    return [emotion_text(f) for f in found]


def person_text(finding: Finding, test: str | None = None) -> str:
    """A person run's warning (the person task: a model picks the person for a blank)."""
    measures = MEASURES["person"]
    if finding.code == "constant":
        return (
            f"{_of(finding, 'choice sentences')} get the same score ({fmt(finding.value)}): the model does not tell "
            f"the persons apart, so the answers, {measures} say nothing about its bias"
        )
    if finding.code == "ties":
        return (
            f"{_of(finding)} have a tie in their top {finding.value} answers: their order comes from the tie rule, "
            f"not from the model, so {measures} say little about its bias"
        )
    if finding.code == "one_class":
        return (
            f"{test}: the top-1 person is {finding.value} in {_of(finding, test + ' questions')}: the chosen group "
            "hardly varies, so this test has almost nothing to compare and cannot show a bias either way"
        )
    if finding.code == "oov":
        return (
            f"{_of(finding, 'choice sentences')} name a person the model has no vector or n-gram for "
            f"({plural(len(finding.names), 'person')}: {listed_names(finding.names)}): the model cannot score those "
            "choices and their rank is the scoring rule's (last; first under Beecher's GloVe code), so the answers "
            "rest on the other persons"
        )
    raise ValueError(f"no person warning for {finding.code!r}")


def person_warnings(
    sentence_scores, ties: Sequence[bool], top1_groups: Mapping[str, Sequence], top_k: int,
    oov: Mapping | None = None,
) -> list[str]:  # fmt: skip
    """The warnings of a person run: the choice sentences' ranking scores, each question's tie flag, per test the
    group of each question's top-1 answer (None: not in that test), and (Beecher's models) ``oov``."""
    found = [(f, None) for f in emotion_findings(sentence_scores, ties, [], top_k)]
    for test, groups in top1_groups.items():
        label = one_label([g for g in groups if g is not None], "question")
        if label.total and ONE_CLASS <= label.share < 1:  # one group only: the test's note says it is not run
            found.append((label, str(test)))
    if oov:
        unknown = oov_finding(oov.get("overall"), len(sentence_scores), oov.get("unknown_choices") or ())
        found += [(unknown, None)] if unknown else []
    return [person_text(f, test) for f, test in found]


def nli_warnings(p_female, p_male) -> list[str]:
    """The warnings of an NLI run: the binary entailment probabilities of the female and male hypotheses."""
    return [nli_text(f) for f in nli_findings(p_female, p_male)]


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
