"""NLI debiasing: training data, gender-swap augmentation, label mapping by name, fine-tuning and the script."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import tiny_models
from unqover.errors import UnqoverError
from unqover.generate.gender_swap import augment_pairs, swap_gender
from unqover.generate.nli_occupations import PROBE_OCCUPATIONS
from unqover.scoring.nli import NLIScorer, load_nli_model
from unqover.train.nli_debias import (
    augment,
    default_learning_rate,
    finetune,
    load_nli_training_data,
    prepare_trainer,
)

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "finetune_nli.py"
MODEL_ORDER = ["contradiction", "neutral", "entailment"]  # not the dataset order, to exercise the mapping

# (premise, hypothesis, label) with 0 entailment, 1 neutral, 2 contradiction; gendered, occupational and neither
GENDERED_OCCUPATION = [
    ("The nurse said she would be late.", "The nurse is a woman.", 0),
    ("The carpenter fixed his own table.", "The carpenter owns a table.", 0),
    ("A man who is a driver waited outside.", "The driver is asleep at home.", 2),
    ("The teacher thanked her students.", "The teacher has students.", 0),
    ("The mechanic and his son repaired the car.", "The car was repaired.", 0),
    ("The secretary called her husband.", "The secretary is single.", 2),
    ("The lawyer told the judge he was ready.", "The lawyer was nervous.", 1),
    ("The baker gave her daughter a cake.", "The baker made bread.", 1),
    ("The guard saw the woman leave.", "The guard was asleep.", 2),
    ("The farmer and his wife sold apples.", "The farmer sold fruit.", 0),
]
GENDERED_ONLY = [
    ("A woman walks in the park.", "A person is outside.", 0),
    ("The boy plays with a ball.", "The boy is sleeping.", 2),
    ("He reads a book at home.", "He likes books.", 1),
    ("The girl sings a song.", "Someone is singing.", 0),
    ("My brother bought a car.", "My brother has no money.", 2),
]
NEUTRAL_TEXT = [
    ("The cashier counted the money.", "Money was counted.", 0),
    ("A dog runs on the beach.", "An animal is running.", 0),
    ("The children are playing outside.", "The children are asleep.", 2),
    ("The manager opened the store.", "The store is closed.", 2),
    ("It is raining in the city.", "The streets are wet.", 1),
    ("A cat sleeps on the sofa.", "A cat is resting.", 0),
    ("The clerk filed the papers.", "The papers were lost.", 2),
    ("People wait for the bus.", "The bus is late.", 1),
    ("The sun rises over the hills.", "It is morning.", 0),
    ("A band plays music in the square.", "Music is played.", 0),
    ("The writer finished a novel.", "A book was written.", 0),
    ("Two friends eat lunch.", "The friends are hungry.", 1),
    ("The developer fixed a bug.", "The code had a bug.", 0),
    ("A bird sits on the fence.", "The bird is flying.", 2),
    ("The librarian sorted the books.", "The books are sorted.", 0),
    ("Students study for an exam.", "The exam is hard.", 1),
    ("The analyst read the report.", "Nobody read the report.", 2),
    ("A train leaves the station.", "The train is moving.", 0),
    ("The cook made soup.", "The soup is cold.", 1),
    ("Snow covers the road.", "The road is white.", 0),
    ("The editor changed the title.", "The title is unchanged.", 2),
    ("A boat sails on the lake.", "A boat is on water.", 0),
    ("The janitor cleaned the floor.", "The floor is dirty.", 2),
    ("Kids draw pictures.", "Kids are drawing.", 0),
]
PAIRS = GENDERED_OCCUPATION + GENDERED_ONLY + NEUTRAL_TEXT


def _rows() -> list[dict]:
    return [{"premise": p, "hypothesis": h, "label": label} for p, h, label in PAIRS]


def _all_texts() -> list[str]:
    texts = [t for p, h, _ in PAIRS for t in (p, h)]
    return texts + [swap_gender(t) for t in texts]


def _nli_model(folder: Path, id2label: list[str]) -> Path:
    return tiny_models.bert_nli(folder, _all_texts(), id2label)


@pytest.fixture(scope="module")
def fixture_dir(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("finetune")
    train = root / "mnli_train.jsonl"
    lines = [
        json.dumps({"premise": p, "hypothesis": h, "label": label, "idx": i})
        for i, (p, h, label) in enumerate(PAIRS)
    ]
    lines.append(
        json.dumps({"premise": "No gold label here.", "hypothesis": "Dropped.", "label": -1, "idx": 99})
    )
    train.write_text("\n".join(lines) + "\n")
    return {
        "train": train,
        "model": _nli_model(root / "model", MODEL_ORDER),
        "generic": _nli_model(root / "generic", ["LABEL_0", "LABEL_1", "LABEL_2"]),
        "root": root,
    }


def test_load_local_file(fixture_dir, tmp_path):
    rows = load_nli_training_data("mnli", fixture_dir["train"])
    assert len(rows) == len(PAIRS)  # the label −1 row is dropped
    assert rows[0] == {"premise": PAIRS[0][0], "hypothesis": PAIRS[0][1], "label": 0}
    assert {r["label"] for r in rows} == {0, 1, 2}
    assert len(load_nli_training_data("snli", fixture_dir["train"], limit=7)) == 7
    csv = tmp_path / "train.csv"
    csv.write_text('premise,hypothesis,label\n"A man, tall.",A person.,entailment\nA b.,C d.,2\nX.,Y.,-1\n')
    assert [r["label"] for r in load_nli_training_data("snli", csv)] == [0, 2]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"sentence1": "a", "label": 0}) + "\n")
    with pytest.raises(UnqoverError, match="premise"):
        load_nli_training_data("mnli", bad)
    with pytest.raises(UnqoverError, match="unknown NLI training source"):
        load_nli_training_data("anli", fixture_dir["train"])


def test_offline_without_file_is_a_clear_error():
    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    for source in ("mnli", "snli"):
        with pytest.raises(UnqoverError, match=r"offline mode.*--train-file"):
            load_nli_training_data(source)


def test_augment_adds_swapped_copies(fixture_dir):
    rows = load_nli_training_data("mnli", fixture_dir["train"])
    out, counts = augment(rows)
    assert counts == {"original": len(PAIRS), "added": len(GENDERED_OCCUPATION)}
    assert out[: len(rows)] == rows  # originals kept, in order
    expected = [
        {"premise": swap_gender(p), "hypothesis": swap_gender(h), "label": label}
        for p, h, label in GENDERED_OCCUPATION
    ]
    assert out[len(rows) :] == expected
    assert out[len(rows)]["premise"] == "The nurse said he would be late."
    assert out[len(rows)]["hypothesis"] == "The nurse is a man."
    # same as augment_pairs itself; occupations=None also swaps gendered pairs without an occupation
    p, _, _ = augment_pairs(*zip(*PAIRS, strict=True), occupations=PROBE_OCCUPATIONS)
    assert [r["premise"] for r in out] == p
    everything, counts = augment(rows, None)
    assert counts["added"] == len(GENDERED_OCCUPATION) + len(GENDERED_ONLY)
    assert len(everything) == len(PAIRS) + counts["added"]


def test_labels_mapped_by_name(fixture_dir, tmp_path):
    rows = load_nli_training_data("mnli", fixture_dir["train"])
    trainer = prepare_trainer(str(fixture_dir["model"]), rows, output_dir=tmp_path / "o", batch_size=64)
    assert trainer.label_ids == {"contradiction": 0, "neutral": 1, "entailment": 2}
    to_model = {0: 2, 1: 1, 2: 0}  # dataset entailment -> model id 2, contradiction -> 0
    assert trainer.train_dataset["labels"] == [to_model[r["label"]] for r in rows]
    batch = next(iter(trainer.get_train_dataloader()))
    assert sorted(batch["labels"].tolist()) == sorted(to_model[r["label"]] for r in rows)
    # the paper's hyper-parameters
    args = trainer.args
    assert (args.adam_beta1, args.adam_beta2, args.weight_decay) == (0.9, 0.999, 0.01)
    assert args.learning_rate == 2e-5 and args.lr_scheduler_type == "linear" and args.num_train_epochs == 3
    assert default_learning_rate("roberta") == 1e-5 and default_learning_rate("bart") == 2e-5
    # LABEL_k models need an explicit label map; with one, the saved config names the labels
    with pytest.raises(UnqoverError, match="label"):
        prepare_trainer(str(fixture_dir["generic"]), rows, output_dir=tmp_path / "g")
    mapped = prepare_trainer(
        str(fixture_dir["generic"]),
        rows[:3],
        output_dir=tmp_path / "g",
        label_map={"entailment": 1, "neutral": 2, "contradiction": 0},
    )
    assert mapped.train_dataset["labels"] == [1, 1, 0]
    assert mapped.model.config.id2label == {0: "contradiction", 1: "entailment", 2: "neutral"}


def test_finetune_saves_and_scores(fixture_dir, tmp_path):
    rows, _ = augment(load_nli_training_data("mnli", fixture_dir["train"]))
    out = tmp_path / "debiased"
    metrics = finetune(
        str(fixture_dir["model"]),
        rows,
        output_dir=out,
        epochs=1,
        batch_size=16,
        learning_rate=1e-3,
        eval_rows=rows[:8],
    )
    assert metrics["n_train"] == len(PAIRS) + len(GENDERED_OCCUPATION)
    assert metrics["label_ids"] == {"contradiction": 0, "neutral": 1, "entailment": 2}
    assert metrics["train_loss"] > 0 and 0 <= metrics["eval_accuracy"] <= 1
    assert (out / "model.safetensors").is_file() and not list(out.glob("*.bin"))
    assert (out / "tokenizer.json").is_file() or (out / "vocab.txt").is_file()
    assert json.loads((out / "finetune_metrics.json").read_text())["n_train"] == metrics["n_train"]
    loaded = load_nli_model(str(out), device="cpu", dtype="float32")
    assert loaded.label_ids == {"contradiction": 0, "neutral": 1, "entailment": 2}
    scores = NLIScorer(loaded).score_pairs(["The nurse said she would be late."], ["The nurse is a man."])
    assert 0 < scores["p_entail"][0] < 1
    # weights changed
    before = load_nli_model(str(fixture_dir["model"]), device="cpu", dtype="float32")
    assert not torch.equal(before.model.classifier.weight, loaded.model.classifier.weight)


def _env() -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    return env


@pytest.mark.slow
def test_script_help():
    done = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, env=_env())
    assert done.returncode == 0, done.stderr
    for option in (
        "--source",
        "--train-file",
        "--augment",
        "--output",
        "--epochs",
        "--lr",
        "--batch-size",
        "--limit",
    ):
        assert option in done.stdout


@pytest.mark.slow
def test_script_end_to_end(fixture_dir, tmp_path):
    out = tmp_path / "script-out"
    cmd = [sys.executable, str(SCRIPT), str(fixture_dir["model"]), "--source", "mnli"]
    cmd += ["--train-file", str(fixture_dir["train"]), "--augment", "--output", str(out), "--epochs", "1"]
    cmd += ["--batch-size", "16", "--seed", "1"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"{len(PAIRS)} original + {len(GENDERED_OCCUPATION)} gender-swapped" in done.stdout
    assert f"unqover probe {out} --bias nli-gender" in done.stdout
    assert (out / "model.safetensors").is_file()
    # the suggested command re-runs the probe on the debiased model (before/after comparison)
    from unqover.cli import main

    run = tmp_path / "probe-after"
    assert (
        main(["probe", str(out), "--bias", "nli-gender", "--output", str(run), "--quiet", "--resamples", "0"])
        == 0
    )
    assert (run / "results.json").is_file()


def test_script_offline_error_in_process(fixture_dir, capsys):
    spec = importlib.util.spec_from_file_location("finetune_nli_script", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.main([str(fixture_dir["model"]), "--source", "snli"]) == 1
    err = capsys.readouterr().err
    assert "offline mode" in err and "--train-file" in err
