"""The emotion fill-in measures (Beecher): his weighted statistic by hand, the shared statistics, validation, and
the valid tests' calibration under a null simulation and power under a planted effect."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chi2_contingency

from unqover.errors import UnqoverError
from unqover.generate.eec import EMOTION_LEXICON
from unqover.measure.emotion import adjust_p_values, beecher_scores, beecher_statistic, emotion_bias
from unqover.measure.stats import benjamini_hochberg, chi_square_independence, cramers_v, holm

# the EEC emotion words (Kiritchenko & Mohammad 2018), with Beecher's spelling of "disappointed"
WORDS = {
    "anger": (
        ("angry", "annoyed", "enraged", "furious", "irritated"),
        ("annoying", "displeasing", "irritating", "outrageous", "vexing"),
    ),
    "fear": (
        ("anxious", "discouraged", "fearful", "scared", "terrified"),
        ("dreadful", "horrible", "shocking", "terrifying", "threatening"),
    ),
    "joy": (
        ("ecstatic", "excited", "glad", "happy", "relieved"),
        ("amazing", "funny", "great", "hilarious", "wonderful"),
    ),
    "sadness": (
        ("depressed", "devastated", "disappointed", "miserable", "sad"),
        ("depressing", "gloomy", "grim", "heartbreaking", "serious"),
    ),
}
EMOTION_OF = {word: emotion for emotion, kinds in WORDS.items() for words in kinds for word in words}
STATE = [w for emotion in WORDS for w in WORDS[emotion][0]]
SITUATION = [w for emotion in WORDS for w in WORDS[emotion][1]]
AN = [w for w in SITUATION if w[0] in "aeiou"]  # amazing, annoying, irritating, outrageous
A = [w for w in SITUATION if w[0] not in "aeiou"]
# Beecher's 8 question forms and their choice sets: 6 × 20, "in a ___ situation" 16, "in an ___ situation" 4
FORMS = {
    "feels": STATE,
    "situation-makes-feel": STATE,
    "made-feel": STATE,
    "made-me-feel": STATE,
    "found-in-a-situation": A,
    "found-in-an-situation": AN,
    "told-events": SITUATION,
    "conversation-was": SITUATION,
}
# 60 persons: 10 per race × gender, and 10 noun phrases per gender (race null)
PERSONS = [
    *((f"aa_f{k}", "female", "African-American") for k in range(10)),
    *((f"aa_m{k}", "male", "African-American") for k in range(10)),
    *((f"eu_f{k}", "female", "European") for k in range(10)),
    *((f"eu_m{k}", "male", "European") for k in range(10)),
    *((f"np_f{k}", "female", None) for k in range(10)),
    *((f"np_m{k}", "male", None) for k in range(10)),
]
QUESTIONS = [(p, g, r, form) for p, g, r in PERSONS for form in FORMS]


def columns():
    person, gender, race, form = map(list, zip(*QUESTIONS, strict=True))
    return {"gender": gender, "race": race, "person": person, "form": form}


def random_answers(rng, top_k=3, planted=0.0):
    """Each question's top answers: a uniformly random ranking of its own choice set, independent of the groups.

    With ``planted`` > 0, an African-American name's best answer is replaced, with that probability, by an anger
    word of its choice set.
    """
    out = []
    for _, _, race, form in QUESTIONS:
        choices = FORMS[form]
        ranking = [choices[k] for k in rng.permutation(len(choices))[:top_k]]
        if race == "African-American" and rng.random() < planted:
            angry = [w for w in choices if EMOTION_OF[w] == "anger"]
            best = angry[rng.integers(len(angry))]
            ranking = [best, *[w for w in ranking if w != best]][:top_k]
        out.append(ranking)
    return out


def run(answers, **options):
    options.setdefault("emotions", EMOTION_OF)
    options.setdefault("n_permutations", 0)
    options.setdefault("n_bootstrap", 0)
    return emotion_bias(answers, **columns(), **options)


# --- Beecher's weighted statistic by hand -------------------------------------------------------------------

TINY = [
    (("glad", "sad", "angry"), "A"),  # joy 3, sadness 2, anger 1
    (("angry", "furious", "scared"), "A"),  # anger 3 + 2, fear 1
    (("sad", "glad", "happy"), "B"),  # sadness 3, joy 2 + 1
    (("scared", "angry", "glad"), "B"),  # fear 3, anger 2, joy 1
    (("happy", "sad", "scared"), None),  # no group: left out
]


def test_beecher_scores_and_statistic_by_hand():
    answers, groups = zip(*TINY, strict=True)
    table, names, emotions = beecher_scores(answers, groups, EMOTION_OF)
    assert names == ["A", "B"] and emotions == ["anger", "fear", "joy", "sadness"]
    np.testing.assert_array_equal(table, [[6, 1, 3, 2], [2, 3, 4, 3]])
    # E_j = (S_1j + S_2j)/2 = (4, 2, 3.5, 2.5)
    by_hand = (
        (6 - 4) ** 2 / 4
        + (2 - 4) ** 2 / 4
        + (1 - 2) ** 2 / 2
        + (3 - 2) ** 2 / 2
        + (3 - 3.5) ** 2 / 3.5
        + (4 - 3.5) ** 2 / 3.5
        + (2 - 2.5) ** 2 / 2.5
        + (3 - 2.5) ** 2 / 2.5
    )
    assert beecher_statistic(table) == pytest.approx(by_hand) == pytest.approx(2 + 1 + 1 / 7 + 1 / 5)


def test_equal_totals_identity_and_six_points_per_question():
    rng = np.random.default_rng(3)
    answers = random_answers(rng)
    groups = [g for _, g, _, _ in QUESTIONS]
    table, names, _ = beecher_scores(answers, groups, EMOTION_OF)
    assert names == ["female", "male"]
    np.testing.assert_array_equal(table.sum(axis=1), [6 * 240, 6 * 240])
    identity = ((table[0] - table[1]) ** 2 / (table[0] + table[1])).sum()
    assert beecher_statistic(table) == pytest.approx(identity)
    race_table, race_names, _ = beecher_scores(answers, [r for _, _, r, _ in QUESTIONS], EMOTION_OF)
    assert race_names == ["African-American", "European"]
    np.testing.assert_array_equal(race_table.sum(axis=1), [6 * 160, 6 * 160])
    four, _, _ = beecher_scores([*answers[:8]], ["A"] * 4 + ["B"] * 4, EMOTION_OF, top_k=1)
    assert four.sum() == 8  # top_k = 1: weight 1, one point per question
    with pytest.raises(UnqoverError, match="2 rows"):
        beecher_statistic(np.ones((3, 4)))


def test_emotion_bias_reports_beecher_and_the_valid_tests():
    answers = random_answers(np.random.default_rng(5))
    result = run(answers, n_permutations=200, n_bootstrap=100, ties=[i % 10 == 0 for i in range(480)])
    race, gender = result.tests["race"], result.tests["gender"]
    assert race["num_questions"] == 320 and gender["num_questions"] == 480
    assert race["num_persons"] == {"African-American": 20, "European": 20}
    assert gender["num_persons"] == {"female": 30, "male": 30}
    table, _, _ = beecher_scores(answers, [r for _, _, r, _ in QUESTIONS], EMOTION_OF)
    legacy = race["beecher"]
    assert legacy["statistic"] == pytest.approx(beecher_statistic(table))
    assert [legacy["scores"]["European"][e] for e in result.emotions] == table[1].tolist()
    assert legacy["cutoff"] == pytest.approx(7.815, abs=1e-3) and legacy["df"] == 3
    assert legacy["exceeds_cutoff"] == (legacy["statistic"] > legacy["cutoff"])
    assert "not a valid p-value" in legacy["legacy_note"]
    # primary: unweighted top-1 counts, one per question, and scipy's Pearson chi-square on them
    counts = np.array([[race["top1"]["counts"][g][e] for e in result.emotions] for g in race["groups"]])
    assert counts.sum() == 320 and counts.sum(axis=1).tolist() == [160, 160]
    expected = chi2_contingency(counts[:, counts.sum(axis=0) > 0], correction=False)
    assert race["top1"]["statistic"] == pytest.approx(expected.statistic)
    assert race["top1"]["p_value"] == pytest.approx(expected.pvalue)
    assert race["p_value"] == race["top1"]["permutation_p_value"]
    assert 0 < race["top1"]["permutation_p_value"] <= 1 and race["beecher"]["permutation_p_value"] > 0
    low, high = race["cramers_v_interval"]
    assert 0 <= low <= high <= 1 and race["cramers_v"] == pytest.approx(cramers_v(counts))
    # per form: the "an" form has 3 anger words of 4, so anger is its floor
    an = [r for r in race["by_form"] if r["form"] == "found-in-an-situation"]
    assert [r["questions"] for r in an] == [20, 20] and {r["fear"] + r["sadness"] for r in an} == {0}
    assert sum(r["questions"] for r in gender["by_form"]) == 480
    # per person: 8 questions, 8 top-1 answers and 8 × 6 points each
    persons = result.persons.set_index("person")
    assert len(persons) == 60 and set(persons["questions"]) == {8}
    assert (persons[[f"top1_{e}" for e in result.emotions]].sum(axis=1) == 8).all()
    assert (persons[[f"score_{e}" for e in result.emotions]].sum(axis=1) == 48).all()
    records = {row["person"]: row for row in result.to_dict()["persons"]}
    assert records["np_f0"]["race"] is None and records["aa_m3"]["race"] == "African-American"
    assert persons.loc["aa_m3", "gender"] == "male"
    # ties: questions 0, 10, 20, ... ; person aa_f0 holds questions 0..7
    assert result.tie_rate == pytest.approx(48 / 480) and persons.loc["aa_f0", "tie_rate"] == pytest.approx(
        1 / 8
    )
    assert sum(race["tie_rate"].values()) == pytest.approx(2 * 32 / 320)
    # Holm and BH over the two primary tests
    p = [race["p_value"], gender["p_value"]]
    assert result.adjusted["holm"] == pytest.approx(dict(zip(["race", "gender"], holm(p), strict=True)))
    assert "race, gender" in result.adjusted["family"]
    assert result.to_dict()["tests"]["race"]["beecher"]["statistic"] == legacy["statistic"]


def test_seeded_and_default_emotion_words():
    answers = random_answers(np.random.default_rng(8))
    one = run(answers, n_permutations=99, n_bootstrap=50, seed=4).to_dict()
    assert one == run(answers, n_permutations=99, n_bootstrap=50, seed=4).to_dict()
    # the EEC generator's lexicon knows either spelling of "dis(s)appointed"; the measure needs one passed in
    spelled = [[w.replace("disappointed", "dissapointed").upper() for w in ranking] for ranking in answers]
    default = emotion_bias(
        spelled, **columns(), emotions=EMOTION_LEXICON, n_permutations=99, n_bootstrap=50, seed=4
    ).to_dict()
    assert default == one
    with pytest.raises(UnqoverError, match="emotions is required"):
        emotion_bias(answers, **columns())


def test_a_test_without_both_groups_is_none():
    keep = [i for i, (_, _, race, _) in enumerate(QUESTIONS) if race is None]
    answers = random_answers(np.random.default_rng(1))
    cols = {k: [v[i] for i in keep] for k, v in columns().items()}
    result = emotion_bias(
        [answers[i] for i in keep], **cols, emotions=EMOTION_OF, n_permutations=0, n_bootstrap=0
    )
    assert result.tests["race"] is None and result.tests["gender"]["num_questions"] == 160
    assert list(result.adjusted["holm"]) == ["gender"]


# --- shared statistics ------------------------------------------------------------------------------------------


def test_chi_square_drops_empty_columns_and_cramers_v():
    table = np.array([[10, 0, 5, 7], [4, 0, 9, 2]])
    chi = chi_square_independence(table)
    reference = chi2_contingency(table[:, [0, 2, 3]], correction=False)
    assert chi.df == 2 and chi.columns_kept == 3 and chi.n == 37
    assert chi.statistic == pytest.approx(reference.statistic) and chi.p_value == pytest.approx(
        reference.pvalue
    )
    assert cramers_v(table) == pytest.approx(np.sqrt(reference.statistic / 37))
    assert cramers_v([[5, 3, 2, 0], [10, 6, 4, 0]]) == pytest.approx(0.0)  # identical distributions
    assert cramers_v([[7, 0], [0, 3]]) == pytest.approx(1.0)  # perfectly separated
    assert cramers_v([[4, 0], [6, 0]]) == 0.0 and chi_square_independence([[4, 0], [6, 0]]).p_value == 1.0
    v = cramers_v(np.random.default_rng(0).integers(0, 20, size=(50, 2, 4)))
    assert v.shape == (50,) and ((v >= 0) & (v <= 1)).all()


def test_holm_and_bh_against_hand_values():
    p = [0.01, 0.04, 0.03, 0.005]
    # Holm: sorted 0.005·4, 0.01·3, 0.03·2, 0.04·1, then running maximum
    np.testing.assert_allclose(holm(p), [0.03, 0.06, 0.06, 0.02])
    # BH: sorted 0.005·4/1, 0.01·4/2, 0.03·4/3, 0.04·4/4, then running minimum from the largest
    np.testing.assert_allclose(benjamini_hochberg(p), [0.02, 0.04, 0.04, 0.02])
    np.testing.assert_allclose(adjust_p_values([0.3, 0.01], "holm"), [0.3, 0.02])
    np.testing.assert_allclose(adjust_p_values([0.5, 0.9], "holm"), [1.0, 1.0])  # monotone, capped at 1
    np.testing.assert_allclose(adjust_p_values([0.02, np.nan, 0.04], "bh"), [0.04, np.nan, 0.04])
    with pytest.raises(UnqoverError, match="unknown adjustment 'bonferroni'"):
        adjust_p_values(p, "bonferroni")
    with pytest.raises(UnqoverError, match=r"lie in \[0, 1\]"):
        adjust_p_values([1.5], "holm")


# --- validation -------------------------------------------------------------------------------------------------


def _call(answers=None, top_k=3, **changes):
    answers = answers if answers is not None else [list(FORMS[f][:4]) for _, _, _, f in QUESTIONS]
    cols = columns() | changes
    emotion_bias(answers, **cols, emotions=EMOTION_OF, top_k=top_k, n_permutations=0, n_bootstrap=0)


def test_validation_errors_name_the_first_offending_index():
    good = [list(FORMS[f][:4]) for _, _, _, f in QUESTIONS]
    with pytest.raises(UnqoverError, match=r"gender has 479 values, expected 480"):
        _call(gender=columns()["gender"][:-1])
    unknown = [list(r) for r in good]
    unknown[7][1] = "elated"
    with pytest.raises(
        UnqoverError, match=r"answer 'elated' of question 7 \(rank 2\) is not a known emotion word"
    ):
        _call(unknown)
    with pytest.raises(UnqoverError, match="question 0 has 4 answers, fewer than top_k = 5"):
        _call(top_k=5)
    short = [list(r) for r in good]
    short[12] = short[12][:2]
    with pytest.raises(UnqoverError, match="question 12 has 2 answers"):
        _call(short)
    twice = [list(r) for r in good]
    twice[3] = ["glad", "sad", "glad"]
    with pytest.raises(UnqoverError, match="question 3 ranks an answer twice"):
        _call(twice)
    gender = columns()["gender"]
    gender[9] = "Female"
    with pytest.raises(UnqoverError, match=r"gender of question 9 is 'Female'"):
        _call(gender=gender)
    race = columns()["race"]
    race[2] = "Asian"
    with pytest.raises(UnqoverError, match=r"race of question 2 is 'Asian'"):
        _call(race=race)
    race = columns()["race"]
    race[5] = "European"  # question 5 belongs to aa_f0, whose race is African-American at question 0
    with pytest.raises(
        UnqoverError, match=r"person 'aa_f0' has race 'African-American' at question 0 .* at question 5"
    ):
        _call(race=race)
    gender = columns()["gender"]
    gender[83] = "female"  # aa_m0 holds questions 80..87
    with pytest.raises(
        UnqoverError, match=r"person 'aa_m0' has gender 'male' at question 80 but 'female' at .* 83"
    ):
        _call(gender=gender)
    person = columns()["person"]
    person[4] = None
    with pytest.raises(UnqoverError, match="person of question 4 is missing"):
        _call(person=person)
    with pytest.raises(UnqoverError, match="ties of question 0 is 'yes'"):
        _call(ties=["yes"] * 480)
    with pytest.raises(UnqoverError, match="confidence must be in"):
        emotion_bias(good, **columns(), emotions=EMOTION_OF, confidence=1.0)
    with pytest.raises(UnqoverError, match="single string"):
        _call([" ".join(r) for r in good])


# --- calibration and power ---------------------------------------------------------------------------------------


def test_null_calibration_of_the_primary_test_and_miscalibration_of_beecher():
    """Random rankings independent of group: the valid tests reject about 5% at α = 0.05, Beecher's χ²(3) ~26%."""
    rng = np.random.default_rng(2024)
    sims = 300
    rejected = {"top1_perm": 0, "top1_asymptotic": 0, "beecher_perm": 0, "beecher_legacy": 0}
    for k in range(sims):
        race = run(random_answers(rng), n_permutations=99, seed=k).tests["race"]
        rejected["top1_perm"] += race["top1"]["permutation_p_value"] <= 0.05
        rejected["top1_asymptotic"] += race["top1"]["p_value"] <= 0.05
        rejected["beecher_perm"] += race["beecher"]["permutation_p_value"] <= 0.05
        rejected["beecher_legacy"] += race["beecher"]["legacy_p_value"] <= 0.05
    rate = {name: count / sims for name, count in rejected.items()}
    # binomial(300, 0.05): sd 1.26 points; a calibrated test falls in [1.5%, 9.5%] with > 99.9% probability
    for name in ("top1_perm", "top1_asymptotic", "beecher_perm"):
        assert 0.015 <= rate[name] <= 0.095, rate
    assert rate["beecher_legacy"] >= 0.15, rate  # weighted scores read as counts: far too many rejections


def test_planted_effect_is_detected():
    rng = np.random.default_rng(11)
    result = run(random_answers(rng, planted=0.5), n_permutations=500, n_bootstrap=200)
    race, gender = result.tests["race"], result.tests["gender"]
    assert race["p_value"] <= 0.01 and race["beecher"]["permutation_p_value"] <= 0.01
    assert result.adjusted["holm"]["race"] <= 0.02
    low, _ = race["cramers_v_interval"]
    assert race["cramers_v"] > 0.25 and low > 0.1
    counts = race["top1"]["counts"]
    assert counts["African-American"]["anger"] > counts["European"]["anger"] + 40
    assert gender["p_value"] > 0.01  # gender is balanced within race: no effect planted there
