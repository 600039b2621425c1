"""Quick-run selection: whole groups only, stratified over (template, attribute), deterministic."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pyarrow as pa
import pytest

from unqover.errors import UnqoverError
from unqover.probe.sampling import describe_selection, select_groups


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


@pytest.mark.parametrize("limit", [1, 7, 150, 1000])
def test_limit_keeps_whole_groups_round_robin_over_strata(rows, full_groups, strata, limit):
    kept = select_groups(rows, limit=limit)
    groups = _check_complete(kept, full_groups)
    assert len(groups) == limit
    assert _in_order(kept, rows)
    per_stratum = Counter((template, attribute) for _, template, attribute, _ in groups)
    if limit <= len(strata):
        assert set(per_stratum) == set(strata[:limit]) and set(per_stratum.values()) == {1}
    else:
        assert set(per_stratum) == set(strata)
        assert max(per_stratum.values()) - min(per_stratum.values()) <= 1


def test_limit_takes_the_first_groups_of_each_stratum(rows, full_groups, strata):
    kept = select_groups(rows, limit=2 * len(strata))
    first: dict[tuple, list[tuple]] = defaultdict(list)
    for key in full_groups:  # dicts keep insertion order: groups in row order
        cell = (key[1], key[2])
        if len(first[cell]) < 2:
            first[cell].append(key)
    assert set(_groups(kept)) == {key for keys in first.values() for key in keys}
    assert select_groups(rows, limit=2 * len(strata)).equals(kept)  # deterministic
    assert select_groups(rows, limit=10**9).equals(rows)


@pytest.mark.parametrize("fraction", [0.001, 0.05, 0.5])
def test_sample_keeps_a_seeded_fraction_of_each_stratum(rows, full_groups, strata, fraction):
    kept = select_groups(rows, sample=fraction, seed=3)
    groups = _check_complete(kept, full_groups)
    assert _in_order(kept, rows)
    sizes = Counter((key[1], key[2]) for key in full_groups)
    per_stratum = Counter((key[1], key[2]) for key in groups)
    assert set(per_stratum) == set(strata)  # at least one group of every stratum
    for cell, size in sizes.items():
        assert per_stratum[cell] == max(1, int(np.floor(size * fraction + 0.5)))
    assert select_groups(rows, sample=fraction, seed=3).equals(kept)
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
    assert select_groups(table, limit=1)["id"].to_pylist() == ["r0", "r1", "r2", "r3"]
    # round robin: stratum x gives its first group, then stratum y, then x again
    assert select_groups(table, limit=2)["id"].to_pylist() == ["r0", "r1", "r2", "r3", "r8", "r9"]
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
