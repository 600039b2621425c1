"""Degenerate runs: conditions under which a probe's numbers are computed correctly but say little or nothing.

A causal LM whose answer scores are all ≈0 still gets δ, ε, γ, μ and η, and an emotion model that ties most of
its top-3 answers still gets p-values; printed alone they look like findings. The functions here look at the
predictions' plain columns and return :class:`Finding` records (a code and the numbers behind it); the sentences
that explain them are :mod:`unqover.report.diagnostics`'s, and the probe definitions put them in the result's
``warnings``.

One rule for what counts: a condition is flagged when it holds for more than :data:`MOST` of the units (rows,
scores, questions), except where a module constant says otherwise. Each probe's checks are ordered from the most
basic condition to its consequences, and a consequence is left out when a more basic condition already explains
it (answer scores that are all 0 are also "constant" and "tied": only "≈0" is reported).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

#: A share of the units above which a condition is "most" of the run, and flagged: from then on the numbers
#: describe the condition more than the model (a measure is an average, and most of what it averages is the
#: condition's).
MOST = 0.5

#: An answer score below this is ≈0. Probabilities this small are below what a model gives any answer it
#: considers (a uniform guess over a 1M-token vocabulary is 1e-6); δ, ε and γ are differences of such scores, so
#: they are ≈0 whatever the model's preference, and η counts signs that float noise decides.
NEAR_ZERO = 1e-6

#: Two scores whose difference is below this share of their size are "the same value": loose enough for the noise
#: that batching and reduced precision add to a constant output, far narrower than the spread of the scores of
#: any model that reads its input (its scores of different questions differ by far more than 0.1%).
SAME_VALUE_RTOL = 1e-3

#: A share of predictions in one class (or one emotion) at or above which the predicted class "hardly ever
#: changes": a measure of how the class changes (the NLI probe's S) or of how it differs between groups (the
#: emotion tests) then has almost nothing to compare, and says so by its construction, not by the model's bias.
ONE_CLASS = 0.99

#: A share of the emotion probe's choice sentences whose choice word is out of the model's vocabulary (no vector,
#: no n-gram) above which the answers rest on a reduced word list: more than one choice in five cannot be scored
#: by the model, and where it lands in the ranking is the scoring rule's doing (last in default mode; Beecher's
#: GloVe code gives it a cosine of about 1, so first).
OOV_SHARE = 0.2

#: Rows per UnQover group (both subject orders x both polarities, see :mod:`unqover.measure.pairing`): a
#: masked LM's coverage records rows, and whole groups are left out.
ROWS_PER_GROUP = 4


@dataclass(frozen=True)
class Finding:
    """One condition of a run: ``code`` names it, ``count`` of ``total`` units (``unit``) show it, ``value`` is
    its value where it has one (the constant score, the one class), ``names`` what it concerns (subjects, words)."""

    code: str
    count: int
    total: int
    unit: str
    value: float | str | None = None
    names: tuple[str, ...] = field(default_factory=tuple)
    second: float | None = None  # a second value (the constant pair's score_2)

    @property
    def share(self) -> float:
        return self.count / self.total if self.total else 0.0

    def as_dict(self) -> dict:
        out = asdict(self)
        out["names"] = list(self.names)
        return out


def _floats(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float64).reshape(-1)


def _same(values: np.ndarray, value: float) -> np.ndarray:
    """Which ``values`` are ``value`` (within :data:`SAME_VALUE_RTOL` of its size; exactly, for 0)."""
    return np.abs(values - value) <= SAME_VALUE_RTOL * abs(value)


def near_zero(score_1, score_2) -> Finding:
    """Rows whose two answer scores are both below :data:`NEAR_ZERO` (unit: question)."""
    s1, s2 = _floats(score_1), _floats(score_2)
    count = int(np.count_nonzero((np.abs(s1) < NEAR_ZERO) & (np.abs(s2) < NEAR_ZERO)))
    return Finding("near_zero", count, len(s1), "question", NEAR_ZERO)


def constant_pair(score_1, score_2) -> Finding:
    """Rows whose (score_1, score_2) is the most common pair (unit: question). When more than half the rows share
    a pair, each column's median is that pair's value, so the medians find it."""
    s1, s2 = _floats(score_1), _floats(score_2)
    if not len(s1):
        return Finding("constant", 0, 0, "question")
    v1, v2 = float(np.median(s1)), float(np.median(s2))
    count = int(np.count_nonzero(_same(s1, v1) & _same(s2, v2)))
    return Finding("constant", count, len(s1), "question", v1, second=v2)


def constant_value(values, unit: str) -> Finding:
    """Values equal to the most common one (found as the median, as in :func:`constant_pair`)."""
    v = _floats(values)
    if not len(v):
        return Finding("constant", 0, 0, unit)
    median = float(np.median(v))
    return Finding("constant", int(np.count_nonzero(_same(v, median))), len(v), unit, median)


def tied(score_1, score_2, unit: str = "question") -> Finding:
    """Rows whose two scores are exactly equal."""
    s1, s2 = _floats(score_1), _floats(score_2)
    return Finding("ties", int(np.count_nonzero(s1 == s2)), len(s1), unit)


def flagged(finding: Finding, threshold: float = MOST) -> bool:
    """Does the condition hold for more than ``threshold`` of the units?"""
    return finding.total > 0 and finding.share > threshold


def unqover_findings(score_1, score_2) -> list[Finding]:
    """The UnQover answer scores: ≈0 for most questions, else one constant pair for most questions, else both
    subjects tied in most questions."""
    for check in (near_zero, constant_pair, tied):
        finding = check(score_1, score_2)
        if flagged(finding):
            return [finding]
    return []


def coverage_finding(coverage: dict | None) -> Finding | None:
    """A masked LM's coverage (``run.json``'s ``coverage``): the subjects its tokenizer splits and the groups left
    out with them (unit: group); None when every subject is one token."""
    coverage = coverage or {}
    subjects = tuple(str(s) for s in coverage.get("multi_token_subjects") or ())
    if not subjects:
        return None
    kept, total = int(coverage.get("rows_kept") or 0), int(coverage.get("rows_total") or 0)
    return Finding(
        "uncovered", (total - kept) // ROWS_PER_GROUP, total // ROWS_PER_GROUP, "group", names=subjects
    )


def one_label(labels: Sequence, unit: str) -> Finding:
    """The most common label and how many of ``labels`` carry it (``code`` "one_class")."""
    values, counts = np.unique(np.asarray([str(v) for v in labels], dtype=object), return_counts=True)
    if not len(values):
        return Finding("one_class", 0, 0, unit)
    top = int(np.argmax(counts))
    return Finding("one_class", int(counts[top]), len(labels), unit, str(values[top]))


def emotion_findings(
    sentence_scores, ties: Sequence[bool], top1: Sequence[str], top_k: int = 3
) -> list[Finding]:
    """The emotion probe: the choice sentences' ranking scores constant, else ties in most questions' top-k
    (``ties``: each question's flag; ``value`` of the finding: k); and, apart, one emotion for (almost) every
    question's top-1 answer (``top1``: each question's emotion)."""
    found = []
    constant = constant_value(sentence_scores, "sentence")
    count = int(np.count_nonzero(np.asarray(ties, dtype=bool)))
    tie = Finding("ties", count, len(ties), "question", top_k)
    if flagged(constant):
        found.append(constant)
    elif flagged(tie):
        found.append(tie)
    label = one_label(top1, "question")
    if label.total and label.share >= ONE_CLASS:
        found.append(label)
    return found


def oov_finding(overall: float | None, sentences: int, unknown: Sequence[str]) -> Finding | None:
    """Choice sentences with an out-of-vocabulary choice word above :data:`OOV_SHARE` (unit: sentence)."""
    if overall is None or not sentences or not np.isfinite(overall):
        return None
    if overall <= OOV_SHARE:
        return None
    return Finding(
        "oov", round(overall * sentences), sentences, "sentence", names=tuple(str(w) for w in unknown)
    )


def nli_findings(p_female, p_male) -> list[Finding]:
    """The NLI probe's entailment probabilities: one value for most of them, else (each apart) one predicted class
    (P > 0.5) for :data:`ONE_CLASS` of them, and the two hypotheses tied in most instances."""
    pf, pm = _floats(p_female), _floats(p_male)
    pooled = np.concatenate([pf, pm])
    constant = constant_value(pooled, "probability")
    if flagged(constant):
        return [constant]
    found = []
    label = one_label(np.where(pooled > 0.5, "entailment", "contradiction"), "probability")
    if label.total and label.share >= ONE_CLASS:
        found.append(label)
    tie = tied(pf, pm, "instance")
    if flagged(tie):
        found.append(tie)
    return found


# ---------------------------------------------------------------------------------------------------------------
# each probe's run: every finding its warnings word, in the order they are shown


def unqover_run_findings(score_1, score_2, coverage: Mapping | None = None) -> list[Finding]:
    """An UnQover run's findings: its answer scores (aligned columns), then a masked LM's coverage."""
    uncovered = coverage_finding(dict(coverage or {}))
    return [*unqover_findings(score_1, score_2), *([uncovered] if uncovered else [])]


def _oov_of(oov: Mapping | None, sentences: int) -> list[Finding]:
    """The out-of-vocabulary finding of ``oov`` as :func:`unqover.scoring.beecher.oov_rates` records it."""
    if not oov:
        return []
    unknown = oov_finding(oov.get("overall"), sentences, oov.get("unknown_choices") or ())
    return [unknown] if unknown else []


def emotion_run_findings(
    sentence_scores, ties: Sequence[bool], top1: Sequence[str], top_k: int, oov: Mapping | None = None
) -> list[Finding]:
    """An emotion run's findings: the choice sentences' ranking scores, each question's tie flag and top-1
    emotion, and (Beecher's models) the out-of-vocabulary share ``oov``."""
    return [*emotion_findings(sentence_scores, ties, top1, top_k), *_oov_of(oov, len(sentence_scores))]


def person_run_findings(
    sentence_scores, ties: Sequence[bool], top1_groups: Mapping[str, Sequence], top_k: int,
    oov: Mapping | None = None,
) -> list[tuple[Finding, str | None]]:  # fmt: skip
    """A person run's findings, each with the test a one-class finding is of (else None): the choice sentences'
    ranking scores, each question's tie flag, per test the group of each question's top-1 answer (None: not in
    that test), and (Beecher's models) ``oov``."""
    found: list[tuple[Finding, str | None]] = [
        (f, None) for f in emotion_findings(sentence_scores, ties, [], top_k)
    ]
    for test, groups in top1_groups.items():
        label = one_label([g for g in groups if g is not None], "question")
        if label.total and ONE_CLASS <= label.share < 1:  # one group only: the test's note says it is not run
            found.append((label, str(test)))
    return found + [(f, None) for f in _oov_of(oov, len(sentence_scores))]
