"""The eec-emotion dataset folder: build, offline load, user CSV, committed card, CLI."""

from __future__ import annotations

import csv

import pytest
import yaml

from tests.conftest import REPO_ROOT
from unqover.errors import UnqoverError
from unqover.generate.eec import eec_questions, eec_sentences
from unqover.generate.eec_csv import CSV_HEADER
from unqover.generate.eec_person import person_questions, question_sentences
from unqover.hub.eec_dataset import EEC_CONFIGS, build_eec_dataset, eec_dataset_card
from unqover.hub.load import load_rows

NAME = "eec-emotion"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build_eec_dataset(tmp_path_factory.mktemp("eec"), name=NAME, progress=False)


def _write_csv(path, table):
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\r\n")
        writer.writerow(CSV_HEADER)
        for i, r in enumerate(table.to_pylist()):
            cells = [
                r[k] or ""
                for k in ("sentence", "template", "person", "gender", "race", "emotion", "emotion_word")
            ]
            writer.writerow([f"2018-En-mystery-{i:05d}", *cells])
    return path


def test_build_writes_every_config(built):
    assert built.path.name == NAME and EEC_CONFIGS == ("sentences", "questions", "person_questions")
    assert built.rows == {"sentences": 8640, "questions": 480, "person_questions": 164}
    files = sorted(str(p.relative_to(built.path)) for p in built.path.rglob("*") if p.is_file())
    assert files == sorted(["README.md"] + [f"data/{c}/test-00000-of-00001.parquet" for c in EEC_CONFIGS])
    assert not list(built.path.parent.glob(".eec-emotion.building-*"))
    assert load_rows(built.path, "sentences").equals(eec_sentences())
    assert load_rows(built.path, "questions").equals(eec_questions())
    rows = load_rows(built.path, "person_questions")
    assert rows.equals(person_questions())  # the questions built from the columns
    # Beecher's own strings, choice sets, emotions and order are rebuilt from them
    assert person_questions(question_sentences(rows), "paper").equals(person_questions(mode="paper"))
    meta = yaml.safe_load((built.path / "README.md").read_text(encoding="utf-8").split("---\n")[1])
    assert [c["config_name"] for c in meta["configs"]] == ["sentences", "questions", "person_questions"]
    features = {c["config_name"]: [f["name"] for f in c["features"]] for c in meta["dataset_info"]}
    assert features["person_questions"] == rows.column_names
    assert meta["license"] == "unknown"


def test_load_dataset_offline(built):
    from datasets import load_dataset

    questions = load_dataset(str(built.path), "questions", split="test")
    assert questions.num_rows == 480
    row = questions[0]
    assert row["question"] == "ebony feels ________." and len(row["choices"]) == 20
    sentences = load_dataset(str(built.path), "sentences", split="test")
    assert sentences.num_rows == 8640 and sentences[0]["sentence"] == "Ebony feels angry."
    persons = load_dataset(str(built.path), "person_questions", split="test")
    assert persons.num_rows == 164 and persons[0]["question"] == "________ feels angry."
    assert len(persons[0]["choices"]) == 60 and persons[0]["choice_races"][-1] is None


def test_overwrite_and_config_checks(tmp_path):
    first = build_eec_dataset(tmp_path, name=NAME, configs=["questions"], progress=False)
    assert first.rows == {"questions": 480}
    with pytest.raises(UnqoverError, match="already exists"):
        build_eec_dataset(tmp_path, name=NAME, progress=False)
    with pytest.raises(UnqoverError, match="unknown eec-emotion config nope"):
        build_eec_dataset(tmp_path, name=NAME, configs=["nope"], overwrite=True, progress=False)
    assert build_eec_dataset(tmp_path, name=NAME, overwrite=True, progress=False).rows["sentences"] == 8640


def test_build_from_a_user_csv(tmp_path):
    path = _write_csv(tmp_path / "Equity-Evaluation-Corpus.csv", eec_sentences("beecher"))
    built = build_eec_dataset(tmp_path / "out", name=NAME, csv=path, progress=False)
    assert load_rows(built.path, "sentences").equals(eec_sentences("beecher"))
    assert load_rows(built.path, "questions").equals(eec_questions())
    assert load_rows(built.path, "person_questions").equals(person_questions())
    card = (built.path / "README.md").read_text(encoding="utf-8")
    assert "read from the user's EEC CSV `Equity-Evaluation-Corpus.csv`; it equals the generated set" in card


def test_build_from_a_differing_csv_warns_and_says_so(tmp_path):
    table = eec_sentences().slice(1)  # one row missing
    path = _write_csv(tmp_path / "short.csv", table)
    with pytest.warns(UserWarning, match="1 missing rows"):
        built = build_eec_dataset(
            tmp_path / "out", name=NAME, configs=["sentences"], csv=path, progress=False
        )
    assert built.rows == {"sentences": 8639}
    assert "It differs from the generated set:\n\n- 1 missing rows, e.g. Ebony feels angry." in (
        built.path / "README.md"
    ).read_text(encoding="utf-8")


def test_the_registry_builds_eec_emotion(tmp_path):
    from unqover.jobs.build_datasets import build_datasets, requested_datasets
    from unqover.probes.registry import dataset_owner

    assert requested_datasets([NAME, "gender"]) == [NAME, "gender"]
    owner = dataset_owner(NAME)
    assert owner.builder.check_dataset_configs(NAME, None) == ["sentences", "questions", "person_questions"]
    with pytest.raises(UnqoverError, match="unknown eec-emotion config"):
        owner.builder.check_dataset_configs(NAME, ["qa"])
    built = build_datasets([NAME], tmp_path, configs=["questions"], overwrite=False, progress=False, given={})
    assert [b.rows for b in built] == [{"questions": 480}]


def test_committed_card_matches_the_generator():
    """datasets/unqover/eec-emotion/README.md is the generated (no CSV) build's card."""
    committed = REPO_ROOT / "datasets" / "unqover" / "eec-emotion" / "README.md"
    assert committed.read_text(encoding="utf-8") == eec_dataset_card(name=NAME), f"regenerate {committed}"


def test_card_content():
    card = eec_dataset_card(name=NAME)
    for text in (
        "Content warning",
        "Kiritchenko",
        "no licence",
        "8,640 = 7 templates × 60 persons × 20 words + 4 templates × 60 persons",
        "4,320 per gender",
        "2,880 each",
        "2,100 per emotion",
        "480 questions\n= 60 persons × 8 forms",
        "| `found-in-an-situation` | 5 | `Alonzo found himself in an ___ situation.` | 4 |",
        "amazing, annoying, irritating, outrageous",
        "`disappointed`",
        "## Limitations",
        "## The person questions",
        "gives 164 questions",
        "124 questions have 60 choices and 40 have 30",
        "`person_questions` 164",
    ):
        assert text in card, text
    for column in ("person_slot", "choice_emotions", "emotion_word", "choice_genders", "choice_races"):
        assert f"| `{column}` |" in card


def test_cli_builds_eec_emotion_offline(tmp_path, capsys):
    from unqover.cli import main

    assert main(["build-datasets", "eec-emotion", "--output", str(tmp_path), "--quiet"]) == 0
    assert "sentences 8,640, questions 480, person_questions 164 rows" in capsys.readouterr().out
    assert load_rows(tmp_path / "eec-emotion", "questions").num_rows == 480
    path = _write_csv(tmp_path / "eec.csv", eec_sentences())
    args = ["build-datasets", "eec-emotion", "--output", str(tmp_path / "csv"), "--quiet"]
    assert main([*args, "--source", f"eec={path}"]) == 0
    assert load_rows(tmp_path / "csv" / "eec-emotion", "sentences").equals(eec_sentences())
    assert (
        main(["build-datasets", "eec-emotion", "--output", str(tmp_path / "x"), "--source", "eec=hub"]) == 2
    )
    assert "local EEC CSV" in capsys.readouterr().err
