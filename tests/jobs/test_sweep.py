"""`unqover probe MODEL MODEL ... --bias religion --limit N`: a sweep of tiny QA models into one folder, resumed,
past a failing model, with the leaderboard and the summary page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from unqover.cli import main
from unqover.errors import UnqoverError
from unqover.jobs.sweep import SweepModel, read_models_file

LIMIT = 400  # groups: enough for δ (positional_error), too few for μ (declined)


@pytest.fixture(scope="module")
def models(tmp_path_factory, religion_qa_model, religion_tables) -> list[Path]:
    import tiny_models

    rows = religion_tables["qa"]
    texts = sorted(set(rows["context"].to_pylist()) | set(rows["question"].to_pylist()))
    tmp = tmp_path_factory.mktemp("sweep-models")
    return [religion_qa_model, tiny_models.bert_qa(tmp / "qa-1", texts, seed=1)]


def _argv(models, output, word_lists, *extra) -> list[str]:
    return [
        "probe",
        *map(str, models),
        "--bias",
        "religion",
        "--word-lists",
        str(word_lists),
        "--limit",
        str(LIMIT),
        "--seed",
        "7",
        "--output",
        str(output),
        "--quiet",
        *extra,
    ]


@pytest.mark.slow
def test_sweep_folders_failure_leaderboard_and_resume(models, tmp_path, upstream_word_lists_path, capsys):
    output = tmp_path / "sweep"
    missing = tmp_path / "no-such-model"
    argv = _argv(
        [*models, missing], output, upstream_word_lists_path, "--leaderboard-metric", "positional_error"
    )
    assert main(argv) == 1  # the missing model failed; the others ran
    printed = capsys.readouterr()
    assert "same seeded sample" in printed.out
    assert f"failed: {missing}" in printed.out
    for model in models:
        assert (output / model.name / "religion" / "predictions.parquet").is_file()
        assert (output / model.name / "religion" / "results.json").is_file()
    assert not (output / missing.name).exists()
    board = json.loads((output / "leaderboard-religion.json").read_text())
    assert board["metric"] == "positional_error"
    assert sorted(m["run"] for m in board["models"]) == sorted(
        str(output / m.name / "religion") for m in models
    )
    assert (output / "leaderboard-religion.md").is_file()
    assert "<svg" in (output / "leaderboard-religion.html").read_text()
    index = (output / "index.html").read_text()
    assert "leaderboard-religion.html" in index and "no-such-model" in index

    # a second call (the missing model left out) resumes: no chunk of scores is written again or added
    chunks = sorted(output.glob("*/religion/shards/*/chunk-*.parquet"))
    stamps = {p: p.stat().st_mtime_ns for p in chunks}
    assert len({p.parts[-5] for p in chunks}) == 2
    assert main([a for a in argv if a != str(missing)]) == 0
    assert {p: p.stat().st_mtime_ns for p in output.glob("*/religion/shards/*/chunk-*.parquet")} == stamps
    assert "failed" not in capsys.readouterr().out


@pytest.mark.slow
def test_sweep_without_a_usable_metric_says_why(models, tmp_path, upstream_word_lists_path, capsys):
    output = tmp_path / "sweep"
    models_file = tmp_path / "models.txt"
    models_file.write_text("# tiny models\n\n" + "".join(f"{m}  # one\n" for m in models))
    argv = _argv([], output, upstream_word_lists_path, "--models", str(models_file))
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert (
        "no leaderboard for religion" in out and "mu of" in out
    )  # μ declined at this size: said, not hidden
    assert not (output / "leaderboard-religion.json").exists()
    assert "no leaderboard" in (output / "index.html").read_text()


@pytest.mark.slow
def test_a_sweep_of_mixed_families_ranks_each_config_and_names_the_run_alone(
    models, religion_tables, tmp_path, upstream_word_lists_path, capsys
):
    """Two QA models (config qa) and a masked LM (config mlm): the QA runs get their leaderboard, the masked LM's
    run is named as standing alone, and no leaderboard is refused for the mixture."""
    import tiny_models

    rows = religion_tables["mlm"]
    texts = sorted(set(rows["context"].to_pylist()) | set(rows["question"].to_pylist()))
    mlm = tiny_models.bert_mlm(tmp_path / "mlm-model", texts)
    output = tmp_path / "sweep"
    argv = _argv([*models, mlm], output, upstream_word_lists_path, "--leaderboard-metric", "positional_error")
    assert main(argv) == 0
    out = capsys.readouterr().out
    board = json.loads((output / "leaderboard-religion-qa.json").read_text())
    assert sorted(m["run"] for m in board["models"]) == sorted(
        str(output / m.name / "religion") for m in models
    )
    assert (
        f"no leaderboard for religion-mlm: {mlm} stands alone: the only finished run of religion on the 'mlm'"
        in out
    )
    assert "different dataset configs" not in out
    assert not (output / "leaderboard-religion.json").exists() and not list(output.glob("leaderboard-*mlm*"))
    index = (output / "index.html").read_text()
    assert "leaderboard-religion-qa.html" in index and "stands alone" in index


def test_models_file_lines(tmp_path):
    path = tmp_path / "models.txt"
    path.write_text(
        "# comment\n\norg/a revision=v1\n./b adapter=./lora  # trailing\norg/c adapter=x revision=r\n"
    )
    assert read_models_file(path) == [
        SweepModel("org/a", revision="v1"),
        SweepModel("./b", adapter="./lora"),
        SweepModel("org/c", revision="r", adapter="x"),
    ]


def test_a_byte_order_mark_at_the_start_of_a_models_file_is_read_as_none(tmp_path):
    path = tmp_path / "models.txt"
    path.write_bytes("org/a revision=v1\norg/b\n".encode("utf-8-sig"))  # as Windows editors save it
    assert read_models_file(path) == [SweepModel("org/a", revision="v1"), SweepModel("org/b")]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("org/a\norg/b branch=main\n", "line 2: 'branch=main' is not revision=REV or adapter=PATH"),
        ("org/a revision=1 revision=2\n", "line 1: revision given twice"),
        ("revision=1\n", "line 1: starts with an option"),
        ("# only comments\n\n", "names no model"),
    ],
)
def test_models_file_refusals(tmp_path, text, said):
    path = tmp_path / "models.txt"
    path.write_text(text)
    with pytest.raises(UnqoverError, match=said.replace("(", r"\(")):
        read_models_file(path)


def test_cli_refusals_before_any_model(tmp_path, capsys):
    path = tmp_path / "models.txt"
    path.write_text("org/a\norg/a\n")
    assert main(["probe", "--models", str(path), "--bias", "religion", "--output", str(tmp_path / "o")]) == 2
    assert "share the run folder" in capsys.readouterr().err
    assert main(["probe", "--bias", "religion"]) == 2
    assert "name a MODEL" in capsys.readouterr().err
    assert main(["probe", "org/a", "--bias", "religion", "--leaderboard-metric", "mu"]) == 2
    assert "several models" in capsys.readouterr().err
    # an option no probe of the sweep takes: refused before any model (these ids would fail to load)
    argv = [
        "probe",
        "org/a",
        "org/b",
        "--bias",
        "religion",
        "--label-map",
        '{"entailment": 0, "neutral": 1, "contradiction": 2}',
        "--output",
        str(tmp_path / "o"),
    ]
    assert main(argv) == 2
    assert "--label-map do(es) not apply to any of the probes religion" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_a_sweep_with_a_dataset_runs_every_model_on_its_rows(models, built_datasets, tmp_path, capsys):
    """``--dataset`` with one probe: every model scores that folder's rows (it used to fail every model)."""
    output = tmp_path / "sweep"
    argv = [
        *("probe", *map(str, models), "--bias", "religion", "--dataset", str(built_datasets["religion"])),
        *("--limit", str(LIMIT), "--seed", "7", "--output", str(output), "--quiet"),
        *("--leaderboard-metric", "positional_error"),
    ]
    assert main(argv) == 0, capsys.readouterr().err
    assert "failed" not in capsys.readouterr().out
    for model in models:
        run = json.loads((output / model.name / "religion" / "run.json").read_text())
        assert run["dataset"]["source"] == str(built_datasets["religion"])
        assert (output / model.name / "religion" / "predictions.parquet").is_file()
    assert (output / "leaderboard-religion.json").is_file()


def test_a_sweep_refuses_another_probes_dataset_before_any_model(built_datasets, tmp_path, capsys):
    religion = built_datasets["religion"]
    argv = ["probe", "org/a", "org/b", "--bias", "ethnicity", "--dataset", str(religion)]
    assert main([*argv, "--output", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == (
        f"unqover: error: {religion} holds rows of the religion probe, not ethnicity: pass --bias religion, or a "
        "dataset of ethnicity rows\n"
    )
    assert not (tmp_path / "o").exists()


def test_a_misspelled_leaderboard_metric_is_refused_before_any_model(tmp_path, capsys):
    argv = ["probe", "org/a", "org/b", "--bias", "religion", "--leaderboard-metric", "positional_eror"]
    assert main([*argv, "--output", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == (
        "unqover: error: --leaderboard-metric 'positional_eror' is not a headline number of the religion probe; "
        "choose one of mu, eta, positional_error, attributive_error\n"
    )
    assert not (tmp_path / "o").exists()


def test_every_leaderboard_probe_knows_its_headline_names_before_any_run():
    """The names a sweep checks --leaderboard-metric against are those the results' headline has."""
    from unqover.measure.emotion import TESTS
    from unqover.probes.registry import get_probe

    emotion = get_probe("eec-emotion")
    tests = {"result": {"tests": {name: {"p_value": 0.5, "cramers_v": 0.1} for name in TESTS}}}
    assert emotion.results.headline_names() == list(emotion.results.headline(tests))
    assert emotion.leaderboard_metric in emotion.results.headline_names()
    for name in ("religion", "nli-gender"):
        probe = get_probe(name)
        assert probe.leaderboard_metric in probe.results.headline_names()


def test_a_sweep_whose_max_time_is_spent_starts_no_model(tmp_path, upstream_word_lists_path):
    """--max-time bounds the whole sweep: once it is spent no model starts (none is loaded), and the models not run
    are named; the next call runs them."""
    import time

    from unqover.jobs.sweep import sweep, sweep_text
    from unqover.probes.base import RunOptions
    from unqover.probes.registry import get_probe

    run = RunOptions(
        output=tmp_path / "sweep",
        started=time.monotonic() - 30,  # the command started 30 s ago
        progress=False,
        settings={"word_lists": upstream_word_lists_path, "precision": 0.05, "max_time": "10s"},
    )
    models = [SweepModel(str(tmp_path / "a")), SweepModel(str(tmp_path / "b"))]
    for model in models:
        Path(model.model_id).mkdir()  # folders that are no model: loading either would fail it
    done = sweep(models, [get_probe("religion")], run)
    assert done.not_run == models and done.failures == {} and done.finished == []
    text = sweep_text(done)
    assert (
        f"  not run: {models[0].model_id}, {models[1].model_id} (--max-time was spent before these models "
        "started; the same command runs them)"
    ) in text
    assert "<h2>Not run</h2>" in (tmp_path / "sweep" / "index.html").read_text()
    assert not list((tmp_path / "sweep").glob("*/religion"))


@pytest.mark.slow
def test_max_time_bounds_the_sweep_not_each_model(models, tmp_path, upstream_word_lists_path, capsys):
    """A precision sweep with --max-time 1s: the first model scores its first round (the least a run does), the
    second is not started, said so, and the command exits 1."""
    output = tmp_path / "sweep"
    argv = [
        *("probe", *map(str, models), "--bias", "religion", "--word-lists", str(upstream_word_lists_path)),
        *("--precision", "0.01", "--max-time", "1s", "--seed", "7", "--output", str(output), "--quiet"),
    ]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert f"[1/2] {models[0]}" in out and f"[2/2] {models[1]}" not in out
    assert f"  not run: {models[1]} (--max-time was spent before these models started" in out
    assert (output / models[0].name / "religion" / "results.json").is_file()
    assert not (output / models[1].name).exists()
