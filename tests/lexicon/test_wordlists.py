"""The upstream word-list format: parsing, and one clear error per kind of bad line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from unqover.errors import UnqoverError
from unqover.lexicon import WordListError, WordLists
from unqover.lexicon.wordlists import Slot


@pytest.fixture
def editable_lists(upstream_word_lists_path, tmp_path) -> Path:
    """A private copy of the upstream lists that a test may corrupt."""
    root = tmp_path / "word_lists"
    shutil.copytree(upstream_word_lists_path, root)
    for path in root.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return root


def test_subject_files(word_lists):
    female = word_lists.subjects("female")
    assert len(female) == 70
    assert female[0].identity == "Mary" and female[0].cluster == "female" and female[0].demonym is None
    country = word_lists.subjects("country")
    assert len(country) == 69
    by_name = {s.identity: s for s in country}
    assert by_name["Spain"].demonym == "Spainish"  # upstream typo, kept
    assert by_name["Yemen"].demonym == "Yemen"
    assert by_name["Afghanistan"].cluster is None
    counts = {
        name: len(word_lists.subjects(name))
        for name in ("ethnicity", "religion", "country_bert", "female_roberta")
    }
    assert counts == {"ethnicity": 15, "religion": 11, "country_bert": 55, "female_roberta": 32}


def test_attribute_files(word_lists):
    occupations = word_lists.attributes("occupation_rev1")
    assert list(occupations) == ["p_act"]
    assert len(occupations["p_act"]) == 70
    first = occupations["p_act"][0]
    assert (first.positive, first.negated, first.identity, first.cluster) == (
        "was an accountant",
        "can never be an accountant",
        "was an accountant",
        None,
    )
    country = word_lists.attributes("biased_country")
    assert {t: len(rows) for t, rows in country.items()} == {
        "l_act": 14,
        "l_act-single": 14,
        "p_act": 50,
        "p_act-single": 50,
    }
    single = country["l_act-single"][0]
    assert single.positive == "was full of savages"
    assert single.identity == "were full of savages"  # the identity is the base (plural) row's text
    assert single.base_type == "l_act" and single.cluster == "rude"
    marijuana = [a for rows in country.values() for a in rows if a.identity == "smelled of marijuana"]
    assert {a.base_type for a in marijuana} == {"l_act", "p_act"}


def test_templates(word_lists):
    gender = word_lists.templates("gender_noact")
    assert [t.template_id for t in gender] == [0, 1, 2, 3]
    assert gender[1].context == (
        Slot("subject", "subj1"),
        " lives in the same city with ",
        Slot("subject", "subj2"),
        ".",
    )
    assert gender[0].attribute_type == "p_act" and not gender[0].masked
    country = word_lists.templates("country_noact")
    assert [t.attribute_type for t in country] == ["l_act-single", "p_act"] * 3 + ["p_act-single"] * 6
    assert country[6].subject_1_demonym and country[6].subject_2_demonym and not country[0].subject_1_demonym
    assert all(t.masked for t in word_lists.templates("religion_noact_lm"))
    assert word_lists.filler("newsqa") == "[aug] yes no  [text] (CNN) --"


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    ("folder", "name", "text", "line", "message"),
    [
        ("nouns/subjects", "female", "[subj]  female | Mary\n[subj]Linda\n", 2, "expected '<head> <text>'"),
        ("nouns/subjects", "female", "# c\n[subj] a | b | c\n", 2, "more than one '|'"),
        ("nouns/subjects", "female", "[sub] Mary\n", 1, "unknown head '[sub]'"),
        ("nouns/subjects", "female", "[subj]  female |  \n", 1, "empty text"),
        ("activities", "occupation_rev1", "[p_act] was an x\n[q-act] y\n", 2, "unknown head '[q-act]'"),
        (
            "slots",
            "gender_noact",
            "[subj1] met [subj2].\tWho [p_act]?\n",
            1,
            "expected 3 TAB-separated fields",
        ),
        (
            "slots",
            "gender_noact",
            "[subj1] met [subj2].\tWho [p_act]?\tWho [p_act]?\n",
            1,
            "negated question needs",
        ),
        (
            "slots",
            "gender_noact",
            "[subj1] met [subj2] [X1].\tWho [p_act]?\tWho [p_act:neg]?\n",
            1,
            "unknown placeholder [X1]",
        ),
        ("slots", "gender_noact", "[subj1] met someone.\tWho [p_act]?\tWho [p_act:neg]?\n", 1, "no [subj2]"),
        (
            "slots",
            "gender_noact",
            "[subj1] met [subj2] and [subj2:dem].\tWho [p_act]?\tWho [p_act:neg]?\n",
            1,
            "mixed",
        ),
        (
            "slots",
            "gender_noact",
            "[subj1] met [subj2].\tWho [p_act]?\tWho [l_act:neg]?\n",
            1,
            "exactly one attribute slot type",
        ),
        (
            "slots",
            "gender_noact",
            "[subj1] met [subj2].\tWho [p_act] [subj1]?\tWho [p_act:neg]?\n",
            1,
            "belong in the context",
        ),
        (
            "slots",
            "gender_noact",
            "[subj1] met [subj2].\t[mask] [p_act].\tWho [p_act:neg]?\n",
            1,
            "one [mask]",
        ),
        ("fillers", "newsqa", "one\ntwo\n", 2, "exactly one line"),
        # a last line glued onto the next one (a missing line break): refused, never generated into questions
        (
            "activities",
            "religion",
            "[p_act] x | was a good driver\n[p_act:neg] x | was a bad driver[p_act] brokenline_without_pipe\n",
            2,
            "[p_act] inside the text",
        ),
        ("nouns/subjects", "female", "[subj] Mary\n[subj] Linda[subj] Ann\n", 2, "two entries on one line"),
    ],
)
def test_malformed_lines_name_file_and_line(editable_lists, folder, name, text, line, message):
    path = editable_lists / folder / name
    _write(path, text)
    lists = WordLists(editable_lists)
    reader = {
        "nouns/subjects": lists.subjects,
        "activities": lists.attributes,
        "slots": lists.templates,
        "fillers": lists.filler,
    }
    with pytest.raises(WordListError, match=message.replace("[", r"\[").replace("|", r"\|")) as err:
        reader[folder](name)
    assert err.value.path == path and err.value.line == line
    assert str(err.value).startswith(f"{path}:{line}: ")


def test_misaligned_subject_heads(editable_lists):
    path = editable_lists / "nouns/subjects/country"
    lines = path.read_text().splitlines()
    _write(path, "\n".join(line for line in lines if line != lines[-1]))
    with pytest.raises(WordListError, match=r"misaligned heads: \{'\[subj\]': 69, '\[subj:dem\]': 68\}"):
        WordLists(editable_lists).subjects("country")


def test_misaligned_attribute_rows(editable_lists):
    path = editable_lists / "activities/occupation_rev1"
    _write(path, path.read_text() + "\n[p_act] was a spy\n")
    with pytest.raises(WordListError, match=r"misaligned \[p_act\]: 71 positive and 70 \[p_act:neg\]"):
        WordLists(editable_lists).attributes("occupation_rev1")


def test_single_type_needs_its_base(editable_lists):
    path = editable_lists / "activities/occupation_rev1"
    _write(path, "[p_act-single] was a spy\n[p_act-single:neg] was no spy\n")
    with pytest.raises(WordListError, match=r"base type \[p_act\] is missing"):
        WordLists(editable_lists).attributes("occupation_rev1")


def test_cluster_disagreement_between_aligned_lines(editable_lists):
    path = editable_lists / "activities/occupation_rev1"
    _write(path, "[p_act] crime | did x\n[p_act:neg] rude | did not x\n")
    with pytest.raises(WordListError, match="cluster 'rude' disagrees with 'crime'"):
        WordLists(editable_lists).attributes("occupation_rev1")


def test_duplicate_subject(editable_lists):
    _write(editable_lists / "nouns/subjects/religion", "[subj] Hindu\n[subj] Hindu\n")
    with pytest.raises(WordListError, match="duplicate subject 'Hindu'"):
        WordLists(editable_lists).subjects("religion")


def test_missing_folder_and_file(tmp_path, word_lists):
    with pytest.raises(UnqoverError, match="word-list folder not found"):
        WordLists(tmp_path / "nope")
    with pytest.raises(WordListError, match="file not found"):
        word_lists.subjects("martians")
    with pytest.raises(UnqoverError, match="invalid word-list name"):
        word_lists.subjects("../female")


def test_empty_file(editable_lists):
    _write(editable_lists / "nouns/subjects/female", "# only a comment\n\n")
    with pytest.raises(WordListError, match="file has no entries"):
        WordLists(editable_lists).subjects("female")
