"""Cases of issue 45's hostile round on the results layer, lm-eval and custom probe files, through the command line:

* ``unqover compare`` shows only numbers that the runs' predictions give again, as ``unqover leaderboard`` does
  (``unqover.jobs.compare``): an edited mean answer score, γ(x), number of groups or sample size, and an edited
  confidence level are refused naming both values; a run whose predictions are gone is refused saying why;
* runs of one model that differ in a setting that changes the numbers (dtype, system prompt, ...) are labelled with
  it in ``compare`` and ``leaderboard`` (the kept real-model runs of ``docs/examples/``);
* ``unqover lm-eval-tasks --groups`` too small for μ and η says so when it writes the tasks (the words of ``unqover
  probe --limit``'s note) and writes it into the sample task's metadata; lm-eval's aggregation says why each NaN is
  NaN before lm-eval prints its table;
* logged samples whose log-likelihood is no log of a probability (+800, NaN) are refused naming the samples file's
  line, before any S = exp(log S) is taken (no RuntimeWarning);
* logged samples that record a seed whose draw is not theirs are refused;
* a custom probe file whose texts hold a bidi override or another invisible character is refused naming the entry
  and the code point.
"""

from __future__ import annotations

import json
import logging
import math
import shutil
from pathlib import Path

import pytest

from tests.cli.test_cli_bad_data import refused
from tests.scripts.test_docs_examples import load_script
from unqover.cli import main
from unqover.format import fmt, fmt_interval
from unqover.lexicon.custom import read_probe_text

pytestmark = pytest.mark.slow  # each case reads real runs or generates religion rows (a few seconds)

EXAMPLES = ("smollm2-fp32", "smollm2-bf16", "smollm2-system-prompt")


@pytest.fixture(scope="module")
def examples(tmp_path_factory, upstream_word_lists_path) -> dict[str, Path]:
    """The kept real-model runs of docs/examples/, their word lists where this checkout has them."""
    script = load_script()
    root = tmp_path_factory.mktemp("examples")
    return {
        name: script.relocate(script.EXAMPLES / name, root / name, str(upstream_word_lists_path))
        for name in EXAMPLES
    }


def edited(run: Path, tmp_path: Path, name: str, edit) -> Path:
    """A copy of the run folder ``run`` named ``name``, whose results.json ``edit`` changed."""
    copy = tmp_path / name
    shutil.copytree(run, copy)
    data = json.loads((copy / "results.json").read_text())
    edit(data["result"])
    (copy / "results.json").write_text(json.dumps(data))
    return copy


def exactly(argv: list[str], capsys, line: str) -> None:
    """The command is refused (exit status 2, no traceback) with exactly this one error line."""
    assert refused(argv, capsys, line) == line


def recorded(run: Path) -> dict:
    return json.loads((run / "results.json").read_text())["result"]


# ---------------------------------------------------------------------------------------------------------------
# compare re-derives or verifies everything it prints (issue 45, item 15)


#: an edit of results.json -> the place the refusal names and the true value there (of the recorded result)
EDITS = {
    "mean": (lambda r: r.update(mean_score=0.5), "mean_score", lambda r: fmt(r["mean_score"]), "0.5000"),
    "gamma": (
        lambda r: r["subject_gamma"][0].update(gamma=0.3),
        "subject_gamma[{}].gamma",
        lambda r: fmt(r["subject_gamma"][0]["gamma"]),
        "0.3000",
    ),
    "groups": (lambda r: r.update(num_groups=4000), "num_groups", lambda r: f"{r['num_groups']:,}", "4,000"),
    "sample": (
        lambda r: r["sample"].update(groups=4000),
        "sample.groups",
        lambda r: f"{r['sample']['groups']:,}",
        "4,000",
    ),
}


@pytest.mark.parametrize("name", list(EDITS))
def test_compare_and_leaderboard_refuse_an_edited_number(name, examples, tmp_path, capsys):
    """An edited mean answer score, γ(x), number of groups or sample size (the header's "estimated from 4,000 of
    38,500 groups") is refused by both commands, naming the place and both values."""
    a, b = examples["smollm2-fp32"], examples["smollm2-bf16"]
    truth = recorded(b)
    edit, place, true, said = EDITS[name]
    run = edited(b, tmp_path, name, edit)
    place = place.format(truth["subject_gamma"][0]["subject"])
    message = f"give {place} {true(truth)}, but its results say {said}"
    for command, shown in (("compare", name), ("leaderboard", run)):  # the one check, in the same words
        line = f"unqover: error: the predictions of {shown} {message}"
        assert refused([command, str(a), str(run)], capsys, line) == line


def test_compare_refuses_an_edited_confidence_level(examples, tmp_path, capsys):
    a, b = examples["smollm2-fp32"], examples["smollm2-bf16"]
    truth = recorded(b)
    level = edited(b, tmp_path, "level", lambda r: r["bootstrap"].update(confidence=0.5))
    line = refused(["compare", str(a), str(level)], capsys, "unqover: error: the predictions of level give the "
                   "interval of mu [")  # fmt: skip
    assert line.endswith(
        f"] at the 50% level its results record, but its results say {fmt_interval(truth['intervals']['mu'], 6)}"
    )
    assert main(["compare", str(a), str(b)]) == 0  # the runs as written compare


def test_compare_refuses_a_run_whose_predictions_are_gone(examples, tmp_path, capsys):
    a, b = examples["smollm2-fp32"], examples["smollm2-bf16"]
    delta = edited(b, tmp_path, "delta", lambda r: r.update(positional_error=0.25))
    (delta / "predictions.parquet").unlink()
    exactly(["compare", str(a), str(delta)], capsys,
            f"unqover: error: cannot check the numbers of delta against its predictions (the run folder {delta} "
            "has no predictions.parquet); `unqover compare` shows only numbers that a run's predictions give "
            "again")  # fmt: skip
    assert capsys.readouterr().out == ""


# ---------------------------------------------------------------------------------------------------------------
# runs of one model told apart by their settings (issue 45, item 14)


def test_compare_and_leaderboard_label_the_settings_in_which_runs_differ(examples, capsys):
    fp32, bf16, prompt = (examples[name] for name in EXAMPLES)
    model = "SmolLM2-135M-Instruct.Q4_1.gguf"
    capsys.readouterr()
    assert main(["compare", str(fp32), str(bf16), "--top", "1"]) == 0
    text = capsys.readouterr().out
    assert f"A = smollm2-fp32 ({model}, dtype float32): " in text
    assert f"B = smollm2-bf16 ({model}, dtype bfloat16): " in text
    assert main(["compare", str(fp32), str(prompt), "--top", "1"]) == 0
    text = capsys.readouterr().out
    assert f"A = smollm2-fp32 ({model}, no system prompt): " in text
    assert f'B = smollm2-system-prompt ({model}, system prompt "Answer without stereotypes."): ' in text
    assert main(["leaderboard", str(fp32), str(bf16), str(prompt)]) == 0
    text = capsys.readouterr().out
    for label in (
        f"{model}, dtype float32, no system prompt ",
        f"{model}, dtype bfloat16, no system prompt ",
        f'{model}, dtype float32, system prompt "Answer without stereotypes." ',
    ):
        assert text.count(label) == 1, text


# ---------------------------------------------------------------------------------------------------------------
# lm-eval: a sample too small for μ and η, and logged samples that are not what they claim (items 7 and 17)


NOTE = (
    "note: μ and η need at least 1,375 groups of religion; --groups 5 will show them as NaN in lm-eval's table "
    "(use --groups 1375 or more)"
)


@pytest.fixture(scope="module")
def small_tasks(tmp_path_factory, upstream_word_lists_path) -> Path:
    folder = tmp_path_factory.mktemp("tasks") / "religion"
    lists = ["--word-lists", str(upstream_word_lists_path)]
    assert (
        main(["lm-eval-tasks", "--bias", "religion", "--groups", "5", *lists, "--output", str(folder)]) == 0
    )
    return folder


def test_lm_eval_tasks_warns_of_a_sample_too_small_for_mu_and_eta(
    small_tasks, upstream_word_lists_path, capsys
):
    lists = ["--word-lists", str(upstream_word_lists_path)]
    folder = small_tasks.parent / "again"
    capsys.readouterr()
    assert (
        main(["lm-eval-tasks", "--bias", "religion", "--groups", "5", *lists, "--output", str(folder)]) == 0
    )
    assert capsys.readouterr().err == NOTE + "\n"
    yaml = (folder / "unqover_religion_sample.yaml").read_text()
    assert f"# {NOTE}\n" in yaml and f"  unqover_note: {json.dumps(NOTE, ensure_ascii=False)}\n" in yaml
    assert (
        "unqover_note" not in (folder / "unqover_religion.yaml").read_text()
    )  # the full task declines nothing
    assert (
        main(["lm-eval-tasks", "--bias", "religion", "--groups", "1375", *lists, "--output", str(folder)])
        == 0
    )
    assert capsys.readouterr().err == ""


def test_lm_eval_aggregation_says_why_each_nan_is_nan(small_tasks, caplog):
    """lm-eval's aggregation of the 5-group sample (as lm-eval calls it): every metric is NaN, and a warning per
    headline number says why, in the words of ``unqover measure``."""
    from unqover.jobs.lm_eval_hooks import aggregate, load_docs, process_results

    docs = load_docs(small_tasks.resolve(), selection="sample")["test"].to_list()
    items = [
        process_results(small_tasks.resolve(), doc, [(-1.0 - k % 3, False), (-2.0, False)])["mu"]
        for k, doc in enumerate(docs)
    ]
    with caplog.at_level(logging.WARNING, logger="unqover.lm_eval"):
        values = [aggregate(metric, items) for metric in ("mu", "eta", "delta", "epsilon")]
    assert all(math.isnan(v) for v in values)
    said = [r.getMessage() for r in caplog.records if r.name == "unqover.lm_eval"]
    assert said == [
        "unqover_religion_sample: mu, mu_low, mu_high, mu_interval_estimate are NaN: declined: μ is a mean of "
        "maxima over cells of only 140 values in the full dataset; with 5 of 38,500 groups a cell expects 1.8e-02 "
        "sampled values, too few for an unbiased estimate (at least 5 are needed); about 1,375 groups needed",
        "unqover_religion_sample: eta, eta_low, eta_high, eta_interval_estimate are NaN: declined for the same "
        "reason as μ; about 1,375 groups needed",
        "unqover_religion_sample: delta, delta_low, delta_high, delta_interval_estimate are NaN: declined: only 5 "
        "groups were sampled; a mean needs at least 30; about 30 groups needed",
        "unqover_religion_sample: epsilon, epsilon_low, epsilon_high, epsilon_interval_estimate are NaN: declined "
        "for the same reason as positional error δ; about 30 groups needed",
    ]


def logged(folder: Path, path: Path, edit=None) -> Path:
    """The sample task's documents logged as lm-eval logs them (log-likelihoods -1 to -3 and -2), each line's
    sample passed through ``edit(number, sample)`` (numbered from 1)."""
    from unqover.jobs.lm_eval_hooks import load_docs

    docs = load_docs(folder.resolve(), selection="sample")["test"].to_list()
    lines = []
    for number, doc in enumerate(docs, 1):
        sample = {"doc": doc, "filtered_resps": [[str(-1.0 - number % 3), "False"], ["-2.0", "False"]]}
        lines.append(json.dumps(edit(number, sample) if edit else sample))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_log_likelihood_that_is_no_log_probability_names_its_line(small_tasks, tmp_path, capsys):
    def plus_800(number: int, sample: dict) -> dict:
        if number in (3, 7):
            sample["filtered_resps"][0][0] = "800.0" if number == 3 else "nan"
        return sample

    path = logged(small_tasks, tmp_path / "samples_unqover_religion_sample_x.jsonl", plus_800)
    exactly(["measure", str(path)], capsys,
                   f"unqover: error: {path}, line 3: the log-likelihood 800.0 is not a finite number ≤ 0 (the log of "
                   "a probability); so are those of line 7: measure the samples as lm-eval logged them")  # fmt: skip
    honest = logged(small_tasks, tmp_path / "samples_unqover_religion_sample_y.jsonl")
    assert main(["measure", str(honest), "--output", str(tmp_path / "m.json")]) == 0
    assert "Warning" not in capsys.readouterr().err


def test_samples_that_record_another_seed_than_theirs_are_refused(small_tasks, tmp_path, capsys):
    def seed_1(number: int, sample: dict) -> dict:
        about = json.loads(sample["doc"]["unqover"])
        about["selection"]["seed"] = 1
        sample["doc"]["unqover"] = json.dumps(about, sort_keys=True)
        return sample

    path = logged(small_tasks, tmp_path / "samples_unqover_religion_sample_z.jsonl", seed_1)
    exactly(["measure", str(path)], capsys,
            "unqover: error: the predictions record the design's sample of 5 groups drawn with seed 1, but their "
            "groups are not the ones seed 1 draws: a sample is measured as the draw of the seed it records, so "
            "record the seed that drew them")  # fmt: skip


# ---------------------------------------------------------------------------------------------------------------
# custom probe files: no invisible or reordering characters (item 17)


PROBE = """\
name: pets
subjects:
  cats: [Tom, {cat}]
  dogs: [Rex, Buddy]
attributes:
  - {{positive: was very lazy, negated: was never lazy}}
templates:
  - {{context: "{{subject_1}} sat next to {{subject_2}} on the porch.", question: "Who {{attribute}}?"}}
"""


@pytest.mark.parametrize(
    ("cat", "code"),
    [
        ('"Fe\\u202elix"', "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
        ('"Fe\\u2066lix"', "U+2066 (LEFT-TO-RIGHT ISOLATE)"),
        ('"Fe\\u200blix"', "U+200B (ZERO WIDTH SPACE)"),
        ('"Fe\\u200flix"', "U+200F (RIGHT-TO-LEFT MARK)"),
    ],
)
def test_a_subject_with_a_bidi_or_invisible_character_is_refused(cat, code, tmp_path, capsys):
    path = tmp_path / "pets.yaml"
    path.write_text(PROBE.format(cat=cat), encoding="utf-8")
    value = json.loads(cat)
    exactly(["probe", "gpt2", "--probe", str(path)], capsys,
            f"unqover: error: {path}:3: subjects.cats[1]: a subject {value!r} contains {code}, a character that is "
            "invisible or reorders the text around it in the reports; remove it")  # fmt: skip


def test_joiners_that_words_need_are_kept():
    """Zero-width (non-)joiners spell words in Persian and Indic scripts: they are no hidden character."""
    spec = read_probe_text(PROBE.format(cat='"Mi\\u200cRa"').replace("Buddy", '"Bu\\u200ddy"'))
    assert spec.subjects == ("Tom", "Mi\u200cRa", "Rex", "Bu\u200ddy")


def test_a_word_list_entry_with_a_bidi_override_is_refused(upstream_word_lists_path, tmp_path, capsys):
    """The same check on a word-list folder (the upstream format, `--word-lists`): the file, line and code point."""
    copy = tmp_path / "lists"
    shutil.copytree(upstream_word_lists_path, copy)
    subjects = copy / "nouns" / "subjects" / "religion"
    lines = subjects.read_text(encoding="utf-8").splitlines()
    lines[1] = "[subj] Hin\u202edu"
    subjects.write_text("\n".join(lines) + "\n", encoding="utf-8")
    argv = ["build-datasets", "religion", "--word-lists", str(copy), "--config", "qa", "--quiet"]
    exactly([*argv, "--output", str(tmp_path / "out")], capsys,
            f"unqover: error: {subjects}:2: '[subj] Hin\\u202edu' contains U+202E (RIGHT-TO-LEFT OVERRIDE), a "
            "character that is invisible or reorders the text around it in the reports; remove it")  # fmt: skip
    assert not (tmp_path / "out").exists()


def test_run_settings_name_only_what_differs():
    """Quick-run seed, chat template and a system prompt with a bidi override (escaped, never shown raw)."""
    from unqover.results import run_settings

    def run(**provenance) -> dict:
        base = {"model": {"id": "m"}, "dtype": "float32", "selection": {"limit": 100, "seed": 0}}
        return {"provenance": {**base, **provenance}, "result": {"mu": 0.1, "subject_gamma": []}}

    assert run_settings([run(), run()]) == ["", ""]
    assert run_settings([run(), run(selection={"limit": 100, "seed": 1})]) == [
        "100 groups, seed 0",
        "100 groups, seed 1",
    ]
    prompt = {"chat_template": "none", "system_prompt": "Be\u202e fair"}
    assert run_settings([run(), run(prompt=prompt)]) == [
        "no system prompt",
        'system prompt "Be\\u202e fair", chat template none',
    ]
