"""Every probe of the Space on the models of its server, offline (issue 47, item 4).

The operator gives the Space a models folder: its GGUF files and its model folders are listed by their names,
marked local (``tiny.gguf (local)``), and each probe of the Live probe tab is offered the models that answer what
it asks (its ``wants``, the model's capabilities read before it loads, as ``unqover probe`` checks them): the
UnQover bias classes, the NLI gender-occupation probe (a causal LM asked by a prompt) and Beecher's emotion and
person fill-ins all score a tiny GGUF file and a tiny transformers folder the test writes, and the GGUF file gives
the numbers of the same model saved as a folder. No text the page shows holds a path of the server, refusals
raised with one included. Driven through the Space's handlers (:class:`unqover.space.app.Space`)."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pytest

import tiny_models
from tests.space.test_space_round5 import shown
from unqover.probes.registry import PROBES
from unqover.space import render
from unqover.space.app import Space, build_app

pytest.importorskip("gguf", reason="the gguf package is in the models extra")

#: the server's models folder: no page shows its name or where it lies
FOLDER = "server-models-7f3a"
GGUF = "tiny.gguf (local)"
HF = "tiny-hf (local)"
QA = "qa (local)"
BROKEN = "broken (local)"
BAD_WEIGHTS = "bad-weights (local)"


@pytest.fixture(scope="module")
def world(tmp_path_factory, religion_tables, upstream_word_lists_path):
    """The server's models folder: a tiny chat Llama as a GGUF file beside its transformers folder, a tiny QA
    model, a folder whose config.json is no JSON and one whose weights file is no safetensors file."""
    rows = religion_tables["qa"]
    texts = sorted(set(rows["context"].to_pylist()[:2000]) | set(rows["question"].to_pylist()[:2000]))
    base = tmp_path_factory.mktemp("space-local-models")
    models = base / FOLDER
    models.mkdir()
    made = tiny_models.gguf_causal_lm(base / "made", texts)
    shutil.copy(made, models / "tiny.gguf")
    shutil.copytree(base / "made" / "hf", models / "tiny-hf")
    tiny_models.bert_qa(models / "qa", texts)
    (models / "broken").mkdir()
    (models / "broken" / "config.json").write_text("{not json")
    shutil.copytree(models / "tiny-hf", models / "bad-weights")
    (models / "bad-weights" / "model.safetensors").write_bytes(b"\xff" * 16)
    return {"base": base, "models": models, "lists": upstream_word_lists_path}


def space(world, **settings) -> Space:
    return Space(
        [str(world["models"])],
        world["base"] / "cache",
        word_lists=world["lists"],
        resamples=20,
        results_repos=(),
        **settings,
    )


def no_path(text: str, world) -> None:
    """No part of a path of the server: the models folder, the temporary folder it lies in."""
    for part in (FOLDER, str(world["base"]), world["base"].name, "/tmp"):
        assert part not in text, (part, text)


def test_a_models_folder_lists_its_gguf_file_beside_its_model_folders(world):
    page = space(world)
    # a folder holding one GGUF file and model folders is a folder of models, not one GGUF model
    assert page.models == [BAD_WEIGHTS, BROKEN, QA, HF, GGUF]
    assert page.choices[GGUF] == str(world["models"] / "tiny.gguf")
    no_path(json.dumps(build_app([str(world["models"])], world["base"] / "cache").config), world)


def test_each_probe_is_offered_the_models_that_answer_what_it_asks(world):
    page = space(world)
    # causal LMs (and a folder whose config cannot be read: offered, and refused when probed)
    causal = [BAD_WEIGHTS, BROKEN, HF, GGUF]
    unqover = PROBES.group_of("religion")
    for bias in PROBES:  # the UnQover classes take QA models too; NLI and the fill-ins take causal LMs
        expected = page.models if PROBES.group_of(bias) == unqover else causal
        assert page.offered(PROBES[bias].wants) == expected, bias
    assert page.offered(page.explorer.wants) == page.models
    # the bias class chosen: the model shown stays where it is offered, else the first offered
    update = page.model_choices("eec-emotion", QA)
    assert (update["choices"], update["value"]) == (causal, BAD_WEIGHTS)
    assert page.model_choices("nli-gender", GGUF)["value"] == GGUF
    assert page.model_choices("religion", "owner/typed")["value"] == "owner/typed"  # a Hub id typed stays
    demo = build_app([str(world["models"])], world["base"] / "cache", default_bias="eec-person")
    lists = {c["props"].get("label"): c["props"].get("choices") for c in demo.config["components"]}
    assert [value for _, value in lists["model (or type a Hub id)"]] == causal
    assert [value for _, value in lists["model"]] == page.models  # the explorer's


def _headline_value(bias: str, headline: str, result: dict) -> None:
    """The probe's headline number, as its results record it, in the report the page shows."""
    if bias == "nli-gender":
        row, value = "| ΔP:", f"{result['delta_P']:.2f}"
    elif bias.startswith("eec"):
        row, value = "| gender |", f"{result['tests']['gender']['cramers_v']:.4f}"
    else:
        row, value = "| positional error δ |", None
        assert math.isfinite(result["positional_error"]), result["positional_error"]
    line = next(line for line in headline.splitlines() if line.startswith(row))
    assert re.search(r"\d", line.split("|")[-2]) and "declined" not in line, line
    assert value is None or value in line, (value, line)


#: (bias class, sample, its unit on the page): the smallest sample that gives the probe's headline number
SAMPLES = [
    ("religion", 30, "groups"),
    ("nli-gender", 2, "rows per occupation"),
    ("eec-emotion", 1, "persons per gender × race cell"),
    ("eec-person", 1, "questions per template × form"),
]


@pytest.mark.parametrize(("bias", "sample", "unit"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_every_probe_scores_a_local_gguf_file_and_folder(world, bias, sample, unit):
    page = space(world)
    outputs = {}
    for name in (GGUF, HF):
        status, headline, pairs, charts = outputs[name] = page.probe(name, bias, sample)
        assert status.startswith(f"{render.DONE} {name} (causal, "), status
        assert f" on {bias}, {sample} {unit}" in status, status
        assert name in headline.splitlines()[0], headline
        no_path(shown(status, headline, pairs, charts), world)
    recorded = {
        name: json.loads(next(page.cache_dir.glob(f"{name}@*/{bias}-limit{sample}/results.json")).read_text())
        for name in ("tiny.gguf", "tiny-hf")
    }
    assert recorded["tiny.gguf"]["provenance"]["model"]["gguf"]["file"] == "tiny.gguf"
    # the GGUF file's numbers are those of the same model saved as a transformers folder
    assert recorded["tiny.gguf"]["result"] == recorded["tiny-hf"]["result"]
    _headline_value(bias, outputs[GGUF][1], recorded["tiny.gguf"]["result"])


#: refusals of the models of the server, exactly as the page shows them: (model, bias class, message)
REFUSALS = [
    (QA, "eec-emotion", f"{QA!r} is a qa model; eec-emotion needs a masked LM or a causal LM"),
    (
        QA,
        "nli-gender",
        f"{QA!r} is a qa model; nli-gender needs an NLI classifier (e.g. FacebookAI/roberta-large-mnli) or a "
        "causal LM",
    ),
    # raised with a path of the server (its config, its weights file), shown by the model's name
    (
        BROKEN,
        "nli-gender",
        f"cannot read the config of the model folder {BROKEN}: It looks like the config file at '{BROKEN}' is "
        "not a valid JSON file.",
    ),
    (
        BAD_WEIGHTS,
        "eec-person",
        f"{BAD_WEIGHTS} is not a safetensors file (header of {0xFFFFFFFFFFFFFFFF} bytes)",
    ),
]


@pytest.mark.parametrize(("model", "bias", "message"), REFUSALS, ids=[f"{r[0]} {r[1]}" for r in REFUSALS])
def test_a_refusal_names_the_model_without_its_path(world, model, bias, message):
    status, headline, _, charts = space(world).probe(model, bias, 1)
    assert status == f"⚠️ {message}" and headline == charts == ""
    no_path(status, world)


def test_a_listed_model_typed_by_its_path_is_named_without_it(world):
    """Where the operator allows local models, the path typed is the listed model: named as the list names it."""
    page = space(world, local_models=True)
    status = page.probe(str(world["models"] / "broken"), "eec-emotion", 1)[0]
    assert status.startswith(f"⚠️ cannot read the config of the model folder {BROKEN}:"), status
    no_path(status, world)
    status = page.probe(str(Path(world["models"]) / "tiny.gguf"), "nli-gender", 2)[0]
    assert status.startswith(f"{render.DONE} {GGUF} (causal, "), status


def test_the_results_tab_shows_the_live_runs_without_a_path(world):
    """The live probe's runs of every probe (its cache is the results folder by default), listed and viewed."""
    page = space(world)
    for bias, sample, _ in SAMPLES:
        assert page.probe(GGUF, bias, sample)[0].startswith(render.DONE)  # from the cache where a test ran it
    status, table, *_ = page.load_results("")
    ran = table[table["model"] == GGUF]
    assert sorted(ran["probe"]) == sorted(bias for bias, _, _ in SAMPLES), table
    texts = [status, shown(table)]
    for run in ran["run"]:
        heading, pairs, charts = page.view_run("", run)
        assert GGUF in heading.splitlines()[0], heading
        texts.append(shown(heading, pairs, charts))
    no_path("\n".join(texts), world)
