"""Results on the wrong page: `unqover publish-results` publishes only runs whose recorded model is exactly
`--model-repo`, and a number from part of the rows only as the `_sample` task; everything else is refused in one
line naming what differs (through the real command line, offline). Beside each refusal, the good input it must
not catch.

The cases of issue 29: bare predictions of 50 groups measured and published (a subset: `_sample`, or refused
when they name no model); lm-eval's logged samples whose results file says `pretrained=openai/gpt2` published
on another repo; a run of `me/base` with the adapter `someone/lora` published as `me/base`'s numbers; and results
of an older unqover, which record no selection.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from tests.cli.test_cli_bad_data import refused
from tests.jobs.test_publish_results import _edited, _files, religion  # noqa: F401  (fixture)
from unqover.cli import main
from unqover.predictions import write_predictions
from unqover.scoring.sampling import select_groups

BASE = {"id": "me/base", "revision": "1" * 40, "family": "qa"}
LORA = {
    "id": "someone/lora",
    "revision": "2" * 40,
    "base_model": "me/base",
    "peft_type": "LORA",
    "sha256": "ab",
}


def _rows(dataset: Path) -> pa.Table:
    return pq.read_table(sorted((dataset / "data" / "qa").glob("*.parquet")))


def _scores(ids: pa.Array) -> pa.Table:
    rng = np.random.default_rng(11)
    return pa.table({"id": ids, "score_1": rng.random(len(ids)), "score_2": rng.random(len(ids))})


def _measured(
    folder: Path, dataset: Path, about: dict | None, groups: int | None = None, *extra: str
) -> Path:
    """Predictions of every row (or of the ``groups`` the design keeps with seed 0), with ``about`` as their
    provenance (None: none), measured by `unqover measure`; the results file."""
    rows = _rows(dataset)
    if groups is not None:
        rows = select_groups(rows, limit=groups, seed=0)
    predictions = folder / "predictions.parquet"
    write_predictions(predictions, _scores(rows["id"].combine_chunks()), about or {})
    output = folder / "results.json"
    bare = [] if about else ["--bias", "religion", "--dataset", str(dataset), "--config", "qa"]
    assert (
        main(["measure", str(predictions), *bare, "--output", str(output), "--resamples", "20", *extra]) == 0
    )
    return output


def _about(dataset: Path, model: dict | None = None, **more) -> dict:
    about = {"probe": "religion", "dataset": {"source": str(dataset), "config": "qa", "split": "test"}}
    return {**about, **({"model": model} if model else {}), **more}


def _publish(run: Path, repo: str, output: Path) -> list[str]:
    return ["publish-results", str(run), "--model-repo", repo, "--output", str(output)]


@pytest.fixture(scope="module")
def logged(tmp_path_factory, religion) -> Path:  # noqa: F811
    """lm-eval's logged samples of the religion sample task (50 groups, seed 0) as lm-eval writes them, with the
    results file beside them that names the model: ``pretrained=openai/gpt2``."""
    from unqover.jobs.lm_eval_hooks import load_docs
    from unqover.jobs.lm_eval_tasks import write_tasks
    from unqover.probes.registry import get_probe

    root = tmp_path_factory.mktemp("lm-eval")
    written = write_tasks(get_probe("religion"), root / "tasks", dataset=str(religion), size=50, seed=0)
    docs = load_docs(written.folder, "sample")["test"]
    out = root / "out" / "openai__gpt2"
    out.mkdir(parents=True)
    rng = np.random.default_rng(5)
    stamp = "2026-11-25T10-00-00.000000"
    with open(out / f"samples_{written.tasks['sample']}_{stamp}.jsonl", "w", encoding="utf-8") as file:
        for doc in docs:
            responses = [[str(-rng.random() * 5), "False"], [str(-rng.random() * 5), "False"]]
            file.write(json.dumps({"doc": doc, "filtered_resps": responses}) + "\n")
    config = {"model": "hf", "model_args": "pretrained=openai/gpt2,dtype=float32"}
    (out / f"results_{stamp}.json").write_text(json.dumps({"config": config}))
    return out


@pytest.fixture(scope="module")
def bare(tmp_path_factory, religion) -> Path:  # noqa: F811
    """Bare predictions (no provenance) of the 50 groups the design keeps, measured with --bias religion."""
    return _measured(tmp_path_factory.mktemp("bare"), religion, None, 50)


def test_bare_predictions_of_50_groups_name_no_model_and_are_refused(bare, tmp_path, capsys):
    refused(
        _publish(bare, "me/model", tmp_path),
        capsys,
        f"{bare} records no model, so it cannot be tied to me/model: publish the results of `unqover probe "
        "me/model` or of predictions that record their model",
    )
    assert not (tmp_path / ".eval_results").exists()


def test_predictions_of_50_groups_without_a_selection_are_the_sample_task_as_a_subset(religion, tmp_path):  # noqa: F811
    model = {"id": "me/model", "revision": "0" * 40, "family": "qa"}
    (tmp_path / "m").mkdir()
    run = _measured(tmp_path / "m", religion, _about(religion, model), 50)
    selection = json.loads(run.read_text())["provenance"]["selection"]
    assert selection == {"kind": "subset", "why": "the predictions record no seeded selection"}
    assert main(_publish(run, "me/model", tmp_path / "o")) == 0
    files = _files(tmp_path / "o")
    assert files and all(name.startswith("unqover_religion_sample_") for name in files)
    for [entry] in files.values():
        assert entry["dataset"]["task_id"] == "unqover_religion_sample"
        assert (
            "an estimate of the whole dataset's value from a subset of the rows that is no seeded design sample "
            "(the predictions record no seeded selection; estimated from 50 of "
        ) in entry["notes"]


def test_lm_eval_samples_of_openai_gpt2_are_refused_on_another_repo(logged, tmp_path, capsys):
    (samples,) = logged.glob("samples_*.jsonl")
    measured = tmp_path / "measured.json"
    assert main(["measure", str(samples), "--output", str(measured), "--resamples", "20"]) == 0
    provenance = json.loads(measured.read_text())["provenance"]
    assert provenance["model"]["id"] == "openai/gpt2" and provenance["model"]["revision"] is None
    assert provenance["model"]["lm_eval_model_args"] == "pretrained=openai/gpt2,dtype=float32"
    assert provenance["selection"]["kind"] == "design" and provenance["selection"]["seed"] == 0
    refused(
        _publish(measured, "me/model", tmp_path / "o"),
        capsys,
        f"{measured} was measured on openai/gpt2, not me/model; publish it on its own repo",
    )
    assert main(_publish(measured, "openai/gpt2", tmp_path / "o")) == 0
    tasks = {e[0]["dataset"]["task_id"] for e in _files(tmp_path / "o").values()}
    assert tasks == {"unqover_religion_sample"}


@pytest.mark.parametrize(
    ("recorded", "revision"),
    [
        ({"model_revision": "main", "model_sha": "a" * 40}, "a" * 40),  # online: the commit lm-eval resolved
        ({"model_revision": "main", "model_sha": ""}, "main"),  # offline: the revision asked for
        ({"model_args": "pretrained=openai/gpt2,revision=v2", "model_sha": ""}, "v2"),
    ],
    ids=["commit", "branch", "argument"],
)
def test_lm_eval_samples_record_the_revision_lm_eval_scored(logged, tmp_path, recorded, revision):
    """The revision of an lm-eval run is what its results file records (lm-eval's hf model writes model_revision
    and model_sha beside the model arguments), not left out."""
    (samples,) = logged.glob("samples_*.jsonl")
    shutil.copy(samples, tmp_path / samples.name)
    stamp = samples.stem.rsplit("_", 1)[-1]
    config = {"model": "hf", "model_args": "pretrained=openai/gpt2,dtype=float32", **recorded}
    (tmp_path / f"results_{stamp}.json").write_text(json.dumps({"config": config}))
    measured = tmp_path / "measured.json"
    assert (
        main(["measure", str(tmp_path / samples.name), "--output", str(measured), "--resamples", "20"]) == 0
    )
    model = json.loads(measured.read_text())["provenance"]["model"]
    assert (model["id"], model["revision"]) == ("openai/gpt2", revision)


def test_lm_eval_samples_without_their_results_file_name_no_model(logged, tmp_path, capsys):
    (samples,) = logged.glob("samples_*.jsonl")
    alone = tmp_path / samples.name
    alone.write_bytes(samples.read_bytes())
    measured = tmp_path / "measured.json"
    assert main(["measure", str(alone), "--output", str(measured), "--resamples", "20"]) == 0
    refused(
        _publish(measured, "openai/gpt2", tmp_path / "o"),
        capsys,
        f"{measured} records no model: lm-eval's results file (results_*.json, which names it) was not beside "
        "the logged samples when they were measured; measure them again with it beside them",
    )


@pytest.fixture(scope="module")
def adapted(tmp_path_factory, religion) -> Path:  # noqa: F811
    """A full run of ``me/base`` with the adapter ``someone/lora`` merged in (as `unqover probe --adapter`
    records it)."""
    return _measured(
        tmp_path_factory.mktemp("adapted"), religion, _about(religion, {**BASE, "adapter": LORA})
    )


def test_a_run_of_a_base_with_an_adapter_is_not_the_base_s(adapted, tmp_path, capsys):
    refused(
        _publish(adapted, "me/base", tmp_path),
        capsys,
        f"{adapted} was measured on me/base with the adapter someone/lora, not me/base: an adapted model's "
        "numbers are not its base model's; they go only on the adapter's own Hub repo (made for that base model)",
    )
    assert not (tmp_path / ".eval_results").exists()
    # the adapter's own repo, made for this base, is where they belong
    assert main(_publish(adapted, "someone/lora", tmp_path / "o")) == 0
    assert {e[0]["dataset"]["task_id"] for e in _files(tmp_path / "o").values()} == {"unqover_religion"}


def test_an_adapter_made_for_another_base_or_local_goes_nowhere(adapted, tmp_path, capsys):
    def other_base(data):
        data["provenance"]["model"]["adapter"]["base_model"] = "someone/else"

    def local_adapter(data):
        data["provenance"]["model"]["adapter"] = {**LORA, "id": "./lora", "path": str(tmp_path / "lora")}

    edited = _edited(tmp_path, adapted, other_base)
    refused(
        _publish(edited, "someone/lora", tmp_path / "o"),
        capsys,
        f"{edited} was measured on me/base with the adapter someone/lora, which records someone/else as its base "
        "model (base_model_name_or_path), not me/base: these numbers are not someone/lora's on the base it was "
        "made for",
    )
    edited = _edited(tmp_path, adapted, local_adapter)
    refused(
        _publish(edited, "someone/lora", tmp_path / "o"),
        capsys,
        f"{edited} was measured on me/base with the adapter ./lora, not someone/lora: an adapted model's",
    )


def test_a_local_model_is_refused_unless_it_is_a_hub_cache_snapshot_of_the_repo(
    adapted,
    religion,  # noqa: F811
    tmp_path,
    capsys,
):
    folder = tmp_path / "my-model"

    def local(data):
        data["provenance"]["model"] = {
            "id": "my-model",
            "path": str(folder),
            "weights_sha256": "cd",
            "family": "qa",
        }

    edited = _edited(tmp_path, adapted, local)
    refused(
        _publish(edited, "me/model", tmp_path / "o"),
        capsys,
        f"{edited} was measured on the local model my-model, not me/model: a local folder is tied to no Hub repo; "
        "probe me/model by its Hub id (offline: from the Hub cache) to publish on it",
    )
    snapshot = tmp_path / "hub" / "models--me--model" / "snapshots" / ("3" * 40)

    # a run whose predictions record the snapshot (results edited to name it are refused: not what was scored)
    cached = {"id": str(snapshot), "path": str(snapshot), "family": "qa"}
    edited = _measured(tmp_path / "cached", religion, _about(religion, cached))
    assert main(_publish(edited, "me/model", tmp_path / "p")) == 0
    claimed = _edited(tmp_path, adapted, lambda data: data["provenance"].update(model=cached))
    refused(
        _publish(claimed, "me/model", tmp_path / "p2"),
        capsys,
        f"the results of {claimed} name the model {snapshot}, but its predictions were scored by me/base @ "
        f"{BASE['revision']}",
    )
    refused(
        _publish(edited, "me/other", tmp_path / "q"),
        capsys,
        f"{edited} was measured on me/model, not me/other; publish it on its own repo",
    )


def test_results_of_an_older_unqover_without_a_selection_are_refused_with_the_command(
    adapted, tmp_path, capsys
):
    def old(data):
        data["provenance"]["model"] = dict(BASE)
        data["provenance"].pop("selection")

    edited = _edited(tmp_path, adapted, old)
    predictions = adapted.parent / "predictions.parquet"
    refused(
        _publish(edited, "me/base", tmp_path / "o"),
        capsys,
        f"{edited} records no row selection (full, design sample or subset): an older unqover wrote it; measure "
        f"it again (`unqover measure {predictions} --output {edited}`) and publish that",
    )
    folder = tmp_path / "run"
    folder.mkdir()
    data = json.loads(edited.read_text())
    data["provenance"].pop("predictions")
    (folder / "results.json").write_text(json.dumps(data))
    refused(
        _publish(folder, "me/base", tmp_path / "o"),
        capsys,
        f"measure it again (`unqover measure {folder / 'predictions.parquet'} --output {folder / 'results.json'}`)",
    )


def test_a_full_selection_beside_a_quick_run_s_numbers_is_refused(bare, tmp_path, capsys):
    def full(data):
        data["provenance"]["model"] = dict(BASE)
        data["provenance"]["selection"] = {"kind": "full"}

    edited = _edited(tmp_path, bare, full)
    refused(
        _publish(edited, "me/base", tmp_path / "o"),
        capsys,
        f"{edited} records every row, but its numbers are estimates from part of them; measure it again",
    )


def test_yaml_of_a_design_sample_names_its_seed(logged, tmp_path):
    (samples,) = logged.glob("samples_*.jsonl")
    measured = tmp_path / "measured.json"
    assert main(["measure", str(samples), "--output", str(measured), "--resamples", "20"]) == 0
    assert main(_publish(measured, "openai/gpt2", tmp_path / "o")) == 0
    for path in (tmp_path / "o" / ".eval_results").glob("*.yaml"):
        [entry] = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert (
            "a quick run's estimate of the whole dataset's value (the seeded design sample, seed 0; "
            in entry["notes"]
        )


@pytest.mark.parametrize(
    ("model_args", "repo", "message"),
    [
        (
            "pretrained=me/base,peft=someone/lora",
            "me/base",
            "was measured on me/base with the adapter someone/lora, not me/base: an adapted model's numbers",
        ),
        (
            {"pretrained": "openai/gpt2", "revision": "abc"},
            "me/model",
            "was measured on openai/gpt2, not me/model",
        ),
    ],
    ids=["peft adapter", "model_args as a mapping"],
)
def test_lm_eval_model_arguments_name_the_model(logged, tmp_path, capsys, model_args, repo, message):
    (samples,) = logged.glob("samples_*.jsonl")
    copied = tmp_path / samples.name
    copied.write_bytes(samples.read_bytes())
    stamp = samples.stem.rsplit("_", 1)[-1]
    (tmp_path / f"results_{stamp}.json").write_text(json.dumps({"config": {"model_args": model_args}}))
    measured = tmp_path / "measured.json"
    assert main(["measure", str(copied), "--output", str(measured), "--resamples", "20"]) == 0
    assert json.loads(measured.read_text())["provenance"]["model"]["lm_eval_model_args"] == model_args
    refused(_publish(measured, repo, tmp_path / "o"), capsys, f"{measured} {message}")


def test_the_design_s_groups_with_some_dropped_are_a_subset(logged, tmp_path):
    """lm-eval --limit 150 on the 50-group sample task (200 documents) scores some groups in part; measured with
    --drop-incomplete they are dropped, so the rows are no longer the design's sample: a subset, the `_sample`
    task."""
    (samples,) = logged.glob("samples_*.jsonl")
    cut = tmp_path / samples.name
    cut.write_text("".join(samples.read_text().splitlines(keepends=True)[:150]))
    measured = tmp_path / "measured.json"
    argv = ["measure", str(cut), "--output", str(measured), "--resamples", "20", "--drop-incomplete"]
    assert main(argv) == 0
    results = json.loads(measured.read_text())
    dropped = results["result"]["dropped_groups"]
    assert dropped > 0
    selection = results["provenance"]["selection"]
    assert selection["kind"] == "subset"
    assert selection["why"] == f"{50 - dropped:,} of the sample's 50 groups were scored whole"
