"""The Space's Leaderboard tab over its results folder: three quick runs of tiny QA models (seeds 0, 1, 2) on the
same seeded sample of religion, written by `unqover probe`; the tab's table and numbers are `unqover leaderboard`'s
over the same run folders, its refusals are messages with no path of the server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from unqover.cli import main
from unqover.report.leaderboard import leaderboard_markdown
from unqover.space import render, results
from unqover.space.app import Space, build_app

pytestmark = pytest.mark.slow

LIMIT = 400  # groups: enough for δ and ε, too few for μ (declined)
METRIC = "positional_error"


@pytest.fixture(scope="module")
def root(tmp_path_factory, religion_qa_model, religion_tables, upstream_word_lists_path) -> Path:
    """A results folder with three quick runs of religion (run-0, run-1, run-2) and a full-run-free layout."""
    import tiny_models

    rows = religion_tables["qa"]
    texts = sorted(set(rows["context"].to_pylist()) | set(rows["question"].to_pylist()))
    models_folder = tmp_path_factory.mktemp("space-board-models")
    models = [religion_qa_model] + [
        tiny_models.bert_qa(models_folder / f"qa-{seed}", texts, seed=seed) for seed in (1, 2)
    ]
    root = tmp_path_factory.mktemp("space-board-results")
    for k, model in enumerate(models):
        argv = ["probe", str(model), "--bias", "religion", "--word-lists", str(upstream_word_lists_path)]
        argv += ["--limit", str(LIMIT), "--seed", "7", "--output", str(root / f"run-{k}"), "--quiet"]
        assert main(argv) == 0
    return root


@pytest.fixture(scope="module")
def space(root, tmp_path_factory, upstream_word_lists_path) -> Space:
    cache = tmp_path_factory.mktemp("space-board-cache")
    return Space(cache_dir=cache, results_root=root, word_lists=upstream_word_lists_path, results_repos=())


def _cli_board(root: Path, tmp_path: Path, names: list[str], metric: str = METRIC) -> dict:
    output = tmp_path / "board.json"
    folders = [str(root / name) for name in names]
    assert main(["leaderboard", *folders, "--metric", metric, "--output", str(output)]) == 0
    return json.loads(output.read_text())


def _as_the_space_names_them(board: dict) -> dict:
    """The CLI's board with each model named by its run (the tiny models are folders of the server, which the
    Space does not show) and each run by its name in the results folder."""
    renamed = {m["name"]: Path(m["run"]).name for m in board["models"]}
    models = [{**m, "name": renamed[m["name"]], "run": Path(m["run"]).name} for m in board["models"]]
    pairs = [
        {**p, "less_biased": renamed[p["less_biased"]], "more_biased": renamed[p["more_biased"]]}
        for p in board["distinguishable"]
    ]
    return {**board, "models": models, "distinguishable": pairs}


def test_the_tabs_table_is_the_clis(space, root, tmp_path):
    names = ["run-0", "run-1", "run-2"]
    expected = _as_the_space_names_them(_cli_board(root, tmp_path, names))
    runs, where = space._runs("")
    board = results.rank_runs(
        runs, [], where, "religion", METRIC, space.word_lists
    )  # default: all quick runs
    assert board == expected
    status, table, figure = space.leaderboard("", "religion", METRIC, [])
    assert status.startswith(render.DONE) and "3 runs" in status
    assert table == leaderboard_markdown(expected)
    assert figure.startswith("<svg") and figure.count("<circle") == 3
    assert str(root) not in table + figure + status


def test_a_chosen_subset_is_ranked_alone(space, root, tmp_path):
    expected = _as_the_space_names_them(_cli_board(root, tmp_path, ["run-2", "run-0"]))
    status, table, _ = space.leaderboard("", "religion", METRIC, ["run-2", "run-0"])
    assert status.startswith(render.DONE) and "2 runs" in status
    assert table == leaderboard_markdown(expected)
    assert "run-1" not in table


def test_listing_offers_the_probes_runs_with_its_quick_runs_chosen(space):
    status, update = space.leaderboard_runs("", "religion")
    assert status.startswith(render.DONE)
    assert update["choices"] == update["value"] == ["run-0", "run-1", "run-2"]
    status, update = space.leaderboard_runs("", "gender")
    assert status.startswith(f"{render.DONE} 0 runs of gender") and update["choices"] == update["value"] == []


@pytest.mark.parametrize(
    ("probe", "metric", "chosen", "words"),
    [
        ("religion", METRIC, ["run-1"], "at least 2 runs"),
        ("gender", "mu", [], "at least 2 runs"),
        ("religion", "mu", [], "groups needed): choose another metric"),  # μ is declined at this budget
        ("religion", "nonsense", [], "choose a metric from the list"),
        ("no-such-probe", METRIC, [], "choose a probe from the list"),
        ("religion", METRIC, ["run-0", "absent"], "list the runs"),
    ],
)
def test_refusals_are_messages(space, root, probe, metric, chosen, words):
    status, table, figure = space.leaderboard("", probe, metric, chosen)
    assert status.startswith("⚠️") and words in status, status
    assert (table, figure) == ("", "")
    assert "Traceback" not in status and str(root) not in status and "/tmp" not in status


def test_a_folder_outside_the_results_folder_is_refused(space, root):
    status, table, figure = space.leaderboard(str(root.parent), "religion", METRIC, [])
    assert (status, table, figure) == (f"⚠️ {results.OUTSIDE}", "", "")
    status, update = space.leaderboard_runs("../x", "religion")
    assert status == f"⚠️ {results.PARENT}" and update["choices"] == []


def test_the_tab_is_a_named_api(root, tmp_path, upstream_word_lists_path):
    demo = build_app(
        cache_dir=tmp_path, results_root=root, word_lists=upstream_word_lists_path, results_repos=()
    )
    endpoints = demo.get_api_info()["named_endpoints"]
    board, listing = endpoints["/leaderboard"], endpoints["/leaderboard_runs"]
    assert [p["label"] for p in board["parameters"]] == [
        "results folder or Hub dataset repo",
        "probe",
        "metric",
        "runs (none: every quick run of the probe)",
    ]
    assert [r["label"] for r in board["returns"]] == ["status", "leaderboard", "figure"]
    assert [r["label"] for r in listing["returns"]] == ["status", "runs (none: every quick run of the probe)"]


def test_a_linked_run_is_one_run_and_local_models_show_no_path(root, tmp_path, upstream_word_lists_path):
    """A folder of links to run-0 is run-0 again: left out of the default, with the reason, and refused when
    chosen beside it; the runs of local models name them by their folders' names, in the table and the View tab."""
    import shutil

    own = tmp_path / "results"
    shutil.copytree(root, own)
    links = own / "run-0-links"
    links.mkdir()
    for path in (own / "run-0").iterdir():
        (links / path.name).symlink_to(path, target_is_directory=path.is_dir())
    # a run of the mlm config (other scores): no leaderboard ranks it beside the qa runs
    import pyarrow.compute as pc

    from unqover.predictions import read_predictions, write_predictions

    mlm = own / "run-mlm"
    shutil.copytree(own / "run-2", mlm)
    table, provenance = read_predictions(mlm / "predictions.parquet")
    table = table.set_column(1, "score_1", pc.multiply(table["score_1"], 0.5))
    write_predictions(mlm / "predictions.parquet", table, provenance)
    data = json.loads((mlm / "results.json").read_text())
    data["provenance"]["dataset"]["config"] = "mlm"
    (mlm / "results.json").write_text(json.dumps(data))
    space = Space(
        cache_dir=tmp_path / "cache", results_root=own, word_lists=upstream_word_lists_path, results_repos=()
    )
    status, update = space.leaderboard_runs("", "religion")
    assert update["choices"] == ["run-0", "run-0-links", "run-1", "run-2", "run-mlm"]
    assert update["value"] == ["run-0", "run-1", "run-2"]
    assert "run-0-links is left out: it is the same run as run-0 (the same model and predictions)" in status
    assert (
        "run-mlm is left out: the runs measured different dataset configs: run-0 'qa', run-mlm 'mlm'"
        in status
    )
    status, table, _ = space.leaderboard("", "religion", METRIC, [])
    assert (
        status.startswith(f"{render.DONE} 3 runs")
        and "run-0-links is left out" in status
        and "run-0-links" not in table
    )
    status, table, _ = space.leaderboard("", "religion", METRIC, ["run-0", "run-0-links"])
    assert (
        status
        == "⚠️ run-0-links is the same run as run-0 (the same model and predictions): give each run once"
    )
    assert table == ""
    _, table, *_ = space.load_results("")
    assert set(table["model"]) == {"religion-qa (local)", "qa-1 (local)", "qa-2 (local)"}
    assert not any(str(tmp_path) in str(value) for value in table.to_numpy().ravel())
    heading, _, _ = space.view_run("", "run-1")
    assert "qa-1 (local)" in heading and "/tmp" not in heading and str(tmp_path) not in heading


def test_an_edited_number_is_refused_in_every_tab(root, tmp_path, upstream_word_lists_path):
    """run-1's δ edited in its results.json: the View, Compare and Leaderboard tabs refuse it, naming both values,
    with no path of the server; run-0, untouched, is still shown."""
    import shutil

    from unqover.format import fmt

    own = tmp_path / "results"
    shutil.copytree(root, own)
    data = json.loads((own / "run-1" / "results.json").read_text())
    truth = data["result"]["positional_error"]
    data["result"]["positional_error"] = 0.5
    (own / "run-1" / "results.json").write_text(json.dumps(data))
    space = Space(
        cache_dir=tmp_path / "cache", results_root=own, word_lists=upstream_word_lists_path, results_repos=()
    )
    said = f"the predictions of run-1 give positional_error {fmt(truth)}, but its results say 0.5000"
    heading, _, _ = space.view_run("", "run-1")
    assert heading == f"⚠️ {said}"
    assert space.view_run("", "run-0")[0].startswith("### ")
    assert space.compare("", "run-0", "run-1") == f"⚠️ {said}"
    status, table, _ = space.leaderboard("", "religion", METRIC, ["run-0", "run-1", "run-2"])
    assert status == f"⚠️ {said}" and table == ""
