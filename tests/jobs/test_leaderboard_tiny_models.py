"""`unqover leaderboard` over real run folders: quick runs of three tiny QA models (seeds 0, 1, 2) on the same
seeded sample of religion, written by `unqover probe`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.jobs.test_leaderboard import refused
from unqover.cli import main

pytestmark = pytest.mark.slow

LIMIT = 400  # groups: enough for δ and ε, too few for μ and η (declined)


@pytest.fixture(scope="module")
def run_folders(tmp_path_factory, religion_qa_model, religion_tables, upstream_word_lists_path) -> list[Path]:
    import tiny_models

    rows = religion_tables["qa"]
    texts = sorted(set(rows["context"].to_pylist()) | set(rows["question"].to_pylist()))
    tmp = tmp_path_factory.mktemp("tiny-leaderboard")
    models = [religion_qa_model] + [
        tiny_models.bert_qa(tmp / f"qa-{seed}", texts, seed=seed) for seed in (1, 2)
    ]
    folders = []
    for k, model in enumerate(models):
        folder = tmp / f"run-{k}"
        argv = ["probe", str(model), "--bias", "religion", "--word-lists", str(upstream_word_lists_path)]
        assert main([*argv, "--limit", str(LIMIT), "--seed", "7", "--output", str(folder), "--quiet"]) == 0
        folders.append(folder)
    return folders


def test_leaderboard_of_three_tiny_models(run_folders, tmp_path, capsys):
    output = tmp_path / "board.json"
    argv = [str(f) for f in run_folders]
    assert main(["leaderboard", *argv, "--metric", "positional_error", "--output", str(output)]) == 0
    board = json.loads(output.read_text())
    assert set(board) == {"probe", "metric", "confidence", "models", "distinguishable", "method"}
    assert (board["probe"], board["metric"], board["confidence"]) == ("religion", "positional_error", 0.95)
    assert sorted(m["run"] for m in board["models"]) == sorted(argv)
    for model in board["models"]:
        own = json.loads(Path(model["run"], "results.json").read_text())
        assert model["name"] == own["provenance"]["model"]["id"]
        low, high = own["result"]["intervals"]["positional_error"]
        assert model["interval"][0] < low and model["interval"][1] > high  # wider than the run's own 95%
        assert model["groups"] == LIMIT
        best, worst = model["rank_interval"]
        assert 1 <= best <= model["rank"] <= worst <= 3
    ranked = [m["rank"] for m in board["models"]]
    assert ranked == sorted(ranked)
    for pair in board["distinguishable"]:
        assert pair["p_value"] < 0.05 and pair["interval"][0] > 0


def test_refusals_over_run_folders(run_folders, capsys):
    a, b = (str(f) for f in run_folders[:2])
    declined = refused([a, b], capsys)  # μ, the default, is declined at this budget
    assert "mu of" in declined and "groups needed" in declined and "another --metric" in declined
    assert "given twice" in refused([a, b, a], capsys)
    assert "at least 2 runs" in refused([a], capsys)


def test_html_page_has_the_table_and_the_figure(run_folders, tmp_path):
    import xml.dom.minidom

    output = tmp_path / "board.html"
    argv = [str(f) for f in run_folders]
    assert main(["leaderboard", *argv, "--metric", "positional_error", "--output", str(output)]) == 0
    page = output.read_text()
    assert "<table" in page and "rank interval" in page and "<script" not in page
    svg = page[page.index("<svg") : page.index("</svg>") + len("</svg>")]
    figure = xml.dom.minidom.parseString(svg)  # well-formed
    assert len(figure.getElementsByTagName("circle")) == 3  # one dot per model, on its interval
    assert len(figure.getElementsByTagName("line")) >= 3
