"""Pair UnQover rows into groups before any arithmetic, and say exactly what is wrong when they do not pair.

A *group* is an unordered subject pair {x1, x2} x template x attribute. It needs four rows: x1 mentioned first
and x2 mentioned first, each with the positive and the negated question. The subjects of a group are ordered
(x1 sorts before x2) so that scores can be held per subject rather than per mention position.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from unqover.errors import UnqoverError

POLARITY_CODES = {"positive": 0, "negated": 1}
MAX_LISTED = 5


class PairingError(UnqoverError):
    """Rows that cannot be paired into complete groups, or scores that are not probabilities."""


@dataclass(frozen=True)
class PairedScores:
    """Complete groups with their scores held per subject.

    ``scores[g, order, polarity, k]`` is the score of subject ``k`` (0 = x1, 1 = x2) of group ``g`` in the row
    where ``order`` 0 mentions x1 first (1: x2 first) and ``polarity`` 0 asks about the attribute (1: its negation).
    Codes index ``subjects``, ``attributes`` and ``templates``.
    """

    scores: np.ndarray  # (G, 2, 2, 2) float64
    x1: np.ndarray  # (G,) subject code
    x2: np.ndarray
    template: np.ndarray  # (G,) template code
    attribute: np.ndarray  # (G,) attribute code
    subjects: np.ndarray  # subject labels (object array)
    attributes: np.ndarray  # attribute labels (text)
    attribute_types: np.ndarray | None  # slot type per attribute code, when the rows gave one
    templates: np.ndarray  # template ids
    subject_clusters: np.ndarray | None  # cluster label per subject code (None entries: no cluster)
    dropped_groups: int = 0
    rows: np.ndarray | None = None  # (G, 4) input row of each slot: x1 first +/-, x2 first +/-

    def subset(self, keep: np.ndarray) -> PairedScores:
        """The groups where ``keep`` is true (labels and codes unchanged)."""
        return replace(
            self,
            scores=self.scores[keep],
            x1=self.x1[keep],
            x2=self.x2[keep],
            template=self.template[keep],
            attribute=self.attribute[keep],
            rows=None if self.rows is None else self.rows[keep],
        )

    @property
    def num_groups(self) -> int:
        return len(self.x1)


def _column(values, what: str) -> pa.ChunkedArray:
    if isinstance(values, pa.ChunkedArray):
        return values
    if isinstance(values, pa.Array):
        return pa.chunked_array([values])
    try:
        return pa.chunked_array([pa.array(values)])
    except (pa.ArrowInvalid, pa.ArrowTypeError) as err:
        raise PairingError(f"{what}: {err}") from err


def _labels(*columns: pa.ChunkedArray, what: str) -> np.ndarray:
    """The sorted distinct values of one or more columns; missing values are an error."""
    distinct = [pc.unique(column) for column in columns]
    values = np.concatenate([d.to_numpy(zero_copy_only=False) for d in distinct])
    nulls = sum(column.null_count for column in columns)
    if nulls:
        raise PairingError(f"{what} has {nulls} missing values")
    return np.unique(values)


def _codes(column: pa.ChunkedArray, labels: np.ndarray) -> np.ndarray:
    """Index of each value in ``labels`` (hash lookup, no sort of the rows)."""
    return pc.index_in(column, value_set=pa.array(labels)).to_numpy().astype(np.int64)


def _recode(codes: np.ndarray, labels: np.ndarray, key) -> tuple[np.ndarray, np.ndarray]:
    """Merge labels that share ``key(label)`` (e.g. lower-casing), renumbering the codes."""
    merged, inverse = np.unique(np.array([key(label) for label in labels], dtype=object), return_inverse=True)
    return inverse[codes], merged


def _describe(subjects: np.ndarray, templates: np.ndarray, attributes: np.ndarray, a, b, t, at) -> str:
    return f"({subjects[a]!r}, {subjects[b]!r}, template {templates[t]}, {attributes[at]!r})"


def pair_rows(
    subject_1: Sequence | pa.Array,
    subject_2: Sequence | pa.Array,
    template_id: Sequence | pa.Array,
    attribute: Sequence | pa.Array,
    polarity: Sequence | pa.Array,
    score_1: Sequence[float] | np.ndarray,
    score_2: Sequence[float] | np.ndarray,
    *,
    attribute_type: Sequence | pa.Array | None = None,
    subject_1_cluster: Sequence | pa.Array | None = None,
    subject_2_cluster: Sequence | pa.Array | None = None,
    lowercase: bool = False,
    drop_incomplete: bool = False,
) -> PairedScores:
    """Check and pair rows. ``attribute_type`` (when given) keeps attributes of different slot types apart.

    ``lowercase`` reproduces the original analysis's key lower-casing. Raises :class:`PairingError` naming the
    first offending rows or groups, with counts, for: scores that are NaN or outside [0, 1], unknown polarity,
    missing values, a subject paired with itself, duplicate rows, and incomplete groups (unless
    ``drop_incomplete``, which measures the complete groups and reports how many were dropped).
    """
    columns = {
        name: _column(values, name)
        for name, values in (
            ("subject_1", subject_1),
            ("subject_2", subject_2),
            ("template_id", template_id),
            ("attribute", attribute),
            ("polarity", polarity),
        )
    }
    if attribute_type is not None:
        columns["attribute_type"] = _column(attribute_type, "attribute_type")
    s1, s2 = _checked_scores(columns, score_1, score_2)
    coded = _coded_rows(columns, lowercase)
    sort, starts, counts = _sorted_groups(coded)
    incomplete = np.flatnonzero(counts != 4)
    if len(incomplete) and not drop_incomplete:
        raise _incomplete_error(coded, sort, starts, counts, incomplete)
    rows = sort[np.repeat(counts == 4, counts)].reshape(-1, 4)  # slots: x1 first +/-, x2 first +/-
    if len(rows) == 0:
        raise PairingError(f"none of the {len(starts)} groups is complete")
    scores = np.empty((len(rows), 2, 2, 2))
    scores[:, 0, :, 0], scores[:, 0, :, 1] = s1[rows[:, :2]], s2[rows[:, :2]]
    scores[:, 1, :, 0], scores[:, 1, :, 1] = s2[rows[:, 2:]], s1[rows[:, 2:]]
    first = rows[:, 0]
    return PairedScores(
        scores=scores,
        x1=coded.a[first],
        x2=coded.b[first],
        template=coded.template[first],
        attribute=coded.attribute[first],
        subjects=coded.subjects,
        attributes=coded.attributes,
        attribute_types=coded.attribute_types,
        templates=coded.templates,
        subject_clusters=_subject_clusters(
            coded.subjects, coded.c1, coded.c2, subject_1_cluster, subject_2_cluster
        ),
        dropped_groups=len(incomplete),
        rows=rows,
    )


def _checked_scores(
    columns: dict[str, pa.ChunkedArray], score_1: Sequence[float], score_2: Sequence[float]
) -> tuple[np.ndarray, np.ndarray]:
    """The two score columns as float64, once every column has the same, non-zero length and every score is a
    probability."""
    try:
        s1 = np.asarray(score_1, dtype=np.float64).reshape(-1)
        s2 = np.asarray(score_2, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as err:
        raise PairingError(f"scores must be numbers: {err}") from err
    lengths = {name: len(col) for name, col in columns.items()} | {"score_1": len(s1), "score_2": len(s2)}
    if len(set(lengths.values())) != 1:
        raise PairingError(f"columns differ in length: {lengths}")
    if len(s1) == 0:
        raise PairingError("no rows to measure")
    bad = np.flatnonzero(~((s1 >= 0) & (s1 <= 1) & (s2 >= 0) & (s2 <= 1)))
    if len(bad):
        shown = ", ".join(f"row {i} ({float(s1[i])!r}, {float(s2[i])!r})" for i in bad[:MAX_LISTED])
        raise PairingError(f"{len(bad)} rows have scores that are NaN or outside [0, 1]: {shown}")
    return s1, s2


@dataclass(frozen=True)
class _Coded:
    """Each row's codes: its subjects as mentioned (``c1``, ``c2``) and in sorted order (``a`` < ``b``), whether x2
    is mentioned first, its template, attribute and polarity (1: negated); and the labels the codes index."""

    subjects: np.ndarray
    templates: np.ndarray
    attributes: np.ndarray
    attribute_types: np.ndarray | None
    c1: np.ndarray
    c2: np.ndarray
    template: np.ndarray
    attribute: np.ndarray
    negated: np.ndarray

    @property
    def a(self) -> np.ndarray:
        return np.minimum(self.c1, self.c2)

    @property
    def b(self) -> np.ndarray:
        return np.maximum(self.c1, self.c2)

    @property
    def x2_first(self) -> np.ndarray:
        return self.c1 > self.c2

    def describe(self, a, b, t, at) -> str:
        return _describe(self.subjects, self.templates, self.attributes, a, b, t, at)


def _coded_rows(columns: dict[str, pa.ChunkedArray], lowercase: bool) -> _Coded:
    """The rows as codes into sorted labels (lower-cased keys merged with ``lowercase``; attributes of different
    slot types apart when the rows give them); refuses missing values, unknown polarities and self-pairs."""
    subjects = _labels(columns["subject_1"], columns["subject_2"], what="subjects")
    c1, c2 = _codes(columns["subject_1"], subjects), _codes(columns["subject_2"], subjects)
    templates = _labels(columns["template_id"], what="template_id")
    template_codes = _codes(columns["template_id"], templates)
    attributes = _labels(columns["attribute"], what="attribute")
    attribute_codes = _codes(columns["attribute"], attributes)
    if lowercase:
        c1, lowered = _recode(c1, subjects, str.lower)
        c2, _ = _recode(c2, subjects, str.lower)
        subjects = lowered
        attribute_codes, attributes = _recode(attribute_codes, attributes, str.lower)
    attribute_types = None
    if "attribute_type" in columns:
        types = _labels(columns["attribute_type"], what="attribute_type")
        combined = _codes(columns["attribute_type"], types) * len(attributes) + attribute_codes
        present = np.zeros(len(types) * len(attributes), dtype=bool)
        present[combined] = True
        attribute_codes = (np.cumsum(present) - 1)[combined]
        cells = np.flatnonzero(present)
        attribute_types, attributes = types[cells // len(attributes)], attributes[cells % len(attributes)]
    negated = _negated(columns["polarity"])
    same = np.flatnonzero(c1 == c2)
    if len(same):
        raise PairingError(
            f"{len(same)} rows pair a subject with itself, first: row {same[0]} ({subjects[c1[same[0]]]!r})"
        )
    return _Coded(
        subjects, templates, attributes, attribute_types, c1, c2, template_codes, attribute_codes, negated
    )


def _negated(polarity: pa.ChunkedArray) -> np.ndarray:
    """Each row's polarity code (0 positive, 1 negated); any other polarity is an error."""
    polarity_labels = _labels(polarity, what="polarity")
    unknown = [p for p in polarity_labels if p not in POLARITY_CODES]
    if unknown:
        raise PairingError(f"polarity must be 'positive' or 'negated', found {unknown[:MAX_LISTED]}")
    return np.array([POLARITY_CODES[p] for p in polarity_labels])[_codes(polarity, polarity_labels)]


def _sorted_groups(coded: _Coded) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows sorted by group and slot (``sort``), where each group starts in that order and how many rows it
    has; refuses duplicate rows."""
    a, b = coded.a, coded.b
    S, T, A = len(coded.subjects), len(coded.templates), len(coded.attributes)
    full_key = (
        (((a * S + b) * T + coded.template) * A + coded.attribute) * 4 + coded.x2_first * 2 + coded.negated
    )
    sort = np.argsort(full_key)
    sorted_key = full_key[sort]
    del full_key
    dup = np.flatnonzero(sorted_key[1:] == sorted_key[:-1])
    if len(dup):
        r, other = sort[dup[0]], sort[dup[0] + 1]
        raise PairingError(
            f"{len(dup)} duplicate rows (same subjects in the same order, template, attribute and polarity); "
            f"first: rows {min(r, other)} and {max(r, other)} "
            + coded.describe(coded.c1[r], coded.c2[r], coded.template[r], coded.attribute[r])
        )
    group = sorted_key >> 2
    starts = np.flatnonzero(np.concatenate([[True], group[1:] != group[:-1]]))
    counts = np.diff(np.append(starts, len(sort)))
    return sort, starts, counts


def _incomplete_error(
    coded: _Coded, sort: np.ndarray, starts: np.ndarray, counts: np.ndarray, incomplete: np.ndarray
) -> PairingError:
    """The refusal of incomplete groups: how many, and the first few with the slots they have."""
    a, b, x2_first = coded.a, coded.b, coded.x2_first
    shown = []
    for g in incomplete[:MAX_LISTED]:
        rows = sort[starts[g] : starts[g] + counts[g]]
        have = sorted(
            ("x2 first" if x2_first[r] else "x1 first") + ("/negated" if coded.negated[r] else "/positive")
            for r in rows
        )
        r = rows[0]
        shown.append(coded.describe(a[r], b[r], coded.template[r], coded.attribute[r]) + f" has only {have}")
    return PairingError(
        f"{len(incomplete)} of {len(starts)} groups are incomplete (each needs both subject orders x both "
        f"polarities); first: {'; '.join(shown)}. Pass drop_incomplete=True (--drop-incomplete) to measure "
        "the complete groups only."
    )


def coded_as(paired: PairedScores, labels: PairedScores) -> PairedScores:
    """``paired``'s groups (part of a dataset) coded with the dataset's ``labels`` (subjects, attributes with
    their types, templates, clusters): codes that mean the same in every part. The order of the groups holds (labels
    are sorted alike); a label the dataset lacks is an error."""

    def codes(have, want, what: str) -> np.ndarray:
        index = {value: k for k, value in enumerate(want)}
        missing = [value for value in have if value not in index]
        if missing:
            raise PairingError(f"the {what} {missing[0]!r} is not in the dataset the groups were drawn from")
        return np.array([index[value] for value in have], dtype=np.int64)

    def typed(p: PairedScores) -> list:
        types = p.attribute_types if p.attribute_types is not None else [None] * len(p.attributes)
        return list(zip(types, p.attributes, strict=True))

    subject = codes(paired.subjects, labels.subjects, "subject")
    template = codes(paired.templates, labels.templates, "template")
    attribute = codes(typed(paired), typed(labels), "attribute")
    return replace(
        paired,
        x1=subject[paired.x1],
        x2=subject[paired.x2],
        template=template[paired.template],
        attribute=attribute[paired.attribute],
        subjects=labels.subjects,
        attributes=labels.attributes,
        attribute_types=labels.attribute_types,
        templates=labels.templates,
        subject_clusters=labels.subject_clusters,
    )


def _subject_clusters(subjects, c1, c2, cluster_1, cluster_2) -> np.ndarray | None:
    """One cluster per subject (None where the rows give none); an error if a subject has two clusters."""
    if cluster_1 is None or cluster_2 is None:
        return None
    columns = [_column(cluster_1, "subject_1_cluster"), _column(cluster_2, "subject_2_cluster")]
    if all(column.null_count == len(column) for column in columns):
        return None
    labels = np.unique(
        np.concatenate([pc.drop_null(pc.unique(c)).to_numpy(zero_copy_only=False) for c in columns])
    )
    labels = np.append(labels.astype(object), None)  # code len(labels) - 1: no cluster
    codes = np.concatenate(
        [
            pc.fill_null(pc.index_in(c, value_set=pa.array(labels[:-1])), len(labels) - 1).to_numpy()
            for c in columns
        ]
    )
    subject_codes = np.concatenate([c1, c2])
    per_subject = np.full(len(subjects), -1)
    per_subject[subject_codes[::-1]] = codes[::-1]  # the first row of each subject wins
    mismatch = np.flatnonzero(per_subject[subject_codes] != codes)
    if len(mismatch):
        i = mismatch[0]
        raise PairingError(
            f"subject {subjects[subject_codes[i]]!r} has clusters {labels[per_subject[subject_codes[i]]]!r} and "
            f"{labels[codes[i]]!r}; {len(mismatch)} rows disagree with the subject's first cluster"
        )
    return labels[per_subject]
