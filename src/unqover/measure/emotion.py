"""The emotion fill-in measures (Beecher, §3.2 of the paper), with the valid tests of our spec §3.2.

A question is an EEC sentence with its emotion word blanked (480 = 60 persons × 8 forms); a model ranks the
question's choices (best first). Beecher weights the top-3 answers w = (3, 2, 1) and sums them per group i and
emotion j:

* S_ij = Σ_q∈i Σ_a w_a · 1[answer a of q is in emotion j]                  (6 points per question)
* Beecher's χ² = Σ_i Σ_j (S_ij − E_j)²/E_j with E_j = (S_1j + S_2j)/2, compared with χ²(3) at α = 0.05 (7.815).

Weighted scores are not counts and questions are not independent (each person answers 8 forms), so that p-value
is kept only as a legacy output. The primary test is Pearson's χ² of independence on the unweighted top-1
group × emotion table (df after dropping empty emotions), with a permutation p-value that shuffles group labels
across persons (all of a person's questions move together), stratified by the other attribute; Cramér's V with a
bootstrap over persons is the effect size. Two tests as Beecher: race (African-American vs European names, noun
phrases excluded) and gender (all questions).

Few persons (a quick run keeps a few per gender × race cell): the person is the unit, so what a test can say depends
on how many there are, not on how many questions they answered.

* Cramér's V interval: the bootstrap resamples persons within each group; with fewer than :data:`MIN_PERSONS` (10)
  persons in a group it is declined (``cramers_v_interval`` None, the reason in ``cramers_v_interval_note``), since a
  percentile interval from so few units is far too narrow (one person per group gives width zero), and V itself is
  biased upward with few persons. A zero-width interval is declined too. When the persons are a sample of a larger
  set (``persons_total``, a quick run), the interval is declined as well: V is a plug-in divergence that grows as
  the persons get fewer, so a sample's V overstates the full set's and a bootstrap interval around it does not
  cover the full set's V (in a simulation, the gender test's 95% interval covered it in only 62–88% of runs
  with 4–7 persons per cell). The point value is still reported, and the permutation test stays valid on a
  sample.
* Permutation p-value: it stays valid with any number of persons, but the stratified shuffles have only
  ``arrangements`` = Π over strata C(n_s, m_s) distinct outcomes, so it cannot fall below 1/arrangements; when that
  is above 0.05 the test cannot detect anything, and a note says so.

Both are recorded as data, not words, in ``notes`` (one list for the result): each note is a dict with the
``test`` it concerns, a ``code`` and the numbers behind it (``persons`` per group; ``needed`` for "few_persons";
``arrangements``, ``stratified_by`` and ``smallest_p`` for "few_arrangements"). A declined interval's note
("few_persons", "sampled_persons" or "same_value") is also the test's ``cramers_v_interval_note``.
:mod:`unqover.report.eec` words them.

Quick runs' tables (``population``: the full set's persons, and questions, per gender × race cell). A quick run
keeps persons at random within each gender × race cell, with all their questions:

* the per-person table (``persons``) is exact: a kept person's row is its full-set row, no interval needed;
* the per-group tables (``top1.counts``, ``beecher.scores``) are counts of the sample; their full-set counterparts
  are shares: of the group's questions whose top answer is emotion j (``top1.shares``), of the group's weighted
  points that go to emotion j (``beecher.shares``). A share is the mean, over the group's persons, of the person's
  own share (a value in [0, 1]) when the persons of a cell answer equally many questions (every EEC person
  answers the 8 forms; otherwise no interval, and ``share_intervals_note`` says why). The group spans several
  cells (race: the 2 gender cells; gender: the 3 race cells, noun phrases one), so ``share_intervals`` come from
  :func:`unqover.measure.stratified.stratified_mean_intervals` with the person as unit and the cells as strata:
  the stratified t interval with the finite-population correction where the group has 10 or more kept persons
  (two or more per cell) and passes Cochran's rule, near its stated level; elsewhere betting confidence intervals
  for bounded values, valid at any number of persons (nearly [0, 1] with one person per cell); exact when every
  person was kept. In a simulation (tests/measure/test_measure_bounded_tables.py, 40 seeds) the betting intervals
  covered the full-set shares in 99.8–100% of the group × emotion cells at 1, 2, 3, 5 and 8 persons per cell (95%
  nominal), with mean widths 0.94, 0.67, 0.51, 0.33 and 0.18.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import chi2

from unqover.errors import UnqoverError
from unqover.measure.bootstrap import multinomial_weights
from unqover.measure.layout import count_shares, row_totals
from unqover.measure.stats import (
    ALPHA,
    GENDER_VALUES,
    adjust_p_values,
    chi_square_independence,
    cramers_v,
    pearson_statistics,
)
from unqover.measure.stratified import stratified_mean_intervals
from unqover.measure.unqover import json_ready

__all__ = [
    "EmotionBias",
    "adjust_p_values",
    "beecher_scores",
    "beecher_statistic",
    "emotion_bias",
]

RACE_VALUES = ("African-American", "European")
NO_RACE = "none"  # the stratum of noun phrases in the gender test
BATCH = 1000
MIN_PERSONS = 10  # per group, for a Cramér's V interval
# test name -> (the groups compared, the attribute that stratifies the permutation)
TESTS = {"race": (RACE_VALUES, "gender"), "gender": (GENDER_VALUES, "race")}
LEGACY_NOTE = (
    "Beecher's statistic compared with chi-square(3): not a valid p-value (weighted scores are not counts, and "
    "questions of one person are not independent); kept to reproduce the paper"
)


def _is_null(value) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value)) or value == ""


def per_question(values, name: str, n: int | None) -> list:
    """``values`` as a list with one value per question (``n`` of them when given); a lone string is refused."""
    if hasattr(values, "to_pylist"):
        values = values.to_pylist()
    if isinstance(values, str | bytes):
        raise UnqoverError(f"{name} must be a sequence with one value per question, got a single string")
    out = list(values)
    if n is not None and len(out) != n:
        raise UnqoverError(f"{name} has {len(out)} values, expected {n} (one per question, like answers)")
    return out


def _lookup(emotions: Mapping[str, str] | None) -> tuple[Callable[[str], str], tuple[str, ...]]:
    """A word → emotion function and the emotion names (columns, sorted) from the ``emotions`` lexicon."""
    if emotions is None:
        raise UnqoverError(
            "emotions is required: a mapping from each answer word to its emotion "
            "(unqover.generate.eec.EMOTION_LEXICON holds the EEC's)"
        )
    table = {str(word).strip().lower(): str(emotion) for word, emotion in emotions.items()}
    if not table:
        raise UnqoverError("emotions is empty; give a mapping from each answer word to its emotion")
    return table.__getitem__, tuple(sorted(set(table.values())))


def encode_answers(
    answers: Sequence[Sequence[str]], emotions: Mapping[str, str] | None = None, top_k: int = 3
) -> tuple[np.ndarray, tuple[str, ...]]:
    """The emotion codes of each question's top ``top_k`` answers, shape (n, top_k), and the emotion names.

    Every answer given must be a known emotion word and appear once; each question needs at least ``top_k``.
    """
    if top_k < 1:
        raise UnqoverError(f"top_k must be at least 1, got {top_k}")
    emotion_of, names = _lookup(emotions)
    index = {name: k for k, name in enumerate(names)}
    rows = per_question(answers, "answers", None)
    if not rows:
        raise UnqoverError("no questions: answers is empty")
    codes = np.empty((len(rows), top_k), dtype=np.int64)
    cache: dict[str, int] = {}
    for i, ranking in enumerate(rows):
        if isinstance(ranking, str):
            raise UnqoverError(
                f"answers[{i}] is a single string; give the ranked answers as a list, best first"
            )
        ranking = [str(word).strip().lower() for word in ranking]
        if len(ranking) < top_k:
            raise UnqoverError(f"question {i} has {len(ranking)} answers, fewer than top_k = {top_k}")
        if len(set(ranking)) < len(ranking):
            raise UnqoverError(f"question {i} ranks an answer twice: {ranking}")
        for rank, word in enumerate(ranking):
            if word not in cache:
                try:
                    emotion = emotion_of(word)
                except (KeyError, ValueError, UnqoverError):
                    raise UnqoverError(
                        f"answer {word!r} of question {i} (rank {rank + 1}) is not a known emotion word; pass "
                        "emotions={word: emotion} for other words"
                    ) from None
                if emotion not in index:
                    raise UnqoverError(f"answer {word!r} of question {i} maps to unknown emotion {emotion!r}")
                cache[word] = index[emotion]
            if rank < top_k:
                codes[i, rank] = cache[word]
    return codes, names


def rank_weights(top_k: int) -> np.ndarray:
    """Beecher's weights: top_k for the best answer, one less per rank ((3, 2, 1) for the top 3)."""
    return np.arange(top_k, 0, -1, dtype=np.float64)


def question_scores(codes: np.ndarray, n_emotions: int) -> tuple[np.ndarray, np.ndarray]:
    """Per question: the top-1 indicator and the weighted scores over emotions, each shape (n, E)."""
    n, top_k = codes.shape
    top1 = np.zeros((n, n_emotions))
    top1[np.arange(n), codes[:, 0]] = 1.0
    weighted = np.zeros((n, n_emotions))
    for rank, w in enumerate(rank_weights(top_k)):
        np.add.at(weighted, (np.arange(n), codes[:, rank]), w)
    return top1, weighted


def beecher_scores(
    answers: Sequence[Sequence[str]],
    groups: Sequence[str | None],
    emotions: Mapping[str, str] | None = None,
    *,
    top_k: int = 3,
) -> tuple[np.ndarray, list[str], list[str]]:
    """Beecher's S_ij table (rows: groups in sorted order, columns: emotions) with weights (top_k, …, 1).

    Questions whose group is None (or "") are left out, as the noun phrases in Beecher's race test.
    """
    codes, names = encode_answers(answers, emotions, top_k)
    labels = per_question(groups, "groups", len(codes))
    keep = np.array([not _is_null(g) for g in labels])
    group_names = sorted({str(g) for g, k in zip(labels, keep, strict=True) if k})
    _, weighted = question_scores(codes[keep], len(names))
    which = np.array(
        [group_names.index(str(g)) for g, k in zip(labels, keep, strict=True) if k], dtype=np.int64
    )
    table = np.zeros((len(group_names), len(names)))
    np.add.at(table, which, weighted)
    return table, group_names, list(names)


def beecher_statistics(tables: np.ndarray) -> np.ndarray:
    """Beecher's statistic for a stack of 2-row tables (..., 2, E); columns with E_j = 0 contribute nothing."""
    tables = np.asarray(tables, dtype=np.float64)
    expected = tables.sum(axis=-2, keepdims=True) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        cells = np.where(expected > 0, (tables - expected) ** 2 / np.where(expected > 0, expected, 1.0), 0.0)
    return cells.sum(axis=(-2, -1))


def beecher_statistic(table) -> float:
    """Σ_i Σ_j (S_ij − E_j)²/E_j with E_j = (S_1j + S_2j)/2, exactly as Beecher (2 groups)."""
    table = np.asarray(table, dtype=np.float64)
    if table.ndim != 2 or table.shape[0] != 2:
        raise UnqoverError(
            f"Beecher's statistic compares two groups: the table must have 2 rows, got {table.shape}"
        )
    return float(beecher_statistics(table))


@dataclass(frozen=True)
class EmotionColumns:
    """Validated columns: emotion codes of the top answers, labels, and person codes."""

    codes: np.ndarray  # (n, top_k)
    emotions: tuple[str, ...]
    gender: np.ndarray  # object: "female" | "male"
    race: np.ndarray  # object: "African-American" | "European" | None
    person: np.ndarray  # codes into person_names
    person_names: np.ndarray
    form: np.ndarray  # object
    ties: np.ndarray | None  # bool


def validate_emotion_columns(
    answers, gender, race, person, form, *, emotions=None, top_k=3, ties=None
) -> EmotionColumns:
    """Check and encode the columns; every error names the first offending question index."""
    codes, names = encode_answers(answers, emotions, top_k)
    n = len(codes)
    columns = {"gender": gender, "race": race, "person": person, "form": form}
    values = {name: per_question(v, name, n) for name, v in columns.items()}
    expected = {"gender": GENDER_VALUES, "race": (*RACE_VALUES, None)}
    for name, allowed in expected.items():
        for i, v in enumerate(values[name]):
            v = None if _is_null(v) else v
            if v not in allowed:
                raise UnqoverError(
                    f"{name} of question {i} is {v!r}; expected one of {list(allowed)} (null race for noun phrases)"
                )
    for name in ("person", "form"):
        for i, v in enumerate(values[name]):
            if _is_null(v):
                raise UnqoverError(f"{name} of question {i} is missing")
    race_values = np.array([None if _is_null(v) else v for v in values["race"]], dtype=object)
    gender_values = np.array(values["gender"], dtype=object)
    person_values = np.array([str(v) for v in values["person"]], dtype=object)
    first: dict[str, int] = {}
    for i, p in enumerate(person_values):
        j = first.setdefault(p, i)
        for name, labels in (("gender", gender_values), ("race", race_values)):
            if labels[i] != labels[j]:
                raise UnqoverError(
                    f"person {p!r} has {name} {labels[j]!r} at question {j} but {labels[i]!r} at question {i}; "
                    "a person's group labels must be the same on all its questions"
                )
    person_codes, person_names = pd.factorize(person_values, sort=True)
    tie_values = None
    if ties is not None:
        raw = per_question(ties, "ties", n)
        for i, v in enumerate(raw):
            if not isinstance(v, bool | np.bool_):
                raise UnqoverError(f"ties of question {i} is {v!r}; expected True or False")
        tie_values = np.array(raw, dtype=bool)
    return EmotionColumns(
        codes=codes,
        emotions=names,
        gender=gender_values,
        race=race_values,
        person=person_codes.astype(np.int64),
        person_names=np.asarray(person_names, dtype=object),
        form=np.array([str(v) for v in values["form"]], dtype=object),
        ties=tie_values,
    )


def permuted_labels(
    rng: np.random.Generator, labels: np.ndarray, strata: np.ndarray, size: int
) -> np.ndarray:
    """``size`` permutations of the unit labels, each shuffling only within its stratum, shape (size, units)."""
    out = np.empty((size, len(labels)), dtype=labels.dtype)
    for stratum in np.unique(strata):
        idx = np.flatnonzero(strata == stratum)
        out[:, idx] = rng.permuted(np.broadcast_to(labels[idx], (size, len(idx))), axis=1)
    return out


def _tables(indicator: np.ndarray, per_unit: np.ndarray) -> np.ndarray:
    """2-row tables from 0/1 group indicators (B, U) and per-unit vectors (U, E): row 0 = group 0, row 1 = group 1."""
    second = indicator @ per_unit
    return np.stack([per_unit.sum(axis=0) - second, second], axis=-2)


def _records(
    table: np.ndarray, groups: Sequence[str], emotions: Sequence[str]
) -> dict[str, dict[str, float]]:
    return {g: {e: float(table[i, j]) for j, e in enumerate(emotions)} for i, g in enumerate(groups)}


@dataclass
class EmotionBias:
    """The result: Beecher's legacy statistic and the valid tests for race and gender. ``to_dict``: plain JSON."""

    num_questions: int
    num_persons: int
    emotions: list[str]
    top_k: int
    weights: list[float]
    tests: dict[str, dict | None]
    adjusted: dict[str, object]
    persons: pd.DataFrame  # per-person profiles: top-1 counts and weighted scores per emotion
    tie_rate: float | None
    permutation: dict[str, object] = field(default_factory=dict)
    bootstrap: dict[str, object] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # in words, set by the probe: a degenerate run's
    notes: list[dict] = field(default_factory=list)  # what too few persons prevent: a code and its numbers
    selection: dict[str, object] = field(default_factory=dict)  # a quick run's selection (set by the probe)
    table_intervals: dict[str, object] = field(default_factory=dict)  # a quick run's share intervals

    def to_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if not isinstance(v, pd.DataFrame)}
        out["persons"] = self.persons.to_dict(orient="records")
        return json_ready(out)


def _person_profiles(columns: EmotionColumns, top1: np.ndarray, weighted: np.ndarray) -> pd.DataFrame:
    k = len(columns.person_names)
    counts = np.bincount(columns.person, minlength=k)
    first = np.zeros(k, dtype=np.int64)
    first[columns.person[::-1]] = np.arange(len(columns.person))[::-1]
    frame = pd.DataFrame(
        {
            "person": columns.person_names,
            "gender": columns.gender[first],
            "race": columns.race[first],
            "questions": counts,
        }
    )
    for prefix, values in (("top1", top1), ("score", weighted)):
        sums = np.stack(
            [np.bincount(columns.person, values[:, j], k) for j in range(values.shape[1])], axis=1
        )
        for j, emotion in enumerate(columns.emotions):
            frame[f"{prefix}_{emotion}"] = sums[:, j].astype(np.int64)
    if columns.ties is not None:
        frame["tie_rate"] = np.bincount(columns.person, columns.ties.astype(float), k) / counts
    return frame


EMOTION_TABLE_INTERVAL_METHOD = (
    "per group and emotion, an interval for the full set's share (top-1 answers; Beecher's weighted points) from "
    "the persons kept at random within gender x race cells: the stratified t interval with the finite-population "
    "correction where the group has 10 or more kept persons, two or more per cell and a small skewness (Cochran's "
    "rule), near its stated level; elsewhere betting confidence intervals for bounded values (Waudby-Smith & "
    "Ramdas 2024) per cell, combined over the group's cells (unqover.measure.stratified), valid at any number of "
    "persons, nearly [0, 1] with one per cell; exact when all were kept. The per-person table needs "
    "none: a kept person keeps all its questions"
)


def cell_label(gender: str, race: str | None) -> str:
    """A gender × race cell as the quick-run selection records it: ``female|European``, ``male|none``."""
    return f"{gender}|{race or NO_RACE}"


def _share_intervals(
    name: str,
    groups: Sequence[str],
    unit_cell: np.ndarray,
    unit_questions: np.ndarray,
    tables: Mapping[str, tuple[np.ndarray, float]],
    emotions: Sequence[str],
    population: Mapping,
    confidence: float,
    seed: int,
) -> tuple[dict[str, dict], str | None]:
    """Per table (``tables``: per-unit sums (U, E) and the points one question gives): the sample shares and the
    intervals of the full set's shares per group and emotion, or the reason there are none."""
    persons = {str(k): int(v) for k, v in (population.get("per_cell") or {}).items()}
    questions = population.get("questions_per_cell")
    questions = None if questions is None else {str(k): int(v) for k, v in questions.items()}
    part = 1 if name == "race" else 0  # the label of the cell that names the group
    strata = [cell for cell in sorted(persons) if cell.split("|")[part] in groups]
    unknown = sorted(set(unit_cell) - set(strata))
    if unknown:
        return {}, f"the selection records no full-set persons for the cells {unknown}"
    per_person = []
    for cell in strata:
        mine = unit_questions[unit_cell == cell]
        if len(set(mine.tolist())) > 1:
            return {}, f"the persons of {cell} answered different numbers of questions"
        if len(mine):
            q = int(mine[0])
            if questions is not None and questions.get(cell, q * persons[cell]) != q * persons[cell]:
                return {}, f"the persons of {cell} answered different numbers of questions in the full set"
        elif questions is not None and cell in questions and questions[cell] % max(persons[cell], 1) == 0:
            q = questions[cell] // max(persons[cell], 1)
        else:
            return {}, f"no person of {cell} was kept and the selection does not record its questions"
        per_person.append(q)
    q_stratum = np.array(per_person, dtype=np.float64)
    n_stratum = np.array([persons[c] for c in strata], dtype=np.float64)
    stratum_group = np.array([groups.index(c.split("|")[part]) for c in strata], dtype=np.int64)
    group_questions = np.bincount(stratum_group, n_stratum * q_stratum, len(groups))
    weight = n_stratum * q_stratum / group_questions[stratum_group]
    unit_stratum = np.array([strata.index(c) for c in unit_cell], dtype=np.int64)
    unit_group = stratum_group[unit_stratum]
    out = {}
    num_emotions, num_strata = len(emotions), len(strata)
    for table, (sums, points) in tables.items():
        shares = sums / (unit_questions[:, None] * points)  # each person's own share, in [0, 1]
        _, low, high = stratified_mean_intervals(
            shares.T.ravel(),
            np.concatenate([unit_stratum + j * num_strata for j in range(num_emotions)]),
            np.concatenate([stratum_group + j * len(groups) for j in range(num_emotions)]),
            np.tile(n_stratum, num_emotions),
            np.tile(weight, num_emotions),
            alpha=1 - confidence,
            seed=seed,
        )
        sample = {}
        intervals = {}
        for k, g in enumerate(groups):
            in_group = unit_group == k
            total = float(unit_questions[in_group].sum() * points)
            sample[g], intervals[g] = {}, {}
            for j, e in enumerate(emotions):
                share = float(sums[in_group, j].sum()) / total if total else float("nan")
                lo, hi = low[j * len(groups) + k], high[j * len(groups) + k]
                intervals[g][e] = [float(min(max(lo, 0.0), share)), float(max(min(hi, 1.0), share))]
                sample[g][e] = share
        out[table] = {"shares": sample, "share_intervals": intervals}
    return out, None


@dataclass(frozen=True)
class _TestPersons:
    """The questions of one test (``mask``, each one's group code) and its persons: each person's first question,
    group, stratum (the other attribute) and summed top-1 and rank-weighted vectors (persons × emotions)."""

    mask: np.ndarray
    q_group: np.ndarray
    person_codes: np.ndarray
    first: np.ndarray
    group: np.ndarray
    stratum: np.ndarray
    top1: np.ndarray
    weighted: np.ndarray


def _test_persons(
    name: str, columns: EmotionColumns, top1: np.ndarray, weighted: np.ndarray
) -> _TestPersons | None:
    """The questions and persons of test ``name``; None when its two groups are not both present."""
    groups, stratify_by = TESTS[name]
    labels = columns.race if name == "race" else columns.gender
    mask = np.array([v is not None for v in labels])
    if {str(v) for v in labels[mask]} != set(groups):
        return None
    q_group = np.array([groups.index(v) for v in labels[mask]], dtype=np.int64)
    q_top1, q_weighted = top1[mask], weighted[mask]
    person_codes, persons = pd.factorize(columns.person[mask], sort=True)
    units = len(persons)
    first = np.zeros(units, dtype=np.int64)
    first[person_codes[::-1]] = np.arange(len(person_codes))[::-1]
    other = (columns.gender if stratify_by == "gender" else columns.race)[mask][first]
    emotions = range(len(columns.emotions))
    return _TestPersons(
        mask,
        q_group,
        person_codes,
        first,
        q_group[first],
        np.array([NO_RACE if v is None else str(v) for v in other], dtype=object),
        np.stack([np.bincount(person_codes, q_top1[:, j], units) for j in emotions], axis=1),
        np.stack([np.bincount(person_codes, q_weighted[:, j], units) for j in emotions], axis=1),
    )


def _one_test(
    name: str,
    columns: EmotionColumns,
    top1: np.ndarray,
    weighted: np.ndarray,
    *,
    n_permutations: int,
    n_bootstrap: int,
    confidence: float,
    seed: int,
    sampled: bool = False,
    population: Mapping | None = None,
) -> dict | None:
    persons = _test_persons(name, columns, top1, weighted)
    if persons is None:
        return None
    groups, stratify_by = TESTS[name]
    result = _test_tables(name, columns, persons)
    sequence = np.random.SeedSequence([seed, list(TESTS).index(name)])
    permutation_seed, bootstrap_seed = sequence.spawn(2)
    if n_permutations:
        _permutation_p_values(result, persons, n_permutations, permutation_seed)
    counts = dict(result["num_persons"])
    counted = {"persons": counts, "all_persons": sum(counts.values()), "fewest_persons": min(counts.values())}
    if n_bootstrap and min(counts.values()) < MIN_PERSONS:
        result["cramers_v_interval_note"] = {"code": "few_persons", **counted, "needed": MIN_PERSONS}
    elif n_bootstrap and sampled:
        result["cramers_v_interval_note"] = {"code": "sampled_persons", **counted}
    elif n_bootstrap:
        interval = _cramers_v_interval(persons, len(groups), n_bootstrap, confidence, bootstrap_seed)
        if interval is not None:
            result["cramers_v_interval"] = interval
        else:
            result["cramers_v_interval_note"] = {"code": "same_value", **counted}
    if result["cramers_v_interval_note"]:
        result["notes"].append({"test": name, **result["cramers_v_interval_note"]})
    if n_permutations and 1 / result["arrangements"] > ALPHA:
        result["notes"].append(
            {
                "test": name,
                "code": "few_arrangements",
                **counted,
                "arrangements": result["arrangements"],
                "stratified_by": stratify_by,
                "smallest_p": 1 / result["arrangements"],
            }
        )
    if population is not None:
        _attach_shares(result, name, columns, persons, population, confidence, seed)
    mask, q_group = persons.mask, persons.q_group
    result["by_form"] = _by_form(columns.form[mask], q_group, top1[mask], groups, columns.emotions)
    result["tie_rate"] = None
    if columns.ties is not None:
        q_ties = columns.ties[mask]
        result["tie_rate"] = {g: float(q_ties[q_group == k].mean()) for k, g in enumerate(groups)}
    return result


def _test_tables(name: str, columns: EmotionColumns, persons: _TestPersons) -> dict:
    """A test's tables and asymptotic statistics: Beecher's weighted scores with his statistic, the top-1 counts
    with the chi-square test and Cramér's V; permutation p-values and intervals still unset."""
    groups, stratify_by = TESTS[name]
    emotions = columns.emotions
    indicator = persons.group[None, :].astype(np.float64)
    top1_table = _tables(indicator, persons.top1)[0]
    scores = _tables(indicator, persons.weighted)[0]
    df_legacy = len(emotions) - 1
    legacy = beecher_statistic(scores)
    chi = chi_square_independence(top1_table)
    counts, points = _records(top1_table, groups, emotions), _records(scores, groups, emotions)
    return {
        "groups": list(groups),
        "num_questions": int(persons.mask.sum()),
        "num_persons": {g: int((persons.group == k).sum()) for k, g in enumerate(groups)},
        "stratified_by": stratify_by,
        "beecher": {
            "scores": points,
            "totals": row_totals(points),
            "statistic": legacy,
            "df": df_legacy,
            "cutoff": float(chi2.ppf(1 - ALPHA, df_legacy)),
            "exceeds_cutoff": bool(legacy > chi2.ppf(1 - ALPHA, df_legacy)),
            "legacy_p_value": float(chi2.sf(legacy, df_legacy)),
            "legacy_note": LEGACY_NOTE,
            "permutation_p_value": None,
        },
        "top1": {
            "counts": counts,
            "totals": row_totals(counts),
            "count_shares": count_shares(counts),
            "statistic": chi.statistic,
            "df": chi.df,
            "p_value": chi.p_value,
            "permutation_p_value": None,
        },
        "p_value": chi.p_value,
        "p_value_method": "asymptotic chi-square",
        "cramers_v": cramers_v(top1_table),
        "cramers_v_interval": None,
        "cramers_v_interval_note": None,
        "arrangements": _arrangements(persons.group, persons.stratum),
        "notes": [],
    }


def _permutation_p_values(
    result: dict, persons: _TestPersons, n_permutations: int, seed: np.random.SeedSequence
) -> None:
    """The person-level permutation p-values of the chi-square and Beecher's statistics (group labels shuffled
    within strata); the chi-square one becomes the test's primary p-value."""
    rng = np.random.default_rng(seed)
    observed = np.array([result["top1"]["statistic"], result["beecher"]["statistic"]])
    threshold = observed - 1e-9 * np.maximum(1.0, np.abs(observed))
    hits = np.zeros(2)
    for start in range(0, n_permutations, BATCH):
        size = min(BATCH, n_permutations - start)
        draws = permuted_labels(rng, persons.group, persons.stratum, size).astype(np.float64)
        top1_stat, _ = pearson_statistics(_tables(draws, persons.top1))
        legacy_stat = beecher_statistics(_tables(draws, persons.weighted))
        hits += [(top1_stat >= threshold[0]).sum(), (legacy_stat >= threshold[1]).sum()]
    p_top1, p_legacy = (1 + hits) / (1 + n_permutations)
    result["top1"]["permutation_p_value"] = float(p_top1)
    result["beecher"]["permutation_p_value"] = float(p_legacy)
    result["p_value"] = float(p_top1)
    result["p_value_method"] = f"person-level permutation, stratified by {result['stratified_by']}"


def _cramers_v_interval(
    persons: _TestPersons, num_groups: int, n_bootstrap: int, confidence: float, seed: np.random.SeedSequence
) -> list[float] | None:
    """The percentile interval of Cramér's V over resamples of persons within each group; None when every
    resample gives the same value."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(num_groups):
        members = persons.top1[persons.group == k]
        rows.append(multinomial_weights(rng, len(members), n_bootstrap) @ members)
    replicates = cramers_v(np.stack(rows, axis=-2))
    alpha = (1 - confidence) / 2
    low, high = float(np.quantile(replicates, alpha)), float(np.quantile(replicates, 1 - alpha))
    return [low, high] if high - low > 1e-12 else None


def _attach_shares(
    result: dict,
    name: str,
    columns: EmotionColumns,
    persons: _TestPersons,
    population: Mapping,
    confidence: float,
    seed: int,
) -> None:
    """A quick run's shares per group and emotion with the intervals of the full set's (or why there are none)."""
    mask, first = persons.mask, persons.first
    unit_cell = np.array([cell_label(g, r) for g, r in zip(columns.gender[mask][first],
                                                           columns.race[mask][first], strict=True)])  # fmt: skip
    tables = {
        "top1": (persons.top1, 1.0),
        "beecher": (persons.weighted, float(rank_weights(columns.codes.shape[1]).sum())),
    }
    shares, note = _share_intervals(
        name, TESTS[name][0], unit_cell,
        np.bincount(persons.person_codes, minlength=len(first)).astype(np.float64), tables, columns.emotions,
        population, confidence, int(np.random.SeedSequence([seed, list(TESTS).index(name), 2]).generate_state(1)[0]),
    )  # fmt: skip
    for table, entries in shares.items():
        result[table].update(entries)
    result["share_intervals_note"] = note


def _arrangements(group: np.ndarray, stratum: np.ndarray) -> int:
    """How many distinct group labellings the stratified permutation can produce: Π over strata C(n_s, m_s)."""
    total = 1
    for value in np.unique(stratum):
        in_stratum = stratum == value
        total *= math.comb(int(in_stratum.sum()), int(group[in_stratum].sum()))
    return total


def _by_form(forms: np.ndarray, group: np.ndarray, top1: np.ndarray, groups, emotions) -> list[dict]:
    """Top-1 counts per question form and group: records form, group, questions, one column per emotion."""
    records = []
    for form in sorted(set(forms)):
        in_form = forms == form
        for k, g in enumerate(groups):
            sel = in_form & (group == k)
            counts = top1[sel].sum(axis=0)
            records.append(
                {"form": form, "group": g, "questions": int(sel.sum())}
                | {e: int(counts[j]) for j, e in enumerate(emotions)}
            )
    return records


def _adjusted(tests: Mapping[str, dict], done: list[str]) -> dict:
    """The primary p-values of the tests that ran, with Holm's and Benjamini–Hochberg's adjustments across them."""
    primary = np.array([tests[name]["p_value"] for name in done])
    return {
        "family": f"the primary p-values of this result's tests ({', '.join(done)}); to correct across models, "
        "pass all their p-values to unqover.measure.emotion.adjust_p_values",
        "p_values": dict(zip(done, primary.tolist(), strict=True)),
        "holm": dict(zip(done, adjust_p_values(primary, "holm").tolist(), strict=True)),
        "bh": dict(zip(done, adjust_p_values(primary, "bh").tolist(), strict=True)),
    }


def emotion_bias(
    answers: Sequence[Sequence[str]],
    gender: Sequence[str],
    race: Sequence[str | None],
    person: Sequence[str],
    form: Sequence[str],
    *,
    emotions: Mapping[str, str] | None = None,
    top_k: int = 3,
    n_permutations: int = 2000,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    ties: Sequence[bool] | None = None,
    seed: int = 0,
    persons_total: int | None = None,
    population: Mapping | None = None,
) -> EmotionBias:
    """Beecher's race and gender tests and their valid replacements, one row per question.

    ``answers``: each question's ranked answers, best first (at least ``top_k``); ``gender``: "female"/"male";
    ``race``: "African-American"/"European", or None for noun phrases; ``person``: the person slot (the unit the
    permutation and bootstrap move); ``form``: the question form. ``emotions`` maps answer words to emotions
    (default: the EEC words via ``unqover.generate.eec.emotion_of``). ``ties``: whether a tie affected the
    question's top-k. A test whose two groups are not both present is None. ``persons_total``: when the questions
    are a sample of persons (a quick run), how many persons the full set has; Cramér's V intervals are then
    declined, since V from fewer persons overstates the full set's. ``notes`` records what few persons prevent.
    ``population`` (a quick run): the full set's persons per gender × race cell (``per_cell``, keys as
    :func:`cell_label`) and optionally its questions per cell (``questions_per_cell``), as the selection records
    them; the per-group tables then get the shares and their intervals (see the module docstring).
    """
    if n_permutations < 0 or n_bootstrap < 0:
        raise UnqoverError("n_permutations and n_bootstrap must be 0 (none) or positive")
    if not 0 < confidence < 1:
        raise UnqoverError(f"confidence must be in (0, 1), got {confidence}")
    columns = validate_emotion_columns(
        answers, gender, race, person, form, emotions=emotions, top_k=top_k, ties=ties
    )
    top1, weighted = question_scores(columns.codes, len(columns.emotions))
    if persons_total is not None and (isinstance(persons_total, bool) or not isinstance(persons_total, int)):
        raise UnqoverError(f"persons_total must be a whole number of persons or None, got {persons_total!r}")
    options = {
        "n_permutations": n_permutations,
        "n_bootstrap": n_bootstrap,
        "confidence": confidence,
        "sampled": persons_total is not None and persons_total > len(columns.person_names),
        "population": population,
    }
    tests = {name: _one_test(name, columns, top1, weighted, seed=seed, **options) for name in TESTS}
    done = [name for name, test in tests.items() if test is not None]
    if not done:
        raise UnqoverError(
            "neither test can run: the gender test needs both female and male questions, the race test both "
            "African-American and European names"
        )
    result = EmotionBias(
        notes=[note for name in done for note in tests[name]["notes"]],
        num_questions=len(columns.codes),
        num_persons=len(columns.person_names),
        emotions=list(columns.emotions),
        top_k=top_k,
        weights=rank_weights(top_k).tolist(),
        tests=tests,
        adjusted=_adjusted(tests, done),
        persons=_person_profiles(columns, top1, weighted),
        tie_rate=None if columns.ties is None else float(columns.ties.mean()),
    )
    if population is not None:
        result.table_intervals = {
            "tables": "tests.<name>.top1.share_intervals, tests.<name>.beecher.share_intervals",
            "confidence": confidence,
            "unit": "person, with all its questions, within a gender x race cell",
            "method": EMOTION_TABLE_INTERVAL_METHOD,
        }
    if n_permutations:
        result.permutation = {
            "n_permutations": n_permutations,
            "seed": seed,
            "unit": "person",
            "method": "group labels shuffled across persons within strata (race within gender; gender within "
            "race, noun phrases their own stratum); p = (1 + #{T* >= T}) / (1 + B)",
        }
    if n_bootstrap:
        result.bootstrap = {
            "n_resamples": n_bootstrap,
            "confidence": confidence,
            "seed": seed,
            "resampled": "persons within each group, with all their questions",
            "method": "percentile",
        }
    return result
