"""Rows know what they are (issue 29, item 1): every dataset records its probe, config, version and fingerprint
(card and Parquet), and every entry point refuses another probe's rows in one line before a model loads; folders of
earlier versions are recognised by their card's title or refused with the command that builds them again.

Each case goes through the real command line (or the lm-eval hooks, the explorer) offline, with the exact line.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from tests.cli.test_cli_bad_data import files, no_model, refused
from unqover import __version__
from unqover.cli import main
from unqover.errors import UnqoverError
from unqover.generate.ids import dataset_fingerprint


@pytest.fixture(scope="module")
def built(built_datasets) -> dict[str, Path]:
    """religion and ethnicity (qa), NLI (synthetic) and EEC folders, and scores of a religion sample: bare (no
    provenance) and as a run's predictions (provenance naming the religion probe): the session's, read-only."""
    return built_datasets


def _parquet(folder: Path, config: str) -> Path:
    return next((folder / "data" / config).glob("*.parquet"))


def _card(folder: Path) -> dict:
    return yaml.safe_load((folder / "README.md").read_text(encoding="utf-8").split("---\n")[1])


# ------------------------------------------------------------------------------ what a build records


@pytest.mark.parametrize(
    ("name", "probe", "config"),
    [("religion", "religion", "qa"), ("nli", "nli-gender", "synthetic"), ("eec", "eec-emotion", "questions")],
)
def test_a_fresh_build_records_its_rows_in_card_and_parquet(built, name, probe, config):
    folder = built[name]
    ids = pq.read_table(_parquet(folder, config), columns=["id"])["id"]
    fingerprint = dataset_fingerprint(ids)
    card = _card(folder)["unqover"]
    assert card["probe"] == probe and card["version"] == __version__
    assert card["configs"][config] == {"rows": len(ids), "fingerprint": fingerprint}
    recorded = json.loads(pq.read_schema(_parquet(folder, config)).metadata[b"unqover"])
    assert recorded == {"probe": probe, "config": config, "version": __version__, "fingerprint": fingerprint}


def test_datasets_keeps_no_parquet_metadata_so_the_hub_path_reads_the_card(built):
    """``load_dataset`` (the Hub path) drops the Parquet schema metadata: a Hub dataset is known by its card."""
    from datasets import load_dataset

    table = load_dataset(str(built["religion"]), "qa", split="test").data.table
    assert b"unqover" not in (table.schema.metadata or {})


# ------------------------------------------------------------------------------ every entry point refuses


def test_probe_refuses_another_probes_rows_before_the_model_loads(built, tmp_path, monkeypatch, capsys):
    no_model(monkeypatch)
    before = files(built["root"], tmp_path)
    argv = ["probe", "some/model", "--bias", "ethnicity", "--dataset", str(built["religion"])]
    line = refused([*argv, "--output", str(tmp_path / "run"), "--quiet"], capsys, "")
    assert line == (
        f"unqover: error: {built['religion']} holds rows of the religion probe, not ethnicity: pass --bias "
        "religion, or a dataset of ethnicity rows"
    )
    nli = ["probe", "some/model", "--bias", "religion", "--dataset", str(built["nli"]), "--quiet"]
    line = refused([*nli, "--output", str(tmp_path / "run")], capsys, "")
    assert line == (
        f"unqover: error: {built['nli']} holds rows of the nli-gender probe, not religion: pass --bias "
        "nli-gender, or a dataset of religion rows"
    )
    assert files(built["root"], tmp_path) == before


def test_the_person_probe_reads_the_emotion_probes_dataset(built, tmp_path, monkeypatch, capsys):
    """eec-person's questions are a config of the eec-emotion dataset: its rows, not another probe's."""
    no_model(monkeypatch)
    argv = ["probe", "some/model", "--bias", "eec-person", "--dataset", str(built["eec"]), "--quiet"]
    assert refused([*argv, "--output", str(tmp_path / "r")], capsys, "a model was loaded")


def test_measure_refuses_rows_of_another_probe(built, tmp_path, capsys):
    output = ["--config", "qa", "--resamples", "0", "--output", str(tmp_path / "m.json")]
    bare = ["measure", str(built["root"] / "bare.parquet")]
    line = refused([*bare, "--bias", "ethnicity", "--dataset", str(built["religion"]), *output], capsys, "")
    assert line == (
        f"unqover: error: {built['religion']} holds rows of the religion probe, not ethnicity: pass --bias "
        "religion, or a dataset of ethnicity rows"
    )
    run = ["measure", str(built["root"] / "run.parquet"), "--dataset", str(built["ethnicity"]), *output]
    line = refused(run, capsys, "")
    assert line == (
        f"unqover: error: {built['ethnicity']} holds rows of the ethnicity probe, not religion: give --dataset "
        "a dataset of religion rows"
    )
    assert not (tmp_path / "m.json").exists()


def test_bare_predictions_are_measured_by_the_probe_of_their_rows(built, tmp_path, capsys):
    bare = built["root"] / "bare.parquet"
    argv = ["measure", str(bare), "--dataset", str(built["religion"]), "--config", "qa", "--resamples", "0"]
    out = ["--output", str(tmp_path / "m.json")]
    # the dataset records its probe: that probe measures the file, as --bias religion does
    assert main([*argv, *out]) == 0
    taken = json.loads((tmp_path / "m.json").read_text())
    assert taken["probe"] == "religion"
    assert main([*argv, "--bias", "religion", "--output", str(tmp_path / "b.json")]) == 0
    given = json.loads((tmp_path / "b.json").read_text())
    assert taken["result"] == given["result"]
    # neither the file nor a --dataset says: --bias is asked for
    line = refused(["measure", str(bare), "--config", "qa", "--resamples", "0", *out], capsys, "")
    assert line == (
        f"unqover: error: {bare} does not record which probe scored it: pass --bias NAME, the probe of its "
        "dataset's rows (or --probe FILE.yaml)"
    )
    # a file that records its dataset but no probe (an earlier version's) is its rows' probe's
    from unqover.predictions import write_predictions

    scores = pq.read_table(bare)
    about = {"dataset": {"source": str(built["religion"]), "config": "qa", "split": "test"}}
    write_predictions(tmp_path / "old.parquet", scores, about)
    old = ["measure", str(tmp_path / "old.parquet"), "--resamples", "0", "--output", str(tmp_path / "o.json")]
    assert main(old) == 0
    assert json.loads((tmp_path / "o.json").read_text())["probe"] == "religion"


def test_sample_refuses_rows_it_cannot_draw_groups_of_and_records_the_probe(built, tmp_path, capsys):
    ids = tmp_path / "ids.parquet"
    line = refused(
        ["sample", str(built["nli"]), "--config", "synthetic", "--groups", "5", "--output", str(ids)],
        capsys,
        "",
    )
    assert line == (
        f"unqover: error: {built['nli']} holds rows of the nli-gender probe: `unqover sample` draws groups of the "
        "rows of gender, nationality, ethnicity, religion or a custom probe"
    )
    assert not ids.exists()
    assert (
        main(["sample", str(built["religion"]), "--config", "qa", "--groups", "5", "--output", str(ids)]) == 0
    )
    assert "--bias religion --dataset" in capsys.readouterr().out
    from unqover.predictions import read_provenance

    assert read_provenance(ids)["probe"] == "religion"


def test_lm_eval_tasks_refuse_another_probes_rows(built, tmp_path, capsys):
    argv = ["lm-eval-tasks", "--bias", "ethnicity", "--dataset", str(built["religion"])]
    line = refused([*argv, "--output", str(tmp_path / "tasks")], capsys, "")
    assert line == (
        f"unqover: error: {built['religion']} holds rows of the religion probe, not ethnicity: pass --bias "
        "religion, or a dataset of ethnicity rows"
    )
    assert not (tmp_path / "tasks").exists()


def test_lm_eval_hooks_refuse_a_recorded_dataset_that_now_holds_another_probes_rows(built, tmp_path, capsys):
    from unqover.jobs.lm_eval_hooks import hooks_for

    folder = tmp_path / "religion"
    shutil.copytree(built["religion"], folder)
    argv = ["lm-eval-tasks", "--bias", "religion", "--dataset", str(folder), "--groups", "10"]
    assert main([*argv, "--output", str(tmp_path / "tasks")]) == 0
    capsys.readouterr()  # the export's note that --groups 10 is too few for μ and η
    shutil.rmtree(folder)
    shutil.copytree(built["ethnicity"], folder)  # the recorded folder rebuilt with other rows
    with pytest.raises(SystemExit) as refusal:  # the hooks end lm-eval with one line, as `unqover` does
        hooks_for(tmp_path / "tasks")["load_docs"](selection="full")
    assert refusal.value.code == 2
    assert capsys.readouterr().err == (
        f"unqover: error: {folder} holds rows of the ethnicity probe, not religion: write the folder again with "
        "`unqover lm-eval-tasks` and a dataset of its rows\n"
    )


def test_the_explorer_refuses_a_local_build_of_other_rows(built, tmp_path, monkeypatch):
    """The Space's explorer (and `unqover probe` without --dataset) read datasets/unqover/NAME: it must be NAME's."""
    from unqover.jobs.explore import example_rows

    monkeypatch.chdir(tmp_path)
    shutil.copytree(built["ethnicity"], tmp_path / "datasets" / "unqover" / "religion")
    with pytest.raises(UnqoverError) as refusal:
        example_rows("religion", count=2)
    local = Path("datasets/unqover/religion")
    assert str(refusal.value) == (
        f"{local} holds rows of the ethnicity probe, not religion: build it again with `unqover build-datasets "
        f"religion --output {local.parent} --overwrite`"
    )


# ------------------------------------------------------------------------------ folders of earlier versions


def _strip(folder: Path) -> None:
    """The folder as an earlier version wrote it: no ``unqover:`` card entry, no Parquet schema metadata."""
    card = folder / "README.md"
    text = card.read_text(encoding="utf-8")
    head, body = text.split("---\n")[1:3]
    header = yaml.safe_load(head)
    header.pop("unqover")
    card.write_text("---\n" + yaml.safe_dump(header, sort_keys=False) + "---\n" + body, encoding="utf-8")
    for parquet in folder.rglob("*.parquet"):
        table = pq.read_table(parquet)
        pq.write_table(table.replace_schema_metadata(None), parquet)


def test_an_old_folder_is_recognised_by_its_cards_title(built, tmp_path, monkeypatch, capsys):
    folder = tmp_path / "religion"
    shutil.copytree(built["religion"], folder)
    _strip(folder)
    assert b"unqover" not in (pq.read_schema(_parquet(folder, "qa")).metadata or {})
    no_model(monkeypatch)
    argv = ["probe", "some/model", "--bias", "ethnicity", "--dataset", str(folder), "--quiet"]
    line = refused([*argv, "--output", str(tmp_path / "r")], capsys, "")
    assert line == (
        f"unqover: error: {folder} holds rows of the religion probe, not ethnicity: pass --bias religion, or a "
        "dataset of ethnicity rows"
    )
    # its own probe reads it (the model is what stops this run)
    own = ["probe", "some/model", "--bias", "religion", "--dataset", str(folder), "--quiet"]
    refused([*own, "--output", str(tmp_path / "r")], capsys, "a model was loaded")
    bare = ["measure", str(built["root"] / "bare.parquet"), "--bias", "religion", "--dataset", str(folder)]
    assert main([*bare, "--config", "qa", "--resamples", "0", "--output", str(tmp_path / "m.json")]) == 0


def test_an_old_folder_that_says_nothing_is_refused_with_its_rebuild_command(
    built, tmp_path, monkeypatch, capsys
):
    folder = tmp_path / "mine"
    shutil.copytree(built["religion"], folder)
    _strip(folder)
    card = folder / "README.md"
    card.write_text(card.read_text(encoding="utf-8").replace("UnQover religion probes", "my rows"), "utf-8")
    no_model(monkeypatch)
    argv = ["probe", "some/model", "--bias", "religion", "--dataset", str(folder), "--quiet"]
    line = refused([*argv, "--output", str(tmp_path / "r")], capsys, "")
    assert line == (
        f"unqover: error: {folder} does not record which probe's rows it holds (built by an earlier unqover?): "
        f"build it again with `unqover build-datasets religion --output {tmp_path} --overwrite`"
    )
    ids = [
        "sample",
        str(folder),
        "--config",
        "qa",
        "--groups",
        "5",
        "--output",
        str(tmp_path / "ids.parquet"),
    ]
    line = refused(ids, capsys, "")
    assert line == (
        f"unqover: error: {folder} does not record which probe's rows it holds (built by an earlier unqover?): "
        f"build it again with `unqover build-datasets NAME --output {tmp_path} --overwrite`"
    )


def test_data_copied_in_from_another_dataset_is_refused(built, tmp_path, monkeypatch, capsys):
    folder = tmp_path / "religion"
    shutil.copytree(built["religion"], folder)
    shutil.copy(_parquet(built["ethnicity"], "qa"), _parquet(folder, "qa"))
    no_model(monkeypatch)
    argv = ["probe", "some/model", "--bias", "religion", "--dataset", str(folder), "--quiet"]
    line = refused([*argv, "--output", str(tmp_path / "r")], capsys, "")
    assert line == (
        f"unqover: error: {_parquet(folder, 'qa').relative_to(folder)} of {folder} holds rows of the ethnicity "
        "probe, but the folder's card says religion: build the dataset again"
    )


# ------------------------------------------------------------------------------ a new probe inherits it


def test_a_new_probes_build_is_stamped_and_checked(built, tmp_path, monkeypatch, capsys):
    """The toy probe's builder writes no identity: build-datasets records it, and the checks apply to it."""
    from toy_probe import DATASET, NAME, ToyProbe
    from unqover.probes import registry
    from unqover.scoring.engines import ENGINES

    monkeypatch.setitem(registry.PROBES, NAME, ToyProbe())
    monkeypatch.setitem(ENGINES, "toy", "toy_probe:ToyEngine")
    assert main(["build-datasets", DATASET, "--output", str(tmp_path), "--quiet"]) == 0
    folder = tmp_path / DATASET
    ids = pq.read_table(_parquet(folder, "words"))["id"]
    assert _card(folder)["unqover"] == {
        "probe": NAME,
        "version": __version__,
        "configs": {"words": {"rows": len(ids), "fingerprint": dataset_fingerprint(ids)}},
    }
    assert json.loads(pq.read_schema(_parquet(folder, "words")).metadata[b"unqover"])["probe"] == NAME
    no_model(monkeypatch)
    argv = ["probe", "toy:a", "--bias", NAME, "--dataset", str(built["religion"]), "--quiet"]
    line = refused([*argv, "--output", str(tmp_path / "r")], capsys, "")
    assert line == (
        f"unqover: error: {built['religion']} holds rows of the religion probe, not {NAME}: pass --bias religion, "
        f"or a dataset of {NAME} rows"
    )
    argv = ["probe", "toy:a", "--bias", "religion", "--dataset", str(folder), "--quiet"]
    line = refused([*argv, "--output", str(tmp_path / "r")], capsys, "")
    assert line == (
        f"unqover: error: {folder} holds rows of the {NAME} probe, not religion: pass --bias {NAME}, or a "
        "dataset of religion rows"
    )


def test_the_nli_and_emotion_local_builds_are_checked_too(built, tmp_path, monkeypatch):
    from unqover.probes.eec_rows import load_eec_questions
    from unqover.probes.nli_rows import load_nli_rows

    monkeypatch.chdir(tmp_path)
    local = Path("datasets/unqover")
    shutil.copytree(built["eec"], local / "nli-gender")
    shutil.copytree(built["nli"], local / "eec-emotion")
    # each under the config name the other probe reads
    (local / "nli-gender" / "data" / "questions").rename(local / "nli-gender" / "data" / "synthetic")
    (local / "eec-emotion" / "data" / "synthetic").rename(local / "eec-emotion" / "data" / "questions")
    with pytest.raises(UnqoverError) as refusal:
        load_nli_rows("nli-gender", None, "synthetic")
    assert str(refusal.value) == (
        f"{local / 'nli-gender'} holds rows of the eec-emotion probe, not nli-gender: build it again with "
        f"`unqover build-datasets nli-gender --output {local} --overwrite`"
    )
    with pytest.raises(UnqoverError) as refusal:
        load_eec_questions("eec-emotion", None)
    assert str(refusal.value) == (
        f"{local / 'eec-emotion'} holds rows of the nli-gender probe, not eec-emotion: build it again with "
        f"`unqover build-datasets eec-emotion --output {local} --overwrite`"
    )


def test_a_hub_dataset_is_known_by_its_card(built, tmp_path, monkeypatch, capsys):
    """A Hub id's card (downloaded alone, or from the cache) says whose rows it holds: refused before the model
    loads; a card that says nothing (or none offline) leaves the rows to load as they are."""
    import huggingface_hub

    card = built["religion"] / "README.md"
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", lambda repo, name, repo_type: str(card))
    # offline, a Hub dataset is tried only where a copy may be cached (its card is)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    (tmp_path / "hub" / "datasets--someone--rows").mkdir(parents=True)
    no_model(monkeypatch)
    argv = ["probe", "some/model", "--bias", "ethnicity", "--dataset", "someone/rows", "--quiet"]
    line = refused([*argv, "--output", str(tmp_path / "r")], capsys, "")
    assert line == (
        "unqover: error: someone/rows holds rows of the religion probe, not ethnicity: pass --bias religion, or a "
        "dataset of ethnicity rows"
    )
    argv[3] = "religion"
    refused([*argv, "--output", str(tmp_path / "r")], capsys, "a model was loaded")


def test_an_old_folder_without_its_title_is_recognised_by_columns_only_one_probe_has(
    built, tmp_path, monkeypatch, capsys
):
    """NLI rows have columns no other probe's rows have; the UnQover classes share theirs (refused above)."""
    folder = tmp_path / "premises"
    shutil.copytree(built["nli"], folder)
    _strip(folder)
    card = folder / "README.md"
    card.write_text(card.read_text(encoding="utf-8").replace("NLI gender-occupation probes", "mine"), "utf-8")
    no_model(monkeypatch)
    argv = ["probe", "some/model", "--bias", "religion", "--dataset", str(folder), "--quiet"]
    line = refused([*argv, "--output", str(tmp_path / "r")], capsys, "")
    assert line == (
        f"unqover: error: {folder} holds rows of the nli-gender probe, not religion: pass --bias nli-gender, or a "
        "dataset of religion rows"
    )


def test_a_custom_probes_build_records_it_and_is_checked(built, tmp_path, monkeypatch, capsys):
    from tests.probes.test_custom_probe import PETS

    probe_file = tmp_path / "pets.yaml"
    probe_file.write_text(PETS, encoding="utf-8")
    assert main(["build-datasets", "--probe", str(probe_file), "--output", str(tmp_path), "--quiet"]) == 0
    folder = tmp_path / "pets"
    assert _card(folder)["unqover"]["probe"] == "pets"
    assert json.loads(pq.read_schema(_parquet(folder, "qa")).metadata[b"unqover"])["probe"] == "pets"
    no_model(monkeypatch)
    argv = ["probe", "some/model", "--bias", "religion", "--dataset", str(folder), "--quiet"]
    line = refused([*argv, "--output", str(tmp_path / "r")], capsys, "")
    assert line == (
        f"unqover: error: {folder} holds rows of the pets probe, not religion: pass --probe with the pets probe's "
        "YAML file, or a dataset of religion rows"
    )
    argv = ["probe", "some/model", "--probe", str(probe_file), "--dataset", str(built["religion"]), "--quiet"]
    line = refused([*argv, "--output", str(tmp_path / "r")], capsys, "")
    assert line == (
        f"unqover: error: {built['religion']} holds rows of the religion probe, not pets: pass --bias religion, "
        "or a dataset of pets rows"
    )
    own = ["probe", "some/model", "--probe", str(probe_file), "--dataset", str(folder), "--quiet"]
    refused([*own, "--output", str(tmp_path / "r")], capsys, "a model was loaded")


def test_a_file_of_another_config_is_refused(built, tmp_path, monkeypatch, capsys):
    folder = tmp_path / "religion"
    shutil.copytree(built["religion"], folder)
    target = folder / "data" / "mlm" / "test-00000-of-00001.parquet"
    target.parent.mkdir()
    shutil.copy(_parquet(folder, "qa"), target)  # the qa rows filed as mlm
    card = folder / "README.md"
    head, body = card.read_text(encoding="utf-8").split("---\n")[1:3]
    header = yaml.safe_load(head)
    header["configs"].append(
        {"config_name": "mlm", "data_files": [{"split": "test", "path": "data/mlm/*.parquet"}]}
    )
    card.write_text("---\n" + yaml.safe_dump(header, sort_keys=False) + "---\n" + body, encoding="utf-8")
    no_model(monkeypatch)
    argv = ["probe", "some/model", "--bias", "religion", "--dataset", str(folder), "--quiet"]
    line = refused([*argv, "--output", str(tmp_path / "r")], capsys, "")
    assert line == (
        f"unqover: error: {target.relative_to(folder)} of {folder} holds rows of the 'qa' config, not 'mlm': build "
        "the dataset again"
    )


# ------------------------------------------------------------------------------ the evaluate modules


def test_the_modules_refuse_rows_of_two_probes_in_one_measure():
    """Rows that carry their probe (an lm-eval task's documents: ``unqover``) must all be one probe's."""
    import evaluate

    module = evaluate.load(str(Path(__file__).resolve().parents[2] / "metrics" / "unqover_bias"))
    group = [("Gerald", "Jennifer", "positive"), ("Jennifer", "Gerald", "positive")]
    group += [("Gerald", "Jennifer", "negated"), ("Jennifer", "Gerald", "negated")]
    rows = [
        {"subject_1": a, "subject_2": b, "template_id": 1, "attribute": "was a hunter", "polarity": polarity}
        for a, b, polarity in group
    ]
    for i, row in enumerate(rows):
        row["unqover"] = json.dumps({"probe": "religion" if i < 2 else "ethnicity"})
    scores = [[0.26, 0.73], [0.45, 0.54], [0.35, 0.62], [0.86, 0.12]]
    with pytest.raises(ValueError) as refusal:
        module.compute(predictions=scores, references=rows, n_resamples=0)
    assert str(refusal.value) == (
        "reference 0 is a row of the religion probe and reference 2 one of the ethnicity probe: measure one "
        "probe's rows at a time"
    )
    for row in rows:
        row["unqover"] = json.dumps({"probe": "religion"})
    assert module.compute(predictions=scores, references=rows, n_resamples=0)["num_groups"] == 1
