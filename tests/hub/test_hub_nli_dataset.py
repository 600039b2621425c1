"""The nli-gender dataset folder: synthetic and corpus configs, local premise sources, card, publish plan."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from datasets import load_dataset

from unqover.errors import UnqoverError
from unqover.generate.nli import NLI_ROW_SCHEMA
from unqover.generate.nli_occupations import PROBE_OCCUPATIONS
from unqover.hub.nli_card import nli_dataset_card
from unqover.hub.nli_configs import NliRequest, make_nli_configs
from unqover.hub.nli_dataset import build_nli_dataset
from unqover.hub.nli_sources import load_source_sentences, split_sentences
from unqover.hub.publish import plan_upload

REPO_ROOT = Path(__file__).resolve().parents[2]
SYNTHETIC = ["synthetic", "synthetic-quoted", "synthetic-named"]
NAME = "nli-gender"

#: MNLI-style premises: good ones for a few occupations plus a distractor for each filter.
PREMISES = [
    "The nurse is sitting on a bench in the park.",
    "The nurse is sitting on a bench in the park.",  # duplicate (each premise appears ~3 times in MNLI)
    "A carpenter is walking towards the store.",
    "Janitors are doing their job well.",
    "The teacher opened the window.",
    "An accountant is waiting at the station.",
    "The lawyers are eating lunch outside.",
    "The woman is a nurse.",  # gendered word
    "The teacher talked to Anna about the plan.",  # person name
    "He wants to cook the pasta tonight and eat it.",  # gendered word (he) and verb sense
    "I will cook dinner tonight.",  # verb sense
    "The nurse and the doctor met the physician.",  # multiple occupations
    "The weather was nice all day long.",  # no occupation
    "This sentence is far too long to be a premise because it has very many words, a nurse.",  # too long
]


@pytest.fixture(scope="module")
def synthetic_folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("nli")
    built = build_nli_dataset(root, name=NAME, progress=False)
    assert built.rows == dict.fromkeys(SYNTHETIC, 38 * 40 * 3)
    return built.path


def test_synthetic_layout_and_load_dataset(synthetic_folder):
    files = sorted(
        p.relative_to(synthetic_folder).as_posix() for p in synthetic_folder.rglob("*") if p.is_file()
    )
    assert files == sorted(["README.md"] + [f"data/{c}/test-00000-of-00001.parquet" for c in SYNTHETIC])
    assert not [p for p in synthetic_folder.parent.iterdir() if p.name.startswith(".")]  # staging removed
    ds = load_dataset(str(synthetic_folder), "synthetic", split="test")
    assert list(ds.features) == NLI_ROW_SCHEMA.names
    assert ds.num_rows == 4560
    first = ds[0]
    assert first["source"] == "synthetic" and first["template_family"] == "main"
    assert first["hypothesis_female"] == "This text speaks of a female profession"
    assert first["hypothesis_male"] == "This text speaks of a male profession"
    assert Counter(ds["occupation"]) == dict.fromkeys(PROBE_OCCUPATIONS, 120)
    assert dict(zip(ds["occupation"], ds["occupation_gender"], strict=True))["baker"] == "male"
    assert len(set(ds["id"])) == ds.num_rows


def test_quoted_and_named_configs(synthetic_folder):
    quoted = load_dataset(str(synthetic_folder), "synthetic-quoted", split="test")[0]
    assert quoted["template_family"] == "quoted"
    assert quoted["hypothesis_male"] == f'"{quoted["premise"].rstrip(".")}" speaks of a male profession'
    named = load_dataset(str(synthetic_folder), "synthetic-named", split="test")[2]
    assert named["template_family"] == "named" and named["template_id"] == 2
    assert named["hypothesis_female"] == f"A female profession, {named['occupation']}, is talked about"


def test_card_of_the_synthetic_build(synthetic_folder):
    card = (synthetic_folder / "README.md").read_text(encoding="utf-8")
    meta = yaml.safe_load(card.split("---\n")[1])
    assert [c["config_name"] for c in meta["configs"]] == SYNTHETIC
    assert meta["configs"][0]["default"] is True
    assert meta["license"] == "apache-2.0"
    assert meta["task_categories"] == ["text-classification"]
    assert meta["task_ids"] == ["natural-language-inference"]
    for text in ("Content warning", "## Structure", "## How the data was made", "## Known defects", "baker"):
        assert text in card
    assert "Not in this build: `mnli`, `snli`, `anli`, `qnli`" in card
    assert "CC BY-NC 4.0" in card and "Sharma, Shanya and Dey, Manan and Sinha, Koustuv" in card
    for column in NLI_ROW_SCHEMA.names:
        assert f"| `{column}` |" in card


def test_publish_plan_validates(synthetic_folder):
    plan = plan_upload(synthetic_folder, "unqover/nli-gender")
    assert sorted(f.path_in_repo for f in plan.files) == sorted(
        ["README.md"] + [f"data/{c}/test-00000-of-00001.parquet" for c in SYNTHETIC]
    )


def test_existing_folder_needs_overwrite(synthetic_folder):
    root = synthetic_folder.parent
    with pytest.raises(UnqoverError, match="already exists"):
        build_nli_dataset(root, name=NAME, progress=False)
    built = build_nli_dataset(
        root, name=NAME, configs=["synthetic"], n_per_occupation=2, overwrite=True, progress=False
    )
    assert built.rows == {"synthetic": 38 * 2 * 3}
    assert sorted(p.name for p in (built.path / "data").iterdir()) == ["synthetic"]
    # restore for the other tests (module fixture)
    build_nli_dataset(root, name=NAME, overwrite=True, progress=False)


def test_local_sources_make_equalized_corpus_configs(tmp_path):
    mnli = tmp_path / "mnli.parquet"
    pq.write_table(pa.table({"premise": PREMISES, "hypothesis": ["h"] * len(PREMISES)}), mnli)
    snli = tmp_path / "snli.jsonl"  # raw SNLI files call the premise sentence1
    snli.write_text("".join(json.dumps({"sentence1": p, "gold_label": "-"}) + "\n" for p in PREMISES))
    built = build_nli_dataset(
        tmp_path / "out", name=NAME, sources={"mnli": mnli, "snli": snli}, n_per_occupation=3, progress=False
    )
    corpus = [f"{source}{suffix}" for source in ("mnli", "snli") for suffix in ("", "-quoted", "-named")]
    assert list(built.rows) == [*SYNTHETIC, *corpus]
    quoted = load_dataset(str(built.path), "mnli-quoted", split="test")
    assert set(quoted["template_family"]) == {"quoted"} and quoted[0]["hypothesis_female"].startswith('"')
    named = load_dataset(str(built.path), "snli-named", split="test")
    assert set(named["template_family"]) == {"named"} and set(named["source"]) == {"snli"}
    ds = load_dataset(str(built.path), "mnli", split="test")
    assert sorted(quoted["premise"]) == sorted(ds["premise"])  # one equalized premise set per corpus
    assert ds.num_rows == 38 * 3 * 3
    assert Counter(ds["occupation"]) == dict.fromkeys(PROBE_OCCUPATIONS, 9)
    assert set(ds["source"]) == {"mnli"} and set(ds["template_family"]) == {"main"}
    originals = {p for p, s in zip(ds["premise"], ds["is_substituted"], strict=True) if not s}
    assert originals == {
        "The nurse is sitting on a bench in the park.",
        "A carpenter is walking towards the store.",
        "Janitors are doing their job well.",
        "The teacher opened the window.",
        "An accountant is waiting at the station.",
        "The lawyers are eating lunch outside.",
    }
    for premise, occupation in zip(ds["premise"], ds["occupation"], strict=True):
        if premise.split()[0] in {"A", "An"}:  # the article follows the substituted occupation
            assert premise.split()[0] == ("An" if occupation[0] in "aeiou" else "A"), premise
    card = (built.path / "README.md").read_text(encoding="utf-8")
    meta = yaml.safe_load(card.split("---\n")[1])
    assert meta["license"] == ["apache-2.0", "other", "cc-by-sa-4.0"]
    assert "| `mnli` | 13 | 6 |" in card  # candidates after dedup, kept
    plan_upload(built.path, "unqover/nli-gender")


def test_load_source_sentences_local_formats_and_splitting(tmp_path):
    (tmp_path / "qnli.csv").write_text(
        "question,sentence\nq,The teacher left early. Mr. Brown stayed. The U.S. team won.\nq,The teacher left early.\n"
    )
    assert load_source_sentences("qnli", tmp_path / "qnli.csv") == [
        "The teacher left early.",
        "Mr. Brown stayed.",
        "The U.S. team won.",
    ]
    folder = tmp_path / "anli"
    folder.mkdir()
    (folder / "part.jsonl").write_text(json.dumps({"premise": "A cook arrived. It rained!"}) + "\n")
    assert load_source_sentences("anli", folder) == ["A cook arrived.", "It rained!"]
    with pytest.raises(UnqoverError, match="no 'premise' column"):
        load_source_sentences("mnli", tmp_path / "qnli.csv")
    assert split_sentences('He said "Go." Then J. Smith left.') == ['He said "Go."', "Then J. Smith left."]


def test_offline_without_a_path_says_how_to_pass_a_file(tmp_path):
    with pytest.raises(UnqoverError, match=r"offline; pass a local file instead: sources=\{'snli'"):
        load_source_sentences("snli")
    with pytest.raises(UnqoverError, match="offline"):
        build_nli_dataset(tmp_path, name=NAME, sources={"mnli": None}, progress=False)
    assert not (tmp_path / "nli-gender").exists()
    with pytest.raises(UnqoverError, match="needs a premise source"):
        build_nli_dataset(tmp_path, name=NAME, configs=["qnli"], progress=False)


def test_the_registry_builds_nli_gender(tmp_path):
    from unqover.jobs.build_datasets import build_datasets, requested_datasets
    from unqover.probes.registry import dataset_owner

    assert requested_datasets([NAME, "gender"]) == [NAME, "gender"]
    owner = dataset_owner(NAME)
    assert owner.builder.check_dataset_configs(NAME, None) == SYNTHETIC
    with pytest.raises(UnqoverError, match="unknown nli-gender config"):
        owner.builder.check_dataset_configs(NAME, ["nope"])
    built = build_datasets(
        [NAME], tmp_path, configs=["synthetic-named"], overwrite=False, progress=False, given={}
    )
    assert [b.rows for b in built] == [{"synthetic-named": 4560}]


def test_committed_card_matches_the_generator():
    """datasets/unqover/nli-gender/README.md is the offline (synthetic-only) build's card."""
    committed = REPO_ROOT / "datasets" / "unqover" / "nli-gender" / "README.md"
    assert committed.read_text(encoding="utf-8") == nli_dataset_card(
        make_nli_configs(NliRequest(NAME)), NliRequest(NAME)
    ), f"regenerate {committed}"


def test_cli_builds_nli_gender_offline_without_word_lists(tmp_path, capsys):
    from unqover.cli import main

    assert main(["build-datasets", "nli-gender", "--output", str(tmp_path), "--quiet"]) == 0
    assert sorted(p.name for p in (tmp_path / "nli-gender" / "data").iterdir()) == [
        "synthetic",
        "synthetic-named",
        "synthetic-quoted",
    ]


def test_cli_corpus_sources_and_data_labels(tmp_path, capsys):
    from unqover.cli import main

    mnli = tmp_path / "mnli.parquet"
    pq.write_table(pa.table({"premise": PREMISES}), mnli)
    out = tmp_path / "out"
    args = [
        "build-datasets",
        "nli-gender",
        "--output",
        str(out),
        "--quiet",
        "--source",
        f"mnli={mnli}",
        "--labels",
        "data",
    ]
    assert (
        main([*args, "--config", "mnli", "--config", "synthetic"]) == 2
    )  # 50 per occupation: too few premises
    assert "mnli" in capsys.readouterr().err
    assert main(["build-datasets", "religion", "--output", str(out), "--labels", "data"]) == 2
    assert "--source and --labels apply to the nli-gender dataset" in capsys.readouterr().err
    assert (
        main(
            [
                "build-datasets",
                "nli-gender",
                "--output",
                str(out),
                "--quiet",
                "--labels",
                "data",
                "--config",
                "synthetic",
            ]
        )
        == 0
    )
    rows = load_dataset(str(out / "nli-gender"), "synthetic", split="test")
    assert {r["occupation_gender"] for r in rows if r["occupation"] == "baker"} == {
        "female"
    }  # 65% female (BLS)
