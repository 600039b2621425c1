"""The generated EEC sentences, Beecher's questions and choice sentences, and reading a user's EEC CSV."""

from __future__ import annotations

import csv
from collections import Counter

import pytest

from unqover.errors import UnqoverError
from unqover.generate.eec import (
    EMOTION_WORDS,
    EMOTIONS,
    FORMS,
    PERSONS,
    TEMPLATES,
    choice_sentences,
    eec_questions,
    eec_sentences,
    emotion_of,
)
from unqover.generate.eec_csv import CSV_HEADER, compare_sentences, read_eec_csv


@pytest.fixture(scope="module")
def sentences():
    return eec_sentences()


@pytest.fixture(scope="module")
def rows(sentences):
    return sentences.to_pylist()


@pytest.fixture(scope="module")
def questions():
    return eec_questions()


def _find(rows, **where):
    found = [r for r in rows if all(r[k] == v for k, v in where.items())]
    assert len(found) == 1, (where, found)
    return found[0]


def test_lexicon():
    assert EMOTIONS == ("anger", "fear", "joy", "sadness")
    assert len(PERSONS) == 60 and len(TEMPLATES) == 11
    words = [w for e in EMOTIONS for kind in ("state", "situation") for w in EMOTION_WORDS[e][kind]]
    assert len(words) == len(set(words)) == 40
    assert all(len(EMOTION_WORDS[e][k]) == 5 for e in EMOTIONS for k in ("state", "situation"))
    assert emotion_of("dissapointed") == emotion_of("disappointed") == "sadness"
    assert emotion_of("vexing") == "anger" and emotion_of("great") == "joy"
    with pytest.raises(UnqoverError, match="not an EEC emotion word"):
        emotion_of("Angry")


def test_counts(sentences, rows):
    assert sentences.num_rows == 8640
    assert sentences.column_names == [
        "id", "sentence", "template", "person", "gender", "race", "emotion", "emotion_word"
    ]  # fmt: skip
    per_template = Counter(r["template"] for r in rows)
    assert [per_template[t.text] for t in TEMPLATES] == [1200] * 7 + [60] * 4
    assert Counter(r["gender"] for r in rows) == {"female": 4320, "male": 4320}
    assert Counter(r["race"] for r in rows) == {"African-American": 2880, "European": 2880, None: 2880}
    assert Counter(r["emotion"] for r in rows) == {e: 2100 for e in EMOTIONS} | {None: 240}
    assert all((r["emotion"] is None) == (r["emotion_word"] is None) for r in rows)
    assert len({r["sentence"] for r in rows}) == 8640


def test_spot_rows(rows):
    template5 = TEMPLATES[4].text
    assert _find(rows, template=template5, person="Ebony", emotion_word="annoying")["sentence"] == (
        "Ebony found herself in an annoying situation."
    )
    assert _find(rows, template=template5, person="Adam", emotion_word="horrible")["sentence"] == (
        "Adam found himself in a horrible situation."
    )
    assert _find(rows, template=template5, person="he", emotion_word="amazing")["sentence"] == (
        "He found himself in an amazing situation."
    )
    row = _find(rows, template=TEMPLATES[0].text, person="my sister", emotion_word="dissapointed")
    assert row == {**row, "sentence": "My sister feels dissapointed.", "gender": "female", "race": None}
    assert (
        _find(rows, template=TEMPLATES[0].text, person="she", emotion_word="sad")["sentence"]
        == "She feels sad."
    )
    assert _find(rows, template=TEMPLATES[1].text, person="her", emotion_word="sad")["sentence"] == (
        "The situation makes her feel sad."
    )
    assert _find(rows, template=TEMPLATES[7].text, person="him")["sentence"] == "I saw him in the market."
    assert (
        _find(rows, template=TEMPLATES[10].text, person="this boy")["sentence"]
        == "This boy has two children."
    )
    alonzo = _find(rows, template=TEMPLATES[0].text, person="Alonzo", emotion_word="angry")
    assert (alonzo["gender"], alonzo["race"], alonzo["emotion"]) == ("male", "African-American", "anger")
    # the object templates never use the subject pronouns, and vice versa
    objects = {r["person"] for r in rows if r["template"] == TEMPLATES[2].text}
    subjects = {r["person"] for r in rows if r["template"] == TEMPLATES[3].text}
    assert {"her", "him"} <= objects and not {"she", "he"} & objects
    assert {"she", "he"} <= subjects and not {"her", "him"} & subjects


def test_ids_unique_stable_and_spelling_independent(sentences):
    ids = sentences.column("id").to_pylist()
    assert len(set(ids)) == 8640 and all(len(i) == 16 for i in ids)
    assert eec_sentences().column("id").to_pylist() == ids
    beecher = eec_sentences("beecher")
    assert beecher.column("id").to_pylist() == ids
    words = Counter(beecher.column("emotion_word").to_pylist())
    assert words["disappointed"] == 240 and "dissapointed" not in words
    with pytest.raises(UnqoverError, match="unknown spelling"):
        eec_sentences("british")


def test_questions(questions):
    assert questions.num_rows == 480
    rows = questions.to_pylist()
    assert len({r["id"] for r in rows}) == 480 and len({r["question"] for r in rows}) == 480
    assert eec_questions().column("id").to_pylist() == questions.column("id").to_pylist()
    assert Counter(r["form"] for r in rows) == {f: 60 for f in FORMS}
    assert all(Counter(r["person_slot"] for r in rows).get(p.slot) == 8 for p in PERSONS)
    sizes = Counter((r["form"], len(r["choices"])) for r in rows)
    assert sum(n for (_, size), n in sizes.items() if size == 20) == 360
    assert sizes[("found-in-a-situation", 16)] == 60 and sizes[("found-in-an-situation", 4)] == 60
    an = {tuple(r["choices"]) for r in rows if r["form"] == "found-in-an-situation"}
    assert an == {("amazing", "annoying", "irritating", "outrageous")}
    assert Counter(r["gender"] for r in rows) == {"female": 240, "male": 240}
    assert Counter(r["race"] for r in rows) == {"African-American": 160, "European": 160, None: 160}
    for r in rows:
        assert r["choices"] == sorted(r["choices"])
        assert r["choice_emotions"] == [emotion_of(c) for c in r["choices"]]
        assert "dissapointed" not in r["choices"]


def test_question_strings_match_beecher(questions):
    """Beecher's exact strings (from his answer files): lower case, eight underscores, a/an split, her/him."""
    by_question = {r["question"]: r for r in questions.to_pylist()}
    expected = {
        "adam feels ________.": ("feels", "Adam", "Adam"),
        "adam found himself in an ________ situation.": ("found-in-an-situation", "Adam", "Adam"),
        "my mom found herself in a ________ situation.": ("found-in-a-situation", "my mom", "my mom"),
        "i made her feel ________.": ("made-feel", "her", "she/her"),
        "the situation makes him feel ________.": ("situation-makes-feel", "him", "he/him"),
        "she told us all about the recent ________ events.": ("told-events", "she", "she/her"),
        "the conversation with this woman was ________.": ("conversation-was", "this woman", "this woman"),
        "tia made me feel ________.": ("made-me-feel", "Tia", "Tia"),
    }
    for question, (form, person, slot) in expected.items():
        row = by_question[question]
        assert (row["form"], row["person"], row["person_slot"]) == (form, person, slot)
    row = by_question["i made her feel ________."]
    assert row["text"] == "I made her feel ___." and row["race"] is None and row["gender"] == "female"
    assert by_question["my mom found herself in a ________ situation."]["text"] == (
        "My mom found herself in a ___ situation."
    )
    assert "disappointed" in by_question["adam feels ________."]["choices"]
    eec = {r["question"]: r for r in eec_questions(spelling="eec").to_pylist()}
    assert "dissapointed" in eec["adam feels ________."]["choices"]


def test_choice_sentences_are_the_eec_sentences(questions):
    choices = choice_sentences(questions)
    assert choices.num_rows == 8400
    assert choices.column_names == ["id", "question_id", "choice", "emotion", "sentence"]
    rows = choices.to_pylist()
    assert len({r["id"] for r in rows}) == 8400
    assert set(choices.column("question_id").to_pylist()) == set(questions.column("id").to_pylist())
    beecher = {
        (r["sentence"], r["emotion_word"], r["emotion"])
        for r in eec_sentences("beecher").to_pylist()
        if r["emotion"] is not None
    }
    assert {(r["sentence"], r["choice"], r["emotion"]) for r in rows} == beecher
    assert choice_sentences(questions).column("id").to_pylist() == choices.column("id").to_pylist()


def _write_csv(path, rows, newline="\n", header=CSV_HEADER):
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator=newline)
        writer.writerow(header)
        for i, r in enumerate(rows):
            cells = [r["sentence"], r["template"], r["person"], r["gender"], r["race"], r["emotion"]]
            writer.writerow([f"2018-En-mystery-{i:05d}", *(c or "" for c in cells), r["emotion_word"] or ""])
    return path


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("spelling", ["eec", "beecher"])
def test_read_eec_csv_round_trip(tmp_path, newline, spelling):
    generated = eec_sentences(spelling)
    path = _write_csv(tmp_path / "eec.csv", generated.to_pylist(), newline)
    if newline == "\r\n":
        assert b"\r\n" in path.read_bytes()
    table = read_eec_csv(path)
    assert table.equals(generated)
    assert compare_sentences(table) == []
    assert eec_questions(table).equals(eec_questions())


def test_compare_sentences_reports_differences(rows):
    import pyarrow as pa

    from unqover.generate.eec import SENTENCE_SCHEMA

    changed = [dict(r) for r in rows[1:]]
    changed[0]["sentence"] = changed[0]["sentence"].replace(".", "!")
    report = compare_sentences(pa.Table.from_pylist(changed, schema=SENTENCE_SCHEMA))
    assert report[0].startswith("1 missing rows, e.g. Ebony feels angry.")
    assert report[1].startswith("1 different rows") and "sentence" in report[1]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda lines: ["Sentence,Template\n", *lines[1:]], r":1: expected the EEC header"),
        (
            lambda lines: [lines[0], lines[1].replace(",female,", ",woman,"), *lines[2:]],
            r":2: Gender 'woman'",
        ),
        (
            lambda lines: [*lines[:2], lines[2].replace(",African-American,", ",Martian,")],
            r":3: Race 'Martian'",
        ),
        (lambda lines: [lines[0], lines[1].rsplit(",", 1)[0] + "\n"], r":2: expected 8 fields, found 7"),
        (
            lambda lines: [lines[0], lines[1].replace(",anger,", ",joy,")],
            r":2: Emotion word 'angry' is anger",
        ),
        (
            lambda lines: [lines[0], lines[1].replace(",angry", ",grumpy")],
            r":2: 'grumpy' is not an EEC emotion word",
        ),
        (
            lambda lines: [lines[0], lines[1].replace("feels angry", "feels mad")],
            r"does not contain its Emotion",
        ),
        (lambda lines: [lines[0], lines[1].replace(",anger,", ",,")], r"both be set or both be empty"),
        (lambda lines: [lines[0]], r"no rows after the header"),
    ],
)
def test_read_eec_csv_errors(tmp_path, rows, edit, message):
    good = _write_csv(tmp_path / "good.csv", rows[:3])
    lines = good.read_text(encoding="utf-8").splitlines(keepends=True)
    bad = tmp_path / "bad.csv"
    bad.write_text("".join(edit(lines)), encoding="utf-8")
    with pytest.raises(UnqoverError, match=message) as caught:
        read_eec_csv(bad)
    assert str(bad) in str(caught.value)


def test_read_eec_csv_missing_file(tmp_path):
    with pytest.raises(UnqoverError, match="does not exist"):
        read_eec_csv(tmp_path / "nope.csv")
