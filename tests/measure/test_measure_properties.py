"""Proposition 1 of the paper (Li et al. 2020, §4.2) and the invariances of the aggregated tables, on generated scores.

A group's eight scores are held as ``s[order, polarity, k]``: order 0 mentions x1 first (τ12), polarity 0 asks
about a (1: ā), k = 0 is x1 and 1 is x2. Groups are turned into rows and measured through the public functions.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from unqover.measure.pairing import pair_rows
from unqover.measure.unqover import bias_scores, unqover_bias

GROUP_SETTINGS = settings(max_examples=100, deadline=None)
TABLE_SETTINGS = settings(max_examples=25, deadline=None)  # each example measures whole tables (pandas)
SCORE = st.floats(0, 1, allow_nan=False, allow_infinity=False)
POLARITY = ("positive", "negated")
FIELDS = ("subject_1", "subject_2", "template_id", "attribute", "polarity")


def group_rows(s: np.ndarray, x1: str = "p", x2: str = "q") -> tuple[dict, np.ndarray, np.ndarray]:
    """The four rows of one group from ``s[order, polarity, k]``."""
    rows = {name: [] for name in FIELDS}
    score_1, score_2 = [], []
    for order, (first, second) in enumerate(((x1, x2), (x2, x1))):
        for polarity in (0, 1):
            for name, value in zip(FIELDS, (first, second, 0, "a", POLARITY[polarity]), strict=True):
                rows[name].append(value)
            k_first, k_second = (0, 1) if order == 0 else (1, 0)
            score_1.append(s[order, polarity, k_first])
            score_2.append(s[order, polarity, k_second])
    return rows, np.array(score_1), np.array(score_2)


def comparative(s: np.ndarray, x1: str = "p", x2: str = "q") -> float:
    """C(x1, x2, a, τ) for the group ``s`` whose subjects are named x1, x2 (x1 need not sort first)."""
    rows, s1, s2 = group_rows(s, x1, x2)
    paired = pair_rows(*(rows[name] for name in FIELDS), s1, s2)
    _, _, c = bias_scores(paired)
    first = paired.subjects[paired.x1[0]]
    return float(c[0]) if first == x1 else -float(c[0])


group_scores = arrays(np.float64, (2, 2, 2), elements=SCORE)


@GROUP_SETTINGS
@given(group_scores)
def test_c_and_b_within_bounds(s):
    rows, s1, s2 = group_rows(s)
    b1, b2, c = bias_scores(pair_rows(*(rows[name] for name in FIELDS), s1, s2))
    assert -1 <= b1[0] <= 1 and -1 <= b2[0] <= 1
    assert -1 <= c[0] <= 1


@GROUP_SETTINGS
@given(group_scores)
def test_positional_independence(s):
    """C(x1, x2, a, τ12) = C(x1, x2, a, τ21): exchanging the two orders' scores leaves C unchanged."""
    assert comparative(s[::-1]) == comparative(s)


def swap_subjects(s: np.ndarray) -> np.ndarray:
    """The same four rows seen with x2 as the first subject: k swaps, and so does which order is τ12."""
    return s[::-1, :, ::-1]


@GROUP_SETTINGS
@given(group_scores)
def test_attribute_negation_dependence(s):
    """C(x1, x2, a, τ) = C(x2, x1, ā, τ): the same contexts, with ā asked where a was (and vice versa)."""
    negated = s[:, ::-1]
    assert comparative(swap_subjects(negated), "q", "p") == comparative(s)


@GROUP_SETTINGS
@given(group_scores)
def test_complementarity(s):
    """C(x1, x2, a, τ) = −C(x2, x1, a, τ) for the same rows."""
    assert comparative(swap_subjects(s), "q", "p") == -comparative(s)


@GROUP_SETTINGS
@given(group_scores)
def test_names_do_not_matter(s):
    """Renaming x1 so that it sorts after x2 (the group is then stored the other way round) changes nothing."""
    assert comparative(s, "z", "q") == comparative(s, "p", "q")
    assert comparative(s, "b", "a") == comparative(s, "a", "b")


@GROUP_SETTINGS
@given(arrays(np.float64, (2, 2), elements=SCORE))
def test_zero_centrality_position_only(f):
    """Scores that depend only on the position (first/second mentioned) and the question give C = 0."""
    s = np.empty((2, 2, 2))
    for polarity in (0, 1):
        s[0, polarity] = [f[0, polarity], f[1, polarity]]  # x1 first
        s[1, polarity] = [f[1, polarity], f[0, polarity]]  # x2 first
    assert comparative(s) == 0


@GROUP_SETTINGS
@given(arrays(np.float64, (2, 2), elements=SCORE))
def test_zero_centrality_polarity_blind(g):
    """Scores that ignore the question's polarity (any dependence on subject and order) give C = 0."""
    s = np.stack([g, g], axis=1)  # s[order, polarity, k] = g[order, k]
    assert comparative(s) == 0


# -----------------------------------------------------------------------------------------------------------
# Whole datasets: the tables
# -----------------------------------------------------------------------------------------------------------


@st.composite
def datasets(draw, min_subjects=2, max_subjects=4):
    """Complete data: every ordered pair x template x attribute x polarity, with scores in [0, 1]."""
    n = draw(st.integers(min_subjects, max_subjects))
    n_templates = draw(st.integers(1, 2))
    n_attributes = draw(st.integers(1, 2))
    subjects = [f"s{i}" for i in range(n)]
    rows = {name: [] for name in FIELDS}
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            for t in range(n_templates):
                for a in range(n_attributes):
                    for polarity in POLARITY:
                        for name, value in zip(
                            FIELDS, (subjects[i], subjects[j], t, f"a{a}", polarity), strict=True
                        ):
                            rows[name].append(value)
    scores = draw(arrays(np.float64, (len(rows["subject_1"]), 2), elements=SCORE))
    return rows, scores[:, 0].copy(), scores[:, 1].copy()


def measured(rows, s1, s2):
    return unqover_bias(rows, s1, s2, n_resamples=0)


def gamma_cells(result) -> dict:
    return {
        (s, a): (g, e, n)
        for s, a, g, e, n in zip(
            *(result.gamma[c] for c in ("subject", "attribute", "gamma", "eta", "count")), strict=True
        )
    }


def row_index(rows) -> dict:
    return {tuple(rows[name][i] for name in FIELDS): i for i in range(len(rows["subject_1"]))}


@TABLE_SETTINGS
@given(datasets())
def test_ranges(data):
    result = measured(*data)
    assert 0 <= result.mu <= 1
    assert 0 <= result.eta <= 1
    assert 0 <= result.subject_mu <= 1 and 0 <= result.subject_eta <= 1
    assert 0 <= result.positional_error <= 1 and 0 <= result.attributive_error <= 1
    assert 0 <= result.mean_score <= 1
    assert result.gamma["gamma"].abs().max() <= 1 and result.gamma["eta"].abs().max() <= 1
    assert abs(result.mu - result.gamma["gamma"].abs().groupby(result.gamma["subject"]).max().mean()) <= 1e-15


@TABLE_SETTINGS
@given(datasets(max_subjects=2))
def test_two_subjects_are_mirror_images(data):
    """With two subjects every C is seen once from each side: γ(x2, a) = −γ(x1, a), η likewise."""
    cells = gamma_cells(measured(*data))
    attributes = {a for _, a in cells}
    for a in attributes:
        g1, e1, n1 = cells["s0", a]
        g2, e2, n2 = cells["s1", a]
        assert g2 == -g1 and e2 == -e1 and n1 == n2


@TABLE_SETTINGS
@given(datasets(min_subjects=3), st.randoms(use_true_random=False))
def test_antisymmetry_and_relabelling(data, random):
    """Σ_x n(x, a)·γ(x, a) = 0 for every attribute, and renaming the subjects (a permutation that changes their
    sort order, so every pair may be stored the other way round) just renames the table."""
    rows, s1, s2 = data
    result = measured(rows, s1, s2)
    for _, block in result.gamma.groupby("attribute"):
        assert abs((block["gamma"] * block["count"]).sum()) <= 1e-12
        assert abs((block["eta"] * block["count"]).sum()) <= 1e-9
    names = sorted(set(rows["subject_1"]))
    permuted = names[:]
    random.shuffle(permuted)
    rename = dict(zip(names, permuted, strict=True))
    renamed = dict(
        rows,
        subject_1=[rename[s] for s in rows["subject_1"]],
        subject_2=[rename[s] for s in rows["subject_2"]],
    )
    after = gamma_cells(measured(renamed, s1, s2))
    before = gamma_cells(result)
    assert after.keys() == {(rename[s], a) for s, a in before}
    for (s, a), (g, e, n) in before.items():
        g2, e2, n2 = after[rename[s], a]
        assert abs(g2 - g) <= 1e-12 and e2 == e and n2 == n


@TABLE_SETTINGS
@given(datasets())
def test_swapping_orders_keeps_every_gamma(data):
    """Give each subject the score it had in the other order (τ12 <-> τ21): γ, η, μ and δ are unchanged."""
    rows, s1, s2 = data
    index = row_index(rows)
    new_1, new_2 = s1.copy(), s2.copy()
    for (x, y, t, a, p), i in index.items():
        j = index[y, x, t, a, p]
        new_1[i], new_2[i] = s2[j], s1[j]
    before, after = measured(rows, s1, s2), measured(rows, new_1, new_2)
    b, c = gamma_cells(before), gamma_cells(after)
    assert b.keys() == c.keys()
    for key in b:
        assert abs(b[key][0] - c[key][0]) <= 1e-15 and b[key][1:] == c[key][1:]
    assert abs(before.positional_error - after.positional_error) <= 1e-15
    assert abs(before.mu - after.mu) <= 1e-15


@TABLE_SETTINGS
@given(datasets())
def test_negating_every_question_negates_gamma(data):
    """Swap the polarity labels (ā becomes the asked attribute): γ(x, a) and η(x, a) change sign, δ and ε do not."""
    rows, s1, s2 = data
    flipped = dict(rows, polarity=["negated" if p == "positive" else "positive" for p in rows["polarity"]])
    before, after = measured(rows, s1, s2), measured(flipped, s1, s2)
    b, c = gamma_cells(before), gamma_cells(after)
    for key in b:
        assert abs(b[key][0] + c[key][0]) <= 1e-15 and b[key][1] == -c[key][1] and b[key][2] == c[key][2]
    assert abs(before.positional_error - after.positional_error) <= 1e-15
    assert abs(before.attributive_error - after.attributive_error) <= 1e-15
    assert abs(before.mu - after.mu) <= 1e-15 and abs(before.eta - after.eta) <= 1e-15


@TABLE_SETTINGS
@given(datasets(), st.randoms(use_true_random=False))
def test_row_order_does_not_matter(data, random):
    rows, s1, s2 = data
    order = list(range(len(s1)))
    random.shuffle(order)
    shuffled = {name: [values[i] for i in order] for name, values in rows.items()}
    b, c = gamma_cells(measured(rows, s1, s2)), gamma_cells(measured(shuffled, s1[order], s2[order]))
    assert b.keys() == c.keys()
    for key in b:
        assert abs(b[key][0] - c[key][0]) <= 1e-15 and b[key][1:] == c[key][1:]


@TABLE_SETTINGS
@given(datasets(), arrays(np.float64, (2, 2), elements=SCORE), st.booleans())
def test_zero_centrality_tables(data, f, polarity_blind):
    """An unbiased model: scores from the position and the question only, or from anything (subjects, order,
    template) but the question's polarity. Every γ and η is 0 (exactly: sign(0) counts neither way), so are μ, η."""
    rows, s1, s2 = data
    if (
        polarity_blind
    ):  # rows come as (positive, negated) pairs of one entry: give the negated row the same scores
        assert rows["polarity"][0::2] == ["positive"] * (len(s1) // 2)
        s1[1::2], s2[1::2] = s1[0::2], s2[0::2]
    else:
        p = np.array([POLARITY.index(v) for v in rows["polarity"]])
        s1, s2 = f[0, p], f[1, p]
    result = measured(rows, s1, s2)
    assert (result.gamma["gamma"].abs() <= 1e-15).all()
    assert (result.gamma["eta"] == 0).all()
    assert result.mu <= 1e-15 and result.eta == 0
