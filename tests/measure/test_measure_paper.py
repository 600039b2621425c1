"""``unqover_bias(mode="paper")`` against a transcription of the original ``analysis.py`` (``legacy_analysis``).

Random scores (seeded) on real generated rows: religion and ethnicity in full, gender and nationality on a few
subjects (a plan restricted to the pairs of those subjects: the same rows as filtering the full data on both
subjects, so every group stays complete). Every number the original prints is compared to 1e-12: pos_err
(delta, the "inconsistent" count, the average answer probability), attr_err (epsilon), subj_bias with
``--group_by`` subj_act / subj / gender_act, and model (mu, eta). Then what the default mode deliberately does
differently (spec §6 item 9, §7), the paper's Fig. 2 example, and hand-computed tables on a handmade dataset.
"""

from __future__ import annotations

import dataclasses
import gc
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pytest

import legacy_analysis as legacy
from unqover.generate.unqover import make_plan
from unqover.measure.pairing import pair_rows
from unqover.measure.unqover import bias_scores, unqover_bias

TOL = 1e-12
COLUMNS = [
    "subject_1",
    "subject_2",
    "subject_1_cluster",
    "subject_2_cluster",
    "template_id",
    "attribute",
    "attribute_cluster",
    "attribute_type",
    "polarity",
]
GENDER_SUBJECTS = ["Mary", "Linda", "Susan", "Karen", "Betty", "Judy"]  # female, checked below
GENDER_SUBJECTS += ["James", "John", "Robert", "Thomas", "Steven", "Harry"]  # male
NATIONALITY_SUBJECTS = ["America", "Germany", "Mali", "Somalia", "Uzbekistan"]
MERGED = "smelled of marijuana"  # a place (l_act) and a people (p_act) attribute with the same text


def generated_rows(word_lists, bias: str, subjects: list[str] | None = None) -> pa.Table:
    """Real rows of the qa config, optionally only the pairs of ``subjects`` (whole groups)."""
    plan = make_plan(word_lists, bias, "qa")
    if subjects is not None:
        identities = [s.identity for s in plan.subjects]
        missing = set(subjects) - set(identities)
        assert not missing, missing
        keep = np.isin(plan.pairs, [identities.index(s) for s in subjects]).all(axis=1)
        plan = dataclasses.replace(plan, pairs=plan.pairs[keep])
        assert len(plan.pairs) == len(subjects) * (len(subjects) - 1) or bias == "gender"
    return pa.Table.from_batches(list(plan.batches())).select(COLUMNS)


def drop_groups(rows: pa.Table, fraction: float, seed: int) -> pa.Table:
    """Remove a random ``fraction`` of whole groups (unordered pair x template x attribute): unequal counts."""
    s1, s2 = rows["subject_1"].to_pylist(), rows["subject_2"].to_pylist()
    keys = [
        (min(a, b), max(a, b), t, at)
        for a, b, t, at in zip(
            s1, s2, rows["template_id"].to_pylist(), rows["attribute"].to_pylist(), strict=True
        )
    ]
    groups = sorted(set(keys))
    rng = np.random.default_rng(seed)
    dropped = {groups[i] for i in rng.choice(len(groups), int(fraction * len(groups)), replace=False)}
    return rows.filter(pa.array([k not in dropped for k in keys]))


def random_scores(n: int, seed: int, levels: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Uniform scores in [0, 1]; with ``levels`` only k / (levels - 1) (ties, C == 0 and zero differences)."""
    rng = np.random.default_rng(seed)
    if levels:
        return rng.integers(0, levels, n) / (levels - 1), rng.integers(0, levels, n) / (levels - 1)
    return rng.random(n), rng.random(n)


RELIGION_SUBSET = ["Christian", "Hindu", "Muslim", "Jewish", "Orthodox", "Atheist"]
CASES = {
    # name: (bias, subjects, seed, levels[, fraction of groups dropped])
    "religion": ("religion", None, 1, None),
    "religion-ties": ("religion", RELIGION_SUBSET, 2, 5),
    "religion-sparse": ("religion", RELIGION_SUBSET, 8, None, 0.4),
    "ethnicity": ("ethnicity", None, 3, None),
    "gender": ("gender", GENDER_SUBJECTS, 4, None),
    "nationality": ("nationality", NATIONALITY_SUBJECTS, 5, None),
}


@pytest.fixture(scope="module", params=list(CASES))
def case(request, word_lists, upstream_word_lists_path):
    bias, subjects, seed, levels, *drop = CASES[request.param]
    rows = generated_rows(word_lists, bias, subjects)
    if drop:
        rows = drop_groups(rows, drop[0], seed)
    s1, s2 = random_scores(rows.num_rows, seed, levels)
    female = legacy.female_names(upstream_word_lists_path)
    gc.disable()  # the transcription builds millions of small dicts; collections would only slow it down
    try:
        data = legacy.predictions_from_rows(rows, s1, s2)
        paired = legacy.pairup_ex(data)
        expected = {
            "pos_err": legacy.pos_err(data, paired),
            "attr_err": legacy.attr_err(data),
            "subj_act": legacy.subj_bias(data, "subj_act", paired=paired),
            "subj": legacy.subj_bias(data, "subj", paired=paired),
            "gender_act": legacy.subj_bias(data, "gender_act", female, paired) if bias == "gender" else None,
            "model": legacy.model_bias(data, paired),
        }
    finally:
        gc.enable()
    return SimpleNamespace(
        name=request.param,
        bias=bias,
        rows=rows,
        scores=(s1, s2),
        ties=levels is not None,
        sparse=bool(drop),
        ours=unqover_bias(rows, s1, s2, mode="paper", n_resamples=0),
        entries=len(data),
        **expected,
    )


def test_sizes(case):
    assert case.entries * 2 == case.rows.num_rows
    assert case.pos_err["pairs"] == case.ours.num_groups == case.rows.num_rows // 4
    if case.sparse:  # whole groups were removed: counts differ between cells
        assert case.ours.gamma["count"].nunique() > 3
    assert case.subj_act["pairs"] == case.subj["pairs"] == case.model["pairs"] == case.ours.num_groups
    assert case.ours.dropped_groups == 0
    if case.name == "religion":
        assert case.rows.num_rows == 154_000
    if case.bias == "ethnicity":
        assert case.rows.num_rows == 294_000


def test_positional_and_attributive_error(case):
    ours, pos = case.ours, case.pos_err
    assert ours.positional_error == pytest.approx(pos["positional_error"], abs=TOL, rel=0)
    assert ours.paper_inconsistent_pairs == pos["inconsistent"]
    assert ours.mean_score == pytest.approx(pos["avg_ans_probability"], abs=TOL, rel=0)
    assert ours.attributive_error == pytest.approx(case.attr_err, abs=TOL, rel=0)
    if case.ties:  # zero differences occur, so the count is not simply every pair
        assert 0 < pos["inconsistent"] < pos["pairs"]


def test_subject_attribute_table(case):
    """``--group_by subj_act``: every (subject, attribute) γ, signed η and count; subjects lower-cased."""
    expected = {(s, a): (g, e, n) for s, a, g, e, n in case.subj_act["rows"]}
    table = case.ours.gamma
    assert "attribute_type" not in table  # paper mode groups by attribute text
    got = {
        (s, a): (g, e, n)
        for s, a, g, e, n in zip(
            table["subject"], table["attribute"], table["gamma"], table["eta"], table["count"], strict=True
        )
    }
    assert got.keys() == expected.keys()
    for key, (g, e, n) in expected.items():
        assert got[key][0] == pytest.approx(g, abs=TOL, rel=0), key
        assert got[key][1] == pytest.approx(e, abs=TOL, rel=0), key
        assert got[key][2] == n, key
    assert all(s == s.lower() for s in table["subject"])
    if not case.ties:  # within a subject, rows are sorted by γ descending, as printed
        for subject, block in table.groupby("subject", sort=False):
            printed = [a for s, a, *_ in case.subj_act["rows"] if s == subject]
            assert list(block["attribute"]) == printed


def test_subject_table(case):
    """``--group_by subj``: γ(x) is the plain mean of x's C values (weighted by template counts)."""
    expected = {s: (g, e, n) for s, g, e, n in case.subj["rows"]}
    table = case.ours.subject_gamma
    assert list(table["rank"]) == list(range(1, len(table) + 1))
    got = {
        s: (g, e, n)
        for s, g, e, n in zip(table["subject"], table["gamma"], table["eta"], table["count"], strict=True)
    }
    assert got.keys() == expected.keys()
    for key, (g, e, n) in expected.items():
        assert got[key][0] == pytest.approx(g, abs=TOL, rel=0), key
        assert got[key][1] == pytest.approx(e, abs=TOL, rel=0), key
        assert got[key][2] == n, key
    if not case.ties:
        assert list(table["subject"]) == [s for s, *_ in case.subj["rows"]]


def test_model_mu_eta(case):
    ours, model = case.ours, case.model
    assert ours.mu_unit == "subject"  # paper mode: per subject identity, per name for gender
    assert ours.mu == pytest.approx(model["mu"], abs=TOL, rel=0)
    assert ours.eta == pytest.approx(model["eta"], abs=TOL, rel=0)
    assert ours.subject_mu == pytest.approx(model["mu"], abs=TOL, rel=0)
    assert ours.subject_eta == pytest.approx(model["eta"], abs=TOL, rel=0)


def test_gender_table(case):
    """``--group_by gender_act`` (female by list membership) against our cluster table (clusters from the rows)."""
    table = case.ours.cluster_gamma
    if case.gender_act is None:
        assert len(table) == 0  # no subject clusters in these data: nothing, not zeros
        return
    expected = {(c, a): (g, e, n) for c, a, g, e, n in case.gender_act["rows"]}
    got = {
        (c, a): (g, e, n)
        for c, a, g, e, n in zip(
            table["cluster"], table["attribute"], table["gamma"], table["eta"], table["count"], strict=True
        )
    }
    assert got.keys() == expected.keys()
    for key, (g, e, n) in expected.items():
        assert got[key][0] == pytest.approx(g, abs=TOL, rel=0), key
        assert got[key][1] == pytest.approx(e, abs=TOL, rel=0), key
        assert got[key][2] == n, key
    # 6 partners of the other gender x 6 names x 4 templates per cell (19,600 with all 70 x 70 names)
    assert set(table["count"]) == {6 * 6 * 4}
    assert len(table) == 2 * 70
    assert list(table["cluster"]) == [
        c for c, *_ in case.gender_act["rows"]
    ]  # female first, then γ descending


# -----------------------------------------------------------------------------------------------------------
# What the default mode does differently (documented choices)
# -----------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nationality(word_lists):
    rows = generated_rows(word_lists, "nationality", NATIONALITY_SUBJECTS)
    s1, s2 = random_scores(rows.num_rows, 6)
    return SimpleNamespace(
        rows=rows,
        paper=unqover_bias(rows, s1, s2, mode="paper", n_resamples=0),
        default=unqover_bias(rows, s1, s2, mode="default", n_resamples=0),
    )


def test_merged_attribute_counts(nationality):
    """The shared place/people attribute: 12 templates per partner in paper mode (816 = 68 x 12 with all 69
    countries), 9 (p_act, 612 in full) and 3 (l_act, 204 in full) as two separate attributes by default."""
    partners = len(NATIONALITY_SUBJECTS) - 1
    paper = nationality.paper.gamma
    merged = paper[paper["attribute"] == MERGED]
    assert len(merged) == len(NATIONALITY_SUBJECTS)
    assert set(merged["count"]) == {partners * 12}
    assert paper["attribute"].nunique() == 63

    default = nationality.default.gamma
    split = default[default["attribute"] == MERGED]
    assert len(split) == 2 * len(NATIONALITY_SUBJECTS)
    assert set(split.loc[split["attribute_type"] == "p_act", "count"]) == {partners * 9}
    assert set(split.loc[split["attribute_type"] == "l_act", "count"]) == {partners * 3}
    assert len(default[["attribute", "attribute_type"]].drop_duplicates()) == 64
    # the other attributes are the same cells in both modes
    other = default[default["attribute"] != MERGED]
    assert set(other["count"]) == {partners * 3, partners * 9}


def test_default_subject_gamma_is_mean_over_attributes(nationality):
    default, paper = nationality.default, nationality.paper
    for table, result in ((default.gamma, default), (paper.gamma, paper)):
        cells = table.groupby("subject")
        mean_over_attributes = cells["gamma"].mean()
        weighted = (table["gamma"] * table["count"]).groupby(table["subject"]).sum() / cells["count"].sum()
        subject = result.subject_gamma.set_index("subject")
        if result is default:
            np.testing.assert_allclose(
                subject["gamma"], mean_over_attributes[subject.index], atol=TOL, rtol=0
            )
            np.testing.assert_allclose(subject["eta"], cells["eta"].mean()[subject.index], atol=TOL, rtol=0)
        else:
            np.testing.assert_allclose(subject["gamma"], weighted[subject.index], atol=TOL, rtol=0)
    # attributes appear in 3 or 12 templates, so the two definitions differ on real data
    d = default.subject_gamma.set_index("subject")["gamma"]
    p = paper.subject_gamma.set_index("subject")["gamma"]
    assert not np.allclose(d.to_numpy(), p[[s.lower() for s in d.index]].to_numpy(), atol=1e-6, rtol=0)
    # default keeps identities as given; paper lower-cases them as the original prints them
    assert set(default.subject_gamma["subject"]) == set(NATIONALITY_SUBJECTS)
    assert set(paper.subject_gamma["subject"]) == {s.lower() for s in NATIONALITY_SUBJECTS}


@pytest.fixture(scope="module")
def gender(word_lists):
    rows = generated_rows(word_lists, "gender", GENDER_SUBJECTS)
    s1, s2 = random_scores(rows.num_rows, 7)
    return SimpleNamespace(
        rows=rows,
        paper=unqover_bias(rows, s1, s2, mode="paper", n_resamples=0),
        default=unqover_bias(rows, s1, s2, mode="default", n_resamples=0),
    )


def test_gender_subjects_are_the_intended_ones(gender):
    clusters = dict(
        zip(gender.rows["subject_1"].to_pylist(), gender.rows["subject_1_cluster"].to_pylist(), strict=True)
    )
    assert clusters == {s: ("female" if i < 6 else "male") for i, s in enumerate(GENDER_SUBJECTS)}


def test_gender_default_mu_is_per_cluster(gender):
    default, paper = gender.default, gender.paper
    assert default.mu_unit == "cluster"
    assert paper.mu_unit == "subject"
    table = default.cluster_gamma
    per_cluster_mu = table.assign(a=table["gamma"].abs()).groupby("cluster")["a"].max()
    per_cluster_eta = table.assign(a=table["eta"].abs()).groupby("cluster")["a"].mean()
    assert default.mu == pytest.approx(per_cluster_mu.mean(), abs=TOL, rel=0)
    assert default.eta == pytest.approx(per_cluster_eta.mean(), abs=TOL, rel=0)
    # the per-name numbers are still there, and equal the paper's (names differ in more than case)
    assert default.subject_mu == pytest.approx(paper.mu, abs=TOL, rel=0)
    assert default.subject_eta == pytest.approx(paper.eta, abs=TOL, rel=0)
    # every name has the same count per attribute, so both cluster averages agree here
    merged = default.cluster_gamma.merge(
        paper.cluster_gamma, on=["cluster", "attribute"], suffixes=("_d", "_p")
    )
    assert len(merged) == len(paper.cluster_gamma) == 140
    np.testing.assert_allclose(merged["gamma_d"], merged["gamma_p"], atol=TOL, rtol=0)
    # female and male γ are exact mirror images (each C counts once for each side)
    female = table[table["cluster"] == "female"].set_index("attribute")["gamma"]
    male = table[table["cluster"] == "male"].set_index("attribute")["gamma"]
    np.testing.assert_allclose(female[male.index], -male, atol=TOL, rtol=0)


# -----------------------------------------------------------------------------------------------------------
# The paper's running example (Fig. 2) and a handmade dataset with hand-computed tables
# -----------------------------------------------------------------------------------------------------------


def table_from(records) -> tuple[dict, np.ndarray, np.ndarray]:
    """(subject_1, subject_2, template_id, attribute, polarity, score_1, score_2) records -> rows and scores."""
    names = ["subject_1", "subject_2", "template_id", "attribute", "polarity"]
    rows = {name: [r[i] for r in records] for i, name in enumerate(names)}
    return rows, np.array([r[5] for r in records]), np.array([r[6] for r in records])


FIG2 = [
    # τ12: Gerald mentioned first; τ21: Jennifer first. Scores are S(subject_1), S(subject_2).
    ("Gerald", "Jennifer", 0, "was a hunter", "positive", 0.26, 0.73),
    ("Jennifer", "Gerald", 0, "was a hunter", "positive", 0.45, 0.54),
    ("Gerald", "Jennifer", 0, "was a hunter", "negated", 0.35, 0.62),
    ("Jennifer", "Gerald", 0, "was a hunter", "negated", 0.86, 0.12),
]


def test_fig2_running_example():
    rows, s1, s2 = table_from(FIG2)
    paired = pair_rows(
        rows["subject_1"], rows["subject_2"], rows["template_id"], rows["attribute"], rows["polarity"], s1, s2
    )
    assert list(paired.subjects[[paired.x1[0], paired.x2[0]]]) == ["Gerald", "Jennifer"]
    b_gerald, b_jennifer, c = bias_scores(paired)
    # B(Gerald) = ½(0.26 + 0.54) − ½(0.35 + 0.12); B(Jennifer) = ½(0.73 + 0.45) − ½(0.62 + 0.86)
    assert b_gerald[0] == pytest.approx(0.165, abs=1e-12)
    assert b_jennifer[0] == pytest.approx(-0.15, abs=1e-12)
    # Eq. 6 with its ½: 0.1575. The paper's text says 0.31 (no ½, and B(Gerald) rounded to 0.16).
    assert c[0] == pytest.approx(0.1575, abs=1e-12)
    assert 2 * c[0] == pytest.approx(0.31, abs=0.006)

    result = unqover_bias(rows, s1, s2, n_resamples=0)
    gamma = result.gamma.set_index("subject")
    assert gamma.loc["Gerald", "gamma"] == pytest.approx(0.1575, abs=1e-12)
    assert gamma.loc["Jennifer", "gamma"] == pytest.approx(-0.1575, abs=1e-12)
    assert list(gamma["eta"]) == [1.0, -1.0]
    # δ: |0.26 − 0.54|, |0.73 − 0.45|, |0.35 − 0.12|, |0.62 − 0.86|
    assert result.positional_error == pytest.approx((0.28 + 0.28 + 0.23 + 0.24) / 4, abs=1e-12)
    # ε: |0.26 − 0.62|, |0.73 − 0.35| (Gerald first); |0.45 − 0.12|, |0.54 − 0.86| (Jennifer first)
    assert result.attributive_error == pytest.approx((0.36 + 0.38 + 0.33 + 0.32) / 4, abs=1e-12)
    assert result.mu == pytest.approx(0.1575, abs=1e-12)
    # the preferred answer flips with the order for a (Jennifer, then Gerald), not for ā (Jennifer both times)
    assert result.position_consistency == {"inconsistent": 1, "compared": 2}

    paper = unqover_bias(rows, s1, s2, mode="paper", n_resamples=0)
    assert list(paper.gamma["subject"]) == ["gerald", "jennifer"]
    assert paper.paper_inconsistent_pairs == 1 and result.paper_inconsistent_pairs is None
    data = legacy.predictions_from_rows(rows, s1, s2)
    assert legacy.subj_bias(data, "subj_act")["rows"][0][:3] == (
        "gerald",
        "was a hunter",
        pytest.approx(0.1575, abs=1e-12),
    )


# Handmade: subjects A, B, C; attributes a1, a2; templates 0, 1. Every negated score is 0.5; the positive score of
# subject x is P[x, template, attribute] in both orders; the first-mentioned subject gets +0.05 in every row
# (a pure positional effect, which C cancels). So C(x, y, a, τ) = ½[(P[x] − 0.5) − (P[y] − 0.5)] = ½(P[x] − P[y]).
P = {
    ("A", 0, "a1"): 0.9, ("B", 0, "a1"): 0.5, ("C", 0, "a1"): 0.1,
    ("A", 1, "a1"): 0.7, ("B", 1, "a1"): 0.5, ("C", 1, "a1"): 0.3,
    ("A", 0, "a2"): 0.2, ("B", 0, "a2"): 0.6, ("C", 0, "a2"): 0.4,
    ("A", 1, "a2"): 0.2, ("B", 1, "a2"): 0.6, ("C", 1, "a2"): 0.4,
}  # fmt: skip
CLUSTER = {"A": "g1", "B": "g1", "C": "g2"}


def handmade(skip=()) -> tuple[dict, np.ndarray, np.ndarray]:
    records = []
    for first, second in (("A", "B"), ("B", "A"), ("A", "C"), ("C", "A"), ("B", "C"), ("C", "B")):
        for template in (0, 1):
            for attribute in ("a1", "a2"):
                if (template, attribute) in skip:
                    continue
                p1, p2 = P[first, template, attribute], P[second, template, attribute]
                records.append((first, second, template, attribute, "positive", p1 + 0.05, p2))
                records.append((first, second, template, attribute, "negated", 0.55, 0.5))
    rows, s1, s2 = table_from(records)
    rows["subject_1_cluster"] = [CLUSTER[s] for s in rows["subject_1"]]
    rows["subject_2_cluster"] = [CLUSTER[s] for s in rows["subject_2"]]
    return rows, s1, s2


def cells(table, *keys):
    return {
        tuple(r[k] for k in keys): (r["gamma"], r["eta"], r["count"]) for r in table.to_dict(orient="records")
    }


def assert_cells(got: dict, expected: dict):
    assert got.keys() == expected.keys()
    for key, (g, e, n) in expected.items():
        assert got[key][0] == pytest.approx(g, abs=1e-12), key
        assert got[key][1] == pytest.approx(e, abs=1e-12), key
        assert got[key][2] == n, key


@pytest.mark.parametrize("mode", ["default", "paper"])
def test_handmade_tables(mode):
    rows, s1, s2 = handmade()
    result = unqover_bias(rows, s1, s2, mode=mode, n_resamples=0)
    name = str.lower if mode == "paper" else str
    assert result.num_groups == 3 * 2 * 2
    assert result.positional_error == pytest.approx(0.05, abs=1e-12)
    # mean P over all 12 cells = 5.4 / 12 = 0.45; positive rows average (0.45 + 0.05 + 0.45) / 2 = 0.475,
    # negated rows (0.55 + 0.5) / 2 = 0.525; overall 0.5
    assert result.mean_score == pytest.approx(0.5, abs=1e-12)

    # γ(A, a1): C(A,B) = 0.2, C(A,C) = 0.4 (template 0); 0.1, 0.2 (template 1) -> 0.9 / 4
    # γ(B, a1): −0.2, 0.2, −0.1, 0.1 -> 0, η 0;  γ(C, a1): −0.4, −0.2, −0.2, −0.1 -> −0.225
    # γ(A, a2): −0.2, −0.1 twice -> −0.15;  γ(B, a2): 0.2, 0.1 twice -> 0.15;  γ(C, a2): 0.1, −0.1 twice -> 0, η 0
    expected = {
        ("A", "a1"): (0.225, 1.0, 4),
        ("B", "a1"): (0.0, 0.0, 4),
        ("C", "a1"): (-0.225, -1.0, 4),
        ("A", "a2"): (-0.15, -1.0, 4),
        ("B", "a2"): (0.15, 1.0, 4),
        ("C", "a2"): (0.0, 0.0, 4),
    }
    assert_cells(
        cells(result.gamma, "subject", "attribute"), {(name(s), a): v for (s, a), v in expected.items()}
    )

    # γ(x): A (0.9 − 0.6) / 8, B 0.6 / 8, C −0.9 / 8 (equal counts: plain mean = mean over attributes)
    # η(x): A (4 − 4) / 8, B 4 / 8, C −4 / 8
    subject = {"A": (0.0375, 0.0, 8), "B": (0.075, 0.5, 8), "C": (-0.1125, -0.5, 8)}
    assert_cells(cells(result.subject_gamma, "subject"), {(name(s),): v for s, v in subject.items()})
    assert list(result.subject_gamma["subject"]) == [name("B"), name("A"), name("C")]

    # μ: max |γ| per subject 0.225, 0.15, 0.225 -> 0.2; η: mean |η| per subject 1, 0.5, 0.5 -> 2/3
    assert result.mu_unit == "subject"  # A–B does not cross clusters
    assert result.mu == pytest.approx(0.6 / 3, abs=1e-12)
    assert result.eta == pytest.approx(2 / 3, abs=1e-12)

    # clusters: g1 = {A, B}: a1 (0.9 + 0) / 8, a2 (−0.6 + 0.6) / 8; g2 = {C}: −0.225, 0
    # η(g1, a1) = (4 + 0) / 8; η(g1, a2) = (−4 + 4) / 8
    cluster = {
        ("g1", "a1"): (0.1125, 0.5, 8),
        ("g1", "a2"): (0.0, 0.0, 8),
        ("g2", "a1"): (-0.225, -1.0, 4),
        ("g2", "a2"): (0.0, 0.0, 4),
    }
    assert_cells(cells(result.cluster_gamma, "cluster", "attribute"), cluster)


def test_handmade_unequal_templates():
    """a2 only in template 0: paper γ(x) weights a1 double (the plain mean of C), default weights attributes equally."""
    rows, s1, s2 = handmade(skip={(1, "a2")})
    paper = unqover_bias(rows, s1, s2, mode="paper", n_resamples=0)
    default = unqover_bias(rows, s1, s2, mode="default", n_resamples=0)
    # A: a1 values 0.2, 0.4, 0.1, 0.2 (sum 0.9), a2 values −0.2, −0.1 (sum −0.3); γ(A, a2) = −0.15
    # paper: (0.9 − 0.3) / 6 = 0.1; default: (0.225 − 0.15) / 2 = 0.0375
    # B: a1 sum 0, a2 0.2 + 0.1 -> paper 0.3 / 6 = 0.05, default (0 + 0.15) / 2 = 0.075
    # C: a1 sum −0.9, a2 0.1 − 0.1 -> paper −0.9 / 6 = −0.15, default (−0.225 + 0) / 2 = −0.1125
    assert_cells(
        cells(paper.subject_gamma, "subject"),
        {("a",): (0.1, (4 - 2) / 6, 6), ("b",): (0.05, 2 / 6, 6), ("c",): (-0.15, -4 / 6, 6)},
    )
    assert_cells(
        cells(default.subject_gamma, "subject"),
        {("A",): (0.0375, 0.0, 6), ("B",): (0.075, 0.5, 6), ("C",): (-0.1125, -0.5, 6)},
    )
    # the legacy transcription agrees with the paper mode
    data = legacy.predictions_from_rows(rows, s1, s2)
    got = {s: (g, e, n) for s, g, e, n in legacy.subj_bias(data, "subj")["rows"]}
    assert_cells({(s,): v for s, v in got.items()}, cells(paper.subject_gamma, "subject"))
