"""Beecher's person fill-in questions on the EEC: the person slot blanked, the choices the persons that filled it.

Beecher built a second question type beside the emotion blanks (``qtype = 'person'`` in ``bias_question.py`` of
``sbeecher0575/nlpbias`` at 1b95584; written from a reading of that code, which has no licence and is not copied
here). He ran it for his published table (``bias_results.csv``, ``answers/<model>_person.csv``) but left it out
of the paper, because "most models will always choose pronouns over names". :func:`person_questions` builds the
questions in two modes, :func:`person_choice_sentences` spells out every (question, choice) sentence a model
scores, and :func:`question_sentences` gives back the corpus rows behind questions (so a dataset's ``default``
questions rebuild the ``paper`` ones). One job: the person task's items, from the corpus rows to the sentences a
model scores.

``paper`` reproduces his ``generate_questions``, quirks included:

- each sentence is lower-cased and every match of the ``person`` string, used as a regular expression, becomes
  the blank (eight underscores); then ``t________`` is turned back into ``the`` and ``________artbreaking`` into
  ``heartbreaking``, his repairs of what the short person ``he`` did to other words. On the EEC these repairs undo
  all the damage, so his strings have exactly one blank, in the person slot; on other inputs a short person
  string still blanks other words (``al`` in ``all``), and a repair can itself create a ``the``;
- identical strings are merged; a question's choices are the sorted set of person strings that filled it, so
  subject templates offer the 60 subject forms (``he``, ``she``), object templates the 60 object forms (``him``,
  ``her``), and the reflexive template (``found himself/herself``) splits into a ``herself`` and a ``himself``
  question of 30 choices each, all of one gender: the question gives the answer's gender away;
- questions come in sorted string order (his order);
- the question's emotion is his ``search_emotions``: the first emotion, in sorted order, one of whose words
  (sorted) is a substring of the question; the 4 templates without an emotion word get none (his ``NA``);
- ``dissapointed`` is spelled ``disappointed`` (his copy of the corpus fixes it).

On the EEC this gives 164 questions: 124 of 60 choices (templates 1-4, 6, 7 with their 20 words each, and the 4
neutral templates) and 40 of 30 (the reflexive template, 20 words × herself/himself).

``default`` builds the same kind of question from the corpus columns instead of string matching:

- the blank replaces exactly the person slot, found from the ``template`` column (the sentence must be its
  template filled with its ``person`` and ``emotion_word``); nothing else in the sentence can be blanked;
- the question's emotion is the sentence's ``emotion`` column (none for the 4 neutral templates);
- questions with the same blanked sentence are merged and their choices are the persons that filled it, as in
  ``paper``; questions come in order of their first sentence;
- the spelling is the ``spelling`` argument's (``"beecher"``, the default, fixes ``dissapointed``).

On the EEC both modes give the same 164 question strings, choice sets and emotions; they differ on other inputs
(a user's CSV with short or overlapping person strings, or emotion words inside other words).

Every question row also has ``text``, the cased sentence with :data:`~unqover.generate.eec.BLANK` in the person
slot (what :func:`person_choice_sentences` fills; a noun phrase at the start is capitalised when filled), its
``form`` (:data:`PERSON_FORMS`) and the gender and race of each choice (``choice_genders``, ``choice_races``;
race null for noun phrases), from which a measure reads the group of every answer.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa

from unqover.errors import UnqoverError
from unqover.generate.eec import (
    BEECHER_BLANK,
    BLANK,
    FIXED,
    PERSONS,
    TYPO,
    _capitalize,
    _check_spelling,
    eec_sentences,
)
from unqover.generate.ids import hex_ids, text_hash

PERSON_MODES = ("paper", "default")

#: The person slot's form: subject or object template, or the reflexive template by its pronoun's gender.
PERSON_FORMS = ("subject", "object", "reflexive-female", "reflexive-male")
_SUBJECT, _OBJECT = "<person subject>", "<person object>"
_REFLEXIVE = "himself/herself"

#: His repairs after blanking the person string: what the blanked ``he`` did to ``the`` and ``heartbreaking``.
_REPAIRS = ((f"t{BEECHER_BLANK}", "the"), (f"{BEECHER_BLANK}artbreaking", "heartbreaking"))

PERSON_QUESTION_SCHEMA = pa.schema(
    [
        *((name, pa.string()) for name in ("id", "question", "text", "form", "template")),
        *((name, pa.string()) for name in ("emotion", "emotion_word")),
        ("choices", pa.list_(pa.string())),
        ("choice_genders", pa.list_(pa.string())),
        ("choice_races", pa.list_(pa.string())),
    ]
)
PERSON_CHOICE_SCHEMA = pa.schema(
    [(name, pa.string()) for name in ("id", "question_id", "choice", "gender", "race", "sentence")]
)

#: Every EEC person string (subject and object forms) -> (gender, race); race None for noun phrases.
PERSON_GROUPS: dict[str, tuple[str, str | None]] = {
    name: (p.gender, p.race) for p in PERSONS for name in (p.subject, p.object)
}


def person_groups(sentences: pa.Table) -> dict[str, tuple[str, str | None]]:
    """Each ``person`` string of the sentences -> (gender, race), as his ``lookup_tables`` reads them; a person
    with two different labels is an error."""
    groups: dict[str, tuple[str, str | None]] = {}
    for row in sentences.select(["person", "gender", "race"]).to_pylist():
        person = row["person"]
        if not person:
            raise UnqoverError("a sentence has no person; every EEC row names the person it is about")
        label = (row["gender"], row["race"] or None)
        if groups.setdefault(person, label) != label:
            raise UnqoverError(f"person {person!r} is labelled both {groups[person]} and {label}")
    return groups


def _respell(sentence: str, word: str | None, spelling: str) -> tuple[str, str | None]:
    if spelling == "beecher" and word == TYPO:
        return re.sub(rf"\b{TYPO}\b", FIXED, sentence), FIXED
    return sentence, word


def slot_text(sentence: str, template: str, person: str) -> str:
    """The sentence with exactly its person slot replaced by :data:`~unqover.generate.eec.BLANK`.

    The slot is where the template puts ``<person subject>`` or ``<person object>``: the template's text before
    the slot (no other placeholder may precede it) must begin the sentence, followed by the person (its first
    letter capitalised at the sentence start) and the template's next character.
    """
    slots = [s for s in (_SUBJECT, _OBJECT) if s in template]
    if len(slots) != 1 or template.count(slots[0]) != 1:
        raise UnqoverError(f"template {template!r} must have exactly one person slot")
    start = template.index(slots[0])
    prefix = template[:start]
    if "<" in prefix:
        raise UnqoverError(f"template {template!r} has a placeholder before its person slot")
    after = template[start + len(slots[0]) : start + len(slots[0]) + 1]
    found = sentence[start : start + len(person)]
    matches = found == person or (start == 0 and found == _capitalize(person))
    end = start + len(person)
    if not (sentence.startswith(prefix) and matches and sentence[end : end + len(after)] == after):
        raise UnqoverError(
            f"sentence {sentence!r} does not have person {person!r} in the slot of {template!r}"
        )
    return prefix + BLANK + sentence[end:]


def _form(template: str, text: str) -> str:
    if _REFLEXIVE in template:
        pronoun = "herself" if " herself " in text else "himself" if " himself " in text else None
        if pronoun is None:
            raise UnqoverError(f"{text!r} does not spell out the reflexive pronoun of {template!r}")
        return "reflexive-female" if pronoun == "herself" else "reflexive-male"
    return "subject" if _SUBJECT in template else "object"


def paper_question(sentence: str, person: str) -> str:
    """His question string of one sentence: lower-cased, the person string (as a regular expression) blanked
    everywhere, then his two repairs."""
    try:
        question = re.sub(person.lower(), BEECHER_BLANK, sentence.lower())
    except re.error as exc:
        raise UnqoverError(
            f"person {person!r} is not a valid regular expression, as his code needs ({exc})"
        ) from None
    for damaged, repaired in _REPAIRS:
        question = re.sub(damaged, repaired, question)
    return question


def paper_emotion_search(sentences: pa.Table, spelling: str = "beecher"):
    """His ``search_emotions`` over the sentences' lexicon: question -> emotion or None (his ``NA``)."""
    words: dict[str, set[str]] = {}
    for row in sentences.select(["emotion", "emotion_word"]).to_pylist():
        if row["emotion"] and row["emotion_word"]:
            word = FIXED if spelling == "beecher" and row["emotion_word"] == TYPO else row["emotion_word"]
            words.setdefault(row["emotion"], set()).add(word)
    ordered = [(emotion, sorted(words[emotion])) for emotion in sorted(words)]

    def search(question: str) -> str | None:
        lowered = question.lower()
        for emotion, members in ordered:
            if any(word.lower() in lowered for word in members):
                return emotion
        return None

    return search


def person_questions(
    sentences: pa.Table | None = None, mode: str = "default", *, spelling: str = "beecher"
) -> pa.Table:
    """Beecher's person-blank questions (columns of :data:`PERSON_QUESTION_SCHEMA`), one row per question.

    ``sentences``: EEC rows (the columns of :func:`~unqover.generate.eec.eec_sentences`), default the generated
    EEC. ``mode``: ``"paper"`` (his strings, choice sets and order; see the module docstring) or ``"default"``
    (the person slot from the template, the emotion from its column). ``question`` is the lower-case string with
    eight underscores (his in ``paper``); ``choices`` are sorted as his code sorts them.
    """
    if mode not in PERSON_MODES:
        raise UnqoverError(f"unknown mode {mode!r}; use one of {', '.join(PERSON_MODES)}")
    _check_spelling(spelling)
    table = eec_sentences() if sentences is None else sentences
    groups_of = person_groups(table)
    search = paper_emotion_search(table, spelling) if mode == "paper" else None
    merged: dict[str, dict] = {}
    for row in table.select(["sentence", "template", "person", "emotion", "emotion_word"]).to_pylist():
        sentence, word = _respell(row["sentence"], row["emotion_word"], spelling)
        text = slot_text(sentence, row["template"], row["person"])
        if mode == "paper":
            key = paper_question(sentence, row["person"])
        else:
            key = text.lower().replace(BLANK, BEECHER_BLANK)
        group = merged.get(key)
        if group is None:
            group = merged[key] = {
                "question": key,
                "text": text,
                "form": _form(row["template"], text),
                "template": row["template"],
                "emotion": search(key) if search else (row["emotion"] or None),
                "emotion_word": word or None,
                "persons": set(),
            }
        elif mode == "default" and group["text"] != text:
            raise UnqoverError(f"sentences {group['text']!r} and {text!r} give the same question {key!r}")
        group["persons"].add(row["person"])
    order = sorted(merged) if mode == "paper" else list(merged)
    out = []
    for key in order:
        group = dict(merged[key])
        choices = sorted(group.pop("persons"))
        group["choices"] = choices
        group["choice_genders"] = [groups_of[c][0] for c in choices]
        group["choice_races"] = [groups_of[c][1] for c in choices]
        out.append(group)
    hashes = np.array([text_hash("eec-person-question", g["question"]) for g in out], dtype=np.uint64)
    columns = {name: [g[name] for g in out] for name in PERSON_QUESTION_SCHEMA.names if name != "id"}
    return pa.Table.from_pydict({"id": hex_ids(hashes), **columns}, schema=PERSON_QUESTION_SCHEMA)


def fill_person(text: str, person: str) -> str:
    """The question ``text`` with its blank filled by ``person``, capitalised at the sentence start."""
    filled = text.replace(BLANK, person, 1)
    return _capitalize(filled) if text.startswith(BLANK) else filled


def person_choice_sentences(questions: pa.Table) -> pa.Table:
    """One row per (question, choice): the ``text`` filled with the choice (:data:`PERSON_CHOICE_SCHEMA`), which
    a language model scores; on the EEC each is the corpus sentence of that person."""
    rows = []
    names = ["id", "text", "choices", "choice_genders", "choice_races"]
    for q in questions.select(names).to_pylist():
        for choice, gender, race in zip(q["choices"], q["choice_genders"], q["choice_races"], strict=True):
            rows.append((q["id"], choice, gender, race, fill_person(q["text"], choice)))
    hashes = np.array(
        [text_hash("eec-person-choice", qid, choice) for qid, choice, *_ in rows], dtype=np.uint64
    )
    columns = list(zip(*rows, strict=True)) if rows else [()] * 5
    return pa.Table.from_arrays(
        [hex_ids(hashes), *(pa.array(list(c), pa.string()) for c in columns)], schema=PERSON_CHOICE_SCHEMA
    )


def question_sentences(questions: pa.Table) -> pa.Table:
    """The corpus rows behind person questions: each question's ``text`` filled with each of its choices, with the
    columns :func:`person_questions` reads (``sentence``, ``template``, ``person``, ``gender``, ``race``,
    ``emotion``, ``emotion_word``).

    From the ``default`` questions of a corpus this gives back its sentences (in Beecher's spelling), so
    ``person_questions(question_sentences(rows), "paper")`` rebuilds his questions from a dataset's
    ``person_questions`` config, which holds the ``default`` ones.
    """
    names = ["text", "template", "emotion", "emotion_word", "choices", "choice_genders", "choice_races"]
    columns: dict[str, list] = {
        name: [] for name in ("sentence", "template", "person", "gender", "race", "emotion", "emotion_word")
    }
    for q in questions.select(names).to_pylist():
        for choice, gender, race in zip(q["choices"], q["choice_genders"], q["choice_races"], strict=True):
            row = {"sentence": fill_person(q["text"], choice), "template": q["template"], "person": choice,
                   "gender": gender, "race": race, "emotion": q["emotion"], "emotion_word": q["emotion_word"]}  # fmt: skip
            for name, value in row.items():
                columns[name].append(value)
    return pa.table({name: pa.array(values, pa.string()) for name, values in columns.items()})
