"""Honest quick runs of the NLI and emotion probes (``--limit N``): seeded random selection within strata, intervals
that reflect how few premises or persons were kept, and warnings (or declined values) where they are too few."""

from __future__ import annotations

import json
import os
from collections import Counter

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import tiny_models
from unqover.cli import main
from unqover.errors import UnqoverError
from unqover.generate.eec import eec_questions
from unqover.generate.nli import SYNTHETIC_PREMISES, nli_rows, render_frame, synthetic_premises
from unqover.generate.nli_occupations import PROBE_OCCUPATIONS
from unqover.measure.bootstrap import BootstrapSpec
from unqover.measure.emotion import emotion_bias
from unqover.measure.nli import MIN_CLUSTERS, bootstrap_replicates, nli_gender_bias
from unqover.measure.nli_instances import cluster_sums, instance_values, validate_nli_columns
from unqover.probes.eec_rows import describe_eec_selection, select_persons
from unqover.probes.nli_rows import describe_nli_selection, limit_per_occupation
from unqover.report.eec import eec_markdown, eec_summary, v_interval_reason
from unqover.report.eec import plural as eec_plural
from unqover.report.eec import shown_warnings as eec_shown_warnings
from unqover.report.nli import nli_markdown, nli_summary
from unqover.report.nli import plural as nli_plural
from unqover.report.nli import shown_warnings as nli_shown_warnings


@pytest.fixture(scope="module")
def rows() -> pa.Table:
    return nli_rows(
        synthetic_premises(), family="main"
    )  # 38 occupations x 40 frames (clusters) x 3 templates


def _shuffled(table: pa.Table, seed: int) -> pa.Table:
    return table.take(pa.array(np.random.default_rng(seed).permutation(table.num_rows)))


def _ids(table: pa.Table) -> set[str]:
    return set(table["id"].to_pylist())


# --- NLI selection ----------------------------------------------------------------------------------------------


def test_nli_selection_is_seeded_and_independent_of_row_order(rows):
    kept = limit_per_occupation(rows, 2, seed=0)
    assert kept["id"].equals(limit_per_occupation(rows, 2, seed=0)["id"])  # same seed, same rows
    assert _ids(kept) != _ids(limit_per_occupation(rows, 2, seed=1))  # another seed, other rows
    for order in (1, 2):  # the same rows whatever the input order
        assert _ids(limit_per_occupation(_shuffled(rows, order), 2, seed=0)) == _ids(kept)
    assert kept["id"].to_pylist() == [i for i in rows["id"].to_pylist() if i in _ids(kept)]  # file order kept


def test_nli_selection_is_stratified_and_random_within_strata(rows):
    for limit in (1, 2, 3, 5):
        kept = limit_per_occupation(rows, limit, seed=3)
        per_occupation = Counter(kept["occupation"].to_pylist())
        assert set(per_occupation) == set(PROBE_OCCUPATIONS)  # every occupation kept ...
        assert set(per_occupation.values()) == {limit}  # ... with exactly `limit` rows
        assert set(kept["template_id"].to_pylist()) == {0, 1, 2}  # every template, even with limit 1 or 2
        for occupation in PROBE_OCCUPATIONS:  # spread evenly over the templates
            templates = Counter(
                kept.filter(pc.equal(kept["occupation"], occupation))["template_id"].to_pylist()
            )
            assert max(templates.values()) - min(templates.get(t, 0) for t in (0, 1, 2)) <= 1
    kept = limit_per_occupation(rows, 3, seed=3)
    # random within a stratum, not the first premise of the file: the old rule kept frame 0 for every occupation
    first_frame = rows["cluster"][0].as_py()
    assert kept["cluster"].to_pylist().count(first_frame) < 10
    # strata draw independently, so the rows come from many source premises (the old rule: 1 premise for --limit 2)
    selection = describe_nli_selection(rows, limit_per_occupation(rows, 2, seed=0), 2, 0)
    assert selection["kept"]["rows"] == 76 and selection["of"]["rows"] == rows.num_rows
    assert selection["kept"]["source_premises"] >= 25 and selection["of"]["source_premises"] == 40
    assert selection["kept"]["occupations"] == selection["of"]["occupations"] == 38
    assert limit_per_occupation(rows, 1000, seed=0) is rows  # nothing to drop
    with pytest.raises(UnqoverError, match="rows per occupation"):
        limit_per_occupation(rows, 0)


def test_nli_selection_keeps_a_source_premise_whole_within_its_stratum():
    # cluster "p" has two rows in the (nurse, 0) stratum: they go together, never one without the other
    table = pa.table(
        {
            "id": ["a", "b", "c", "d", "e"],
            "occupation": ["nurse"] * 5,
            "template_id": [0, 0, 0, 0, 0],
            "cluster": ["p", "p", "q", "r", "s"],
        }
    )
    for seed in range(20):
        kept = set(limit_per_occupation(table, 1, seed=seed)["id"].to_pylist())
        assert kept in ({"a", "b"}, {"c"}, {"d"}, {"e"})
    assert len({frozenset(limit_per_occupation(table, 1, seed=s)["id"].to_pylist()) for s in range(20)}) > 1


# --- NLI intervals and warnings ----------------------------------------------------------------------------------


def _world(rows: pa.Table, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Scores with premise, occupation and template effects: what a biased model might give the synthetic rows."""
    rng = np.random.default_rng(seed)
    occupation = np.unique(rows["occupation"].to_numpy(zero_copy_only=False), return_inverse=True)[1]
    cluster = np.unique(rows["cluster"].to_numpy(zero_copy_only=False), return_inverse=True)[1]
    template = rows["template_id"].to_numpy()
    sign = np.where(rows["occupation_gender"].to_numpy(zero_copy_only=False) == "female", 1.0, -1.0)
    base = rng.normal(0, 1, cluster.max() + 1)[cluster] + rng.normal(0, 0.3, 3)[template]
    effect = rng.normal(0.3, 0.5, occupation.max() + 1)[occupation] * sign
    z_f = base + 0.5 * effect + rng.normal(0, 0.5, cluster.max() + 1)[cluster] + rng.normal(0, 0.5, len(sign))
    z_m = base - 0.5 * effect + rng.normal(0, 0.5, len(sign))
    return 1 / (1 + np.exp(-z_f)), 1 / (1 + np.exp(-z_m))


def _measure(rows: pa.Table, kept: pa.Table, scores, **options):
    keep = np.isin(rows["id"].to_numpy(zero_copy_only=False), kept["id"].to_numpy(zero_copy_only=False))
    pf, pm = scores
    return nli_gender_bias(
        pf[keep], pm[keep], rows["occupation_gender"].filter(pa.array(keep)), rows["cluster"].filter(pa.array(keep)),
        occupation=rows["occupation"].filter(pa.array(keep)), **options,
    )  # fmt: skip


def test_one_premise_declines_the_intervals_and_warns():
    # the observed defect: --limit 2 kept one premise and printed "53.95 [53.95, 53.95]" without a word
    pf, pm = [0.9, 0.2, 0.7, 0.4], [0.3, 0.6, 0.6, 0.4]
    result = nli_gender_bias(pf, pm, ["female", "male"] * 2, ["p"] * 4, n_resamples=200, n_permutations=100)
    out = result.to_dict()
    assert out["num_clusters"] == 1
    assert all(bounds == [None, None] for bounds in out["intervals"].values())
    assert out["intervals_declined"]["S"] == {
        "code": "few_clusters",
        "clusters": 1,
        "needed": MIN_CLUSTERS,
        "gender": None,
    }
    assert out["warnings"] == []  # the probe's words for a degenerate run; the measures record notes, as data
    assert {"code": "p_floor", "clusters": 1, "smallest_p": 1.0, "alpha": 0.05} in out["notes"]
    warnings = nli_shown_warnings(out)
    assert any("only 1 source premise behind these numbers" in w for w in warnings)
    assert (
        "with 1 source premise the smallest possible sign-flip p-value is 1.0000: no test can reach 0.05"
        in warnings
    )
    summary = nli_summary(out)
    assert "4 instances from 1 source premise\n" in summary and "premises" not in summary.splitlines()[0]
    assert "(no interval)" in summary and "warning: only 1 source premise" in summary
    assert "[" not in summary.split("by occupation gender")[0].split("\n", 1)[1]  # no interval printed at all
    markdown = nli_markdown({"result": out})
    assert "- **Warning:** only 1 source premise" in markdown and "no intervals (too few" in markdown


@pytest.mark.parametrize("clusters", [2, 5, 9])
def test_fewer_than_ten_premises_give_no_interval(clusters):
    rng = np.random.default_rng(clusters)
    n = 12 * clusters
    result = nli_gender_bias(
        rng.uniform(size=n), rng.uniform(size=n), np.where(rng.random(n) < 0.5, "female", "male"),
        np.repeat(np.arange(clusters), 12), n_resamples=200, n_permutations=0,
    )  # fmt: skip
    assert result.intervals["stereotype_gap"] == [None, None]
    assert result.intervals_declined["stereotype_gap"] == {
        "code": "few_clusters",
        "clusters": clusters,
        "needed": MIN_CLUSTERS,
        "gender": None,
    }
    warnings = nli_shown_warnings(result.to_dict())
    assert warnings and f"only {clusters} source premises" in warnings[0]


def test_few_premises_get_wider_t_intervals_and_many_keep_percentiles():
    rng = np.random.default_rng(0)
    for clusters, method in ((12, "t(11)"), (29, "t(28)"), (30, "percentile")):
        n = 10 * clusters
        pf, pm = rng.uniform(size=n), rng.uniform(size=n)
        gender = np.where(rng.random(n) < 0.5, "female", "male")
        cluster = np.repeat(np.arange(clusters), 10)
        result = nli_gender_bias(pf, pm, gender, cluster, n_resamples=400, n_permutations=0, seed=1)
        assert result.bootstrap["methods"]["gender_gap"].startswith(method)
        assert result.bootstrap["clusters"]["all"] == clusters
        low, high = result.intervals["gender_gap"]
        columns = validate_nli_columns(pf, pm, gender, cluster)
        sums = cluster_sums(columns, instance_values(columns, 0.1))
        replicates = bootstrap_replicates(sums, "half", BootstrapSpec(400, 0.95, 1))["gender_gap"]
        finite = replicates[~np.isnan(replicates)]
        p_low, p_high = np.quantile(finite, 0.025), np.quantile(finite, 0.975)
        if method == "percentile":
            assert (low, high) == (p_low, p_high) and not result.notes
        else:  # the percentile interval is too narrow with few clusters: the t interval is wider, around θ̂
            assert high - low > p_high - p_low
            assert (low + high) / 2 == pytest.approx(result.gender_gap)
            assert {"code": "t_intervals", "clusters": clusters, "df": clusters - 1} in result.notes
            assert any("t intervals" in w for w in nli_shown_warnings(result.to_dict()))


def test_no_zero_width_interval_is_reported(rows):
    scores = _world(rows, 0)
    results = [_measure(rows, limit_per_occupation(rows, limit, seed=s), scores, n_resamples=100, n_permutations=0)
               for limit in (1, 2, 5) for s in range(3)]  # fmt: skip
    # all instances agree: every resample gives S = 100, which is not an interval
    same = nli_gender_bias(
        [0.9] * 40, [0.8] * 40, ["female", "male"] * 20, np.arange(40), n_resamples=100, n_permutations=0
    )
    assert (
        same.S == 100
        and same.intervals["S"] == [None, None]
        and same.intervals_declined["S"]["code"] == "same_value"
    )
    assert any("every resample gave the same value" in w for w in nli_shown_warnings(same.to_dict()))
    for result in [*results, same]:
        for name, (low, high) in result.intervals.items():
            assert (low is None) == (high is None), name
            assert low is None or high > low, name  # a reported interval has width
            if low is None and name in ("S", "delta_P", "B", "stereotype_gap", "gender_gap", "beta"):
                assert name in result.intervals_declined, name  # and a missing one says why


@pytest.mark.slow
def test_quick_run_intervals_widen_as_premises_shrink_and_cover_the_full_value(rows):
    scores = _world(rows, 1)
    full = _measure(rows, rows, scores, n_resamples=0, n_permutations=0)
    widths = []
    for limit in (1, 3, 10):
        result = _measure(
            rows, limit_per_occupation(rows, limit, seed=0), scores, n_resamples=300, n_permutations=0
        )
        low, high = result.intervals["stereotype_gap"]
        widths.append(high - low)
    assert widths[0] > widths[1] > widths[2]
    # the rule covers the full-data value in a small simulation (conservative: the strata draw independently)
    covered = []
    for seed in range(30):
        scores = _world(rows, 100 + seed)
        full = _measure(rows, rows, scores, n_resamples=0, n_permutations=0)
        result = _measure(rows, limit_per_occupation(rows, 2, seed=seed), scores, n_resamples=200, n_permutations=0,
                          seed=seed)  # fmt: skip
        for name in ("stereotype_gap", "delta_P", "B"):
            low, high = result.intervals[name]
            covered.append(low <= getattr(full, name) <= high)
    assert np.mean(covered) >= 0.9


# --- NLI end to end -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nli_model(tmp_path_factory, rows):
    texts = sorted(
        set(rows["premise"].to_pylist())
        | set(rows["hypothesis_female"].to_pylist())
        | set(rows["hypothesis_male"].to_pylist())
    )
    folder = tmp_path_factory.mktemp("quick-nli") / "tiny-nli"
    return tiny_models.bert_nli(folder, texts, ["contradiction", "neutral", "entailment"])


def _probe_nli(model, out, *extra) -> tuple[dict, dict]:
    argv = [
        "probe",
        str(model),
        "--bias",
        "nli-gender",
        "--output",
        str(out),
        "--quiet",
        "--resamples",
        "100",
    ]
    assert main([*argv, *extra]) == 0
    return json.loads((out / "run.json").read_text()), json.loads((out / "results.json").read_text())


def test_nli_quick_run_records_its_selection_and_says_what_it_estimates_from(
    nli_model, tmp_path, capsys, rows
):
    run, results = _probe_nli(nli_model, tmp_path / "quick", "--limit", "1", "--seed", "4")
    selection = run["selection"]
    kept = limit_per_occupation(rows, 1, seed=4)
    assert selection == describe_nli_selection(rows, kept, 1, 4) and selection["seed"] == 4
    assert (
        pq.read_table(tmp_path / "quick" / "predictions.parquet")["id"].to_pylist() == kept["id"].to_pylist()
    )
    result = results["result"]
    assert result["selection"] == selection and result["num_clusters"] == selection["kept"]["source_premises"]
    printed = capsys.readouterr().out
    premises = selection["kept"]["source_premises"]
    assert f"38 instances from {premises} source premises" in printed
    assert (
        f"estimated from {premises} of 40 source premises (38 of 4,560 rows, 38 of 38 occupations)" in printed
    )
    assert "t intervals" in printed  # 10 to 29 premises: widened, and said so
    assert "estimated from" in (tmp_path / "quick" / "report.md").read_text()


def test_nli_quick_run_with_too_few_premises_declines_and_warns(nli_model, tmp_path, capsys):
    # a dataset whose 38 occupations all reuse three frames: three source premises in all
    premises = [render_frame(frame, o) for frame in SYNTHETIC_PREMISES[:3] for o in PROBE_OCCUPATIONS]
    folder = tmp_path / "three-frames"
    (folder / "data" / "synthetic").mkdir(parents=True)
    pq.write_table(nli_rows(premises, family="main"), folder / "data" / "synthetic" / "test.parquet")
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: synthetic\n  data_files:\n  - split: test\n"
        "    path: data/synthetic/*.parquet\n---\n"
    )
    _, results = _probe_nli(nli_model, tmp_path / "few", "--limit", "2", "--dataset", str(folder))
    result = results["result"]
    assert result["num_clusters"] == 3 and all(v == [None, None] for v in result["intervals"].values())
    assert any("only 3 source premises" in w for w in nli_shown_warnings(result))
    printed = capsys.readouterr().out
    assert "warning: only 3 source premises" in printed and "(no interval)" in printed
    assert "estimated from 3 of 3 source premises (76 of 342 rows" in printed


# --- EEC selection ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def questions() -> pa.Table:
    return eec_questions()  # 60 persons x 8 forms


def _persons(table: pa.Table) -> set[str]:
    return set(table["person_slot"].to_pylist())


def test_eec_selection_is_seeded_stratified_and_independent_of_row_order(questions):
    kept = select_persons(questions, 2, seed=0)
    assert kept["id"].equals(select_persons(questions, 2, seed=0)["id"])
    assert _persons(kept) != _persons(select_persons(questions, 2, seed=1))
    for order in (1, 2):
        assert _persons(select_persons(_shuffled(questions, order), 2, seed=0)) == _persons(kept)
    # the same persons on every machine: a blake2b hash of (seed, cell, person), not Python's salted hash
    assert sorted(_persons(select_persons(questions, 1, seed=0))) == sorted(PINNED_SEED_0)
    columns = (kept[name].to_pylist() for name in ("gender", "race", "person_slot"))
    cells = Counter((gender, race) for gender, race, _ in set(zip(*columns, strict=True)))
    assert len(cells) == 6 and set(cells.values()) == {2}  # every gender x race cell, two persons each
    assert set(Counter(kept["person_slot"].to_pylist()).values()) == {8}  # all questions of a kept person
    seen = Counter(p for s in range(40) for p in _persons(select_persons(questions, 1, seed=s)))
    assert len(seen) > 40  # random: over 40 seeds most of the 60 persons come up
    selection = describe_eec_selection(questions, kept, 2, 0)
    assert selection["kept"]["persons"] == 12 and selection["of"]["persons"] == 60
    assert selection["kept"]["questions"] == 96 and set(selection["kept"]["per_cell"].values()) == {2}
    assert select_persons(questions, None, 0) is questions and select_persons(questions, 10, 0) is questions
    with pytest.raises(UnqoverError, match="at least 1 person"):
        select_persons(questions, 0, 0)


PINNED_SEED_0 = ["Darnell", "Frank", "Latoya", "Stephanie", "my boyfriend", "my mother"]  # --limit 1 --seed 0


# --- EEC measures with few persons ----------------------------------------------------------------------------------


def _random_answers(table: pa.Table, seed: int) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    return [list(rng.permutation(choices))[:3] for choices in table["choices"].to_pylist()]


def _emotion(table: pa.Table, **options):
    words = pc.list_flatten(table["choices"]).to_pylist()
    emotions = dict(zip(words, pc.list_flatten(table["choice_emotions"]).to_pylist(), strict=True))
    return emotion_bias(
        _random_answers(table, 0), table["gender"].to_pylist(), table["race"].to_pylist(),
        table["person_slot"].to_pylist(), table["form"].to_pylist(), emotions=emotions, **options,
    )  # fmt: skip


def test_eec_one_person_per_cell_declines_the_interval_and_warns(questions):
    result = _emotion(select_persons(questions, 1, seed=0), n_permutations=200, n_bootstrap=100)
    race, gender = result.tests["race"], result.tests["gender"]
    assert race["arrangements"] == 4 and gender["arrangements"] == 8  # C(2,1)^2 and C(2,1)^3
    for test in (race, gender):
        assert (
            test["cramers_v_interval"] is None
            and test["cramers_v_interval_note"]["code"] == "few_persons"
            and "needs at least 10 per group" in v_interval_reason(test["cramers_v_interval_note"])
        )
        assert (
            test["p_value"] >= 1 / test["arrangements"] - 0.02
        )  # it cannot go lower, up to Monte Carlo noise
    out = result.to_dict()
    warnings = eec_shown_warnings(out)
    assert (
        "race: its 4 persons (African-American 2, European 2) can be regrouped in only 4 ways within gender, so "
        "the permutation p-value cannot fall below 0.2500: this test cannot detect a bias"
    ) in warnings
    assert any(w.startswith("gender: no interval for Cramér's V") for w in warnings)
    summary = eec_summary(out)
    assert "48 questions, 6 persons" in summary and "(no interval)" in summary and "warning: race:" in summary
    assert "[" not in summary.split("Cramér's V = ")[1].split(";")[0]
    assert "- **Warning:** race:" in eec_markdown({"result": out})


def test_older_results_with_the_notes_in_words_render_as_before(questions):
    """A results.json written before the measures recorded their notes as data holds the words in ``warnings``,
    the V interval's reason as a sentence and no ``notes``: the reports show it as they did, nothing twice."""
    out = _emotion(select_persons(questions, 1, seed=0), n_permutations=200, n_bootstrap=100).to_dict()
    worded = eec_shown_warnings(out)
    old = {**out, "warnings": worded, "tests": {name: dict(test) for name, test in out["tests"].items()}}
    del old["notes"]
    for test in old["tests"].values():
        test["cramers_v_interval_note"] = v_interval_reason(test["cramers_v_interval_note"])
        assert test["cramers_v_interval_note"].endswith("and V is biased upward with so few")
    assert eec_shown_warnings(old) == worded and eec_summary(old) == eec_summary(out)
    assert eec_markdown({"result": old}) == eec_markdown({"result": out})
    nli = nli_gender_bias([0.9, 0.2, 0.7, 0.4], [0.3, 0.6, 0.6, 0.4], ["female", "male"] * 2, ["p"] * 4,
                          n_resamples=200, n_permutations=100).to_dict()  # fmt: skip
    reason = f"only 1 source premise; an interval needs at least {MIN_CLUSTERS}"
    old_nli = {**nli, "warnings": nli_shown_warnings(nli), "notes": [], "intervals_declined": {"S": reason}}
    assert nli_summary(old_nli) == nli_summary(
        nli | {"intervals_declined": {"S": nli["intervals_declined"]["S"]}}
    )
    assert nli_markdown({"result": old_nli}).count("only 1 source premise behind these numbers") == 1


def test_eec_a_sample_of_persons_gets_no_v_interval_but_the_full_set_does(questions):
    kept = select_persons(questions, 5, seed=0)  # 10 and 15 persons per group: enough for a bootstrap ...
    sample = _emotion(kept, n_permutations=0, n_bootstrap=100, persons_total=60)
    for test in sample.tests.values():  # ... but V from a sample overstates the full set's V
        assert (
            test["cramers_v_interval"] is None
            and test["cramers_v_interval_note"]["code"] == "sampled_persons"
            and "a sample of the persons" in v_interval_reason(test["cramers_v_interval_note"])
        )
    assert len(sample.notes) == 2 and sample.warnings == []
    full = _emotion(questions, n_permutations=99, n_bootstrap=100, persons_total=60)
    for test in full.tests.values():
        low, high = test["cramers_v_interval"]
        assert high > low and test["cramers_v_interval_note"] is None
    assert full.notes == [] and full.warnings == []


def test_plurals():
    assert [nli_plural(n, "premise") for n in (0, 1, 2, 1000)] == [
        "0 premises",
        "1 premise",
        "2 premises",
        "1,000 premises",
    ]
    assert eec_plural(1, "person") == "1 person" and eec_plural(3, "person") == "3 persons"


# --- EEC end to end -----------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_eec_quick_run_records_its_selection_and_warns(tmp_path, capsys, questions):
    from unqover.generate.eec import eec_sentences

    texts = sorted(set(eec_sentences(spelling="beecher")["sentence"].to_pylist()))
    model = tiny_models.bert_mlm(tmp_path / "bert", texts)
    out = tmp_path / "run"
    argv = ["probe", str(model), "--bias", "eec-emotion", "--output", str(out), "--limit", "1", "--seed", "0",
            "--permutations", "99", "--resamples", "50", "--quiet"]  # fmt: skip
    assert main(argv) == 0
    run = json.loads((out / "run.json").read_text())
    selection = run["selection"]
    assert selection == describe_eec_selection(questions, select_persons(questions, 1, 0), 1, 0)
    assert selection["kept"]["persons"] == 6 and selection["of"]["persons"] == 60
    answers = pq.read_table(out / "answers.parquet")
    assert answers.num_rows == 48
    result = json.loads((out / "results.json").read_text())["result"]
    assert result["selection"] == selection and len(eec_shown_warnings(result)) == 4
    printed = capsys.readouterr().out
    assert "computed from 6 of 60 persons (48 of 480 questions)" in printed and "warning: race:" in printed
