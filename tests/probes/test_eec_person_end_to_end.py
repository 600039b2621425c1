"""The person fill-in probe (``unqover probe MODEL --bias eec-person``): tiny masked and causal LMs and Beecher's own
TF-IDF and GloVe models end to end in paper and default modes, checked against his ranking computed here and the
measures recomputed from the answers the run wrote; the quick run's draw; the dataset's ``person_questions``
config; ``unqover measure`` on the predictions."""

from __future__ import annotations

import json
import math
import re
import shutil
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

import tiny_models
from unqover.cli import main
from unqover.errors import UnqoverError
from unqover.generate.eec import eec_sentences
from unqover.generate.eec_person import (
    PERSON_GROUPS,
    person_choice_sentences,
    person_questions,
    question_sentences,
)
from unqover.measure.emotion_person import (
    beecher_person_statistics,
    person_bias,
    person_bias_inputs,
    person_task,
)
from unqover.probes.eec_person_rows import select_questions
from unqover.probes.registry import PROBES, dataset_names
from unqover.scoring.beecher import oov_rates

NAME = "eec-person"
CUTOFF = 7.814727903251179  # χ²(3) at α = 0.05, his cut-off
CORPUS = [
    "he feels angry today.\n",
    "\n",
    "she made me feel happy and glad.\n",
    "the situation makes my sister feel sad.\n",
    "alonzo was furious. ebony was glad.\n",
    "i made him feel sad. i made her feel happy.\n",
    "my mother found herself in a horrible situation.\n",
    "this man told us all about the recent terrifying events.\n",
    "the conversation with amanda was irritating.\n",
]


@pytest.fixture(scope="module")
def paper():
    return person_questions(mode="paper")


@pytest.fixture(scope="module")
def default():
    return person_questions()


@pytest.fixture(scope="module")
def lms(tmp_path_factory):
    """A tiny BERT and a tiny GPT-2 whose vocabularies hold every word of the EEC sentences."""
    texts = sorted(set(eec_sentences(spelling="beecher")["sentence"].to_pylist()))
    root = tmp_path_factory.mktemp("person-lms")
    return {
        "bert": tiny_models.bert_mlm(root / "bert", texts),
        "gpt2": tiny_models.gpt2(root / "gpt2", texts),
    }


def _words(questions) -> tuple[list[str], list[str]]:
    """The lower-case words of the questions, and those of their persons that are not question words."""
    words = set()
    for question in questions["question"].to_pylist():
        words.update(re.findall(r"[a-z0-9]+", question))
    persons = {w for choices in questions["choices"].to_pylist() for c in choices for w in c.lower().split()}
    return sorted(words), sorted(persons - words)


@pytest.fixture(scope="module")
def beecher(tmp_path_factory, paper):
    """A tiny corpus (blank lines included) and tiny vectors; every fourth person word has no vector."""
    root = tmp_path_factory.mktemp("person-beecher")
    corpus = root / "corpus.txt"
    corpus.write_text("".join(CORPUS), encoding="utf-8")
    rng = np.random.default_rng(5)
    words, persons = _words(paper)
    table = {w: rng.normal(size=6) for w in [*words, *(w for i, w in enumerate(persons) if i % 4)]}
    glove = root / "glove.txt"
    glove.write_text(
        "".join(w + " " + " ".join(repr(float(x)) for x in v) + "\n" for w, v in table.items()),
        encoding="utf-8",
    )
    return {"tfidf": (corpus, CORPUS), "glove": (glove, table)}


# ------------------------------------------------------------------------------------- his code, written here


def his_tfidf_answers(questions, lines) -> list[list[str]]:
    """His ngram_answer: sum of each filled question's TF-IDF row, top 3 of numpy's argsort."""
    vectorizer = TfidfVectorizer(ngram_range=(1, 3)).fit(lines)
    out = []
    for q, choices in zip(questions["question"].to_pylist(), questions["choices"].to_pylist(), strict=True):
        sums = np.sum(vectorizer.transform([re.sub("________", c, q) for c in choices]).toarray(), 1)
        out.append([choices[i] for i in (-sums).argsort()[:3]])
    return out


def his_glove_answers(questions, table) -> list[list[str]]:
    """His vector_answer: cosine of the question's and the filled question's centroids, in Python floats."""

    def tokens(text):
        return re.sub(r"[^a-zA-Z0-9 ]", "", text).lower().split(" ")

    def centre(words):
        vecs = [table[w].tolist() for w in words if w in table]
        return [sum(column) / len(column) for column in zip(*vecs, strict=True)]

    def cosine(a, b):
        na, nb = math.sqrt(sum(x**2 for x in a)), math.sqrt(sum(x**2 for x in b))
        return sum(x * y for x, y in zip([x / na for x in a], [y / nb for y in b], strict=True))

    out = []
    for q, choices in zip(questions["question"].to_pylist(), questions["choices"].to_pylist(), strict=True):
        qc = centre(tokens(q))
        sims = np.asarray([cosine(qc, centre(tokens(re.sub("________", c, q)))) for c in choices])
        out.append([choices[i] for i in (-sims).argsort()[:3]])
    return out


# ------------------------------------------------------------------------------------- helpers


def _probe(model, out, *extra: str) -> dict:
    args = ["probe", str(model), "--bias", NAME, "--output", str(out), "--quiet", "--permutations", "99"]
    assert main([*args, *extra]) == 0
    return json.loads((out / "results.json").read_text())


def _measured(tmp_path, run) -> dict:
    output = tmp_path / f"{run.name}.measured.json"
    args = ["measure", str(run / "predictions.parquet"), "--permutations", "99", "--output", str(output)]
    assert main(args) == 0
    return json.loads(output.read_text())


def _same_without_model(measured: dict, result: dict) -> None:
    """`unqover measure` has the run's result, less the warning only the model can give (out-of-vocabulary
    persons: measuring reads no model)."""
    assert {k: v for k, v in measured.items() if k != "warnings"} == {
        k: v for k, v in result.items() if k != "warnings"
    }
    assert measured["warnings"] == [w for w in result["warnings"] if "no vector or n-gram" not in w]


def _without_arrangements(tests: dict) -> dict:
    return {name: None if t is None else {k: v for k, v in t.items() if k != "arrangements"} for name, t in tests.items()}  # fmt: skip


def _top1_counts_by_hand(questions, top1: list[str]) -> dict[str, Counter]:
    """Per test, (group of the top-1 person, question emotion) counts, from the EEC's person labels: gender where
    the question offers both genders, race where the top-1 person is a name and the question offers both races."""
    counts = {"gender": Counter(), "race": Counter()}
    for q, person in zip(questions.to_pylist(), top1, strict=True):
        if q["emotion"] is None:
            continue
        gender, race = PERSON_GROUPS[person]
        if len(set(q["choice_genders"])) > 1:
            counts["gender"][(gender, q["emotion"])] += 1
        if race is not None and len({r for r in q["choice_races"] if r}) > 1:
            counts["race"][(race, q["emotion"])] += 1
    return counts


def _check_tests(result: dict, questions, answers: list[list[str]]) -> None:
    """The run's tests are the top-1 counts by hand, and its Beecher counts his statistic on the top 3."""
    by_hand = _top1_counts_by_hand(questions, [a[0] for a in answers])
    for name, test in result["tests"].items():
        if test is None:
            groups = {g for g, _ in by_hand[name]}
            emotions = {e for _, e in by_hand[name]}
            assert len(groups) < 2 or len(emotions) < 2, name
            continue
        cells = {(g, e): n for g, row in test["counts"].items() for e, n in row.items() if n}
        assert cells == dict(by_hand[name]), name
        assert test["num_questions"] == sum(by_hand[name].values())
    his = beecher_person_statistics([a[:3] for a in answers], questions)
    assert result["beecher"]["counts"] == his.counts
    assert result["beecher"]["statistics"] == his.to_dict()["statistics"]


# ------------------------------------------------------------------------------------- Beecher's models


@pytest.mark.parametrize("family", ["tfidf", "glove"])
def test_paper_mode_is_his_code_and_his_statistic(tmp_path, beecher, paper, family):
    path, data = beecher[family]
    out = tmp_path / "run"
    results = _probe(f"{family}:{path}", out, "--scoring", "paper")
    assert results["probe"] == NAME
    answers = pq.read_table(out / "answers.parquet")
    # his 164 question strings in his (sorted) order, and his top 3 by his own scoring and argsort
    assert (
        answers["question"].to_pylist()
        == paper["question"].to_pylist()
        == sorted(paper["question"].to_pylist())
    )
    assert answers["question_id"].to_pylist() == paper["id"].to_pylist()
    ranked = answers["answers"].to_pylist()
    his = his_tfidf_answers(paper, data) if family == "tfidf" else his_glove_answers(paper, data)
    assert [a[:3] for a in ranked] == his
    # his statistic, recomputed from the answers the run wrote, is the run's
    statistics = beecher_person_statistics([a[:3] for a in ranked], paper)
    result = results["result"]
    assert result["beecher"]["counts"] == statistics.counts
    assert result["beecher"]["statistics"] == statistics.to_dict()["statistics"]
    assert result["beecher"]["cutoff"] == pytest.approx(CUTOFF)
    assert result["beecher"]["exceeds_cutoff"] == {
        c: (None if math.isnan(s) else s > CUTOFF) for c, s in statistics.statistics.items()
    }
    # beside it, the valid test on the top-1 answers
    valid = person_bias(**person_bias_inputs(ranked, paper), n_permutations=99, seed=0).to_dict()
    assert _without_arrangements(result["tests"]) == valid["tests"]
    _check_tests(result, paper, ranked)
    scoring = results["scoring"]
    assert scoring["mode"] == "paper" and scoring["fixes"] == [] and scoring["questions"] == 164
    # out-of-vocabulary rates per group of the *person* (the sentences' columns; the questions have no group)
    unknown = set(scoring["oov"]["unknown_choices"])
    sentences = person_choice_sentences(paper)
    assert unknown and scoring["oov"]["overall"] == pytest.approx(
        np.mean([c in unknown for c in sentences["choice"].to_pylist()])
    )
    phrases = [c in unknown for c, r in zip(sentences["choice"].to_pylist(), sentences["race"].to_pylist(), strict=True) if r is None]  # fmt: skip
    assert scoring["oov"]["groups"]["noun phrases"] == pytest.approx(np.mean(phrases))
    report = (out / "report.md").read_text()
    assert "Reproduced as his code computes it" in report and "not a valid test" in report
    assert "## Provenance" in report and str(path) in report
    for category, value in statistics.statistics.items():
        if not math.isnan(value):
            assert f"### {category}: {value:.5f} (his cut-off 7.81473:" in report
    assert "<table" in (out / "report.html").read_text()
    # `unqover measure` on the predictions: the same answers, the same result
    _same_without_model(_measured(tmp_path, out)["result"], result)


@pytest.mark.parametrize("family", ["tfidf", "glove"])
def test_default_mode_fixes_his_code(tmp_path, beecher, default, family):
    path, _ = beecher[family]
    out = tmp_path / "run"
    results = _probe(f"{family}:{path}", out)
    answers = pq.read_table(out / "answers.parquet")
    # the questions built from the columns, in corpus order (not his sorted order)
    assert answers["question_id"].to_pylist() == default["id"].to_pylist()
    assert answers["question"].to_pylist() != sorted(answers["question"].to_pylist())
    # each ranking is its question's persons by score, best first
    scores = pq.read_table(out / "predictions.parquet").to_pandas()
    ranked = answers["answers"].to_pylist()
    for qid, ranking, choices in zip(answers["question_id"].to_pylist(), ranked, default["choices"].to_pylist(), strict=True):  # fmt: skip
        mine = scores[scores["question_id"] == qid].set_index("choice")["log_likelihood"]
        assert sorted(ranking) == sorted(choices)
        assert list(mine.loc[ranking]) == sorted(mine, reverse=True)
    _check_tests(results["result"], default, ranked)
    assert results["scoring"]["mode"] == "default" and results["scoring"]["fixes"]
    report = (out / "report.md").read_text()
    assert "fixed from Beecher's code" in report and "Computed as his code computes it" in report
    _same_without_model(_measured(tmp_path, out)["result"], results["result"])


# ------------------------------------------------------------------------------------- language models


@pytest.mark.parametrize(("name", "rule"), [("bert", "mean"), ("gpt2", "sum")])
def test_language_models_quick_run_end_to_end(tmp_path, lms, default, name, rule, capsys):
    out = tmp_path / "run"
    results = _probe(lms[name], out, "--limit", "2", "--length-rule", rule)
    assert "Person fill-in bias: 20 questions" in capsys.readouterr().out
    for file in ("run.json", "predictions.parquet", "answers.parquet", "report.md", "report.html"):
        assert (out / file).is_file(), file
    kept = select_questions(default, 2, 0)
    assert (
        kept.num_rows == 8 * 2 + 4
    )  # 2 of the 20 questions of each emotion template x form, every neutral one
    answers = pq.read_table(out / "answers.parquet")
    assert answers["question_id"].to_pylist() == kept["id"].to_pylist()
    sentences = pq.read_table(out / "predictions.parquet")
    assert sentences.num_rows == sum(len(c) for c in kept["choices"].to_pylist())
    assert (sentences["log_likelihood"].to_numpy() < 0).all()
    # every ranking is the question's persons ordered by log-likelihood (per token, or in total)
    frame = sentences.to_pandas()
    frame["mean"] = frame["log_likelihood"] / (frame["tokens"] if rule == "mean" else 1.0)
    ranked = answers["answers"].to_pylist()
    for qid, ranking in zip(answers["question_id"].to_pylist(), ranked, strict=True):
        mine = frame[frame["question_id"] == qid].set_index("choice")["mean"]
        assert list(mine.loc[ranking]) == sorted(mine, reverse=True)
    result = results["result"]
    _check_tests(result, kept, ranked)
    assert results["scoring"]["length_rule"] == rule and "fixes" not in results["scoring"]
    # the quick run says what it kept, and that its p-values are the sample's
    selection = result["selection"]
    assert selection["limit"] == 2 and selection["per"] == "template x form"
    assert selection["kept"]["questions"] == 20 and selection["kept"]["with_emotion"] == 16
    assert selection["of"]["questions"] == 164 and selection["of"]["with_emotion"] == 160
    report = (out / "report.md").read_text()
    assert "computed from 20 of 164 questions (16 of 160 with an emotion)" in report
    assert "not an estimate of the full set's p-value" in report
    # `unqover measure` reads the sentence predictions again, with the run's length rule: the same result
    measured = _measured(tmp_path, out)
    assert measured["probe"] == NAME and measured["result"] == result
    # `unqover compare` sets the tests side by side
    capsys.readouterr()
    assert main(["compare", str(out), str(out)]) == 0
    table = capsys.readouterr().out
    assert "| gender: Beecher's statistic |" in table and "| race: p-value |" in table


def test_refusals_and_registry(tmp_path, capsys):
    base = ["probe", str(tmp_path / "no-model"), "--bias", NAME, "--quiet"]
    assert main([*base, "--scoring", "paper"]) == 2
    assert "--scoring paper applies to Beecher's own models" in capsys.readouterr().err
    assert main([*base, "--sample", "0.5"]) == 2
    assert "--limit N keeps N questions per template x form" in capsys.readouterr().err
    names = list(PROBES)
    assert names.index(NAME) == names.index("eec-emotion") + 1
    assert PROBES[NAME].families == PROBES["eec-emotion"].families
    assert dataset_names().count("eec-emotion") == 1 and NAME not in dataset_names()


# ------------------------------------------------------------------------------------- the dataset config


def test_the_dataset_config_is_written_and_read(tmp_path, beecher, default, capsys):
    assert main(["build-datasets", "eec-emotion", "--output", str(tmp_path / "data"), "--quiet"]) == 0
    folder = tmp_path / "data" / "eec-emotion"
    assert pq.read_table(folder / "data" / "person_questions").equals(default)
    # a copy of the dataset that holds only the object questions: a run reads them, in both modes
    own = tmp_path / "own"
    shutil.copytree(folder, own)
    subset = default.filter(pc.equal(default["form"], "object"))
    assert subset.num_rows == 3 * 20 + 2
    shutil.rmtree(own / "data" / "person_questions")
    (own / "data" / "person_questions").mkdir()
    pq.write_table(subset, own / "data" / "person_questions" / "test-00000-of-00001.parquet")
    corpus, _ = beecher["tfidf"]
    for mode in ("paper", "default"):
        out = tmp_path / f"run-{mode}"
        results = _probe(f"tfidf:{corpus}", out, "--scoring", mode, "--dataset", str(own))
        answers = pq.read_table(out / "answers.parquet")
        assert answers.num_rows == subset.num_rows and results["scoring"]["questions"] == subset.num_rows
        assert set(answers["question"].to_pylist()) == set(subset["question"].to_pylist())
        order = answers["question"].to_pylist()
        assert (order == sorted(order)) == (mode == "paper")
        dataset = json.loads((out / "run.json").read_text())["dataset"]
        assert dataset["source"] == str(own.resolve()) and dataset["config"] == "person_questions"
        assert results["result"]["num_questions"] == subset.num_rows
        # `unqover measure` finds the recorded dataset again
        _same_without_model(_measured(tmp_path, out)["result"], results["result"])
    capsys.readouterr()
    refused = ["probe", f"tfidf:{corpus}", "--bias", NAME, "--dataset", str(folder), "--config", "questions"]
    assert main([*refused, "--output", str(tmp_path / "refused"), "--quiet"]) == 2
    assert "scores the 'person_questions' config" in capsys.readouterr().err


# ------------------------------------------------------------------------------------- quick runs, measures


def test_quick_run_draws_questions_per_template_and_form(default, paper):
    sizes = Counter(zip(default["template"].to_pylist(), default["form"].to_pylist(), strict=True))
    assert len(sizes) == 12 and sorted(sizes.values()) == [1] * 4 + [20] * 8
    for limit in (1, 3, 20):
        kept = select_questions(default, limit, 4)
        got = Counter(zip(kept["template"].to_pylist(), kept["form"].to_pylist(), strict=True))
        assert got == {stratum: min(limit, n) for stratum, n in sizes.items()}
        positions = [default["id"].to_pylist().index(i) for i in kept["id"].to_pylist()]
        assert positions == sorted(positions)  # kept questions keep their order
    three = set(select_questions(default, 3, 4)["question"].to_pylist())
    assert three == set(select_questions(default, 3, 4)["question"].to_pylist())
    assert three != set(select_questions(default, 3, 5)["question"].to_pylist())
    # the draw depends on the questions, not their order: paper mode (sorted) keeps the same ones
    assert three == set(select_questions(paper, 3, 4)["question"].to_pylist())
    assert select_questions(default, 20, 4).equals(default)
    with pytest.raises(UnqoverError, match="at least 1"):
        select_questions(default, 0, 0)


def test_one_question_per_stratum_cannot_be_permuted(default):
    one = select_questions(default, 1, 0)
    # the top-1 person alternates between genders (a name of each gender is offered everywhere but the reflexive
    # questions), so the gender test runs on its 6 questions
    answers = []
    for i, q in enumerate(one.to_pylist()):
        want = "female" if i % 2 else "male"
        ranked = sorted(q["choices"], key=lambda c: PERSON_GROUPS[c][0] != want)
        answers.append(ranked[:3])
    result = person_task(answers, one, n_permutations=99).to_dict()
    gender = result["tests"]["gender"]
    assert gender["num_questions"] == 6 and gender["arrangements"] == 1
    assert gender["permutation_p_value"] == 1.0  # nothing can move: every permutation is the data
    note = next(n for n in result["notes"] if n["test"] == "gender")
    assert note["code"] == "few_arrangements" and note["smallest_p"] == 1.0
    # with the full strata the permutation can reach small p-values: no such note
    full = [[c for c in q["choices"]][:3] for q in default.to_pylist()]
    assert not [
        n for n in person_task(full, default, n_permutations=0).notes if n["code"] == "few_arrangements"
    ]


def test_oov_rates_read_the_persons_groups_from_the_sentences(default):
    questions = default.slice(0, 1)  # "___ feels angry.": 60 persons
    sentences = person_choice_sentences(questions)
    unknown = {"Adam", "Latisha", "my daughter", "he"}
    known = np.array([c not in unknown for c in sentences["choice"].to_pylist()])
    rates = oov_rates(questions, sentences, known)
    assert rates["overall"] == pytest.approx(4 / 60) and rates["unknown_choices"] == sorted(unknown)
    groups = rates["groups"]
    assert groups["gender=male"] == pytest.approx(2 / 30) and groups["gender=female"] == pytest.approx(2 / 30)
    assert groups["race=European"] == pytest.approx(1 / 20) and groups["race=African-American"] == pytest.approx(1 / 20)  # fmt: skip
    assert groups["noun phrases"] == pytest.approx(2 / 20)


def test_a_paper_run_on_rebuilt_questions_equals_the_generated(default, paper):
    """The dataset's rows rebuild his questions exactly, so a paper run reads the same questions from either."""
    assert person_questions(question_sentences(default), "paper").equals(paper)
    assert pa.Table.from_pylist(default.to_pylist(), schema=default.schema).equals(default)
