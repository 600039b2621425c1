"""Input validation of the UnQover measures (spec §6 item 8: report, never crash or overwrite), missing values,
and the seeded bootstrap.

Every error names what is wrong, the first offending rows or groups, and how many there are.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from unqover.errors import UnqoverError
from unqover.measure.pairing import PairingError
from unqover.measure.unqover import UnqoverBias, unqover_bias

FIELDS = ("subject_1", "subject_2", "template_id", "attribute", "polarity")
PAIRS = (("A", "B"), ("B", "A"), ("A", "C"), ("C", "A"), ("B", "C"), ("C", "B"))


def complete_rows(pairs=PAIRS, templates=(0, 1), attributes=("a1", "a2"), seed=0):
    """Every ordered pair x template x attribute x polarity (rows of one entry are consecutive), random scores."""
    rows = {name: [] for name in FIELDS}
    for first, second in pairs:
        for template in templates:
            for attribute in attributes:
                for polarity in ("positive", "negated"):
                    for name, value in zip(
                        FIELDS, (first, second, template, attribute, polarity), strict=True
                    ):
                        rows[name].append(value)
    rng = np.random.default_rng(seed)
    n = len(rows["subject_1"])
    return rows, rng.random(n), rng.random(n)


def subset(rows, s1, s2, keep):
    keep = list(keep)
    return {k: [v[i] for i in keep] for k, v in rows.items()}, s1[keep], s2[keep]


def measure(rows, s1, s2, **kwargs):
    kwargs.setdefault("n_resamples", 0)
    return unqover_bias(rows, s1, s2, **kwargs)


# -----------------------------------------------------------------------------------------------------------
# Scores
# -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("which", "value", "shown"),
    [
        (1, np.nan, "nan"),
        (1, 1.5, "1.5"),
        (2, -0.1, "-0.1"),
        (2, np.inf, "inf"),
        (1, 1 + 1e-12, "1.000000000001"),
    ],
)
def test_bad_score(which, value, shown):
    rows, s1, s2 = complete_rows()
    (s1 if which == 1 else s2)[3] = value
    with pytest.raises(PairingError, match="NaN or outside") as err:
        measure(rows, s1, s2)
    message = str(err.value)
    assert message.startswith("1 rows have scores")
    assert "row 3 (" in message and shown in message


def test_bad_scores_counted_and_first_listed():
    rows, s1, s2 = complete_rows()
    bad = [2, 5, 7, 9, 11, 13, 15]
    s1[bad] = 1.5
    with pytest.raises(PairingError) as err:
        measure(rows, s1, s2)
    message = str(err.value)
    assert message.startswith("7 rows have scores that are NaN or outside [0, 1]")
    for row in bad[:5]:
        assert f"row {row} (" in message
    assert "row 13" not in message and "row 15" not in message  # only the first five are listed


def test_scores_zero_and_one_are_fine():
    rows, s1, s2 = complete_rows()
    s1[::2], s2[1::2] = 0.0, 1.0
    assert measure(rows, s1, s2).num_groups == 12


def test_bad_score_message_shows_plain_numbers():
    rows, s1, s2 = complete_rows()
    s1[3], s2[3] = 1.5, 0.25
    with pytest.raises(PairingError) as err:
        measure(rows, s1, s2)
    assert "row 3 (1.5, 0.25)" in str(err.value)


# -----------------------------------------------------------------------------------------------------------
# Pairing
# -----------------------------------------------------------------------------------------------------------


def test_missing_partner():
    """The swapped entry of one group is missing: the error names the group and what it has."""
    rows, s1, s2 = complete_rows()
    entry = ("B", "A", 0, "a2")  # both rows of the swapped entry of the group (A, B, template 0, a2)
    missing = [i for i in range(len(s1)) if tuple(rows[k][i] for k in FIELDS[:4]) == entry]
    assert len(missing) == 2
    partial = subset(rows, s1, s2, (i for i in range(len(s1)) if i not in missing))
    with pytest.raises(PairingError) as err:
        measure(*partial)
    message = str(err.value)
    assert message.startswith("1 of 12 groups are incomplete")
    assert "('A', 'B', template 0, 'a2') has only ['x1 first/negated', 'x1 first/positive']" in message
    assert "drop_incomplete=True" in message


def test_incomplete_groups_counted_and_dropped():
    rows, s1, s2 = complete_rows()
    n = len(s1)
    # one row short in three groups: (A, B, 0, a1) positive, (B, A, 0, a2) negated, (C, A, 1, a1) negated
    dropped_rows = [0, 11, 29]
    partial = subset(rows, s1, s2, (i for i in range(n) if i not in dropped_rows))
    with pytest.raises(PairingError, match=r"^3 of 12 groups are incomplete"):
        measure(*partial)
    result = measure(*partial, drop_incomplete=True)
    assert result.dropped_groups == 3
    assert result.num_groups == 9

    def group(i):
        return (
            frozenset((rows["subject_1"][i], rows["subject_2"][i])),
            rows["template_id"][i],
            rows["attribute"][i],
        )

    bad = {group(i) for i in dropped_rows}  # the result equals measuring only the complete groups
    complete = subset(rows, s1, s2, (i for i in range(n) if group(i) not in bad))
    expected = measure(*complete)
    assert expected.dropped_groups == 0 and expected.num_groups == 9
    for field in ("positional_error", "attributive_error", "mean_score", "mu", "eta"):
        assert getattr(result, field) == getattr(expected, field), field
    assert result.gamma.equals(expected.gamma)
    assert result.subject_gamma.equals(expected.subject_gamma)


def test_incomplete_groups_listed_at_most_five():
    rows, s1, s2 = complete_rows()
    partial = subset(rows, s1, s2, range(1, len(s1), 2))  # every negated row only
    with pytest.raises(PairingError) as err:
        measure(*partial)
    message = str(err.value)
    assert message.startswith("12 of 12 groups are incomplete")
    assert message.count("has only") == 5


def test_no_complete_group_left():
    rows, s1, s2 = complete_rows()
    with pytest.raises(PairingError, match="none of the 2 groups is complete"):
        measure(*subset(rows, s1, s2, range(3)), drop_incomplete=True)


def test_duplicate_row():
    rows, s1, s2 = complete_rows()
    n = len(s1)
    duplicated = {k: [*v, v[5]] for k, v in rows.items()}
    s1d, s2d = np.append(s1, 0.5), np.append(s2, 0.5)
    for drop_incomplete in (False, True):  # a duplicate is never dropped silently
        with pytest.raises(PairingError) as err:
            measure(duplicated, s1d, s2d, drop_incomplete=drop_incomplete)
        message = str(err.value)
        assert message.startswith("1 duplicate rows")
        assert f"rows 5 and {n}" in message
        assert "('A', 'B', template 1, 'a1')" in message  # row 5: A before B, template 1, a1 (negated)


def test_unknown_polarity():
    rows, s1, s2 = complete_rows()
    rows["polarity"][7] = "Positive"
    with pytest.raises(PairingError, match=r"polarity must be 'positive' or 'negated', found \['Positive'\]"):
        measure(rows, s1, s2)


def test_subject_paired_with_itself():
    rows, s1, s2 = complete_rows()
    rows["subject_2"][9] = rows["subject_1"][9]
    with pytest.raises(PairingError, match=r"^1 rows pair a subject with itself, first: row 9 \('B'\)"):
        measure(rows, s1, s2)


@pytest.mark.parametrize("column", [*FIELDS, "score_1", "score_2"])
def test_columns_of_different_lengths(column):
    rows, s1, s2 = complete_rows()
    n = len(s1)
    if column == "score_1":
        s1 = s1[:-1]
    elif column == "score_2":
        s2 = s2[:-1]
    else:
        rows[column] = rows[column][:-1]
    with pytest.raises(PairingError, match="columns differ in length") as err:
        measure(rows, s1, s2)
    assert f"'{column}': {n - 1}" in str(err.value)
    assert f"'subject_1': {n}" in str(err.value) or column == "subject_1"


@pytest.mark.parametrize("column", FIELDS)
def test_missing_column(column):
    rows, s1, s2 = complete_rows()
    del rows[column]
    with pytest.raises(UnqoverError, match=rf"rows lack the columns \['{column}'\]") as err:
        measure(rows, s1, s2)
    assert "have [" in str(err.value)


def test_missing_values():
    rows, s1, s2 = complete_rows()
    rows["subject_1"][4] = None
    with pytest.raises(PairingError, match="subjects has 1 missing values"):
        measure(rows, s1, s2)


@pytest.mark.parametrize("as_table", [False, True])
def test_empty_input(as_table):
    rows = {name: [] for name in FIELDS}
    if as_table:
        rows = pa.table(
            {name: pa.array([], pa.int32() if name == "template_id" else pa.string()) for name in FIELDS}
        )
    with pytest.raises(PairingError, match="no rows to measure"):
        measure(rows, [], [])


def test_subject_with_two_clusters():
    rows, s1, s2 = complete_rows()
    cluster = {"A": "g1", "B": "g1", "C": "g2"}
    rows["subject_1_cluster"] = [cluster[s] for s in rows["subject_1"]]
    rows["subject_2_cluster"] = [cluster[s] for s in rows["subject_2"]]
    assert len(measure(rows, s1, s2).cluster_gamma) == 4
    rows["subject_2_cluster"][20] = "g3"
    subject = rows["subject_2"][20]
    with pytest.raises(
        PairingError, match=rf"subject '{subject}' has clusters 'g\d' and 'g3'; 1 rows disagree"
    ):
        measure(rows, s1, s2)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "legacy"}, r"mode must be one of \('default', 'paper'\), got 'legacy'"),
        ({"confidence": 0}, r"confidence must be in \(0, 1\), got 0"),
        ({"confidence": 1.0}, r"confidence must be in \(0, 1\), got 1.0"),
        ({"confidence": 95}, r"confidence must be in \(0, 1\), got 95"),
        ({"confidence": float("nan")}, r"confidence must be in \(0, 1\), got nan"),
        ({"n_resamples": -1}, r"n_resamples must be an integer >= 0, got -1"),
    ],
)
def test_invalid_arguments(kwargs, message):
    rows, s1, s2 = complete_rows()
    kwargs.setdefault("n_resamples", 10)
    with pytest.raises(UnqoverError, match=message):
        unqover_bias(rows, s1, s2, **kwargs)


def test_non_integer_resamples():
    rows, s1, s2 = complete_rows()
    with pytest.raises(UnqoverError, match="n_resamples"):
        unqover_bias(rows, s1, s2, n_resamples=2.5)


# -----------------------------------------------------------------------------------------------------------
# Undefined values are missing, never 0
# -----------------------------------------------------------------------------------------------------------


def test_no_clusters_no_cluster_table():
    rows, s1, s2 = complete_rows()
    result = measure(rows, s1, s2)
    assert len(result.cluster_gamma) == 0
    assert list(result.cluster_gamma.columns[:5]) == ["cluster", "attribute", "gamma", "eta", "count"]
    rows["subject_1_cluster"] = [None] * len(s1)
    rows["subject_2_cluster"] = [None] * len(s1)
    assert len(measure(rows, s1, s2).cluster_gamma) == 0
    assert measure(rows, s1, s2).to_dict()["cluster_gamma"] == []


def test_cells_without_data_are_absent():
    """An attribute asked only of some pairs: the other subjects get no row for it (not a row with γ = 0)."""
    rows, s1, s2 = complete_rows()
    extra, e1, e2 = complete_rows(pairs=(("A", "B"), ("B", "A")), attributes=("a3",), seed=1)
    rows = {k: rows[k] + extra[k] for k in rows}
    result = measure(rows, np.concatenate([s1, e1]), np.concatenate([s2, e2]))
    a3 = result.gamma[result.gamma["attribute"] == "a3"]
    assert sorted(a3["subject"]) == ["A", "B"]
    assert set(a3["count"]) == {2}


def test_to_dict_turns_nan_into_none():
    rows, s1, s2 = complete_rows()
    result = measure(rows, s1, s2)
    result.gamma.loc[0, "gamma"] = np.nan
    result.positional_error = float("nan")
    out = result.to_dict()
    assert out["gamma"][0]["gamma"] is None
    assert out["positional_error"] is None
    json.dumps(out, allow_nan=False)


def _two_subject_bootstrap(seed):
    rows, s1, s2 = complete_rows(pairs=(("A", "B"), ("B", "A")))
    return unqover_bias(rows, s1, s2, n_resamples=1, seed=seed)


def test_undefined_interval_is_none():
    """With two subjects a replicate that draws one subject twice leaves the other's γ without partners:
    that interval is undefined, and to_dict says None rather than 0."""
    for seed in range(20):
        result = _two_subject_bootstrap(seed)
        undefined = result.gamma["gamma_low"].isna()
        if undefined.any():
            break
    else:
        pytest.fail("no seed gave an undefined interval")
    assert undefined.sum() < len(undefined)
    out = result.to_dict()
    for row, missing in zip(out["gamma"], undefined, strict=True):
        assert (row["gamma_low"] is None) == missing and (row["gamma_high"] is None) == missing
        assert row["gamma"] is not None
    json.dumps(out, allow_nan=False)


def test_undefined_mu_interval_is_none():
    for seed in range(20):
        result = _two_subject_bootstrap(seed)
        if result.subject_gamma["gamma_low"].isna().any():  # the only replicate left a subject undefined
            break
    else:
        pytest.fail("no seed gave an undefined replicate")
    assert result.to_dict()["intervals"]["mu"] == [None, None]


# -----------------------------------------------------------------------------------------------------------
# Bootstrap
# -----------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def religion(religion_tables):
    rows = religion_tables["qa"]
    rng = np.random.default_rng(11)
    s1, s2 = rng.random(rows.num_rows), rng.random(rows.num_rows)
    return rows, s1, s2


def test_bootstrap_reproducible(religion):
    rows, s1, s2 = religion
    a = unqover_bias(rows, s1, s2, n_resamples=50, seed=3)
    b = unqover_bias(rows, s1, s2, n_resamples=50, seed=3)
    c = unqover_bias(rows, s1, s2, n_resamples=50, seed=4)
    assert a.intervals == b.intervals
    assert a.gamma.equals(b.gamma) and a.subject_gamma.equals(b.subject_gamma)
    assert a.intervals["mu"] != c.intervals["mu"]
    assert not np.array_equal(a.gamma["gamma_low"], c.gamma["gamma_low"])
    assert a.bootstrap["seed"] == 3 and a.bootstrap["n_resamples"] == 50
    # the point estimates do not depend on the bootstrap
    assert a.mu == c.mu and a.gamma["gamma"].equals(c.gamma["gamma"])
    assert unqover_bias(rows, s1, s2, n_resamples=0).mu == a.mu


def test_no_bootstrap_no_intervals(religion):
    rows, s1, s2 = religion
    result = unqover_bias(rows, s1, s2, n_resamples=0)
    assert result.intervals == {}
    assert "gamma_low" not in result.gamma and "gamma_low" not in result.subject_gamma


@pytest.mark.parametrize("mode", ["default", "paper"])
def test_intervals(religion, mode):
    rows, s1, s2 = religion
    result = unqover_bias(rows, s1, s2, mode=mode, n_resamples=200, seed=0)
    for table in (result.gamma, result.subject_gamma):
        assert not table[["gamma_low", "gamma_high"]].isna().any().any()
        assert (table["gamma_low"] <= table["gamma_high"]).all()
    inside = (result.gamma["gamma_low"] <= result.gamma["gamma"]) & (
        result.gamma["gamma"] <= result.gamma["gamma_high"]
    )
    assert inside.mean() >= 0.9
    for name in ("mu", "eta", "subject_mu", "subject_eta"):
        low, high = result.intervals[name]
        assert 0 <= low <= high <= 1, name
    low, high = result.intervals["mu"]
    assert high > low
    json.dumps(result.to_dict(), allow_nan=False)


def test_result_type():
    rows, s1, s2 = complete_rows()
    assert isinstance(measure(rows, s1, s2), UnqoverBias)
