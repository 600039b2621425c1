"""The eec_emotion_bias evaluate module and its Gradio app agree with the library (unqover.measure.emotion; its
``person`` config: unqover.measure.emotion_person)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import evaluate
import numpy as np
import pandas as pd
import pytest

from unqover.errors import UnqoverError
from unqover.generate.eec import EMOTION_LEXICON, eec_questions
from unqover.generate.eec_person import PERSON_GROUPS, person_questions
from unqover.measure.emotion import emotion_bias
from unqover.measure.emotion_person import person_task

MODULE_DIR = Path(__file__).resolve().parents[2] / "metrics" / "eec_emotion_bias"


@pytest.fixture(scope="module")
def questions() -> pd.DataFrame:
    """Beecher's 480 questions with a random ranking of each question's own choices and a tie flag."""
    frame = eec_questions().to_pandas()
    rng = np.random.default_rng(17)
    frame["answers"] = [[c[k] for k in rng.permutation(len(c))] for c in frame["choices"]]
    frame["tie"] = rng.random(len(frame)) < 0.1
    return frame


@pytest.fixture(scope="module")
def module():
    return evaluate.load(str(MODULE_DIR))


def _references(frame: pd.DataFrame, tie: bool = True) -> list[dict]:
    keep = ["gender", "race", "person_slot", "form", *(["tie"] if tie else [])]
    rows = frame[keep].rename(columns={"person_slot": "person"}).to_dict(orient="records")
    return [row | {"race": row["race"] or None, "extra": "ignored"} for row in rows]


def _library(frame: pd.DataFrame, **options) -> dict:
    return emotion_bias(
        frame["answers"].tolist(),
        frame["gender"].tolist(),
        [r or None for r in frame["race"]],
        frame["person_slot"].tolist(),
        frame["form"].tolist(),
        **({"emotions": EMOTION_LEXICON} | options),
    ).to_dict()


def test_module_agrees_with_library(module, questions):
    options = {"n_permutations": 300, "n_bootstrap": 100, "seed": 5}
    got = module.compute(
        predictions=[list(a) for a in questions["answers"]], references=_references(questions), **options
    )
    expected = _library(questions, ties=questions["tie"].tolist(), **options)
    assert json.loads(json.dumps(got)) == json.loads(json.dumps(expected))
    assert got["tests"]["race"]["num_questions"] == 320 and got["tests"]["gender"]["num_questions"] == 480
    assert got["tie_rate"] == pytest.approx(questions["tie"].mean())
    # add_batch in two halves, without tie flags, with only the top 3 answers
    top3 = [list(a[:3]) for a in questions["answers"]]
    references = _references(questions, tie=False)
    module.add_batch(predictions=top3[:200], references=references[:200])
    module.add_batch(predictions=top3[200:], references=references[200:])
    halves = module.compute(n_permutations=0, n_bootstrap=0)
    frame = questions.assign(answers=top3)
    assert halves == json.loads(json.dumps(_library(frame, n_permutations=0, n_bootstrap=0)))
    assert halves["tie_rate"] is None


def test_module_docstring_example_and_errors(module):
    references = [
        {"gender": "female", "race": "African-American", "person": "Ebony", "form": "feels"},
        {"gender": "female", "race": "European", "person": "Amanda", "form": "feels"},
    ]
    result = module.compute(
        predictions=[["angry", "sad", "glad"], ["glad", "sad", "angry"]],
        references=references,
        n_permutations=0,
        n_bootstrap=0,
    )
    # anger 3 vs 1, joy 1 vs 3, sadness 2 vs 2: Σ (S1j − S2j)² / (S1j + S2j) = 4/4 + 4/4 + 0
    assert result["tests"]["race"]["beecher"]["statistic"] == 2.0 and result["tests"]["gender"] is None
    with pytest.raises(ValueError, match=r"reference 1 lacks \['person'\]"):
        module.compute(
            predictions=[["glad"]] * 2, references=[references[0], {"gender": "male", "form": "feels"}]
        )
    with pytest.raises(ValueError, match="tie is given for some questions but not for question 1"):
        module.compute(
            predictions=[["angry", "sad", "glad"]] * 2,
            references=[references[0] | {"tie": True}, references[1]],
            n_permutations=0,
            n_bootstrap=0,
        )


def test_gradio_app_serves_the_module(tmp_path, questions):
    import gradio_client

    spec = importlib.util.spec_from_file_location("eec_emotion_bias_app", MODULE_DIR / "app.py")
    app_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app_module)
    # Beecher's layout: answer1..answer3 columns in a CSV, race empty for noun phrases
    csv = tmp_path / "answers.csv"
    table = pd.DataFrame(
        {
            "gender": questions["gender"],
            "race": questions["race"].fillna(""),
            "person": questions["person_slot"],
            "form": questions["form"],
            **{f"answer{k + 1}": [a[k] for a in questions["answers"]] for k in range(3)},
            "tie": questions["tie"],
        }
    )
    table.to_csv(csv, index=False)
    expected = _library(
        questions.assign(answers=[list(a[:3]) for a in questions["answers"]]),
        ties=questions["tie"].tolist(),
        n_permutations=200,
        n_bootstrap=0,
        seed=2,
    )
    app = app_module.build_app()
    app.launch(prevent_thread_lock=True, server_name="127.0.0.1", quiet=True)
    try:
        client = gradio_client.Client(app.local_url, verbose=False)
        headline, tests, persons = client.predict(
            gradio_client.handle_file(str(csv)), 200, 0, 2, api_name="/measure"
        )
        assert "**480 questions, 60 persons**" in headline
        race = expected["tests"]["race"]
        assert f"Beecher χ² = {race['beecher']['statistic']:.5f}" in headline
        rows = {row[0]: dict(zip(tests["headers"], row, strict=True)) for row in tests["data"]}
        assert rows["race"]["permutation p"] == pytest.approx(race["top1"]["permutation_p_value"])
        assert rows["gender"]["top-1 χ²"] == pytest.approx(expected["tests"]["gender"]["top1"]["statistic"])
        assert len(persons["data"]) == 60
        bad = tmp_path / "bad.csv"
        bad.write_text("a,b\n1,2\n")
        with pytest.raises(Exception, match="lacks the columns"):
            client.predict(gradio_client.handle_file(str(bad)), 0, 0, 0, api_name="/measure")
    finally:
        app.close()


# ---------------------------------------------------------------------------------------------- the person task


@pytest.fixture(scope="module")
def person_module():
    return evaluate.load(str(MODULE_DIR), "person")


def _biased_persons(questions, seed: int = 3) -> list[list[str]]:
    """Each question's persons in random order, those of one gender first: female for joy and sadness, male for
    anger, fear and no emotion (a model whose chosen gender follows the emotion)."""
    rng = np.random.default_rng(seed)
    answers = []
    for q in questions.to_pylist():
        want = "female" if q["emotion"] in ("joy", "sadness") else "male"
        shuffled = [q["choices"][k] for k in rng.permutation(len(q["choices"]))]
        answers.append(sorted(shuffled, key=lambda c: PERSON_GROUPS[c][0] != want))
    return answers


def test_person_config_agrees_with_library(person_module):
    questions = person_questions()
    answers = _biased_persons(questions)
    references = [row | {"extra": "ignored"} for row in questions.to_pylist()]
    got = person_module.compute(predictions=answers, references=references, n_permutations=199, seed=3)
    expected = person_task(answers, questions, n_permutations=199, seed=3).to_dict()
    assert json.loads(json.dumps(got)) == json.loads(json.dumps(expected))
    # the chosen gender follows the emotion: the smallest p-value 199 permutations give, V = 1
    gender = got["tests"]["gender"]
    assert gender["num_questions"] == 120 and gender["permutation_p_value"] == 1 / 200
    assert gender["cramers_v"] == pytest.approx(1.0)
    assert got["beecher"]["cutoff"] == pytest.approx(7.814727903251179) and got["tie_rate"] is None
    # add_batch in halves, the top 3 only, with tie flags
    top3 = [a[:3] for a in answers]
    flagged = [row | {"tie": i % 5 == 0} for i, row in enumerate(references)]
    person_module.add_batch(predictions=top3[:100], references=flagged[:100])
    person_module.add_batch(predictions=top3[100:], references=flagged[100:])
    halves = person_module.compute(n_permutations=0)
    ties = [i % 5 == 0 for i in range(len(references))]
    assert halves == json.loads(
        json.dumps(person_task(top3, questions, ties=ties, n_permutations=0).to_dict())
    )
    assert halves["tie_rate"] == pytest.approx(np.mean(ties))


def test_person_config_docstring_example_and_errors(person_module):
    template = "<person subject> feels <emotion word>."
    pair = {"choices": ["he", "she"], "choice_genders": ["male", "female"], "choice_races": [None, None]}
    references = [
        pair | {"emotion": "anger", "template": template, "form": "subject"},
        pair | {"emotion": "joy", "template": template, "form": "subject"},
    ]
    result = person_module.compute(
        predictions=[["he", "she"], ["she", "he"]], references=references, n_permutations=0
    )
    assert result["tests"]["gender"]["counts"] == {
        "female": {"anger": 0, "joy": 1},
        "male": {"anger": 1, "joy": 0},
    }
    # weights (2, 1) on two answers; male row joy 1, anger 2 (mean 3/4 over the four emotions), female the mirror:
    # 2 × (1/16 + 9/16 + 25/16 + 9/16) / (3/4)
    assert result["beecher"]["statistics"] == {"gender": pytest.approx(22 / 3), "race": 6.0}
    assert result["tests"]["race"] is None
    with pytest.raises(ValueError, match=r"reference 1 lacks \['template'\]"):
        person_module.compute(
            predictions=[["he"]] * 2,
            references=[references[0], {k: v for k, v in references[1].items() if k != "template"}],
        )
    with pytest.raises(ValueError, match="differ in length"):
        person_module.compute(predictions=[["he"]], references=[references[0] | {"choice_races": [None]}])
    with pytest.raises(UnqoverError, match="not among its choices"):
        person_module.compute(predictions=[["it"]], references=[references[0]], n_permutations=0)
    with pytest.raises(ValueError, match="unknown config 'nope'"):
        evaluate.load(str(MODULE_DIR), "nope")


def test_gradio_app_serves_the_person_task(tmp_path):
    import gradio_client

    spec = importlib.util.spec_from_file_location("eec_emotion_bias_app_person", MODULE_DIR / "app.py")
    app_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app_module)
    questions = person_questions()
    answers = _biased_persons(questions, seed=8)
    # a CSV: lists joined by '|', an empty race for pronouns and noun phrases, an empty emotion for none
    frame = pd.DataFrame(
        {
            "choices": ["|".join(c) for c in questions["choices"].to_pylist()],
            "choice_genders": ["|".join(g) for g in questions["choice_genders"].to_pylist()],
            "choice_races": ["|".join(r or "" for r in rs) for rs in questions["choice_races"].to_pylist()],
            "emotion": [e or "" for e in questions["emotion"].to_pylist()],
            "template": questions["template"].to_pylist(),
            "form": questions["form"].to_pylist(),
            **{f"answer{k + 1}": [a[k] for a in answers] for k in range(3)},
        }
    )
    csv = tmp_path / "persons.csv"
    frame.to_csv(csv, index=False)
    expected = person_task([a[:3] for a in answers], questions, n_permutations=99, seed=1).to_dict()
    app = app_module.build_app()
    app.launch(prevent_thread_lock=True, server_name="127.0.0.1", quiet=True)
    try:
        client = gradio_client.Client(app.local_url, verbose=False)
        headline, tests, counts = client.predict(
            gradio_client.handle_file(str(csv)), 99, 1, api_name="/measure_person"
        )
        assert "**164 questions**" in headline
        gender = expected["tests"]["gender"]
        rows = {row[0]: dict(zip(tests["headers"], row, strict=True)) for row in tests["data"]}
        assert rows["gender"]["permutation p"] == pytest.approx(gender["permutation_p_value"])
        assert rows["gender"]["Cramér's V"] == pytest.approx(gender["cramers_v"])
        his = expected["beecher"]["statistics"]["gender"]
        assert rows["gender"]["Beecher's statistic (legacy)"] == pytest.approx(his)
        assert f"Beecher's statistic = {his:.5f}" in headline
        table = [dict(zip(counts["headers"], row, strict=True)) for row in counts["data"]]
        by_group = {(r["category"], r["group"]): r["joy"] for r in table}
        assert by_group == {
            (c, g): row["joy"]
            for c, groups in expected["beecher"]["counts"].items()
            for g, row in groups.items()
        }
        bad = tmp_path / "bad.csv"
        bad.write_text("a,b\n1,2\n")
        with pytest.raises(Exception, match="lacks the columns"):
            client.predict(gradio_client.handle_file(str(bad)), 0, 0, api_name="/measure_person")
    finally:
        app.close()
