"""Gender swap: dictionary sanity, word boundaries, case, the her/his/him/hers rules, augmentation."""

from __future__ import annotations

import pytest

from unqover.errors import UnqoverError
from unqover.generate.gender_swap import (
    GENDER_PAIRS,
    SWAP_MAP,
    augment_pairs,
    build_swap_map,
    has_gendered_word,
    swap_gender,
)
from unqover.generate.nli_occupations import PROBE_OCCUPATIONS


def test_dictionary_is_symmetric_and_skips_probe_occupations():
    assert len(GENDER_PAIRS) >= 60
    for word, other in SWAP_MAP.items():
        assert SWAP_MAP[other] == word
    occupation_words = {w.lower() for o in PROBE_OCCUPATIONS for w in o.split()}
    occupation_words |= {w + "s" for w in occupation_words}
    assert not occupation_words & set(SWAP_MAP)
    assert "seamstress" not in SWAP_MAP and "tailor" not in SWAP_MAP
    assert len(PROBE_OCCUPATIONS) == 38


def test_build_swap_map_refuses_conflicts():
    with pytest.raises(UnqoverError, match="both"):
        build_swap_map([("lord", "lady"), ("gentleman", "lady")])
    with pytest.raises(UnqoverError, match="by rule"):
        build_swap_map([("his", "her")])


@pytest.mark.parametrize(
    "text",
    [
        "He is a nurse and his brother is a carpenter.",
        "The father told the son that he was proud of himself.",
        "My uncle's wife, a teacher, married the king.",
        "The men and the boys met their grandfather, Mr. Smith.",
        "A male lawyer and his boyfriend walked home.",
        "The book is his.",
        "She thanked him for the gift.",
    ],
)
def test_round_trip(text):
    once = swap_gender(text)
    assert once != text
    assert swap_gender(once) == text


def test_examples():
    assert swap_gender("He is a nurse and his brother is a carpenter.") == (
        "She is a nurse and her sister is a carpenter."
    )
    assert swap_gender("The man's wife") == "The woman's husband"
    assert swap_gender("her father-in-law") == "his mother-in-law"


def test_case_is_kept():
    assert swap_gender("He HE he") == "She SHE she"
    assert swap_gender("HIS CAR is HIS.") == "HER CAR is HERS."
    assert swap_gender("Her car. I saw Her.") == "His car. I saw Him."
    assert swap_gender("Mr. Jones and Mrs. Jones") == "Mrs. Jones and Mr. Jones"


def test_word_boundaries():
    untouched = "the shell of the manager, mankind, Hector, other, hemp, he2 and sheriff_he"
    assert swap_gender(untouched) == untouched
    assert not has_gendered_word(untouched)
    assert swap_gender("(he)") == "(she)"
    assert swap_gender("she's here") == "he's here"


@pytest.mark.parametrize(
    ("text", "swapped"),
    [
        ("I saw her.", "I saw him."),
        ("I gave her the book.", "I gave him the book."),
        ("I told her that it rained.", "I told him that it rained."),
        ("I met her yesterday.", "I met him yesterday."),
        ("I love her dearly.", "I love him dearly."),
        ("her", "him"),
        ("Her car is red.", "His car is red."),
        ("She drove her old car.", "He drove his old car."),
        ("his car", "her car"),
        ("The car is his.", "The car is hers."),
        ("his and mine", "hers and mine"),
        ("The car is hers.", "The car is his."),
        ("hers was red", "his was red"),
        ("I saw him.", "I saw her."),
        ("He asked himself.", "She asked herself."),
    ],
)
def test_pronoun_rules(text, swapped):
    assert swap_gender(text) == swapped


def test_occupations_untouched():
    for occupation in PROBE_OCCUPATIONS:
        text = f"The {occupation} said he would call his mother."
        assert swap_gender(text) == f"The {occupation} said she would call her father."


def test_augment_pairs_adds_swapped_copies():
    premises = ["The nurse said he was late.", "The sky is blue.", "A man is a lawyer.", "The woman sang."]
    hypotheses = ["This text talks about a male.", "It is day.", "A cook exists.", "Someone sang."]
    labels = [0, 1, 2, 0]
    p, h, y = augment_pairs(premises, hypotheses, labels)
    assert p[:4] == premises and h[:4] == hypotheses and y[:4] == labels
    assert p[4:] == ["The nurse said she was late.", "A woman is a lawyer.", "The man sang."]
    assert h[4:] == ["This text talks about a female.", "A cook exists.", "Someone sang."]
    assert y[4:] == [0, 2, 0]
    # restricted to pairs mentioning an occupation (plural and case-insensitive matches count)
    p, h, y = augment_pairs(
        [*premises, "Two Construction Workers met her."],
        [*hypotheses, "x"],
        [*labels, 1],
        occupations=PROBE_OCCUPATIONS,
    )
    assert p[5:] == [
        "The nurse said she was late.",
        "A woman is a lawyer.",
        "Two Construction Workers met him.",
    ]
    assert y[5:] == [0, 2, 1]
    with pytest.raises(UnqoverError, match="give one of each"):
        augment_pairs(["a"], [], [0])
