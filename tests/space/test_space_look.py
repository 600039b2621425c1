"""One look across the Space (issue 30, item 7): the results table shows the headline numbers before the long
names, messages are whole (an offline model's advice is not cut at "e.g."), the live probe's cache lives under the
user's cache folder, and every API output has a name (no ``value_9``)."""

from __future__ import annotations

import re

import numpy as np
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
