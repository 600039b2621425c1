"""One look across the Space (issue 30, item 7): the results table shows the headline numbers before the long
names, messages are whole (an offline model's advice is not cut at "e.g."), the live probe's cache lives under the
user's cache folder, and every API output has a name (no ``value_9``)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from unqover.errors import UnqoverError
from unqover.generate.nli import nli_rows, synthetic_premises
from unqover.measure.nli import nli_gender_bias
from unqover.scoring.models import ModelSource
from unqover.space import live, results
from unqover.space.app import Space, build_app


def test_the_results_table_shows_the_headline_numbers_first_and_the_long_names_last():
    header = results.columns()
    assert header[:5] == ["probe", "μ", "η", "δ", "ε"]
    assert header[-3:] == ["model", "run", "dataset"]
    assert header.index("S") < header.index("model")  # the NLI probe's headline too
    rows = nli_rows(synthetic_premises(), family="main")
    rng = np.random.default_rng(0)
    result = nli_gender_bias(
        rng.uniform(size=rows.num_rows), rng.uniform(size=rows.num_rows), rows["occupation_gender"],
        rows["cluster"], occupation=rows["occupation"], template_id=rows["template_id"], n_resamples=0,
        n_permutations=0,
    ).to_dict()  # fmt: skip
    run = {
        "probe": "nli-gender",
        "result": result,
        "provenance": {
            "model": {"id": "org/m"},
            "dataset": {"source": "a/very/long/dataset/path", "config": "main"},
        },
    }
    row = results.runs_table({"nli-run": run}).iloc[0].to_dict()
    assert list(row) == header
    assert row["S"] == result["S"] and row["ΔP"] == result["delta_P"] and row["μ"] is None
    assert (row["probe"], row["model"], row["run"]) == ("nli-gender", "org/m", "nli-run")
    assert row["dataset"] == "a/very/long/dataset/path / main"


def test_an_offline_model_message_is_shown_whole(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache
    with pytest.raises(UnqoverError) as raised:
        ModelSource("some-org/no-such-model", "some-org/no-such-model").config()
    assert "e.g." in str(raised.value) and "--local-dir" in str(raised.value)  # the library's message
    shown = live.friendly(raised.value)
    assert shown.startswith("cannot load model 'some-org/no-such-model': it is no local folder")
    assert "offline, give a local model folder instead (config.json, weights and tokenizer):" in shown
    assert "e.g)" not in shown and not shown.endswith("e.g") and not live.CLI_FLAG.search(shown)
    assert shown.endswith(
        "choose one of the listed models, or ask its operator to download this one (`hf download` on a machine with network)"
    )


def test_a_message_is_cut_at_a_clause_never_inside_an_abbreviation():
    text = live.web_terms("no such thing (use a folder, e.g. one from x --allow-pickle y)")
    assert text == "no such thing (use a folder): choose a model with safetensors weights"


def test_the_live_probe_cache_is_under_the_user_cache_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("UNQOVER_SPACE_CACHE", raising=False)
    monkeypatch.setenv("UNQOVER_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    assert Space(["m"]).cache_dir == tmp_path / "cache" / "space"
    monkeypatch.setenv("UNQOVER_SPACE_CACHE", str(tmp_path / "mine"))
    assert Space(["m"]).cache_dir == tmp_path / "mine"
    assert not (tmp_path / "space-cache").exists()


def test_every_api_endpoint_and_output_has_a_name(tmp_path):
    info = build_app(["m"], tmp_path / "cache").get_api_info()
    assert not info.get("unnamed_endpoints")
    endpoints = info["named_endpoints"]
    assert {"/probe", "/explore", "/load_results", "/view_run", "/compare", "/example_row"} <= set(endpoints)
    for name, endpoint in endpoints.items():
        labels = [p.get("label") for p in (*endpoint["parameters"], *endpoint["returns"])]
        assert all(label and not re.fullmatch(r"value_\d+", label) for label in labels), (name, labels)
    assert [r["label"] for r in endpoints["/view_run"]["returns"]] == [
        "report",
        "most biased subject–attribute pairs",
        "charts",
    ]


def test_the_results_tab_prints_numbers_as_the_reports_do_and_marks_success_with_a_drawable_glyph(tmp_path):
    """The Results tab's table shows each number as the reports print it (4 decimals; the NLI probe's percentage
    points with 2), not a float's 17 digits, and its status begins with a glyph common fonts have (✓), not the
    emoji ✅ that shows as a box where no emoji font is installed."""
    import json

    from tests.report.test_report_quick_runs import full_results
    from unqover.format import POINTS_DIGITS, fmt

    unqover_run = full_results()
    unqover_run["result"]["positional_error"] = 0.0033510270292346914
    rows = nli_rows(synthetic_premises(), family="main")
    rng = np.random.default_rng(1)
    nli = nli_gender_bias(
        rng.uniform(size=rows.num_rows), rng.uniform(size=rows.num_rows), rows["occupation_gender"],
        rows["cluster"], n_resamples=0, n_permutations=0,
    ).to_dict()  # fmt: skip
    nli_run = {"probe": "nli-gender", "result": nli, "provenance": {"model": {"id": "org/m"}}}
    for name, run in {"unqover-run": unqover_run, "nli-run": nli_run}.items():
        (tmp_path / "results" / name).mkdir(parents=True)
        (tmp_path / "results" / name / "results.json").write_text(json.dumps(run), encoding="utf-8")
    space = Space(cache_dir=tmp_path / "cache", results_root=tmp_path / "results")
    status, table, *_ = space.load_results("")
    assert status.startswith("✓ 2 runs loaded."), status
    shown = table.set_index("run")
    assert shown.loc["unqover-run", "δ"] == "0.0034"
    assert shown.loc["unqover-run", "μ"] == "0.4834" and shown.loc["unqover-run", "μ low"] == "0.1547"
    assert (
        shown.loc["nli-run", "ΔP"] == fmt(nli["delta_P"], POINTS_DIGITS)
        and len(shown.loc["nli-run", "ΔP"]) <= 6
    )
    for value in table.drop(columns=["model", "run", "dataset", "probe", "groups"]).to_numpy().ravel():
        assert pd.isna(value) or (  # blank: a column of the other probe
            isinstance(value, str) and re.fullmatch(r"—|-?\d+\.\d{2,4}|\S+e-\d+", value)
        ), value


def test_the_space_s_success_glyph_is_in_the_common_fonts():
    """✓ (the Space's success mark) and ⚠ (its warnings', as the reports') are drawn by DejaVu Sans, where ✅ is
    not: checked against the fonts installed here (fontconfig), skipped where there are none."""
    import shutil
    import subprocess

    from unqover.space import render

    if not shutil.which("fc-list"):
        pytest.skip("no fontconfig (fc-list) on this machine to ask which fonts draw a character")

    def families(character: str) -> str:
        done = subprocess.run(
            ["fc-list", f":charset={ord(character):x}", "family"], capture_output=True, text=True, check=True
        )
        return done.stdout

    if "DejaVu Sans" not in families("A"):
        pytest.skip("DejaVu Sans is not installed on this machine")
    assert render.DONE == "✓"
    assert "DejaVu Sans" in families(render.DONE) and "DejaVu Sans" in families("⚠")
    assert "DejaVu Sans" not in families("✅")


def test_the_docs_name_as_many_tabs_as_the_space_has():
    import ast
    from pathlib import Path

    import unqover.space.app as app

    tree = ast.parse(Path(app.__file__).read_text(encoding="utf-8"))
    tabs = [
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Tab" and node.args
    ]
    assert tabs == ["Live probe", "Explorer", "Results", "Leaderboard"]
    words = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
    page = (Path(__file__).resolve().parents[2] / "docs" / "space.md").read_text(encoding="utf-8")
    assert f"with {words[len(tabs)]} tabs:" in " ".join(page.split())
