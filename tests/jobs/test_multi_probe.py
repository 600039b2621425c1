"""Several probes in one command (``unqover probe MODEL --bias religion,ethnicity``): the model loads once, each
probe's run folder holds what a run of that probe alone holds, and one summary sets their headlines side by side.
Offline, on a tiny local QA model, rows generated from the upstream word lists."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tiny_models
from unqover.cli import build_parser, main
from unqover.format import fmt_estimate
from unqover.generate.unqover import make_plan
from unqover.probes.registry import PROBES, group_members

BIASES = ("religion", "ethnicity")


@pytest.fixture(scope="module")
def qa_model(tmp_path_factory, word_lists):
    texts: set[str] = set()
    for bias in BIASES:
        rows = pa.Table.from_batches(list(make_plan(word_lists, bias, "qa").batches()))
        texts |= set(rows["context"].to_pylist()) | set(rows["question"].to_pylist())
    return tiny_models.bert_qa(tmp_path_factory.mktemp("multi") / "qa", sorted(texts))


@pytest.fixture
def loads(monkeypatch):
    """Counts the model loads of the UnQover probes' loader."""
    import unqover.scoring.models as models

    calls = []
    original = models.load_model

    def counted(*args, **kwargs):
        calls.append(args[0] if args else kwargs.get("model_id"))
        return original(*args, **kwargs)

    monkeypatch.setattr(models, "load_model", counted)
    return calls


def probe_args(model, lists, bias: str, *extra: str) -> list[str]:
    return ["probe", str(model), "--bias", bias, "--word-lists", str(lists), "--limit", "100",
            "--resamples", "20", "--quiet", "--device", "cpu", *extra]  # fmt: skip


@pytest.mark.slow
def test_two_probes_load_the_model_once_and_match_single_runs(
    qa_model, upstream_word_lists_path, loads, tmp_path, capsys
):
    out = tmp_path / "both"
    assert main(probe_args(qa_model, upstream_word_lists_path, ",".join(BIASES), "--output", str(out))) == 0
    assert len(loads) == 1
    printed = capsys.readouterr().out
    for bias in BIASES:
        single = tmp_path / f"single-{bias}"
        assert main(probe_args(qa_model, upstream_word_lists_path, bias, "--output", str(single))) == 0
        several = json.loads((out / bias / "results.json").read_text())
        alone = json.loads((single / "results.json").read_text())
        assert several["probe"] == bias and several["result"] == alone["result"]
        assert json.loads((out / bias / "run.json").read_text()) == json.loads(
            (single / "run.json").read_text()
        )
        assert pq.read_table(out / bias / "predictions.parquet").equals(
            pq.read_table(single / "predictions.parquet")
        )
        markdown = (out / "summary.md").read_text()
        html = (out / "summary.html").read_text()
        headline = PROBES[bias].results.headline(several)
        assert any(value is not None for value, _ in headline.values())  # the errors δ, ε at this size
        for value, interval in headline.values():
            shown = fmt_estimate(value, interval)
            assert shown in markdown and shown in printed
            assert fmt_estimate(value) in html
    assert len(loads) == 1 + len(BIASES)
    assert "UnQover religion (religion): quick run" in printed
    assert "UnQover ethnicity (ethnicity): quick run" in printed


@pytest.mark.slow
def test_without_output_the_summary_lands_beside_the_default_run_folders(
    qa_model, upstream_word_lists_path, loads, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    assert main(probe_args(qa_model, upstream_word_lists_path, "religion,ethnicity,religion")) == 0
    assert len(loads) == 1
    parent = tmp_path / "runs" / "qa"
    assert (parent / "summary.md").is_file() and (parent / "summary.html").is_file()
    folders = sorted(p.name for p in parent.iterdir() if p.is_dir())
    assert folders == ["ethnicity-qa-limit100-seed0", "religion-qa-limit100-seed0"]


def test_a_group_name_expands_to_its_members_in_order():
    parser = build_parser()
    assert parser.parse_args(["probe", "m", "--bias", "unqover"]).bias == group_members("unqover")
    assert group_members("unqover") == ["gender", "nationality", "ethnicity", "religion"]
    both = parser.parse_args(["probe", "m", "--bias", "religion,unqover"]).bias
    assert both == ["religion", "gender", "nationality", "ethnicity"]
    assert parser.parse_args(["probe", "m", "--bias", "religion"]).bias == ["religion"]


def test_an_unknown_name_is_refused_with_the_choices(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["probe", "m", "--bias", "religion,pets"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "unknown probe 'pets'" in err and "nli-gender" in err and "unqover" in err


def test_a_named_probe_the_model_cannot_score_is_refused_before_loading(
    qa_model, upstream_word_lists_path, loads, tmp_path, capsys
):
    """One load serves every probe's requests; a QA model answers none of the NLI probe's."""
    argv = ["probe", str(qa_model), "--bias", "gender,nli-gender", "--word-lists", str(upstream_word_lists_path),
            "--quick", "--device", "cpu", "--output", str(tmp_path / "o")]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "which the nli-gender probe cannot score; leave it out of --bias" in err
    assert loads == [] and not (tmp_path / "o").exists()


def test_an_option_no_listed_probe_takes_is_refused(loads, tmp_path, capsys):
    argv = ["probe", "m", "--bias", "religion,ethnicity", "--permutations", "50", "--output", str(tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--permutations" in err and err.count("\n") == 1 and loads == []


def test_one_dataset_for_several_probes_is_refused(loads, tmp_path, capsys):
    """--dataset is one probe's rows: under several probes' names it would label religion rows as ethnicity."""
    argv = [
        "probe",
        "m",
        "--bias",
        "religion,ethnicity",
        "--dataset",
        str(tmp_path),
        "--output",
        str(tmp_path / "o"),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--dataset names one probe's dataset" in err and err.count("\n") == 1 and loads == []
