"""NLI probe: label ids read by name for each known id order, P_e = sigmoid(z_e − z_c), refusals, batching."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import tiny_models
from unqover.errors import UnqoverError
from unqover.scoring.nli import NLIScorer, load_nli_model, nli_label_ids

PREMISES = [
    "The nurse ate a bagel before work.",
    "A carpenter was walking with a dog in the park.",
    "The accountant, who had a long day, read the news at home.",
    "A driver stopped.",
    "The librarian smiled.",
]
HYPOTHESES = [
    "This text speaks of a female profession.",
    "This text speaks of a male profession.",
    "This text talks about a female occupation.",
    "This text mentions a male profession.",
    "This text speaks of a female profession.",
]
ORDERS = {
    "roberta-large-mnli": ["CONTRADICTION", "NEUTRAL", "ENTAILMENT"],
    "run_glue": ["entailment", "neutral", "contradiction"],
    "cross-encoder": ["contradiction", "entailment", "neutral"],
}


def _nli_model(folder: Path, id2label: list[str], seed: int = 0) -> Path:
    return tiny_models.bert_nli(folder, PREMISES + HYPOTHESES, id2label, seed)


@pytest.fixture(scope="module")
def nli_models(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("nli")
    folders = {
        name: _nli_model(root / name, labels, seed=i) for i, (name, labels) in enumerate(ORDERS.items())
    }
    folders["generic"] = _nli_model(root / "generic", ["LABEL_0", "LABEL_1", "LABEL_2"])
    folders["two-way"] = _nli_model(root / "two-way", ["Contradict", "Entailed"])
    return folders


def _reference(folder: Path, entail: int, contradict: int) -> tuple[np.ndarray, np.ndarray]:
    """P_e and the full softmax, one pair at a time, straight from transformers."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    p_e, probs = [], []
    for premise, hypothesis in zip(PREMISES, HYPOTHESES, strict=True):
        with torch.no_grad():
            z = model(**tok(premise, hypothesis, return_tensors="pt")).logits[0].double()
        p_e.append(float(torch.sigmoid(z[entail] - z[contradict])))
        probs.append(torch.softmax(z, -1).numpy())
    return np.array(p_e), np.array(probs)


@pytest.mark.parametrize("name", list(ORDERS))
def test_label_ids_by_name_and_p_entail(nli_models, name):
    names = [n.lower() for n in ORDERS[name]]
    loaded = load_nli_model(str(nli_models[name]), device="cpu")
    expected = {label: names.index(label) for label in ("entailment", "neutral", "contradiction")}
    assert loaded.label_ids == expected
    assert loaded.provenance()["label_source"] == "config"
    out = NLIScorer(loaded, batch_size=2).score_pairs(PREMISES, HYPOTHESES)
    p_e, probs = _reference(nli_models[name], expected["entailment"], expected["contradiction"])
    np.testing.assert_allclose(out["p_entail"], p_e, rtol=1e-5, atol=1e-6)
    for label, i in expected.items():
        np.testing.assert_allclose(out[label], probs[:, i], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["entailment"] + out["neutral"] + out["contradiction"], 1.0, rtol=1e-6)
    assert np.ptp(out["p_entail"]) > 1e-3  # scores spread, so a wrong id would show


def test_batch_size_invariance(nli_models):
    loaded = load_nli_model(str(nli_models["run_glue"]), device="cpu")
    results = [
        NLIScorer(loaded, batch_size=b).score_pairs(PREMISES, HYPOTHESES)["p_entail"] for b in (1, 2, 5)
    ]
    for other in results[1:]:
        np.testing.assert_allclose(other, results[0], rtol=1e-5, atol=1e-6)
    assert NLIScorer(loaded).score_pairs([], [])["p_entail"].shape == (0,)


def test_generic_labels_refused_unless_mapped(nli_models):
    with pytest.raises(UnqoverError, match="generic"):
        load_nli_model(str(nli_models["generic"]), device="cpu")
    label_map = {"contradiction": 0, "entailment": 1, "neutral": 2}
    loaded = load_nli_model(str(nli_models["generic"]), device="cpu", label_map=label_map)
    assert loaded.label_ids == {"entailment": 1, "neutral": 2, "contradiction": 0}
    assert loaded.provenance()["label_source"] == "label_map"
    out = NLIScorer(loaded).score_pairs(PREMISES, HYPOTHESES)
    p_e, _ = _reference(nli_models["generic"], 1, 0)
    np.testing.assert_allclose(out["p_entail"], p_e, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("label_map", "message"),
    [
        ({"entailment": 0, "contradiction": 0}, "same id"),
        ({"entailment": 0, "contradiction": 3}, "out of range"),
        ({"entailment": 0, "neutral": 1}, "needs an id for contradiction"),
        ({"entailment": 0, "contradiction": 1, "maybe": 2}, "keys must be"),
        ({"entailment": "0", "contradiction": 1}, "must be an integer"),
    ],
)
def test_bad_label_map(label_map, message):
    with pytest.raises(UnqoverError, match=message):
        nli_label_ids({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, label_map)


def test_label_names_and_refusals():
    assert nli_label_ids({"0": "Entailment", "1": "Neutral", "2": "Contradiction"}) == {
        "entailment": 0,
        "neutral": 1,
        "contradiction": 2,
    }
    with pytest.raises(UnqoverError, match="no contradiction"):
        nli_label_ids({0: "entailment", 1: "neutral", 2: "other"})
    with pytest.raises(UnqoverError, match="not-entailment"):
        nli_label_ids({0: "entailment", 1: "not_entailment"})
    with pytest.raises(UnqoverError, match="twice"):
        nli_label_ids({0: "entailment", 1: "entailed", 2: "contradiction"})


def test_two_way_model(nli_models):
    loaded = load_nli_model(str(nli_models["two-way"]), device="cpu")
    assert loaded.label_ids == {"entailment": 1, "contradiction": 0}
    out = NLIScorer(loaded).score_pairs(PREMISES, HYPOTHESES)
    assert "neutral" not in out
    p_e, _ = _reference(nli_models["two-way"], 1, 0)
    np.testing.assert_allclose(out["p_entail"], p_e, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["entailment"], out["p_entail"], rtol=1e-6)


def test_loader_errors(tmp_path):
    with pytest.raises(UnqoverError, match=r"no model folder .*missing \(it looks like a path"):
        load_nli_model(str(tmp_path / "missing"))
    qa = tiny_models.bert_qa(tmp_path / "qa", PREMISES)
    with pytest.raises(UnqoverError, match="not a sequence classifier"):
        load_nli_model(str(qa), device="cpu")
    loaded = load_nli_model(str(_nli_model(tmp_path / "m", ORDERS["run_glue"])), device="cpu")
    with pytest.raises(UnqoverError, match="premises but"):
        NLIScorer(loaded).score_pairs(["a"], [])
