"""Quick-run selection: whole groups only, stratified over (template, attribute), deterministic."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pyarrow as pa
import pytest

from unqover.errors import UnqoverError
from unqover.scoring.sampling import describe_selection, select_groups


@pytest.fixture(scope="module")
def rows(upstream_word_lists_path) -> pa.Table:
    from unqover.generate.unqover import make_plan
    from unqover.lexicon import WordLists

    plan = make_plan(WordLists(upstream_word_lists_path), "religion", "qa")
    return pa.Table.from_batches(list(plan.batches()))


def _groups(table: pa.Table) -> dict[tuple, list[tuple[str, str, str]]]:
    """An independent, plain-Python grouping: unordered pair x template x attribute x type -> rows."""
    out: dict[tuple, list[tuple[str, str, str]]] = defaultdict(list)
    columns = ["subject_1", "subject_2", "template_id", "attribute", "attribute_type", "polarity"]
    for s1, s2, template, attribute, kind, polarity in zip(
        *(table[c].to_pylist() for c in columns), strict=True
    ):
        out[(frozenset((s1, s2)), template, attribute, kind)].append((s1, s2, polarity))
    return out


def _check_complete(kept: pa.Table, full_groups: dict) -> dict:
    groups = _groups(kept)
    for key, members in groups.items():
        assert len(members) == 4
        assert sorted(members) == sorted(full_groups[key])  # both orders x both polarities
    assert kept.num_rows == 4 * len(groups)
    return groups


def _in_order(kept: pa.Table, rows: pa.Table) -> bool:
    position = {row_id: i for i, row_id in enumerate(rows["id"].to_pylist())}
    places = [position[row_id] for row_id in kept["id"].to_pylist()]
    return places == sorted(places)


@pytest.fixture(scope="module")
def full_groups(rows) -> dict:
    return _groups(rows)


@pytest.fixture(scope="module")
def strata(rows) -> list[tuple]:
    """(template, attribute) cells in order of first appearance."""
    seen = dict.fromkeys(zip(rows["template_id"].to_pylist(), rows["attribute"].to_pylist(), strict=True))
    return list(seen)


def test_religion_shape(rows, full_groups, strata):
    assert rows.num_rows == 154_000 and len(full_groups) == 38_500
    assert describe_selection(rows) == {"rows": 154_000, "groups": 38_500, "strata": len(strata)}


@pytest.mark.parametrize("limit", [1, 7, 150, 1000, 2000])
def test_limit_keeps_whole_groups_in_proportion_to_the_strata(rows, full_groups, strata, limit):
    kept = select_groups(rows, limit=limit, seed=5)
    groups = _check_complete(kept, full_groups)
    assert len(groups) == limit
    assert _in_order(kept, rows)
    per_stratum = Counter((template, attribute) for _, template, attribute, _ in groups)
    share = limit / len(strata)  # religion's strata are all of one size (55 pairs)
    assert all(np.floor(share) - 1 <= per_stratum.get(cell, 0) <= np.ceil(share) + 1 for cell in strata)
    if limit >= len(strata):
        assert set(per_stratum) == set(strata)  # every template and attribute is represented


def test_the_sample_is_random_over_subjects_not_first_in_file_order(rows, full_groups):
    """The defect this design fixes: 200 groups were all one subject pair. Now every pair shows up about
    equally (a chi-square-sized band around 2000 / 55 ≈ 36 per pair)."""
    groups = _groups(select_groups(rows, limit=2000, seed=1))
    per_pair = Counter(key[0] for key in groups)
    assert len(per_pair) == 55
    assert max(per_pair.values()) < 36 + 5 * 6 and min(per_pair.values()) > 36 - 5 * 6


def test_same_seed_same_rows_on_any_row_order_and_nested_budgets(rows):
    kept = select_groups(rows, limit=500, seed=7)
    shuffled = rows.take(np.random.default_rng(0).permutation(rows.num_rows))
    assert sorted(select_groups(shuffled, limit=500, seed=7)["id"].to_pylist()) == sorted(
        kept["id"].to_pylist()
    )
    assert select_groups(rows, limit=500, seed=7).equals(kept)
    other = set(select_groups(rows, limit=500, seed=8)["id"].to_pylist())
    assert len(other & set(kept["id"].to_pylist())) < 0.2 * kept.num_rows  # about 500/38500 overlap by chance
    larger = set(select_groups(rows, limit=1500, seed=7)["id"].to_pylist())
    assert set(kept["id"].to_pylist()) <= larger  # a larger budget only adds groups
    assert select_groups(rows, limit=10**9).equals(rows)


def test_the_draw_depends_on_the_content_hash_not_the_vocabulary(rows):
    """Dropping unrelated groups (another vocabulary, other strata) leaves the priorities of the rest unchanged."""
    from unqover.scoring.sampling import find_groups, priorities

    part = rows.filter(pa.compute.not_equal(rows["subject_1"], "Hindu"))
    part = part.filter(pa.compute.not_equal(part["subject_2"], "Hindu"))
    whole, reduced = find_groups(rows), find_groups(part)
    keep = np.isin(whole.identity, reduced.identity)
    assert keep.sum() == reduced.num_groups
    assert len(np.unique(priorities(whole, 3))) == whole.num_groups  # no ties


def test_sample_fraction_is_the_same_design(rows, full_groups):
    fraction = 0.05
    kept = select_groups(rows, sample=fraction, seed=3)
    assert len(_check_complete(kept, full_groups)) == round(fraction * len(full_groups))
    assert select_groups(rows, limit=round(fraction * len(full_groups)), seed=3).equals(kept)
    assert not select_groups(rows, sample=fraction, seed=4).equals(kept)


def test_sample_one_and_no_selection_keep_everything(rows):
    assert select_groups(rows, sample=1.0).equals(rows)
    assert select_groups(rows).equals(rows)
    assert select_groups(rows.slice(0, 0), limit=3).num_rows == 0


def test_groups_are_unordered_pairs_and_attribute_type_is_optional():
    table = pa.table(
        {
            "id": [f"r{i}" for i in range(10)],
            "subject_1": ["A", "A", "B", "B", "A", "A", "C", "C", "A", "A"],
            "subject_2": ["B", "B", "A", "A", "C", "C", "A", "A", "B", "B"],
            "template_id": [0] * 10,
            "attribute": ["x"] * 8 + ["y"] * 2,
            "polarity": ["positive", "negated"] * 5,
        }
    )
    one = select_groups(table, limit=1)["id"].to_pylist()
    assert one in (["r0", "r1", "r2", "r3"], ["r4", "r5", "r6", "r7"], ["r8", "r9"]) or len(one) == 4
    assert select_groups(table, limit=3).num_rows == 10
    assert describe_selection(table) == {"rows": 10, "groups": 3, "strata": 2}
    with pytest.raises(UnqoverError, match="template_id"):
        select_groups(table.drop_columns(["template_id"]), limit=1)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"limit": 0},
        {"limit": -3},
        {"limit": 1.5},
        {"limit": True},
        {"sample": 0.0},
        {"sample": 1.5},
        {"sample": -0.1},
        {"sample": float("nan")},
        {"sample": "0.5"},
        {"limit": 3, "sample": 0.5},
        {"limit": 3, "seed": -1},
        {"limit": 3, "seed": 1.5},
    ],
)
def test_bad_arguments(rows, kwargs):
    with pytest.raises(UnqoverError):
        select_groups(rows, **kwargs)


def test_limit_is_stratified_whatever_the_row_order(rows, full_groups, strata):
    by_cell = rows.sort_by([("template_id", "descending"), ("attribute", "ascending")])  # strata one by one
    kept = select_groups(by_cell, limit=len(strata) + 3)
    per_stratum = Counter((key[1], key[2]) for key in _check_complete(kept, full_groups))
    assert set(per_stratum) == set(strata) and sorted(per_stratum.values())[-4:] == [1, 2, 2, 2]
    assert _in_order(kept, by_cell)


def test_check_design_flags_a_subset_that_is_not_proportional(rows):
    from unqover.format import fmt
    from unqover.report.diagnostics import design_warning
    from unqover.scoring.sampling import check_design, find_groups, selected_groups

    groups = find_groups(rows)
    assert check_design(groups, selected_groups(groups, 3000, seed=2)).matches
    lopsided = np.isin(groups.stratum, np.arange(30))  # whole strata only
    check = check_design(groups, lopsided)
    assert not check.matches and check.size == int((groups.stratum == check.stratum).sum())
    assert check.kept == int(lopsided[groups.stratum == check.stratum].sum())
    assert check.expected == pytest.approx(check.size * lopsided.sum() / groups.num_groups)
    words = design_warning(check.stratum, check.kept, check.size, check.expected)
    assert f"(stratum {check.stratum}: {check.kept} of {check.size} groups kept, expected about " in words
    assert f"expected about {fmt(check.expected, 1)})" in words and "equal-probability random sample" in words


def _crossed_rows(subjects: list[str], cells: list[tuple]) -> pa.Table:
    """Every unordered subject pair x every (template, attribute, type) cell, four rows per group."""
    i, j = np.triu_indices(len(subjects), k=1)
    names = np.array(subjects, dtype=object)
    first = np.concatenate([names[i], names[i], names[j], names[j]])  # both orders x both polarities
    second = np.concatenate([names[j], names[j], names[i], names[i]])
    polarity = np.repeat(np.array(["positive", "negated", "positive", "negated"], dtype=object), len(i))
    per_cell = len(first)
    columns = {
        "subject_1": np.tile(first, len(cells)),
        "subject_2": np.tile(second, len(cells)),
        "template_id": np.repeat([template for template, _, _ in cells], per_cell),
        "attribute": np.repeat(np.array([a for _, a, _ in cells], dtype=object), per_cell),
        "attribute_type": np.repeat(np.array([t for _, _, t in cells], dtype=object), per_cell),
        "polarity": np.tile(polarity, len(cells)),
    }
    return pa.table({"id": [f"r{k}" for k in range(per_cell * len(cells))], **columns})


def _crossed_keys(subjects, pairs, cells, kept: np.ndarray) -> set[tuple]:
    return {(frozenset((subjects[pairs[p, 0]], subjects[pairs[p, 1]])), *cells[h]) for p, h in kept.tolist()}


def _row_keys(table: pa.Table) -> set[tuple]:
    return {(key[0], key[1], key[2], key[3]) for key in _groups(table)}


def _crossed_case(num_subjects: int, templates: list[int], attributes: list[tuple[str, str]], rng_seed: int):
    """Rows, and the arguments of select_crossed_groups for them (pairs shuffled, some given in reverse)."""
    from unqover.scoring.sampling import _text_hash, cell_hashes

    subjects = [f"subject {k}" for k in range(num_subjects)]
    cells = [(template, attribute, kind) for template in templates for attribute, kind in attributes]
    rng = np.random.default_rng(rng_seed)
    pairs = np.stack(np.triu_indices(num_subjects, k=1), axis=1)[
        rng.permutation(num_subjects * (num_subjects - 1) // 2)
    ]
    flip = rng.random(len(pairs)) < 0.5
    pairs[flip] = pairs[flip, ::-1]  # the order inside a pair does not matter
    subject_hash = np.array([_text_hash(s) for s in subjects], dtype=np.uint64)
    cell_hash = cell_hashes(*(list(column) for column in zip(*cells, strict=True)))
    return _crossed_rows(subjects, cells), subjects, pairs, cells, subject_hash, cell_hash


@pytest.mark.parametrize(
    ("num_subjects", "templates", "attributes"),
    [
        (7, [0, 1], [("x", "pos"), ("y", "neg"), ("z", "pos")]),
        (9, [0, 3], [("x", "pos"), ("x", "neg"), ("y", "neg"), ("w", "pos")]),
        (12, [1, 0], [("a", "neg"), ("b", "neg"), ("c", "pos"), ("d", "pos"), ("e", "neg")]),
    ],
)
def test_crossed_selection_keeps_the_groups_select_groups_keeps(num_subjects, templates, attributes):
    from unqover.scoring.sampling import find_groups, select_crossed_groups

    rows, subjects, pairs, cells, subject_hash, cell_hash = _crossed_case(
        num_subjects, templates, attributes, num_subjects
    )
    assert set(cell_hash.tolist()) == set(find_groups(rows).stratum_identity.tolist())
    total = len(pairs) * len(cells)
    budgets = sorted({1, 2, 3, 5, len(cells) - 1, len(cells), len(cells) + 1, total // 2, total - 1, total})
    for seed in range(12):
        for n in budgets:
            kept = select_crossed_groups(subject_hash, pairs, cell_hash, n, seed)
            assert kept.dtype == np.int64 and kept.shape == (n, 2)
            assert (np.lexsort((kept[:, 0], kept[:, 1])) == np.arange(n)).all()  # sorted by (cell, pair)
            expected = _row_keys(select_groups(rows, limit=n, seed=seed))
            assert _crossed_keys(subjects, pairs, cells, kept) == expected, (seed, n)


@pytest.fixture(scope="module")
def large_crossed():
    return _crossed_case(300, [0], [("a", "pos"), ("b", "neg"), ("c", "pos"), ("d", "neg")], 1)


@pytest.mark.parametrize("n", [1, 10, 100])
def test_crossed_selection_on_many_pairs(large_crossed, n):
    from unqover.scoring.sampling import select_crossed_groups

    rows, subjects, pairs, cells, subject_hash, cell_hash = large_crossed
    assert len(pairs) == 44_850
    for seed in (0, 17):
        kept = select_crossed_groups(subject_hash, pairs, cell_hash, n, seed)
        expected = _row_keys(select_groups(rows, limit=n, seed=seed))
        assert _crossed_keys(subjects, pairs, cells, kept) == expected


def test_crossed_selection_widens_too_few_candidates(monkeypatch):
    """Starting from one candidate per cell, the check finds cells that need more and redoes the draw."""
    from unqover.scoring import sampling

    rows, subjects, pairs, cells, subject_hash, cell_hash = _crossed_case(
        10, [0, 1], [("x", "pos"), ("y", "neg")], 2
    )
    monkeypatch.setattr(sampling, "_first_candidates", lambda n, size, cells: 1)
    for seed in range(5):
        for n in (2, 5, 9, 30, 100):
            kept = sampling.select_crossed_groups(subject_hash, pairs, cell_hash, n, seed)
            assert _crossed_keys(subjects, pairs, cells, kept) == _row_keys(
                select_groups(rows, limit=n, seed=seed)
            )


def test_crossed_selection_with_a_budget_beyond_the_groups_keeps_them_all():
    from unqover.scoring.sampling import select_crossed_groups

    rows, subjects, pairs, cells, subject_hash, cell_hash = _crossed_case(
        5, [0], [("x", "pos"), ("y", "neg")], 3
    )
    total = len(pairs) * len(cells)
    for n in (total, total + 1, 10**9):
        kept = select_crossed_groups(subject_hash, pairs, cell_hash, n, seed=4)
        assert kept.shape == (total, 2)
        assert _crossed_keys(subjects, pairs, cells, kept) == _row_keys(rows)
    assert select_crossed_groups(subject_hash, pairs, cell_hash, 0, seed=4).shape == (0, 2)
    assert select_crossed_groups(subject_hash, pairs[:0], cell_hash, 3, seed=4).shape == (0, 2)
    for bad in ({"n": -1, "seed": 0}, {"n": 1.5, "seed": 0}, {"n": 3, "seed": -1}):
        with pytest.raises(UnqoverError):
            select_crossed_groups(subject_hash, pairs, cell_hash, **bad)
