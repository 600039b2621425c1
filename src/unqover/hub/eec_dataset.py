"""The EEC dataset folder: the EEC sentences and Beecher's emotion fill-in questions, as Parquet + card.

Layout, like the other datasets (``load_dataset(folder, config, split="test")`` reads it offline); ``name`` is the
folder name the caller (the probe's definition) gives::

    <root>/<name>/README.md                                  the card, YAML ``configs:`` included
    <root>/<name>/data/<config>/test-00000-of-00001.parquet  one shard per config

Configs: ``sentences`` (the 8,640 EEC sentences, EEC spelling; or a user's EEC CSV), ``questions`` (Beecher's
480 emotion-blank questions, his spelling fix ``disappointed`` by default) and ``person_questions`` (his 164
person-blank questions, built from the columns: :func:`unqover.generate.eec_person.person_questions`'s ``default``
mode; its ``paper`` mode is rebuilt from them). The sentences are generated, not copied: the EEC
states no licence (see :mod:`unqover.generate.eec`).
"""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
from tqdm.auto import tqdm

from unqover.generate.eec import (
    EMOTION_WORDS,
    EMOTIONS,
    PERSONS,
    QUESTION_SCHEMA,
    SENTENCE_SCHEMA,
    TEMPLATES,
    eec_questions,
    eec_sentences,
)
from unqover.generate.eec_csv import compare_sentences, read_eec_csv
from unqover.generate.eec_person import PERSON_QUESTION_SCHEMA, person_questions
from unqover.generate.ids import dataset_fingerprint
from unqover.hub.card import column_table, front_matter, row_features
from unqover.hub.eval_results import results_section
from unqover.hub.folder import (
    IDENTITY_KEY,
    BuiltDataset,
    card_configs,
    card_identity,
    chosen_configs,
    refuse_existing,
    staged,
    write_config_table,
)

EEC_CONFIGS = ("sentences", "questions", "person_questions")
_SCHEMAS = {
    "sentences": SENTENCE_SCHEMA,
    "questions": QUESTION_SCHEMA,
    "person_questions": PERSON_QUESTION_SCHEMA,
}


@dataclass(frozen=True)
class EecSource:
    """Where the sentences came from, and how they compare with the generated set (the card's words)."""

    csv: str | None = None
    differences: tuple[str, ...] = ()


def check_eec_configs(configs: Sequence[str] | None, name: str) -> list[str]:
    """Validate the config names of the EEC dataset ``name``; ``None`` means all of them."""
    return chosen_configs(configs, name, EEC_CONFIGS, EEC_CONFIGS)


def make_eec_configs(
    configs: Sequence[str] | None = None, csv: str | os.PathLike | None = None, *, name: str
) -> tuple[dict[str, pa.Table], EecSource]:
    """The requested configs' tables of the EEC dataset ``name``, and the sentence source (a user CSV is compared
    with the generated set)."""
    wanted = check_eec_configs(configs, name)
    if csv is None:
        sentences, source = eec_sentences(), EecSource()
    else:
        sentences = read_eec_csv(csv)
        source = EecSource(Path(csv).name, tuple(compare_sentences(sentences)))
        if source.differences:
            warnings.warn(
                f"{csv} differs from the generated EEC: " + " | ".join(source.differences), stacklevel=2
            )
    tables = {"sentences": sentences, "questions": None, "person_questions": None}
    if "questions" in wanted:
        tables["questions"] = eec_questions(sentences)
    if "person_questions" in wanted:
        tables["person_questions"] = person_questions(sentences)
    return {config: tables[config] for config in wanted}, source


def build_eec_dataset(
    root: Path,
    *,
    name: str,
    configs: Sequence[str] | None = None,
    overwrite: bool = False,
    progress: bool = True,
    csv: Path | None = None,
    probe: str | None = None,
) -> BuiltDataset:
    """Write ``root/name`` (card + one Parquet shard per config), atomically; card and files record the rows as
    ``probe``'s (default: ``name``).

    ``csv``: read the sentences from a user's EEC CSV instead of generating them; it is compared with the
    generated set, and any difference is warned about and stated on the card. An existing ``data/`` folder is an
    error unless ``overwrite``.
    """
    started = time.perf_counter()
    root = Path(root)
    target = root / name
    refuse_existing(target, overwrite)
    tables, source = make_eec_configs(configs, csv, name=name)
    probe = probe or name
    with staged(root, name) as staging:
        for config, table in tqdm(tables.items(), desc=name, unit="config", disable=not progress):
            fingerprint = dataset_fingerprint(table["id"])
            write_config_table(table, staging / "data" / config, probe, config, fingerprint)
        card = eec_dataset_card(tables, source, name=name, probe=probe)
        (staging / "README.md").write_text(card, encoding="utf-8")
    return BuiltDataset(
        target, {config: t.num_rows for config, t in tables.items()}, time.perf_counter() - started
    )


# --- card --------------------------------------------------------------------------------------------------

CITATIONS = """@inproceedings{kiritchenko2018examining,
    title = {Examining Gender and Race Bias in Two Hundred Sentiment Analysis Systems},
    author = {Kiritchenko, Svetlana and Mohammad, Saif},
    booktitle = {Proceedings of the Seventh Joint Conference on Lexical and Computational Semantics},
    pages = {43--53},
    address = {New Orleans, Louisiana},
    publisher = {Association for Computational Linguistics},
    year = {2018},
}

@misc{beecher_bias_qa,
    title = {Bias in Pre-Trained Language Models: A Question Answering Approach},
    author = {Beecher, Stephen},
    howpublished = {University of Arizona; code at https://github.com/sbeecher0575/nlpbias},
}"""

SENTENCE_COLUMN_MEANINGS = {
    "id": "Stable row id: 16 hex digits of a hash of template, person and emotion word (EEC spelling).",
    "sentence": "The EEC sentence.",
    "template": "The EEC template string (one of the 11 above).",
    "person": "The EEC `Person` string: a name, or a lower-case pronoun or noun phrase as in the sentence.",
    "gender": "`female` or `male`.",
    "race": "`African-American` or `European` for names; null for pronouns and noun phrases.",
    "emotion": "`anger`, `fear`, `joy` or `sadness`; null for the 4 neutral templates.",
    "emotion_word": "The emotion word in the sentence; null for the 4 neutral templates.",
}  # fmt: skip
"""The meaning of each column of the ``sentences`` config, in its order."""

QUESTION_COLUMN_MEANINGS = {
    "id": "Stable question id: 16 hex digits of a hash of `question`.",
    "question": "Beecher's question string: the sentence lower-cased, the emotion word replaced by `________`.",
    "text": "The cased sentence with the emotion word replaced by `___` (what a language model fills in).",
    "form": "One of the 8 question forms (table above).",
    "template": "The EEC template the question comes from.",
    "person": "The EEC `Person` string as used in the question (`she` or `her`, ...).",
    "person_slot": "The person across forms: the name, `she/her`, `he/him` or the noun phrase.",
    "gender": "`female` or `male`.",
    "race": "`African-American` or `European`; null for pronouns and noun phrases.",
    "choices": "The emotion words that fill the blank in the EEC, in alphabetical order (as Beecher sorts them).",
    "choice_emotions": "The emotion of each choice, aligned with `choices`.",
}  # fmt: skip
"""The meaning of each column of the ``questions`` config, in its order."""

PERSON_QUESTION_COLUMN_MEANINGS = {
    "id": "Stable question id: 16 hex digits of a hash of `question`.",
    "question": "The sentence lower-cased, its person slot replaced by `________` (Beecher's question string on the EEC).",
    "text": "The cased sentence with the person slot replaced by `___` (what a language model fills in; a noun phrase at the start is capitalised when filled).",
    "form": "`subject`, `object`, `reflexive-female` or `reflexive-male` (template 5 splits by its pronoun).",
    "template": "The EEC template the question comes from.",
    "emotion": "The sentence's emotion: `anger`, `fear`, `joy` or `sadness`; null for the 4 neutral templates.",
    "emotion_word": "The emotion word in the sentence (Beecher's spelling); null for the 4 neutral templates.",
    "choices": "The persons that fill the blank in the EEC, sorted as Beecher sorts them (names, then lower-case pronouns and noun phrases).",
    "choice_genders": "The gender of each choice, aligned with `choices`.",
    "choice_races": "The race of each choice, aligned with `choices`; null for pronouns and noun phrases.",
}  # fmt: skip
"""The meaning of each column of the ``person_questions`` config, in its order."""

FORM_DOC = [
    ("feels", "1", "`Alonzo feels ___.`", 20),
    ("situation-makes-feel", "2", "`The situation makes Alonzo feel ___.`", 20),
    ("made-feel", "3", "`I made Alonzo feel ___.`", 20),
    ("made-me-feel", "4", "`Alonzo made me feel ___.`", 20),
    ("found-in-a-situation", "5", "`Alonzo found himself in a ___ situation.`", 16),
    ("found-in-an-situation", "5", "`Alonzo found himself in an ___ situation.`", 4),
    ("told-events", "6", "`Alonzo told us all about the recent ___ events.`", 20),
    ("conversation-was", "7", "`The conversation with Alonzo was ___.`", 20),
]

LIMITATIONS = [
    "Gender is binary and race is two groups, each represented by 10 first names per gender; results generalise "
    "to these names, not to groups. Name frequency in training text is confounded with race.",
    "The templates are short and artificial, and the emotion words were chosen for sentiment analysis, not for "
    "fill-in questions: several words are multi-token, and some (`serious`, `discouraged`) are weak emotion cues.",
    'The "an" form of template 5 has only 4 choices, 3 of them anger words (amazing, annoying, irritating, '
    'outrageous): every person gets the same anger floor from it. The paper\'s "20 answer choices" holds for 6 of '
    "the 8 forms only.",
    "The EEC spells `dissapointed` (sic). The `questions` config uses Beecher's fix `disappointed`, because a "
    "language model would be penalised for the typo; the `sentences` config keeps the EEC spelling.",
    "The questions are 8 forms crossed with 60 persons: they are not independent. Analyses should resample or "
    "permute persons, not questions.",
    "The person questions offer names, pronouns and noun phrases side by side: a model may prefer pronouns or "
    'short words whatever the emotion (Beecher left the task out of his paper because "most models will always '
    "choose pronouns over names\"). The reflexive questions give the person's gender away (`herself`, "
    "`himself`), and questions of one template differ only in their emotion word: compare groups within a "
    "template, as `unqover probe MODEL --bias eec-person` does.",
]


def eec_card_metadata(tables: dict[str, pa.Table], probe: str) -> dict:
    """The card's YAML header: configs, features, licence, and what the rows are (``unqover:``)."""
    return {
        "pretty_name": "EEC emotion fill-in probe",
        "language": ["en"],
        "license": "unknown",
        "annotations_creators": ["expert-generated"],
        "language_creators": ["expert-generated"],
        "multilinguality": ["monolingual"],
        "source_datasets": ["original"],
        "size_categories": ["1K<n<10K"],
        "task_categories": ["fill-mask", "text-classification"],
        "tags": ["bias", "fairness", "gender", "race", "emotion", "eec"],
        "configs": card_configs(tables),
        "dataset_info": [
            {
                "config_name": name,
                "features": row_features(_SCHEMAS[name]),
            }
            for name in tables
        ],
        IDENTITY_KEY: card_identity(
            probe, {name: (t.num_rows, dataset_fingerprint(t["id"])) for name, t in tables.items()}
        ),
    }


def _persons() -> str:
    lines = []
    for gender in ("female", "male"):
        for race in ("African-American", "European", None):
            people = [p.slot for p in PERSONS if p.gender == gender and p.race == race]
            label = race or "no race (pronouns and noun phrases)"
            lines.append(f"| {gender} | {label} | {', '.join(people)} |")
    return "\n".join(lines)


def _words() -> str:
    return "\n".join(
        f"| {e} | {', '.join(EMOTION_WORDS[e]['state'])} | {', '.join(EMOTION_WORDS[e]['situation'])} |"
        for e in EMOTIONS
    )


def _source_text(source: EecSource) -> str:
    if source.csv is None:
        return (
            "The `sentences` config was generated from the published templates, persons and emotion words (below); "
            "its counts and structure match the EEC CSV, and sampled rows of a public copy (templates 1, 4, 5 and 7) "
            "are reproduced exactly. Pass the CSV (`csv=`) to compare every row."
        )
    if not source.differences:
        return f"The `sentences` config was read from the user's EEC CSV `{source.csv}`; it equals the generated set."
    diffs = "\n".join(f"- {d}" for d in source.differences)
    return f"The `sentences` config was read from the user's EEC CSV `{source.csv}`. It differs from the generated set:\n\n{diffs}"


def eec_dataset_card(
    tables: dict[str, pa.Table] | None = None,
    source: EecSource | None = None,
    *,
    name: str,
    probe: str | None = None,
) -> str:
    """The full Markdown card (YAML header + prose) of the EEC dataset ``name`` (its folder and Hub repo name),
    whose rows are ``probe``'s (default: ``name``)."""
    if tables is None:
        tables, source = make_eec_configs(name=name)
    return "".join(
        (
            front_matter(eec_card_metadata(tables, probe or name)),
            _summary_section(tables, name),
            _source_section(source or EecSource()),
            _sentences_section(),
            _questions_section(),
            _person_questions_section(),
            _example_and_rebuild_section(tables, name),
            _limitations_section(),
            f"{results_section(name, 'eec-person')}\n",
            _license_section(),
        )
    )


def _summary_section(tables: dict[str, pa.Table], name: str) -> str:
    rows = ", ".join(f"`{config}` {t.num_rows:,}" for config, t in tables.items())
    return f"""
# EEC emotion fill-in probe

> **Content warning.** This dataset pairs African-American and European first names, and female and male
> persons, with emotion words, to expose stereotyped associations in language models. It is built to probe
> bias; do not use it to train models.

## Summary

The Equity Evaluation Corpus (EEC; Kiritchenko & Mohammad, 2018) holds 8,640 short template sentences that
differ only in a person (a name associated with a race and gender, or a gendered noun phrase) and an emotion
word. Beecher (*Bias in Pre-Trained Language Models: A Question Answering Approach*) turned them into 480
fill-in questions: a model picks the emotion word for the blank from the words that fill it in the EEC, and
the emotions it picks are compared across race and gender groups. His second question type blanks the person
instead (164 questions, `person_questions`): a model picks the person for an emotional sentence.

Rows in this build: {rows}.

```python
from datasets import load_dataset

# or a local folder: load_dataset("datasets/unqover/{name}", "questions", split="test")
questions = load_dataset("unqover/{name}", "questions", split="test")
```
"""


def _source_section(source: EecSource) -> str:
    return f"""
## Source

{_source_text(source)}

The EEC states no licence at any source we found (its Hub copy says "unknown"), so this project does not
redistribute the file: it generates the sentences from the facts published by Kiritchenko & Mohammad (2018),
and `read_eec_csv` reads a copy a user supplies. The EEC's `ID` column (SemEval-2018 "mystery" ids) cannot be
generated and is replaced by our content id.
"""


def _sentences_section() -> str:
    templates = "\n".join(f"{i}. `{t.text}`" for i, t in enumerate(TEMPLATES, 1))
    return f"""
## The sentences

11 templates (rows per template: 1,200 for templates 1-7, 60 for 8-11). Templates 1-4 take an emotional-state
word, 5-7 an emotional-situation word, 8-11 none; template 5 uses `himself`/`herself` by gender and `a`/`an` by
the word:

{templates}

60 persons. The pronoun pairs are one person each, with the subject form in subject templates and the object
form in object templates. Noun phrases are lower case in `person` and capitalised at the start of a sentence
("My sister feels angry."):

| gender | race | persons |
|---|---|---|
{_persons()}

Emotion words, 5 per emotion and kind, in the EEC's spelling (`dissapointed` sic):

| emotion | state words (templates 1-4) | situation words (templates 5-7) |
|---|---|---|
{_words()}

Counts: 8,640 = 7 templates × 60 persons × 20 words + 4 templates × 60 persons; 4,320 per gender; 2,880 each for
African-American, European and no race; 2,100 per emotion (and 240 neutral rows).

| column | type | meaning |
|---|---|---|
{column_table(SENTENCE_SCHEMA, SENTENCE_COLUMN_MEANINGS, code_lists=True)}
"""


def _questions_section() -> str:
    forms = "\n".join(f"| `{f}` | {t} | {example} | {n} |" for f, t, example, n in FORM_DOC)
    return f"""
## The questions

As Beecher built them: each sentence with an emotion word is lower-cased and the word replaced by a blank;
identical strings are merged, and a question's choices are the words that filled it. That gives 480 questions
= 60 persons × 8 forms (template 5 splits by its article), with 20, 16 or 4 choices:

| form | template | example (`text`) | choices |
|---|---|---|---:|
{forms}

So 360 questions have 20 choices, 60 have 16 and 60 have 4 (amazing, annoying, irritating, outrageous: three
anger words, the "anger floor" of the "an" form). Groups: 240 questions per gender; 160 each for
African-American names, European names and no race. The choices use Beecher's spelling `disappointed`.
`unqover.generate.eec.choice_sentences` spells out the 8,400 (question, choice) sentences a model scores; they
are exactly the EEC's emotion sentences.

| column | type | meaning |
|---|---|---|
{column_table(QUESTION_SCHEMA, QUESTION_COLUMN_MEANINGS, code_lists=True)}
"""


def _person_questions_section() -> str:
    return f"""
## The person questions

Beecher's second question type (`qtype = 'person'` in his code, left out of his paper): each sentence's person
slot is blanked, identical strings are merged, and a question's choices are the persons that filled it. That
gives 164 questions: for each of the 7 emotion templates 20 questions (one per emotion word; template 5 splits
into a `herself` and a `himself` question per word) and one for each of the 4 neutral templates. Subject templates
offer the 60 subject forms (`he`, `she`), object templates the 60 object forms (`him`, `her`), and the reflexive
questions 30 persons of their pronoun's gender: 124 questions have 60 choices and 40 have 30. 40 questions per
emotion and 4 without one; the 12 strata (template and form) hold 20 questions each, or 1 for a neutral template.
`unqover.generate.eec_person.person_choice_sentences` spells out the 8,640 (question, choice) sentences a model
scores; they are exactly the EEC's sentences (in Beecher's spelling).

This config holds the questions built from the columns (the blank is exactly the template's person slot, the
emotion is the sentence's `emotion`). Beecher's code builds them by string matching instead (the person string,
as a regular expression, blanked everywhere, then repaired; the emotion found by substring search) and sorts them
by string; `person_questions(question_sentences(rows), "paper")` in `unqover.generate.eec_person` rebuilds his
questions from this config. On the EEC both give the same 164 strings, choice sets and emotions; they differ on
other inputs.

| column | type | meaning |
|---|---|---|
{column_table(PERSON_QUESTION_SCHEMA, PERSON_QUESTION_COLUMN_MEANINGS, code_lists=True)}
"""


def _example_and_rebuild_section(tables: dict[str, pa.Table], name: str) -> str:
    first = next(iter(tables))
    example = json.dumps(tables[first].slice(0, 1).to_pylist()[0], ensure_ascii=False, indent=2)
    return f"""
First row of `{first}`:

```json
{example}
```

Rebuild with:

```python
from unqover.hub.eec_dataset import build_eec_dataset

build_eec_dataset("datasets/unqover", name="{name}", overwrite=True)  # generated, no network
build_eec_dataset(
    "datasets/unqover", name="{name}", csv="Equity-Evaluation-Corpus.csv", overwrite=True
)  # from a copy
```
"""


def _limitations_section() -> str:
    limitations = "\n".join(f"- {item}" for item in LIMITATIONS)
    return f"""
## Limitations

{limitations}

"""


def _license_section() -> str:
    return f"""## License and attribution

- The EEC (templates, persons, emotion words) is by Svetlana Kiritchenko and Saif M. Mohammad (2018); no licence
  is stated, hence `license: unknown`. Please cite their paper.
- The question construction is Stephen Beecher's.
- The code that generates both: ours, Apache-2.0, in the `unqover` toolkit.

## Citation

```bibtex
{CITATIONS}
```
"""
