"""Beecher's TF-IDF and GloVe models (unqover.scoring.beecher): paper mode against straightforward computations,
each quirk of his code in paper mode and its fix in default mode, and clear errors for bad inputs."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pyarrow.parquet as pq
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from unqover.errors import UnqoverError
from unqover.generate.eec import choice_sentences, eec_questions
from unqover.scoring.beecher import load_beecher_model, oov_rates, paper_ranking
from unqover.scoring.beecher_glove import UNKNOWN_SCORE, GloveVectors
from unqover.scoring.beecher_tfidf import TfidfSentenceModel

CORPUS = [
    "alonzo feels angry today.\n",
    "\n",
    "i made amanda feel happy and glad.\n",
    "the situation makes my sister feel sad.\n",
    "\n",
    "\n",
    "he found himself in a horrible situation.\n",
    "a conversation with alonzo was annoying.\n",
    "amanda feels happy. alonzo feels angry.\n",
]

WORDS = [
    "alonzo",
    "amanda",
    "feels",
    "feel",
    "angry",
    "happy",
    "glad",
    "sad",
    "the",
    "situation",
    "makes",
    "my",
    "sister",
    "made",
    "i",
    "in",
    "a",
    "horrible",
    "he",
    "found",
    "himself",
]


def write_corpus(tmp_path, lines=CORPUS, name="corpus.txt"):
    path = tmp_path / name
    path.write_text("".join(lines), encoding="utf-8")
    return path


def vectors(dim=5, seed=0, words=WORDS):
    rng = np.random.default_rng(seed)
    return {w: rng.normal(size=dim) for w in words}


def write_glove(tmp_path, table, name="glove.txt", extra=""):
    path = tmp_path / name
    lines = [w + " " + " ".join(repr(float(x)) for x in v) for w, v in table.items()]
    path.write_text("\n".join(lines) + "\n" + extra, encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------------- TF-IDF


def test_tfidf_paper_scores_equal_sklearn_row_sums(tmp_path):
    model = TfidfSentenceModel.from_path(write_corpus(tmp_path), mode="paper")
    sentences = ["alonzo feels angry.", "alonzo feels happy.", "amanda feels glad.", "nobody knows."]
    reference = TfidfVectorizer(ngram_range=(1, 3)).fit(CORPUS)
    expected = np.sum(reference.transform(sentences).toarray(), 1)
    assert np.array_equal(model.sentence_scores(sentences), expected)
    assert model.sentence_scores(["nobody knows."])[0] == 0.0


def test_tfidf_paper_counts_blank_lines_as_documents_default_does_not(tmp_path):
    with_blanks = write_corpus(tmp_path, CORPUS, "a.txt")
    without = write_corpus(tmp_path, [line for line in CORPUS if line.strip()], "b.txt")
    paper_a = TfidfSentenceModel.from_path(with_blanks, mode="paper")
    paper_b = TfidfSentenceModel.from_path(without, mode="paper")
    assert paper_a.documents == len(CORPUS) and paper_a.blank_documents == 3
    assert not np.allclose(paper_a.vectorizer.idf_, paper_b.vectorizer.idf_)
    default_a = TfidfSentenceModel.from_path(with_blanks)
    default_b = TfidfSentenceModel.from_path(without)
    assert default_a.documents == len(CORPUS) - 3
    assert np.array_equal(default_a.vectorizer.idf_, default_b.vectorizer.idf_)


def test_tfidf_one_letter_tokens_dropped_in_paper_kept_in_default(tmp_path):
    path = write_corpus(tmp_path)
    paper = TfidfSentenceModel.from_path(path, mode="paper")
    default = TfidfSentenceModel.from_path(path)
    assert "a" not in paper.vectorizer.vocabulary_ and "i" not in paper.vectorizer.vocabulary_
    assert "in horrible situation" in paper.vectorizer.vocabulary_  # "a" never was there
    assert {"a", "i", "in a horrible"} <= set(default.vectorizer.vocabulary_)


def test_tfidf_default_is_the_raw_tfidf_sum_and_unknown_choices_rank_last(tmp_path):
    model = TfidfSentenceModel.from_path(write_corpus(tmp_path))
    sentences = ["alonzo feels angry.", "alonzo feels happy.", "alonzo feels zzz.", "alonzo feels qqq."]
    reference = TfidfVectorizer(ngram_range=(1, 3), token_pattern=r"(?u)\b\w+\b", norm=None)
    reference.fit([line for line in CORPUS if line.strip()])
    expected = reference.transform(sentences).toarray().sum(1)
    got = model.sentence_scores(sentences)
    assert np.allclose(got, expected, rtol=1e-12)
    assert got[2] == got[3] < min(got[0], got[1])
    assert model.known(["angry", "zzz"]).tolist() == [True, False]


def test_tfidf_folder_of_text_files_is_one_corpus(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "1.txt").write_text("".join(CORPUS[:4]), encoding="utf-8")
    (folder / "2.txt").write_text("".join(CORPUS[4:]), encoding="utf-8")
    (folder / "notes.md").write_text("ignored words here\n", encoding="utf-8")
    loaded, _ = load_beecher_model(f"tfidf:{folder}", "paper")
    single = TfidfSentenceModel.from_path(write_corpus(tmp_path), mode="paper")
    assert np.array_equal(loaded.model.vectorizer.idf_, single.vectorizer.idf_)
    assert loaded.provenance()["files"] == 2 and len(loaded.sha256) == 64


# ---------------------------------------------------------------------------------------------- GloVe


def centroid(table, text):
    tokens = re.sub(r"[^a-zA-Z0-9 ]", "", text).lower().split(" ")
    return np.mean([table[t] for t in tokens if t in table], axis=0)


def cosine(a, b):
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_glove_paper_score_is_cosine_of_question_and_sentence_centroids(tmp_path):
    table = vectors()
    model = GloveVectors.from_path(write_glove(tmp_path, table), mode="paper")
    question = "alonzo feels ________."
    sentences = ["alonzo feels angry.", "alonzo feels happy.", "alonzo feels zzz."]
    got = model.scores([question] * 3, sentences, ["angry", "happy", "zzz"])
    expected = [cosine(centroid(table, question), centroid(table, s)) for s in sentences]
    assert np.allclose(got, expected, rtol=0, atol=1e-12)
    assert abs(got[2] - 1.0) < 1e-12  # the unknown choice: the sentence's centroid is the question's
    ranked = paper_ranking(["q"], ["q"] * 3, ["angry", "happy", "zzz"], got)
    assert ranked.answers[0][0] == "zzz"


def test_glove_default_scores_the_choice_vector_and_never_ranks_unknown_first(tmp_path):
    table = vectors()
    model = GloveVectors.from_path(write_glove(tmp_path, table))
    question = "alonzo feels ________."
    got = model.scores([question] * 3, ["x"] * 3, ["angry", "happy", "zzz"])
    centre = np.mean([table["alonzo"], table["feels"]], axis=0)
    assert got[0] == pytest.approx(cosine(centre, table["angry"]), abs=1e-12)
    assert got[1] == pytest.approx(cosine(centre, table["happy"]), abs=1e-12)
    assert got[2] == UNKNOWN_SCORE
    assert model.known(["angry", "zzz"]).tolist() == [True, False]


def test_glove_paper_reader_rules(tmp_path):
    table = vectors(words=["alonzo", "feels"])
    extra = "Alonzo 9 9 9 9 9\nfeels 1 2 x 4 5\n. . . 1 2 3 4 5\n\n"
    model = GloveVectors.from_path(write_glove(tmp_path, table, extra=extra), mode="paper")
    assert model.vector("alonzo").tolist() == [9.0] * 5  # lower-cased key, the later duplicate wins
    assert np.array_equal(model.vector("feels"), table["feels"])  # the non-numeric line was skipped
    assert model.stats["skipped_non_numeric"] == 2 and model.stats["duplicates_overwritten"] == 1
    strict = GloveVectors.from_path(write_glove(tmp_path, table, "d.txt", "Alonzo 9 9 9 9 9\n"))
    assert np.array_equal(strict.vector("alonzo"), table["alonzo"])  # default: the first (most frequent) wins
    with pytest.raises(UnqoverError, match="not a number"):
        GloveVectors.from_path(write_glove(tmp_path, table, "e.txt", "feels 1 2 x 4 5\n"))


def test_glove_word2vec_header_and_vocabulary_filter(tmp_path):
    table = vectors()
    path = write_glove(tmp_path, table)
    w2v = tmp_path / "w2v.txt"
    w2v.write_text(f"{len(table)} 5\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    for mode in ("paper", "default"):
        model = GloveVectors.from_path(w2v, mode=mode, vocabulary={"alonzo", "feels"})
        assert (
            model.dim == 5
            and model.stats["vectors"] == len(table)
            and set(model.words) == {"alonzo", "feels"}
        )
        assert model.stats["word2vec_header"] == f"{len(table)} 5"


# ---------------------------------------------------------------------------------------------- ranking


def test_paper_ranking_is_numpy_argsort_over_alphabetical_choices():
    rng = np.random.default_rng(3)
    choices = [f"w{i:02d}" for i in range(20)]
    scores = rng.integers(0, 3, size=20).astype(float)  # many ties
    shuffled = rng.permutation(20)
    ranked = paper_ranking(["q"], ["q"] * 20, [choices[i] for i in shuffled], scores[shuffled])
    assert ranked.answers[0][:3] == [choices[i] for i in (-scores).argsort()[:3]]
    assert ranked.ties == [True]


# ---------------------------------------------------------------------------------------------- whole probe


def his_answers_tfidf(questions, lines):
    vectorizer = TfidfVectorizer(ngram_range=(1, 3)).fit(lines)
    out = {}
    for q, choices in zip(questions["question"].to_pylist(), questions["choices"].to_pylist(), strict=True):
        sums = np.sum(vectorizer.transform([q.replace("________", c) for c in choices]).toarray(), 1)
        out[q] = [choices[i] for i in (-sums).argsort()[:3]]
    return out


def his_answers_glove(questions, table):
    def clean(text):
        return re.sub(r"[^a-zA-Z0-9 ]", "", text).lower().split(" ")

    def centre(tokens):
        vecs = [table[t] for t in tokens if t in table]
        return [sum(col) / len(col) for col in zip(*vecs, strict=True)]

    def cos(a, b):
        na, nb = math.sqrt(sum(x**2 for x in a)), math.sqrt(sum(x**2 for x in b))
        return sum(x * y for x, y in zip([x / na for x in a], [y / nb for y in b], strict=True))

    out = {}
    for q, choices in zip(questions["question"].to_pylist(), questions["choices"].to_pylist(), strict=True):
        qc = centre(clean(q))
        sims = np.asarray([cos(qc, centre(clean(q.replace("________", c)))) for c in choices])
        out[q] = [choices[i] for i in (-sims).argsort()[:3]]
    return out


def probe_answers(model_id, mode, questions):
    sentences = choice_sentences(questions)
    _, factory = load_beecher_model(model_id, mode)
    scorer = factory(questions)
    scores = scorer.score(sentences)
    assert (scores[:, 1] == 1.0).all() and len(scorer.input_key(sentences)) == sentences.num_rows
    ranked = paper_ranking(
        questions["id"].to_pylist(),
        sentences["question_id"].to_pylist(),
        sentences["choice"].to_pylist(),
        scores[:, 0],
    )
    texts = dict(zip(questions["id"].to_pylist(), questions["question"].to_pylist(), strict=True))
    return (
        {texts[q]: a[:3] for q, a in zip(ranked.question_id, ranked.answers, strict=True)},
        scorer,
        sentences,
    )


def test_paper_mode_gives_his_answers_on_all_480_questions(tmp_path):
    questions = eec_questions()
    assert questions.num_rows == 480
    lines = [
        *CORPUS,
        "ebony was furious and enraged.\n",
        "\n",
        "my mother feels depressed. my dad feels glad.\n",
    ]
    corpus = write_corpus(tmp_path, lines)
    got, _, _ = probe_answers(f"tfidf:{corpus}", "paper", questions)
    assert got == his_answers_tfidf(questions, lines)

    words = sorted({t for q in questions["question"].to_pylist() for t in re.findall(r"[a-z]+", q)})
    emotions = sorted({c for cs in questions["choices"].to_pylist() for c in cs})
    table = vectors(dim=8, seed=1, words=[w for i, w in enumerate(words + emotions) if i % 7])  # some unknown
    path = write_glove(tmp_path, table)
    got, scorer, sentences = probe_answers(f"glove:{path}", "paper", questions)
    assert got == his_answers_glove(questions, table)
    rates = oov_rates(questions, sentences, scorer.known(sentences))
    assert 0 < rates["overall"] < 1 and set(rates["groups"]) >= {"gender=female", "race=European"}


# ---------------------------------------------------------------------------------------------- errors


def test_clear_errors(tmp_path):
    with pytest.raises(UnqoverError, match="does not exist"):
        load_beecher_model(f"tfidf:{tmp_path / 'missing.txt'}")
    with pytest.raises(UnqoverError, match="does not exist"):
        load_beecher_model(f"glove:{tmp_path / 'missing.txt'}")
    with pytest.raises(UnqoverError, match="tfidf:PATH or glove:PATH"):
        load_beecher_model("word2vec:x.txt")
    with pytest.raises(UnqoverError, match="scoring mode"):
        load_beecher_model("tfidf:x.txt", "exact")
    blank = write_corpus(tmp_path, ["\n", "  \n"], "blank.txt")
    for mode in ("paper", "default"):
        with pytest.raises(UnqoverError, match="empty"):
            load_beecher_model(f"tfidf:{blank}", mode)
    one_letter = write_corpus(tmp_path, ["a i\n"], "ai.txt")
    with pytest.raises(
        UnqoverError, match="no n-gram"
    ):  # paper mode drops one-letter tokens: nothing is left
        load_beecher_model(f"tfidf:{one_letter}", "paper")
    assert load_beecher_model(f"tfidf:{one_letter}")[0].model.vocabulary_size == 3
    bad = tmp_path / "bad.txt"
    bad.write_text("alonzo 1 2 3\nfeels 1 2\n", encoding="utf-8")
    for mode in ("paper", "default"):
        with pytest.raises(UnqoverError, match="inconsistent dimensions"):
            load_beecher_model(f"glove:{bad}", mode)
    words_only = tmp_path / "words.txt"
    words_only.write_text("alonzo x y\n", encoding="utf-8")
    with pytest.raises(UnqoverError, match="no word vector"):
        load_beecher_model(f"glove:{words_only}", "paper")
    loaded, factory = load_beecher_model(f"glove:{write_glove(tmp_path, {'zzz': np.ones(3)})}", "paper")
    sentences = choice_sentences(eec_questions())
    with pytest.raises(UnqoverError, match="no word of the question"):
        factory(eec_questions()).score(sentences.slice(0, 2))
    provenance = loaded.provenance()
    assert provenance["family"] == "glove" and provenance["revision"] == f"sha256:{loaded.sha256}"
    assert provenance["dtype"] == "float64" and provenance["device"] == "cpu" and provenance["dim"] == 3


@pytest.mark.parametrize("family", ["tfidf", "glove"])
@pytest.mark.parametrize("mode", ["paper", "default"])
def test_job_runner_scores_equal_direct_scores(tmp_path, family, mode):
    from unqover.scoring.runner import run_shard

    questions = eec_questions().slice(0, 24)
    sentences = choice_sentences(questions)
    if family == "tfidf":
        path = write_corpus(tmp_path)
    else:
        words = {t for q in questions["question"].to_pylist() for t in re.findall(r"[a-z]+", q)}
        path = write_glove(tmp_path, vectors(dim=4, words=sorted(words | {"angry", "happy"})))
    _, factory = load_beecher_model(f"{family}:{path}", mode)
    scorer = factory(questions)
    scored = run_shard(sentences, scorer, tmp_path / "run", batch_size=7, progress=False)
    direct = scorer.score(sentences)
    assert np.array_equal(scored["score_1"].to_numpy(), direct[:, 0])
    assert np.array_equal(scored["score_2"].to_numpy(), direct[:, 1])
    assert family in scorer.method.lower() or "tf-idf" in scorer.method.lower()


def test_question_vocabulary_keeps_every_vector_the_answers_need(tmp_path):
    from unqover.scoring.beecher import question_vocabulary

    questions = eec_questions()
    words = question_vocabulary(questions)
    assert {"alonzo", "feels", "angry", "situation", "in", "a", "an"} <= words and "" not in words
    table = vectors(dim=6, seed=2, words=[*sorted(words), "unused", "other"])
    path = write_glove(tmp_path, table)
    full, _, _ = probe_answers(f"glove:{path}", "paper", questions)
    sentences = choice_sentences(questions)
    _, factory = load_beecher_model(f"glove:{path}", "paper", vocabulary=words)
    scores = factory(questions).score(sentences)[:, 0]
    ranked = paper_ranking(
        questions["id"].to_pylist(),
        sentences["question_id"].to_pylist(),
        sentences["choice"].to_pylist(),
        scores,
    )
    texts = dict(zip(questions["id"].to_pylist(), questions["question"].to_pylist(), strict=True))
    assert {texts[q]: a[:3] for q, a in zip(ranked.question_id, ranked.answers, strict=True)} == full


# ---------------------------------------------------------------------------------------------- the probe


@pytest.mark.parametrize("mode", ["paper", "default"])
def test_the_emotion_probe_runs_his_models_end_to_end(tmp_path, mode, capsys):
    """`unqover probe tfidf:CORPUS --bias eec-emotion`: the same run folder, answers and measures as the LMs; paper
    mode's answers are his ranking of his scores."""
    from unqover.cli import main

    questions = eec_questions()
    words = sorted({t for q in questions["question"].to_pylist() for t in re.findall(r"[a-z]+", q)})
    emotions = sorted({c for cs in questions["choices"].to_pylist() for c in cs})
    known = words + [e for i, e in enumerate(emotions) if i % 5]  # some choices have no vector
    glove = write_glove(tmp_path, vectors(dim=6, seed=2, words=known))
    corpus = write_corpus(tmp_path, [*CORPUS, "ebony was furious and enraged.\n"])
    for model in (f"tfidf:{corpus}", f"glove:{glove}"):
        out = tmp_path / f"run-{model[:5]}-{mode}"
        args = ["probe", model, "--bias", "eec-emotion", "--scoring", mode, "--output", str(out), "--quiet"]
        assert main([*args, "--permutations", "20", "--resamples", "20"]) == 0
        results = json.loads((out / "results.json").read_text())
        scoring = results["scoring"]
        assert results["probe"] == "eec-emotion" and scoring["mode"] == mode and scoring["questions"] == 480
        assert 0 <= scoring["oov"]["overall"] < 1 and set(scoring["oov"]["groups"]) >= {"race=European"}
        assert bool(scoring["fixes"]) == (mode == "default")
        assert results["provenance"]["model"]["revision"].startswith("sha256:")
        answers = pq.read_table(out / "answers.parquet")
        assert answers.num_rows == 480
        report = (out / "report.md").read_text()
        assert "out of vocabulary" in report and results["provenance"]["model"]["sha256"] in report
        assert ("fixed from Beecher's code" in report) == (mode == "default")
        if mode == "paper":
            expected, _, _ = probe_answers(model, "paper", questions)
            texts = dict(zip(questions["id"].to_pylist(), questions["question"].to_pylist(), strict=True))
            got = {texts[q]: a[:3] for q, a in zip(answers["question_id"].to_pylist(), answers["answers"].to_pylist(), strict=True)}  # fmt: skip
            assert got == expected
    capsys.readouterr()
    assert main(["probe", f"tfidf:{tmp_path / 'nope.txt'}", "--bias", "eec-emotion"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_paper_scoring_is_refused_for_language_models(tmp_path, capsys):
    from unqover.cli import main

    assert main(["probe", str(tmp_path / "no-model"), "--bias", "eec-emotion", "--scoring", "paper"]) == 2
    assert "--scoring paper applies to Beecher's own models" in capsys.readouterr().err


def test_a_sentence_transformers_word_embeddings_folder_is_read_like_a_vector_file(tmp_path):
    """The local twin of `glove:owner/name` (a Hub repo of average-word-embeddings): the same vectors, the same
    scores as the text file."""
    from safetensors.numpy import save_file

    table = vectors(dim=4, seed=3)
    text = write_glove(tmp_path, table)
    folder = tmp_path / "average_word_embeddings" / "0_WordEmbeddings"
    folder.mkdir(parents=True)
    (folder / "whitespacetokenizer_config.json").write_text(
        json.dumps({"vocab": list(table), "do_lower_case": True})
    )
    save_file(
        {"emb_layer.weight": np.stack(list(table.values())).astype(np.float32)},
        str(folder / "model.safetensors"),
    )
    for mode in ("paper", "default"):
        from_file = GloveVectors.from_path(text, mode)
        from_folder = GloveVectors.from_path(tmp_path / "average_word_embeddings", mode)
        assert set(from_folder.words) == set(from_file.words)
        for word in ("alonzo", "angry"):
            assert np.allclose(from_folder.vector(word), from_file.vector(word), atol=1e-6)
    loaded, _ = load_beecher_model(f"glove:{tmp_path / 'average_word_embeddings'}", "paper")
    assert loaded.files == 2 and loaded.revision.startswith("sha256:")
    with pytest.raises(UnqoverError, match="Hub is offline"):
        load_beecher_model("glove:someone/no-such-vectors", "paper")
