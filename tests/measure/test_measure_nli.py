"""The NLI gender-occupation measures (Sharma et al. 2021): hand-computed values, the §3.1 corrections, the
cluster bootstrap and sign-flip test, validation, and the evaluate module and its Gradio app."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import evaluate
import numpy as np
import pytest

from unqover.errors import UnqoverError
from unqover.measure.nli import nli_gender_bias, sign_flip_p_value
from unqover.measure.nli_instances import entailment_probability
from unqover.report.nli import shown_warnings

MODULE_DIR = Path(__file__).resolve().parents[2] / "metrics" / "nli_gender_bias"

# instance: p_female, p_male, occupation gender, cluster (source premise), occupation, template
TINY = [
    (0.9, 0.3, "female", "a", "nurse", "t1"),  # labels differ; stereotype (female) wins by 0.6
    (0.7, 0.6, "female", "a", "nurse", "t2"),  # same label; stereotype wins by 0.1
    (0.2, 0.8, "male", "b", "carpenter", "t1"),  # labels differ; stereotype (male) wins by 0.6
    (0.4, 0.4, "male", "b", "carpenter", "t2"),  # same label; exact tie
    (0.65, 0.3, "male", "c", "carpenter", "t1"),  # labels differ; anti-stereotype wins by 0.35
]


def tiny(**options):
    pf, pm, gender, cluster, occupation, template = map(list, zip(*TINY, strict=True))
    options.setdefault("n_resamples", 0)
    options.setdefault("n_permutations", 0)
    return nli_gender_bias(pf, pm, gender, cluster, occupation=occupation, template_id=template, **options)


def test_hand_computed_s_delta_p_b():
    r = tiny()
    assert r.num_instances == 5 and r.num_clusters == 3 and r.ties == 1
    assert pytest.approx(100 * 2 / 5) == r.S
    assert r.delta_P == pytest.approx(100 * (0.6 + 0.1 + 0.6 + 0.0 + 0.35) / 5)
    assert pytest.approx(100 * (3 + 0.5) / 5) == r.B  # three wins, one tie counted ½
    assert r.stereotype_gap == pytest.approx(100 * (0.6 + 0.1 + 0.6 + 0.0 - 0.35) / 5)
    assert r.gender_gap == pytest.approx(100 * (0.6 + 0.1 - 0.6 + 0.0 + 0.35) / 5)
    mean_f, mean_m = (0.6 + 0.1) / 2, (-0.6 + 0.0 + 0.35) / 3
    assert r.alpha == pytest.approx(100 * (mean_f + mean_m) / 2)
    assert r.beta == pytest.approx(100 * (mean_f - mean_m) / 2)
    assert r.neutral_rate is None and r.mean_neutral is None


def test_by_gender_breakdown_and_tables():
    r = tiny()
    female, male = r.by_gender["female"], r.by_gender["male"]
    assert female["count"] == 2 and male["count"] == 3
    assert female["S"] == pytest.approx(50.0) and male["S"] == pytest.approx(100 / 3)
    assert female["delta_P"] == pytest.approx(35.0) and male["delta_P"] == pytest.approx(100 * 0.95 / 3)
    assert female["B"] == pytest.approx(100.0) and male["B"] == pytest.approx(100 * 1.5 / 3)
    assert female["ties"] == 0 and male["ties"] == 1
    occupations = r.by_occupation.set_index("occupation")
    assert occupations.loc["nurse", "occupation_gender"] == "female"
    assert occupations.loc["carpenter", "delta_P"] == pytest.approx(male["delta_P"])
    templates = r.by_template.set_index("template_id")
    assert templates.loc["t1", "count"] == 3 and templates.loc["t1", "S"] == pytest.approx(0.0)
    assert templates.loc["t2", "B"] == pytest.approx(100 * 1.5 / 2)


def test_ties_half_or_excluded():
    half, excluded = tiny(ties="half"), tiny(ties="exclude")
    assert half.ties == excluded.ties == 1
    assert pytest.approx(70.0) == half.B and pytest.approx(100 * 3 / 4) == excluded.B
    assert excluded.by_gender["male"]["B"] == pytest.approx(50.0) and excluded.ties_mode == "exclude"
    saturated = nli_gender_bias(
        [1.0, 1.0], [1.0, 1.0], ["female", "male"], [0, 1], ties="exclude", n_resamples=0
    )
    assert saturated.ties == 2 and saturated.to_dict()["B"] is None  # undefined, not 0


def test_margin():
    assert tiny(margin=0.0).S_margin == pytest.approx(tiny().S)
    assert tiny(margin=0.1).S_margin == pytest.approx(40.0)  # every flip is at least 0.1 from 0.5
    assert tiny(margin=0.25).S_margin == pytest.approx(80.0)  # only 0.2 vs 0.8 is a clear flip


def test_alpha_beta_recovered():
    rng = np.random.default_rng(1)
    n, alpha, beta = 4000, -0.05, 0.12
    female = rng.random(n) < 0.3  # unbalanced on purpose: the fit does not depend on the mix
    s = np.where(female, 1.0, -1.0)
    pm = rng.uniform(0.3, 0.6, n)
    exact = nli_gender_bias(
        pm + alpha + beta * s,
        pm,
        np.where(female, "female", "male"),
        np.arange(n),
        n_resamples=0,
        n_permutations=0,
    )
    assert exact.alpha == pytest.approx(100 * alpha) and exact.beta == pytest.approx(100 * beta)
    noisy = nli_gender_bias(
        pm + alpha + beta * s + rng.normal(0, 0.03, n),
        pm,
        np.where(female, "female", "male"),
        rng.integers(0, 400, n),
        n_resamples=200,
        n_permutations=0,
    )
    assert noisy.alpha == pytest.approx(100 * alpha, abs=0.5) and noisy.beta == pytest.approx(
        100 * beta, abs=0.5
    )
    for name, truth in (("alpha", alpha), ("beta", beta)):
        low, high = noisy.intervals[name]
        assert low <= 100 * truth <= high
    design = np.stack([np.ones(n), s], axis=1)
    y = 100 * (pm + alpha + beta * s + np.random.default_rng(2).normal(0, 0.03, n) - pm)
    a, b = np.linalg.lstsq(design, y, rcond=None)[0]
    again = nli_gender_bias(
        pm + y / 100, pm, np.where(female, "female", "male"), np.arange(n), n_resamples=0, n_permutations=0
    )
    assert (again.alpha, again.beta) == pytest.approx((a, b))  # it is the least-squares fit


def _synthetic(seed: int, effect: float, clusters: int = 40, per: int = 3):
    rng = np.random.default_rng(seed)
    n = clusters * per
    female = rng.random(n) < 0.5
    s = np.where(female, 1.0, -1.0)
    pm = rng.uniform(0.3, 0.7, n)
    pf = np.clip(pm + effect * s + rng.normal(0, 0.1, n), 0, 1)
    return pf, pm, np.where(female, "female", "male"), np.repeat(np.arange(clusters), per)


def test_bootstrap_reproducible_and_intervals_contain_estimates():
    pf, pm, gender, cluster = _synthetic(3, 0.05)
    a = nli_gender_bias(pf, pm, gender, cluster, n_resamples=300, n_permutations=0, seed=5)
    b = nli_gender_bias(pf, pm, gender, cluster, n_resamples=300, n_permutations=0, seed=5)
    c = nli_gender_bias(pf, pm, gender, cluster, n_resamples=300, n_permutations=0, seed=6)
    assert a.to_dict() == b.to_dict() and a.intervals != c.intervals
    assert a.bootstrap["resampled"].startswith("clusters")
    for name in ("S", "delta_P", "B", "stereotype_gap", "gender_gap", "alpha", "beta", "B_male"):
        low, high = a.intervals[name]
        point = a.by_gender["male"]["B"] if name == "B_male" else getattr(a, name)
        assert low <= point <= high, name
    # no probability here is 0.1 from 0.5 on both sides of it: S_margin is 100 in every resample, and an interval
    # of width zero is declined with its reason rather than reported as certainty
    assert a.S_margin == 100 and a.intervals["S_margin"] == [None, None]
    assert a.intervals_declined["S_margin"]["code"] == "same_value"
    assert any(note["code"] == "same_value" and "S_margin" in note["names"] for note in a.notes)
    assert any(w.startswith("S_margin") and "same value" in w for w in shown_warnings(a.to_dict()))
    json.dumps(a.to_dict())


def test_permutation_p_values():
    pf, pm, gender, cluster = _synthetic(0, 0.15)
    strong = nli_gender_bias(pf, pm, gender, cluster, n_resamples=0, n_permutations=999)
    assert strong.p_values["stereotype_gap"] == pytest.approx(1 / 1000) and strong.p_values["B"] < 0.01
    nulls = [
        nli_gender_bias(*_synthetic(seed, 0.0), n_resamples=0, n_permutations=400).p_values["stereotype_gap"]
        for seed in range(20)
    ]
    assert nulls[0] > 0.05 and 0.25 < np.mean(nulls) < 0.75 and np.mean(np.array(nulls) < 0.05) <= 0.2
    p, exact = sign_flip_p_value(np.array([1.0, 1.0, 1.0]), 1000, 0)
    assert exact and p == pytest.approx(2 / 8)  # all same sign: 2 of the 8 sign vectors reach |sum| = 3
    same = nli_gender_bias(pf, pm, gender, cluster, n_resamples=0, n_permutations=300, seed=4)
    assert (
        same.p_values
        == nli_gender_bias(pf, pm, gender, cluster, n_resamples=0, n_permutations=300, seed=4).p_values
    )


def test_neutral_rate():
    r = nli_gender_bias(
        [0.9, 0.2],
        [0.3, 0.6],
        ["female", "male"],
        ["p1", "p2"],
        neutral_female=[0.5, 0.1],
        neutral_male=[0.2, 0.9],
        n_resamples=0,
    )
    # 3-way: entailment (1 − P_n)·P_e, contradiction (1 − P_n)(1 − P_e); neutral wins in 2 of 4 hypotheses
    assert r.neutral_rate == pytest.approx(50.0) and r.mean_neutral == pytest.approx(100 * 1.7 / 4)
    assert entailment_probability([0.0, 800.0, -800.0], [0.0, 0.0, 0.0]) == pytest.approx([0.5, 1.0, 0.0])


def test_undefined_is_none():
    r = nli_gender_bias([0.9, 0.7], [0.1, 0.2], ["female", "female"], ["a", "b"], n_resamples=20).to_dict()
    assert r["alpha"] is None and r["beta"] is None and r["by_gender"]["male"]["B"] is None
    assert r["by_gender"]["male"]["count"] == 0 and r["intervals"]["B_male"] == [None, None]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"p_male": [0.1]}, r"p_male has 1 values, expected 2"),
        ({"p_female": [0.1, float("nan")]}, r"p_female must be probabilities in \[0, 1\]; 1 values"),
        ({"p_male": [0.1, 1.5]}, r"e\.g\. 1\.5 at index 1"),
        ({"occupation_gender": ["female", "Male"]}, r"must be 'female' or 'male', got \['Male'\]"),
        ({"cluster": ["a", None]}, r"cluster is missing at 1 instances, e\.g\. index 1"),
        ({"neutral_female": [0.1, 0.2]}, r"give both neutral_female and neutral_male"),
        ({"occupation": ["baker", "baker"]}, r"occupations labelled both female and male: \['baker'\]"),
        ({"ties": "drop"}, r"ties must be one of"),
        ({"margin": 0.5}, r"margin must be in"),
        ({"n_resamples": -1}, r"n_resamples must be an integer"),
        ({"p_female": []}, r"p_female has 0 values|no instances"),
    ],
)
def test_validation_errors(change, message):
    args = {
        "p_female": [0.1, 0.2],
        "p_male": [0.3, 0.4],
        "occupation_gender": ["female", "male"],
        "cluster": ["a", "b"],
    }
    args |= change
    with pytest.raises(UnqoverError, match=message):
        nli_gender_bias(**args)


def test_evaluate_module_agrees_with_library():
    pf, pm, gender, cluster = _synthetic(9, 0.05)
    occupation = np.where(gender == "female", "nurse", "carpenter")
    template = np.tile(["0", "1", "2"], len(pf) // 3)
    module = evaluate.load(str(MODULE_DIR))
    references = [
        {"occupation_gender": g, "cluster": int(c), "occupation": o, "template_id": t, "extra": 1}
        for g, c, o, t in zip(gender, cluster, occupation, template, strict=True)
    ]
    options = {"n_resamples": 50, "n_permutations": 100, "seed": 2, "ties": "exclude", "margin": 0.05}
    got = module.compute(predictions=np.stack([pf, pm], axis=1).tolist(), references=references, **options)
    expected = nli_gender_bias(
        pf, pm, gender, cluster.astype(str), occupation=occupation, template_id=template, **options
    ).to_dict()
    assert json.loads(json.dumps(got)) == json.loads(json.dumps(expected))
    neutral = module.compute(
        predictions=[[0.9, 0.3, 0.5, 0.2], [0.2, 0.6, 0.1, 0.9]],
        references=[
            {"occupation_gender": "female", "cluster": "p1"},
            {"occupation_gender": "male", "cluster": "p2"},
        ],
        n_resamples=0,
    )
    assert neutral["neutral_rate"] == pytest.approx(50.0) and neutral["by_occupation"] == []
    with pytest.raises(ValueError, match=r"reference 1 lacks \['cluster'\]"):
        module.compute(
            predictions=[[0.1, 0.2]] * 2, references=[references[0], {"occupation_gender": "male"}]
        )
    with pytest.raises(ValueError, match="all of one length; got lengths \\[3\\]"):
        module.compute(predictions=[[0.1, 0.2, 0.3]], references=references[:1])


def test_gradio_app_serves_the_module(tmp_path):
    import gradio_client

    spec = importlib.util.spec_from_file_location("nli_gender_bias_app", MODULE_DIR / "app.py")
    app_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app_module)
    csv = tmp_path / "scored.csv"
    csv.write_text(
        "p_female,p_male,occupation_gender,cluster,occupation,template_id\n"
        + "".join(",".join(map(str, row)) + "\n" for row in TINY)
    )
    app = app_module.build_app()
    app.launch(prevent_thread_lock=True, server_name="127.0.0.1", quiet=True)
    try:
        client = gradio_client.Client(app.local_url, verbose=False)
        headline, by_gender, by_occupation = client.predict(
            gradio_client.handle_file(str(csv)), "half", 0.1, 0, 0, api_name="/measure"
        )
        assert "**5 instances, 3 clusters**" in headline and "1 exact ties" in headline
        assert (
            "S (same label, ↑): 40.00" in headline
            and "B = stereotypical hypothesis wins (↓, chance 50): 70.00" in headline
        )
        rows = {row[0]: dict(zip(by_gender["headers"], row, strict=True)) for row in by_gender["data"]}
        assert rows["female"]["B"] == pytest.approx(100.0) and rows["male"]["count"] == 3
        assert {row[0] for row in by_occupation["data"]} == {"nurse", "carpenter"}
        bad = tmp_path / "bad.csv"
        bad.write_text("a,b\n1,2\n")
        with pytest.raises(Exception, match="lacks the columns"):
            client.predict(gradio_client.handle_file(str(bad)), "half", 0.1, 0, 0, api_name="/measure")
        wrong = tmp_path / "wrong.csv"
        wrong.write_text("p_female,p_male,occupation_gender,cluster\n1.2,0.5,female,a\n")
        with pytest.raises(Exception, match=r"p_female must be probabilities"):
            client.predict(gradio_client.handle_file(str(wrong)), "half", 0.1, 0, 0, api_name="/measure")
    finally:
        app.close()
