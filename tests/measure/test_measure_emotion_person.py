"""Beecher's person task: the person-blank questions, his statistic (checked against his own code and his published
results when his repository is at hand) and the valid default test."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unqover.errors import UnqoverError
from unqover.generate.eec import eec_sentences
from unqover.generate.eec_person import (
    PERSON_GROUPS,
    paper_question,
    person_choice_sentences,
    person_questions,
    slot_text,
)
from unqover.measure.emotion_person import (
    PAPER_EMOTIONS,
    beecher_person_statistics,
    person_bias,
    person_bias_inputs,
)

#: Beecher's repository (no licence: read in place, never copied into the project), a clone (or bare mirror) that
#: UNQOVER_BEECHER_REPO names; without it the tests against his code and his published results skip.
MIRROR = Path(os.environ.get("UNQOVER_BEECHER_REPO", "")).expanduser()
HAVE_MIRROR = (
    bool(os.environ.get("UNQOVER_BEECHER_REPO")) and MIRROR.is_dir() and shutil.which("git") is not None
)
NO_MIRROR = (
    "set UNQOVER_BEECHER_REPO to a clone of Beecher's repository "
    "(git clone https://github.com/sbeecher0575/nlpbias)"
    + (
        f"; {MIRROR} is not a folder"
        if os.environ.get("UNQOVER_BEECHER_REPO") and not MIRROR.is_dir()
        else ""
    )
)
needs_mirror = pytest.mark.skipif(not HAVE_MIRROR, reason=NO_MIRROR)

#: His 14 models (``answers/<model>_person.csv``, ``bias_results.csv``'s filename column).
MODELS = (
    "glove.6B.50d", "glove.6B.100d", "glove.6B.200d", "glove.6B.300d", "glove.840B.300d",
    "text_acad", "text_all", "text_blog", "text_fic", "text_mag", "text_news", "text_spok", "text_tvm", "text_web",
)  # fmt: skip


def _show(path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(MIRROR), "show", f"HEAD:{path}"], capture_output=True, text=True, check=True
    ).stdout


def _csv_rows(text: str) -> list[list[str]]:
    """His CSV files end lines with \\r\\r\\n: blank rows in between are dropped."""
    return [row for row in csv.reader(io.StringIO(text)) if row]


@pytest.fixture(scope="module")
def paper():
    return person_questions(mode="paper")


@pytest.fixture(scope="module")
def default():
    return person_questions(mode="default")


# ------------------------------------------------------------------------------------------ questions (no mirror)


def test_paper_questions_shape(paper):
    assert paper.num_rows == 164 and len(set(paper["id"].to_pylist())) == 164
    rows = paper.to_pylist()
    assert Counter(len(r["choices"]) for r in rows) == {60: 124, 30: 40}
    assert Counter(r["form"] for r in rows) == {
        "subject": 62, "object": 62, "reflexive-female": 20, "reflexive-male": 20,
    }  # fmt: skip
    assert Counter(r["emotion"] for r in rows) == {"anger": 40, "fear": 40, "joy": 40, "sadness": 40, None: 4}
    assert paper["question"].to_pylist() == sorted(paper["question"].to_pylist())
    for r in rows:
        assert r["question"].count("________") == 1
        assert r["choices"] == sorted(r["choices"])
        assert [PERSON_GROUPS[c] for c in r["choices"]] == list(
            zip(r["choice_genders"], r["choice_races"], strict=True)
        )
        if r["form"].startswith("reflexive"):  # "found herself" offers only women: the question gives it away
            assert set(r["choice_genders"]) == {r["form"].split("-")[1]}
        else:
            assert Counter(r["choice_genders"]) == {"female": 30, "male": 30}
            assert Counter(r["choice_races"]) == {"African-American": 20, "European": 20, None: 20}
        pronouns = {"subject": {"he", "she"}, "object": {"him", "her"}}
        pronouns |= {"reflexive-female": {"she"}, "reflexive-male": {"he"}}
        assert pronouns[r["form"]] == {"he", "she", "him", "her"} & set(r["choices"])
    disappointed = [r for r in rows if r["emotion_word"] == "disappointed"]
    assert len(disappointed) == 4 and all("disappointed" in r["question"] for r in disappointed)


def test_paper_and_default_agree_on_the_eec(paper, default):
    """On the EEC his two repairs undo all the regex damage: both modes give the same questions."""
    by_question = {r["question"]: r for r in default.to_pylist()}
    assert len(by_question) == 164
    for r in paper.to_pylist():
        d = by_question[r["question"]]
        assert d == r  # same id, text, form, template, emotion, word, choices and groups
    assert default["question"].to_pylist() != paper["question"].to_pylist()  # only the order differs


def test_choice_sentences_are_the_eec_sentences(default):
    sentences = person_choice_sentences(default)
    assert sentences.num_rows == 8640 and len(set(sentences["id"].to_pylist())) == 8640
    eec = eec_sentences("beecher")
    assert Counter(sentences["sentence"].to_pylist()) == Counter(eec["sentence"].to_pylist())
    assert Counter(
        zip(sentences["sentence"].to_pylist(), sentences["choice"].to_pylist(), strict=True)
    ) == Counter(zip(eec["sentence"].to_pylist(), eec["person"].to_pylist(), strict=True))
    first = sentences.filter(pc.equal(sentences["choice"], "my dad")).to_pylist()
    assert any(r["sentence"] == "My dad feels angry." for r in first)  # capitalised at the start


def _table(rows: list[tuple]) -> pa.Table:
    names = ("id", "sentence", "template", "person", "gender", "race", "emotion", "emotion_word")
    columns = list(zip(*[(str(i), *r) for i, r in enumerate(rows)], strict=True))
    return pa.table({n: pa.array(list(c), pa.string()) for n, c in zip(names, columns, strict=True)})


def test_paper_mode_keeps_his_regex_damage():
    told = "<person subject> told us all about the recent <emotional situation word> events."
    saw = "I saw <person object> at the glade."
    rows = [
        ("Al told us all about the recent funny events.", told, "Al", "male", "European", "joy", "funny"),
        ("Ann told us all about the recent funny events.", told, "Ann", "female", "European", "joy", "funny"),
        ("He told us all about the recent heartbreaking events.", told, "he", "male", None, "sadness",
         "heartbreaking"),
        ("Ann feels glad.", "<person subject> feels <emotion word>.", "Ann", "female", "European", "joy", "glad"),
        ("I saw Ann at the glade.", saw, "Ann", "female", "European", None, None),
    ]  # fmt: skip
    table = _table(rows)
    paper = {r["question"]: r for r in person_questions(table, "paper").to_pylist()}
    default = {r["question"]: r for r in person_questions(table, "default").to_pylist()}
    assert "________ told us ________l about the recent funny events." in paper  # "al" blanked inside "all"
    assert paper["________ told us all about the recent funny events."]["choices"] == ["Ann"]
    assert default["________ told us all about the recent funny events."]["choices"] == ["Al", "Ann"]
    # "he" damages "the" and "heartbreaking"; his repairs undo it
    assert "________ told us all about the recent heartbreaking events." in paper
    assert paper_question("He told us all about the recent heartbreaking events.", "he") == (
        "________ told us all about the recent heartbreaking events."
    )
    # his emotion search finds "glad" inside "glade"; default reads the emotion column
    assert paper["i saw ________ at the glade."]["emotion"] == "joy"
    assert default["i saw ________ at the glade."]["emotion"] is None


def test_slot_text_blanks_exactly_the_person():
    template = "The conversation with <person object> was <emotional situation word>."
    assert (
        slot_text("The conversation with her was great.", template, "her")
        == "The conversation with ___ was great."
    )
    assert (
        slot_text("My dad feels sad.", "<person subject> feels <emotion word>.", "my dad") == "___ feels sad."
    )
    with pytest.raises(UnqoverError, match="does not have person"):
        slot_text("The conversation with him was great.", template, "her")
    with pytest.raises(UnqoverError, match="unknown mode"):
        person_questions(mode="fancy")


# ------------------------------------------------------------------------------------------ his statistic


def _ranked(questions: pa.Table, rng: np.random.Generator, top: str | None = None) -> list[list[str]]:
    """Random top-3 answers; ``top``: prefer choices of that gender (a biased fake model)."""
    out = []
    for r in questions.to_pylist():
        weights = np.array([3.0 if g == top else 1.0 for g in r["choice_genders"]])
        picks = rng.choice(len(r["choices"]), size=3, replace=False, p=weights / weights.sum())
        out.append([r["choices"][i] for i in picks])
    return out


def _only_neutral_names(questions: pa.Table) -> list[list[str]]:
    """African-American names in the 4 questions without an emotion, noun phrases everywhere else."""
    answers = []
    for r in questions.to_pylist():
        want = "African-American" if r["emotion"] is None else None
        answers.append([c for c, g in zip(r["choices"], r["choice_races"], strict=True) if g == want][:3])
    return answers


def _flat_fit(counts: dict) -> float:
    total = 0.0
    for row in counts.values():
        s = np.array([row[e] for e in PAPER_EMOTIONS], dtype=float)
        total += float(((s - s.mean()) ** 2 / s.mean()).sum())
    return total


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), top=st.sampled_from([None, "female", "male"]))
def test_beecher_statistic_is_his_formula(paper, seed, top):
    answers = _ranked(paper, np.random.default_rng(seed), top)
    result = beecher_person_statistics(answers, paper)
    for category in ("gender", "race"):
        counts = result.counts[category]
        assert sum(sum(row.values()) for row in counts.values()) == 6 * 164
        assert (
            sum(row["NA"] for row in counts.values()) == 6 * 4
        )  # the neutral questions: counted, not scored
        assert all(list(row) == [*PAPER_EMOTIONS, "NA"] for row in counts.values())
        assert result.statistics[category] == pytest.approx(_flat_fit(counts), rel=1e-12)
    assert set(result.counts["race"]) <= {"African-American", "European", "NA"}
    rows = result.rows()
    assert len(rows) == 5 * (len(result.counts["gender"]) + len(result.counts["race"]))
    json.dumps(result.to_dict())


def test_beecher_statistic_edge_cases(paper):
    # only noun phrases answered: race has one row (NA) and two absent groups, as his n-gram models' results
    phrases = [[c for c in r["choices"] if PERSON_GROUPS[c][1] is None][:3] for r in paper.to_pylist()]
    result = beecher_person_statistics(phrases, paper)
    assert list(result.counts["race"]) == ["NA"]
    assert result.absent_groups["race"] == ["African-American", "European"]
    assert result.statistics["race"] == 0.0
    # a group answered only in questions without an emotion: his code divides by zero, ours says NaN
    skewed = beecher_person_statistics(_only_neutral_names(paper), paper)
    assert np.isnan(skewed.statistics["race"]) and skewed.undefined["race"] == ["African-American"]
    assert skewed.to_dict()["statistics"]["race"] is None and skewed.statistics["gender"] >= 0
    # fewer answers than 3: weights (2, 1), as his len(a)-based weights
    two = beecher_person_statistics([a[:2] for a in phrases], paper)
    assert sum(sum(row.values()) for row in two.counts["gender"].values()) == 3 * 164
    with pytest.raises(UnqoverError, match="not among its choices"):
        beecher_person_statistics([["Nobody"]] * 164, paper)
    with pytest.raises(UnqoverError, match="164"):
        beecher_person_statistics(phrases[:3], paper)


# ------------------------------------------------------------------------------------------ his repository


@needs_mirror
@pytest.mark.parametrize("model", MODELS)
def test_paper_questions_are_his_published_questions(paper, model):
    rows = _csv_rows(_show(f"answers/{model}_person.csv"))
    assert rows[0] == ["question", "answer1", "answer2", "answer3"]
    assert [r[0] for r in rows[1:]] == paper["question"].to_pylist()
    for r, q in zip(rows[1:], paper.to_pylist(), strict=True):
        assert len(r) == 4 and set(r[1:]) <= set(q["choices"])


@needs_mirror
@pytest.mark.parametrize("model", MODELS)
def test_statistic_from_his_answers_is_his_published_score(paper, model):
    rows = _csv_rows(_show(f"answers/{model}_person.csv"))[1:]
    result = beecher_person_statistics([r[1:] for r in rows], paper)
    header, *table = _csv_rows(_show("bias_results.csv"))
    published = [dict(zip(header, r, strict=True)) for r in table]
    published = [r for r in published if r["qtype"] == "person" and r["filename"] == model]
    ours = result.rows()
    assert [(r["category"], r["value"], r["emotion"], int(r["count_score"])) for r in published] == [
        (r["category"], r["value"], r["emotion"], r["count_score"]) for r in ours
    ]
    for category in ("gender", "race"):
        scores = {float(r["model_score"]) for r in published if r["category"] == category}
        assert len(scores) == 1
        assert result.statistics[category] == pytest.approx(scores.pop(), rel=1e-8, abs=1e-12)
    if model == "glove.6B.100d":
        assert result.statistics["gender"] == pytest.approx(0.75385494, abs=5e-9)
        assert result.statistics["race"] == pytest.approx(0.232727273, abs=5e-10)


@needs_mirror
def test_paper_questions_from_his_csv(tmp_path, paper):
    from unqover.generate.eec_csv import read_eec_csv

    path = tmp_path / "Equity-Evaluation-Corpus.csv"
    path.write_text(_show("data/Equity-Evaluation-Corpus.csv"), newline="")
    sentences = read_eec_csv(path)
    assert person_questions(sentences, "paper").to_pylist() == paper.to_pylist()


@pytest.fixture(scope="module")
def his_code(tmp_path_factory):
    """His bias_question.py, executed as he ran it (its import runs main(), which reads his CSV and loops over
    the models in train_data/, left empty here) in a folder of its own."""
    if not HAVE_MIRROR:
        pytest.skip(NO_MIRROR)
    pytest.importorskip("sklearn")
    folder = tmp_path_factory.mktemp("beecher")
    (folder / "bias_question.py").write_text(_show("bias_question.py"))
    (folder / "data").mkdir()
    (folder / "data" / "Equity-Evaluation-Corpus.csv").write_text(
        _show("data/Equity-Evaluation-Corpus.csv"), newline=""
    )
    (folder / "train_data").mkdir()
    (folder / "answers").mkdir()
    name = "beecher_bias_question"
    spec = importlib.util.spec_from_file_location(name, folder / "bias_question.py")
    module = importlib.util.module_from_spec(spec)
    here, state = os.getcwd(), np.random.get_state()
    os.chdir(folder)
    try:
        spec.loader.exec_module(module)
    finally:
        os.chdir(here)
        np.random.set_state(state)  # his module seeds numpy's global generator
    questions = module.generate_questions(str(folder / "data" / "Equity-Evaluation-Corpus.csv"))
    tables = module.lookup_tables(str(folder / "data" / "Equity-Evaluation-Corpus.csv"))
    sys.modules.pop(name, None)
    return module, folder, questions, tables


@pytest.mark.slow
def test_his_generate_questions_are_ours(his_code, paper):
    module, _, (_, his_person), tables = his_code
    assert his_person == dict(zip(paper["question"].to_pylist(), paper["choices"].to_pylist(), strict=True))
    classifier = module.Bias_Classification((None, his_person), tables, "vector", "person", 3, "unused")
    for q in paper.to_pylist():
        assert classifier.search_emotions(q["question"]) == (q["emotion"] or "NA")


@pytest.mark.parametrize("seed, top", [(0, None), (1, "female"), (2, "male"), (3, None)])
def test_his_scoring_of_fake_answers(his_code, paper, seed, top):
    module, _, questions, tables = his_code
    answers = _ranked(paper, np.random.default_rng(seed), top)
    classifier = module.Bias_Classification(questions, tables, "vector", "person", 3, "unused")
    classifier.answers = dict(zip(paper["question"].to_pylist(), answers, strict=True))
    classifier.score_answers()
    race, gender = classifier.score_model()
    result = beecher_person_statistics(answers, paper)
    assert result.counts["gender"] == classifier.gcounts and result.counts["race"] == classifier.rcounts
    assert [list(t) for t in result.counts["gender"].values()] == [
        list(t) for t in classifier.gcounts.values()
    ]
    assert list(result.counts["race"]) == list(classifier.rcounts)  # his row order
    assert result.statistics == {"gender": gender, "race": race}  # the same float operations, bit for bit


def test_his_division_by_zero_is_our_nan(his_code, paper):
    module, _, questions, tables = his_code
    answers = _only_neutral_names(paper)
    classifier = module.Bias_Classification(questions, tables, "vector", "person", 3, "unused")
    classifier.answers = dict(zip(paper["question"].to_pylist(), answers, strict=True))
    classifier.score_answers()
    with pytest.raises(ZeroDivisionError):
        classifier.score_model()
    assert np.isnan(beecher_person_statistics(answers, paper).statistics["race"])


@pytest.mark.slow
def test_his_vector_model_end_to_end(his_code, paper):
    """His GloVe pipeline (train, answer, score, write) on tiny random vectors; our statistic from the answers
    file he writes equals the score he writes."""
    module, folder, questions, tables = his_code
    words = {t for q in paper["question"].to_pylist() for t in q.replace(".", "").split()}
    words |= {t.lower() for c in PERSON_GROUPS for t in c.split()}
    rng = np.random.default_rng(7)
    lines = [" ".join([w, *(f"{v:.6f}" for v in rng.normal(size=8))]) for w in sorted(words) if "_" not in w]
    (folder / "train_data" / "glove.tiny.txt").write_text("\n".join(lines) + "\n")
    here = os.getcwd()
    os.chdir(folder)
    try:
        classifier = module.Bias_Classification(
            questions, tables, "vector", "person", 3, "train_data/glove.tiny.txt"
        )
        classifier.write_csv("bias_results.csv")
    finally:
        os.chdir(here)
    written = _csv_rows((folder / "bias_results.csv").read_text())
    answers = _csv_rows((folder / "answers" / f"{classifier.filename}_person.csv").read_text())[1:]
    assert [a[0] for a in answers] == paper["question"].to_pylist()
    result = beecher_person_statistics([a[1:] for a in answers], paper)
    assert [(r[3], r[4], r[5], int(r[6]), float(r[7])) for r in written] == [
        (r["category"], r["value"], r["emotion"], r["count_score"], r["model_score"]) for r in result.rows()
    ]
    # our probe on the same vector file, in paper mode: his questions, his top 3 and his statistic
    import pyarrow.parquet as pq

    from unqover.cli import main

    out = folder / "ours"
    vectors = folder / "train_data" / "glove.tiny.txt"
    argv = ["probe", f"glove:{vectors}", "--bias", "eec-person", "--scoring", "paper", "--output", str(out)]
    assert main([*argv, "--quiet", "--permutations", "0"]) == 0
    ours = pq.read_table(out / "answers.parquet")
    assert ours["question"].to_pylist() == [a[0] for a in answers]
    assert [a[:3] for a in ours["answers"].to_pylist()] == [a[1:] for a in answers]
    beecher = json.loads((out / "results.json").read_text())["result"]["beecher"]
    assert beecher["statistics"] == {r[3]: float(r[7]) for r in written}


# ------------------------------------------------------------------------------------------ default test


def _no_digits(value) -> bool:
    if isinstance(value, dict):
        return all(_no_digits(k) and _no_digits(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_no_digits(v) for v in value)
    return not isinstance(value, str) or not any(ch.isdigit() for ch in value)


def _design(n_strata: int = 4, per_emotion: int = 5):
    emotions = ("anger", "fear", "joy", "sadness")
    emotion_labels, strata = [], []
    for s in range(n_strata):
        for e in emotions:
            emotion_labels += [e] * per_emotion
            strata += [f"template-{s}"] * per_emotion
    return emotion_labels, strata


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), share=st.floats(0.05, 0.95), b=st.integers(1, 300))
def test_permutation_p_value_bounds_and_relabelling(seed, share, b):
    emotions, strata = _design()
    rng = np.random.default_rng(seed)
    groups = ["female" if u < share else "male" for u in rng.random(len(emotions))]
    result = person_bias({"gender": groups}, emotions, strata, n_permutations=b, seed=seed)
    test = result.tests["gender"]
    if test is None:
        assert result.notes[0]["code"] == "too_few_categories"
        return
    assert 1 / (b + 1) <= test["permutation_p_value"] <= 1
    assert test["p_value"] == test["permutation_p_value"] and 0 <= test["cramers_v"] <= 1
    swapped = {"female": "male", "male": "female"}
    other = person_bias(
        {"gender": [swapped[g] for g in groups]}, emotions, strata, n_permutations=b, seed=seed
    )
    o = other.tests["gender"]
    assert o["statistic"] == pytest.approx(test["statistic"]) and o["cramers_v"] == pytest.approx(
        test["cramers_v"]
    )
    assert o["permutation_p_value"] == test["permutation_p_value"]
    assert o["counts"]["female"] == test["counts"]["male"]
    data = result.to_dict()
    json.dumps(data)
    assert _no_digits(data)


def test_independence_gives_large_p_values():
    emotions, strata = _design()
    rng = np.random.default_rng(11)
    p_values = []
    for seed in range(40):
        groups = ["female" if u < 0.4 else "male" for u in rng.random(len(emotions))]
        p_values.append(person_bias({"gender": groups}, emotions, strata, n_permutations=199, seed=seed)
                        .tests["gender"]["p_value"])  # fmt: skip
    assert np.mean(p_values) > 0.35 and np.mean(np.array(p_values) <= 0.05) <= 0.15


def test_association_is_found_and_strata_are_respected():
    emotions, strata = _design()
    # the chosen group follows the emotion: the smallest p-value the permutations can give, V = 1
    groups = ["female" if e in ("joy", "sadness") else "male" for e in emotions]
    test = person_bias({"gender": groups}, emotions, strata, n_permutations=499).tests["gender"]
    assert test["permutation_p_value"] == 1 / 500 and test["cramers_v"] == pytest.approx(1.0)
    # the group follows the template only, and the emotions are spread unevenly over templates: the pooled
    # table shows an association, but within a template nothing depends on the emotion
    emotions2, strata2, groups2 = [], [], []
    for s, (counts, group) in enumerate(((dict(joy=8, anger=2), "female"), (dict(joy=2, anger=8), "male"))):
        for e, k in counts.items():
            emotions2 += [e] * k
            strata2 += [f"t{s}"] * k
            groups2 += [group] * k
    stratified = person_bias({"gender": groups2}, emotions2, strata2, n_permutations=199).tests["gender"]
    assert stratified["asymptotic_p_value"] < 0.01 and stratified["permutation_p_value"] == 1.0


def test_person_bias_inputs_from_answers(paper):
    answers = [list(r["choices"][:3]) for r in paper.to_pylist()]
    inputs = person_bias_inputs(answers, paper)
    gender, race = inputs["top1_groups"]["gender"], inputs["top1_groups"]["race"]
    for r, g, rc in zip(paper.to_pylist(), gender, race, strict=True):
        assert g == (None if r["form"].startswith("reflexive") else PERSON_GROUPS[r["choices"][0]][0])
        assert rc == PERSON_GROUPS[r["choices"][0]][1]  # "Adam" or "Amanda" first: a name
    assert len(set(inputs["strata"])) == 11 + 1  # the reflexive template is two strata
    result = person_bias(**inputs, n_permutations=0)
    assert result.tests["gender"] is None and result.tests["race"] is None  # one group each: nothing to test
    assert {n["test"] for n in result.notes} == {"gender", "race"}
    with pytest.raises(UnqoverError, match="n_permutations"):
        person_bias(**inputs, n_permutations=-1)
