"""``unqover probe MODEL --bias all``: every probe the model can score, the model loaded once, each probe into its own
run folder, and one summary of the model's bias (the terminal, ``summary.md`` / ``summary.html`` / ``summary.json``)
whose numbers are the runs' ``results.json`` numbers; ``--quick`` runs each probe's own default quick run and a
``--limit`` that counts different things is refused; probes the model cannot score are left out with a line (a
named one is refused); ``unqover publish-results`` given the summary's folder writes every probe's numbers and the
same section into the model card (``--output DIR``: the local twin, no network). Offline, on the session's tiny
GGUF chat Llama and a tiny GPT-2 the tests build."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

import tiny_models
from tests.jobs.test_multi_probe import loads  # noqa: F401  (fixture: the model loads)
from unqover.cli import build_parser, main
from unqover.jobs.model_summary import probe_card
from unqover.jobs.multi import plan_probes
from unqover.probes.base import RunOptions
from unqover.probes.registry import PROBES, probe_names
from unqover.report.markdown import md_text
from unqover.report.model_card import SECTION_END, SECTION_START, ModelCard, card_section
from unqover.report.page import markdown_page
from unqover.results import load_results

#: each probe's default quick run, made small enough for a tiny model on a CPU (--quick must run these)
SMALL = {
    "gender": 30,
    "nationality": 30,
    "ethnicity": 30,
    "religion": 30,
    "nli-gender": 1,
    "eec-emotion": 1,
    "eec-person": 1,
}


@pytest.fixture
def small_quick_runs(monkeypatch):
    for name, size in SMALL.items():
        probe = PROBES[name]
        monkeypatch.setattr(probe, "quick_run", dataclasses.replace(probe.quick_run, default=size))


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


# --- the command line, before any model loads -------------------------------------------------------------------


def test_all_is_in_the_help_and_is_every_probe_left_out_where_unscored():
    parser = build_parser()
    probe = next(
        a for a in parser._subparsers._group_actions[0].choices["probe"]._actions if a.dest == "bias"
    )
    assert "all: every probe the model can score" in probe.help
    chosen = parser.parse_args(["probe", "m", "--bias", "all"]).bias
    assert chosen == probe_names() and chosen.optional == set(probe_names())
    named = parser.parse_args(["probe", "m", "--bias", "unqover,all,eec-person"]).bias
    assert named[:4] == ["gender", "nationality", "ethnicity", "religion"] and sorted(named) == sorted(
        probe_names()
    )
    assert named.optional == {
        "nli-gender",
        "eec-emotion",
    }  # a probe named, alone or by its group, is required


def test_a_mistyped_all_gets_did_you_mean(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["probe", "m", "--bias", "alll"])
    assert exit_.value.code == 2
    assert "(did you mean all?)" in _one_line(capsys)


def test_a_limit_that_counts_different_things_is_refused_before_loading(loads, tmp_path, capsys):  # noqa: F811
    argv = ["probe", "m", "--bias", "religion,eec-emotion", "--limit", "5", "--output", str(tmp_path / "o")]
    assert main(argv) == 2
    err = _one_line(capsys)
    assert "--limit 5 counts different things" in err and "--quick" in err
    assert PROBES["religion"].limit_meaning in err and PROBES["eec-emotion"].limit_meaning in err
    assert loads == [] and not (tmp_path / "o").exists()


def test_quick_and_limit_together_are_refused(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["probe", "m", "--bias", "all", "--quick", "--limit", "5"])
    assert exit_.value.code == 2
    assert "--quick" in _one_line(capsys)


def test_all_in_a_sweep_is_refused(tmp_path, capsys):
    assert main(["probe", "a", "b", "--bias", "all", "--output", str(tmp_path / "o")]) == 2
    assert "--bias all probes one model" in _one_line(capsys)


def test_a_qa_model_leaves_out_what_it_cannot_score_and_refuses_a_named_one(
    religion_qa_model,
    upstream_word_lists_path,
    loads,  # noqa: F811
    tmp_path,
    capsys,
):
    probes = [PROBES[name] for name in probe_names()]
    settings = {"word_lists": str(upstream_word_lists_path)}
    run = RunOptions(output=tmp_path / "all", device="cpu", quick=True, settings=settings)
    plan = plan_probes(str(religion_qa_model), probes, run, optional=set(probe_names()))
    assert [p.name for p in plan.probes] == ["gender", "nationality", "ethnicity", "religion"]
    assert [r.limit for r in plan.runs] == [PROBES[p.name].quick_run.default for p in plan.probes]
    assert sorted(plan.left_out) == ["eec-emotion", "eec-person", "nli-gender"]
    assert all("is a qa model" in why for why in plan.left_out.values())
    argv = ["probe", str(religion_qa_model), "--bias", "religion,eec-emotion", "--quick", "--device", "cpu",
            "--word-lists", str(upstream_word_lists_path), "--output", str(tmp_path / "named")]  # fmt: skip
    assert main(argv) == 2
    err = _one_line(capsys)
    assert "is a qa model, which the eec-emotion probe cannot score; leave it out of --bias" in err
    assert loads == [] and not (tmp_path / "named").exists()


@pytest.mark.parametrize(
    ("family", "runs"),
    [
        ("mlm", ["gender", "nationality", "ethnicity", "religion", "eec-emotion", "eec-person"]),
        ("nli", ["nli-gender"]),
        ("causal", probe_names()),
    ],
)
def test_all_keeps_the_probes_each_family_answers(family, runs, upstream_word_lists_path, tmp_path):
    texts = ["The nurse and the man went to the store.", "Who was happy? The woman."]
    model = {
        "mlm": lambda: tiny_models.bert_mlm(tmp_path / "m", texts),
        "nli": lambda: tiny_models.bert_nli(
            tmp_path / "m", texts, ["entailment", "neutral", "contradiction"]
        ),
        "causal": lambda: tiny_models.gpt2(tmp_path / "m", texts),
    }[family]()
    run = RunOptions(device="cpu", quick=True, settings={"word_lists": str(upstream_word_lists_path)})
    plan = plan_probes(str(model), [PROBES[n] for n in probe_names()], run, optional=set(probe_names()))
    assert [p.name for p in plan.probes] == runs
    assert sorted(plan.left_out) == sorted(set(probe_names()) - set(runs))
    assert all(f"is a {family} model; it scores " in why for why in plan.left_out.values())


def test_quick_alone_runs_the_probe_s_own_default_quick_run(
    religion_qa_model, upstream_word_lists_path, small_quick_runs, tmp_path, capsys
):
    out = tmp_path / "religion"
    argv = ["probe", str(religion_qa_model), "--bias", "religion", "--quick", "--resamples", "0", "--quiet",
            "--word-lists", str(upstream_word_lists_path), "--device", "cpu", "--output", str(out)]  # fmt: skip
    assert main(argv) == 0
    results = load_results(out)
    assert (
        results["provenance"]["selection"]["limit"]
        == SMALL["religion"]
        == PROBES["religion"].quick_run.default
    )
    assert results["result"]["sample"]["groups"] == SMALL["religion"]


# --- every probe on a causal LM ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_all_runs_every_probe_on_a_causal_lm_loaded_once_with_one_summary_of_their_numbers(
    gguf_model,
    upstream_word_lists_path,
    small_quick_runs,
    loads,  # noqa: F811
    tmp_path,
    capsys,
):
    out = tmp_path / "all"
    argv = ["probe", str(gguf_model), "--bias", "all", "--quick", "--resamples", "20",
            "--word-lists", str(upstream_word_lists_path), "--device", "cpu", "--quiet", "--output", str(out)]  # fmt: skip
    assert main(argv) == 0
    assert len(loads) == 1
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert list(summary["runs"]) == probe_names() and summary["left_out"] == {}
    markdown = (out / "summary.md").read_text(encoding="utf-8")
    html = (out / "summary.html").read_text(encoding="utf-8")
    assert markdown.startswith(SECTION_START) and markdown.rstrip().endswith(SECTION_END)
    assert html.startswith("<!DOCTYPE html>") and "<table>" in html and "Bias summary:" in html
    for name in probe_names():
        probe = PROBES[name]
        results = json.loads((out / name / "results.json").read_text(encoding="utf-8"))
        assert results["probe"] == name
        assert results["provenance"]["selection"]["limit"] == SMALL[name]  # --quick: its own default
        assert f"[{name}/report.html]({name}/report.html)" in markdown
        assert f"{probe.title} ({name}): quick run" in printed
        words = probe.results.headline_text(results)  # as results.json holds them, not re-typed
        assert words and all(text for text in words.values())
        for key, text in words.items():
            assert f" | {md_text(text)} |" in markdown, (name, key)
            assert text in printed, (name, key)
        for meaning in probe.results.headline_meanings(results).values():
            assert md_text(meaning) in markdown and meaning in printed
        assert summary["timing"][name]["seconds"] > 0
    # the page is the Markdown rendered, every number escaped as the page escapes it
    assert html == markdown_page(markdown, f"Bias summary: {gguf_model}")


def test_a_folder_of_runs_without_a_summary_stands_for_its_run_folders(tmp_path):
    from unqover.errors import UnqoverError
    from unqover.jobs.model_summary import summary_runs

    for name in ("religion", "eec-emotion"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text("{}", encoding="utf-8")
    (tmp_path / "notes").mkdir()  # no run
    assert summary_runs(tmp_path) == [tmp_path / "eec-emotion", tmp_path / "religion"]
    (tmp_path / "summary.json").write_text('{"runs": {"religion": "religion"}}', encoding="utf-8")
    assert summary_runs(tmp_path) == [tmp_path / "religion"]  # the summary's runs, not every folder there
    (tmp_path / "summary.json").write_text("[]", encoding="utf-8")
    with pytest.raises(UnqoverError, match="is no summary of `unqover probe MODEL --bias all`"):
        summary_runs(tmp_path)
    with pytest.raises(UnqoverError, match=r"holds no results\.json and no run folders"):
        summary_runs(tmp_path / "notes")


# --- publishing the summary's folder ----------------------------------------------------------------------------


@pytest.fixture
def snapshot_model(tmp_path_factory) -> Path:
    """A tiny GPT-2 as a Hub-cache snapshot of ``me/tiny`` (what publish-results ties to that repo)."""
    folder = tmp_path_factory.mktemp("hub") / "models--me--tiny" / "snapshots" / ("5" * 40)
    return tiny_models.gpt2(folder, ["The nurse and the man went to the store.", "Who was happy? The woman."])


@pytest.mark.slow
def test_publish_results_of_the_summary_folder_writes_every_probe_and_the_model_card_section(
    snapshot_model, built_datasets, small_quick_runs, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)  # the probes find the datasets built into datasets/unqover (Hub builds)
    for name, key in (("religion", "religion"), ("nli-gender", "nli"), ("eec-emotion", "eec")):
        shutil.copytree(built_datasets[key], tmp_path / "datasets" / "unqover" / name)
    probes = "religion,nli-gender,eec-emotion,eec-person"
    argv = ["probe", str(snapshot_model), "--bias", probes, "--quick", "--resamples", "20", "--device", "cpu",
            "--quiet", "--output", "runs"]  # fmt: skip
    assert main(argv) == 0
    card = tmp_path / "card"
    card.mkdir()
    before = (
        f"---\nlicense: mit\n---\n# tiny\n\nOur notes.\n\n{SECTION_START}\nan old section\n{SECTION_END}\n\n"
        "## Training\n"
    )
    (card / "README.md").write_text(before, encoding="utf-8")
    capsys.readouterr()
    assert main(["publish-results", "runs", "--model-repo", "me/tiny", "--output", str(card)]) == 0
    written = capsys.readouterr().out
    readme = (card / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("---\nlicense: mit\n---\n# tiny\n\nOur notes.\n\n") and readme.endswith(
        "## Training\n"
    )
    assert "an old section" not in readme and readme.count(SECTION_START) == 1
    assert f"wrote {card / 'README.md'}" in written
    runs = [tmp_path / "runs" / name for name in probes.split(",")]
    expected = [
        probe_card(
            load_results(run),
            timing=json.loads((tmp_path / "runs" / "summary.json").read_text())["timing"][run.name],
            dataset=f"unqover/{'eec-emotion' if run.name == 'eec-person' else run.name}",
            task="unqover_" + run.name.replace("-", "_") + "_sample",
        )
        for run in runs
    ]
    import unqover

    assert card_section(ModelCard("me/tiny", unqover.__version__, expected)) in readme
    for run in runs:
        results = load_results(run)
        task = "unqover_" + run.name.replace("-", "_") + "_sample"
        assert f"Hub task id: `{task}`" in readme
        assert any(p.name.startswith(task + "_") for p in (card / ".eval_results").iterdir())
        for text in PROBES[run.name].results.headline_text(results).values():
            assert md_text(text) in readme
    assert "report.html" not in readme  # no local links on the model page
    # without --output: one pull request with the same files, the card read from the repo and its section replaced
    sent = pull_request_files(monkeypatch, tmp_path, before)
    assert sent == {
        path.relative_to(card).as_posix(): path.read_bytes() for path in card.rglob("*") if path.is_file()
    }


def pull_request_files(monkeypatch, tmp_path: Path, card: str) -> dict[str, bytes]:
    """What ``publish-results runs --model-repo me/tiny`` sends (the Hub replaced: its card is ``card``)."""
    import huggingface_hub

    from tests.jobs.test_publish_results import _online, recorded_commits

    repo_card = tmp_path / "repo-README.md"
    repo_card.write_text(card, encoding="utf-8")
    _online(monkeypatch, tmp_path)
    calls = recorded_commits(monkeypatch, "me/tiny")
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", lambda repo, name, token=None: str(repo_card))
    assert main(["publish-results", "runs", "--model-repo", "me/tiny"]) == 0
    [call] = calls
    assert "and their section in the model card" in call["commit_description"]
    return {op.path_in_repo: op.path_or_fileobj for op in call["operations"]}
