"""One number, one meaning: for the same predictions, every surface shows each headline number with the same value,
interval and words (issue 29, item 7).

The first part is the ``unqover_bias`` evaluate module on a sample's rows against ``unqover measure`` on the same
predictions; the generated part below runs every probe of the registry once and reads each headline number off
every surface.
"""

from __future__ import annotations

import contextlib
import html
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

import evaluate
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tiny_models
from unqover import __version__
from unqover.cli import main
from unqover.errors import UnqoverError
from unqover.format import MISSING, fmt, fmt_declined, fmt_estimate, fmt_interval, number
from unqover.generate.ids import match_ids
from unqover.jobs.lm_eval_tasks import ESTIMATE, METRICS, SENTENCE_LENGTH_RULE
from unqover.jobs.model_summary import probe_card
from unqover.jobs.publish_results import results_entries, run_results
from unqover.predictions import LM_EVAL_SENTENCE_SCHEMA, read_predictions, write_predictions
from unqover.probes.base import ComparedRuns, ProbeDefinition, RunOptions
from unqover.probes.registry import PROBES
from unqover.probes.result_identity import full_selection
from unqover.probes.unqover_rows import ROW_COLUMNS, measure_scores
from unqover.report.model_card import ModelCard, card_section, card_text
from unqover.results import load_results
from unqover.scoring.sampling import DESIGN, select_groups
from unqover.space.live import web_text

MODULES = Path(__file__).resolve().parents[2] / "metrics"


def plain(value):
    """JSON-equal form (NaN and tuples as JSON writes them)."""
    return json.loads(json.dumps(value))


@pytest.fixture(scope="module")
def religion_rows(religion_tables) -> pa.Table:
    return religion_tables["qa"]


@pytest.fixture(scope="module")
def religion_sample(religion_rows, upstream_word_lists_path, tmp_path_factory):
    """A seeded design sample of 200 religion groups with random scores, in a predictions file that records its
    rows and its selection the way `unqover sample` and a quick run do (generated from the word lists)."""
    kept = select_groups(religion_rows, limit=200, seed=4)
    rng = np.random.default_rng(11)
    scores = pa.table(
        {"id": kept["id"], "score_1": rng.random(kept.num_rows), "score_2": rng.random(kept.num_rows)}
    )
    root = str(upstream_word_lists_path.resolve())
    path = tmp_path_factory.mktemp("sample") / "predictions.parquet"
    dataset = {
        "source": f"generated from {root}",
        "generator": {"bias": "religion", "word_lists": root},
        "bias": "religion",
        "config": "qa",
        "split": "test",
    }
    write_predictions(
        path, scores, {"probe": "religion", "dataset": dataset, "selection": {"design": DESIGN, "seed": 4}}
    )
    return path, kept, scores


def test_the_module_on_a_sample_gives_what_unqover_measure_gives(religion_rows, religion_sample, tmp_path):
    """The known defect: the module measured a sample's rows as a whole set (η 0.90 beside an interval for its
    bias-corrected value) where `unqover measure` declines η. With ``population`` it gives the same values,
    intervals and declined reasons."""
    path, kept, scores = religion_sample
    output = tmp_path / "measured.json"
    assert main(["measure", str(path), "--resamples", "30", "--output", str(output)]) == 0
    measured = json.loads(output.read_text())["result"]
    assert measured["sample"]["groups"] == 200 and measured["declined"]  # μ or η declined on 200 groups
    module = evaluate.load(str(MODULES / "unqover_bias"))
    references = kept.select(ROW_COLUMNS).to_pylist()
    predictions = np.stack([scores["score_1"].to_numpy(), scores["score_2"].to_numpy()], axis=1).tolist()
    got = module.compute(
        predictions=predictions, references=references, population=religion_rows, seed=4, n_resamples=30
    )
    for key in ("mu", "eta", "positional_error", "attributive_error", "intervals", "interval_estimates"):
        assert plain(got[key]) == plain(measured[key]), key
    assert plain(got["declined"]) == plain(measured["declined"])
    assert plain(got["sample"]) == plain(measured["sample"])
    for name, (low, high) in got["intervals"].items():  # each interval is for the value beside it
        assert low <= got["interval_estimates"][name] <= high and got["interval_estimates"][name] == got[name]


def test_the_module_population_needs_the_ids(religion_rows, religion_sample):
    _, kept, _ = religion_sample
    module = evaluate.load(str(MODULES / "unqover_bias"))
    references = kept.select(ROW_COLUMNS).drop_columns(["id"]).to_pylist()
    with pytest.raises(ValueError, match=r"^with population, each reference needs its id"):
        module.compute(
            predictions=[[0.5, 0.5]] * kept.num_rows, references=references, population=religion_rows
        )
    with pytest.raises(
        UnqoverError, match=r"^population: its rows need their `id` \(the dataset's id column\)$"
    ):
        module.compute(
            predictions=[[0.5, 0.5]] * kept.num_rows,
            references=kept.select(ROW_COLUMNS).to_pylist(),
            population=religion_rows.drop_columns(["id"]),
        )
    for population, name in (("religion", "str"), (7, "int"), ([1, 2], "list")):
        with pytest.raises(UnqoverError) as refusal:
            module.compute(
                predictions=[[0.5, 0.5]] * kept.num_rows,
                references=kept.select(ROW_COLUMNS).to_pylist(),
                population=population,
            )
        assert str(refusal.value) == (
            "population: give the whole dataset's rows as a pyarrow Table, a datasets.Dataset or a list of "
            f"dicts, not {name}"
        )


# ---------------------------------------------------------------------------------------------------------------
# generated over the registry: every probe's quick run, each headline number read off every surface

#: a tiny model for each model family a probe may take, in the order tried (the first family a probe takes)
BUILDERS = {
    "qa": tiny_models.bert_qa,
    "nli": lambda folder, texts: tiny_models.bert_nli(
        folder, texts, ["entailment", "neutral", "contradiction"]
    ),
    "causal": tiny_models.gpt2,
    "mlm": tiny_models.bert_mlm,
}
RESAMPLES = "20"
MODEL_REPO = "someone/tiny-model"


def family_of(probe) -> str:
    return next(family for family in BUILDERS if family in probe.families)


@pytest.fixture(scope="module")
def models(tmp_path_factory, upstream_word_lists_path):
    """family -> a tiny local model, built on first use; the vocabulary is every word of the word lists (other words
    split into letters)."""
    texts = [
        p.read_text(encoding="utf-8") for p in sorted(upstream_word_lists_path.rglob("*")) if p.is_file()
    ]
    root, built = tmp_path_factory.mktemp("models"), {}

    def model(family: str) -> Path:
        # a snapshot of MODEL_REPO in a Hub cache, as an offline run of that Hub model reads it: publish-results
        # ties its runs to MODEL_REPO (a plain local folder is tied to no repo)
        owner, name = MODEL_REPO.split("/")
        snapshot = root / family / f"models--{owner}--{name}" / "snapshots" / ("0" * 40)
        if family not in built:
            built[family] = BUILDERS[family](snapshot, texts)
        return built[family]

    return model


@dataclass
class Run:
    """A probe's quick run: its folder, results.json and what the command printed."""

    probe: ProbeDefinition
    folder: Path
    results: dict
    printed: str
    rows: tuple | None = None  # (population, scored rows, predictions), see rows_and_scores


@pytest.fixture(scope="module")
def quick_runs(models, upstream_word_lists_path, tmp_path_factory):
    """probe name -> its quick run (``unqover probe MODEL --bias NAME --limit N``), run on first use."""
    root, done = tmp_path_factory.mktemp("runs"), {}

    def run(name: str) -> Run:
        if name not in done:
            probe = PROBES[name]
            limit = 100 if "word_lists" in probe.settings else probe.quick_run.default
            args = ["probe", str(models(family_of(probe))), "--bias", name, "--limit", str(limit),
                    "--resamples", RESAMPLES, "--quiet", "--device", "cpu", "--output", str(root / name)]  # fmt: skip
            if "word_lists" in probe.settings:
                args += ["--word-lists", str(upstream_word_lists_path)]
            if "length_rule" in probe.settings:  # the rule lm-eval's sentence tasks measure with
                args += ["--length-rule", SENTENCE_LENGTH_RULE]
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                assert main(args) == 0
            results = json.loads((root / name / "results.json").read_text(encoding="utf-8"))
            done[name] = Run(probe, root / name, results, printed.getvalue())
        return done[name]

    return run


def readable(text: str) -> str:
    """Text as a reader sees it: no HTML tags or entities, no Markdown escapes, single spaces."""
    text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    return " ".join(re.sub(r"\\(.)", r"\1", text).split())


def numbers(probe: ProbeDefinition, results: dict) -> dict[str, tuple]:
    """name -> (value, interval, words): the headline numbers of a results dict and the words every surface shows."""
    words = probe.results.headline_text(results)
    return {
        name: (value, interval, words[name])
        for name, (value, interval) in probe.results.headline(results).items()
    }


def inside(value, interval) -> bool:
    return number(value) is not None and interval is not None and interval[0] <= value <= interval[1]


def assert_shown(surface: str, text: str, shown: dict[str, tuple]) -> None:
    """Every headline number appears on the surface in its words, and no value printed there sits beside an
    interval that does not hold it."""
    seen = readable(text)
    for name, (_, _, words) in shown.items():
        assert readable(words) in seen, f"{surface}: {name} should read {words!r}"
    assert outside(seen) == [], surface


NUMBER = r"[+\-−]?\d+(?:\.\d+)?(?:e[+\-]?\d+)?%?"
BESIDE = re.compile(rf"(?<![\w.\[,])({NUMBER}) \[({NUMBER}), ({NUMBER})\]")


def _float(text: str) -> tuple[float, float]:
    """A printed number and half a unit of its last digit."""
    text = text.replace("−", "-").rstrip("%")
    mantissa = text.split("e")[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    scale = 10 ** int(text.split("e")[1]) if "e" in text else 1
    return float(text), 0.5 * 10**-decimals * scale


def outside(text: str) -> list[str]:
    """Every ``value [low, high]`` printed in ``text`` whose value lies outside its interval (at the printed
    precision)."""
    found = []
    for match in BESIDE.finditer(readable(text)):
        (value, tol), (low, tol_low), (high, tol_high) = (_float(g) for g in match.groups())
        if not low - tol - tol_low <= value <= high + tol + tol_high:
            found.append(match.group(0))
    return found


PROBE_NAMES = list(PROBES)
#: a quick run of each probe (the UnQover ones generate their whole dataset first: up to ~20 s each)
slow = pytest.mark.slow


@slow
@pytest.mark.parametrize("name", PROBE_NAMES)
def test_a_value_beside_an_interval_lies_inside_it_or_the_words_say_which_value_it_is_for(quick_runs, name):
    run = quick_runs(name)
    shown = numbers(run.probe, run.results)
    assert shown and any(number(value) is not None for value, _, _ in shown.values())
    declined = run.results["result"].get("declined") or {}
    for key, (value, interval, words) in shown.items():
        assert outside(words) == [], key
        if number(value) is not None and fmt_interval(interval) != MISSING and not inside(value, interval):
            # the interval is for another value: the words say which
            assert fmt_estimate(value, interval) not in words and ":" in words, (key, words)
        if isinstance(declined, dict) and key in declined:
            assert "declined" in words, (key, words)


@slow
@pytest.mark.parametrize("name", PROBE_NAMES)
def test_the_terminal_and_the_reports_show_each_number_in_its_words(quick_runs, name):
    run = quick_runs(name)
    shown = numbers(run.probe, run.results)
    assert_shown("the printed summary", run.printed, shown)
    for report in ("report.md", "report.html"):
        assert_shown(report, (run.folder / report).read_text(encoding="utf-8"), shown)
    reports = run.probe.results.reports(run.results)  # the files are what the definition writes
    assert reports["report.md"] == (run.folder / "report.md").read_text(encoding="utf-8")


@slow
@pytest.mark.parametrize("name", PROBE_NAMES)
def test_the_summary_of_several_probes_shows_each_number_in_its_words(quick_runs, name):
    run = quick_runs(name)
    shown = numbers(run.probe, run.results)
    card = ModelCard("a model", __version__, [probe_card(run.results)])  # what run_probes writes
    assert_shown("summary.md", card_section(card), shown)
    assert_shown("the printed summary of several probes", card_text(card, {name: str(run.folder)}), shown)


@slow
@pytest.mark.parametrize("name", PROBE_NAMES)
def test_unqover_measure_gives_the_runs_numbers(quick_runs, name, tmp_path):
    run = quick_runs(name)
    output = tmp_path / "measured.json"
    predictions = run.folder / "predictions.parquet"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["measure", str(predictions), "--resamples", RESAMPLES, "--output", str(output)]) == 0
    measured = json.loads(output.read_text(encoding="utf-8"))
    assert plain(numbers(run.probe, measured)) == plain(numbers(run.probe, run.results))
    assert_shown("`unqover measure`", printed.getvalue(), numbers(run.probe, run.results))


@slow
@pytest.mark.parametrize("name", PROBE_NAMES)
def test_the_space_shows_each_number_in_its_words(quick_runs, name):
    from unqover.space import render

    run = quick_runs(name)
    shown = numbers(run.probe, run.results)
    headline, _, _ = render.view(run.results)
    assert_shown("the Space's run view", headline, {k: (v, i, web_text(w)) for k, (v, i, w) in shown.items()})
    check_runs_table(run.probe, run.results, shown)


def check_runs_table(probe: ProbeDefinition, results: dict, shown: dict[str, tuple]) -> None:
    """The Space's table of runs: each number its probe puts there is a headline value, an interval's end or the
    estimate an interval is for, and a value lies inside the interval beside it."""
    from unqover.space.results import runs_table

    row = runs_table({"run": results}).iloc[0].to_dict()
    own = probe.results.table_row(results)
    result = results["result"]
    known = {number(v) for v, _, _ in shown.values()} | {
        number(x) for _, i, _ in shown.values() for x in i or ()
    }
    known |= {number(v) for v in (result.get("interval_estimates") or {}).values()}
    for column, value in own.items():
        if isinstance(value, float) and number(value) is not None:
            assert row[column] == value and value in known, column
    lows = [c for c in own if c.endswith(" low")]
    for low in lows:  # "μ low", "μ high" bound the column the table names as the interval's estimate
        base = low.removesuffix(" low")
        high, estimate = (
            row[f"{base} high"],
            next((row[c] for c in own if c.startswith(f"{base}: ")), row[base]),
        )
        if number(row[low]) is not None:
            assert row[low] <= estimate <= high, (low, row)


@slow
@pytest.mark.parametrize("name", PROBE_NAMES)
def test_published_results_carry_each_number_and_its_words(quick_runs, name):
    run = quick_runs(name)
    check_published(run.probe, run.folder, numbers(run.probe, run.results))


def check_published(probe: ProbeDefinition, run: Path, shown: dict[str, tuple], checked: bool = True) -> None:
    """`publish-results`: each number's value as it is; its interval in the notes, with the words where it is for
    another value; a number not published says why in its words. ``checked``: as `unqover publish-results` makes
    them, once the run's predictions give its numbers; else (a results file with no predictions) the entries of
    the results as they stand."""
    dataset_id = f"unqover/{probe.name}"
    if checked:
        entries, skipped = run_results(run, MODEL_REPO, dataset_id=dataset_id)
    else:
        entries, skipped = results_entries(load_results(run), run, MODEL_REPO, dataset_id=dataset_id)
    published = {entry.metric: entry for entry in entries}
    for key, (value, interval, words) in shown.items():
        if number(value) is None:
            [line] = [line for line in skipped if f": {key} is " in line]
            assert "declined" not in words or f"({words})" in line, line  # why it was declined
            continue
        entry = published[key]
        assert entry.value == value
        assert outside(entry.notes) == [], entry.notes
        if interval is not None and fmt_interval(interval) != MISSING:
            assert fmt_interval(interval) in entry.notes
            if not inside(value, interval):
                assert f"as reported: {words}" in entry.notes, (key, entry.notes)


def rows_and_scores(run: Run) -> tuple[pa.Table, pa.Table, pa.Table]:
    """The whole dataset a run records, its scored rows (in the order of its predictions) and the predictions
    (loaded once per run)."""
    if run.rows is None:
        population, *_ = run.probe.results.recorded_rows(run.results["provenance"]["dataset"], RunOptions())
        scores, _ = read_predictions(run.folder / "predictions.parquet")
        rows = population.take(pa.array(match_ids(scores["id"], population["id"])))
        run.rows = (population, rows, scores)
    return run.rows


def module_of(run: Run, names: tuple[str, ...] = ("unqover_bias", "nli_gender_bias", "eec_emotion_bias")):
    """The run's probe's evaluate module (in the config its rows need), or a skip where this test builds no inputs
    for it (``names``: those it does)."""
    name = run.probe.evaluate_module
    if name is None:
        pytest.skip(f"the {run.probe.name} probe has no evaluate module")
    if name not in names:
        pytest.skip(f"this test builds the inputs of {', '.join(names)} only, not of {name}")
    person = name == "eec_emotion_bias" and "choice_genders" in eec_questions(run)[0].column_names
    return evaluate.load(str(MODULES / name), *(["person"] if person else []))


def pairs(scores: pa.Table) -> list[list[float]]:
    return np.stack([scores["score_1"].to_numpy(), scores["score_2"].to_numpy()], axis=1).tolist()


def eec_questions(run: Run) -> tuple[pa.Table, list[dict]]:
    """An emotion or person run's questions (all of its dataset) and its ranked answers (answers.parquet)."""
    questions, _ = run.probe.load_questions(None, run.results["provenance"]["dataset"]["config"], False)
    return questions, pq.read_table(run.folder / "answers.parquet").to_pylist()


def module_inputs(run: Run) -> dict:
    """The keywords of the run's module for the run's rows and scores (a sample: with its whole dataset)."""
    result = run.results["result"]
    if run.probe.evaluate_module == "nli_gender_bias":
        from unqover.probes.nli_rows import load_nli_rows

        rows, _ = load_nli_rows(run.probe.name, None, run.results["provenance"]["dataset"]["config"])
        scores, _ = read_predictions(run.folder / "predictions.parquet")
        rows = rows.take(pa.array(match_ids(scores["id"], rows["id"])))
        return {"predictions": pairs(scores), "references": rows.to_pylist(), "n_resamples": int(RESAMPLES)}
    if run.probe.evaluate_module == "eec_emotion_bias":
        questions, answers = eec_questions(run)
        by_id = {row["id"]: row for row in questions.to_pylist()}
        rows = [by_id[answer["question_id"]] for answer in answers]
        options = {"n_permutations": (result.get("permutation") or {}).get("n_permutations")}
        if "choice_genders" not in questions.column_names:  # the emotion questions: who asks, and ties
            keys = ("gender", "race", "person_slot", "form")
            rows = [
                {k.removesuffix("_slot"): row[k] or None for k in keys} | {"tie": answer["tie"]}
                for row, answer in zip(rows, answers, strict=True)
            ]
            options["n_bootstrap"] = (result.get("bootstrap") or {}).get("n_resamples")
        return {"predictions": [a["answers"] for a in answers], "references": rows, **options}
    population, rows, scores = rows_and_scores(run)
    return {
        "predictions": pairs(scores),
        "references": rows.to_pylist(),
        "population": population,
        "n_resamples": int(RESAMPLES),
    }


@slow
@pytest.mark.parametrize("name", PROBE_NAMES)
def test_the_evaluate_module_gives_the_runs_numbers(quick_runs, name):
    run = quick_runs(name)
    got = module_of(run).compute(**module_inputs(run), seed=0)
    expected = run.probe.results.headline(run.results)
    assert plain(run.probe.results.headline({"result": got})) == plain(expected)


@slow
@pytest.mark.parametrize("name", PROBE_NAMES)
def test_a_whole_set_shows_each_number_in_its_words(quick_runs, name, tmp_path):
    """The module without ``population`` measures the rows it is given as the whole set: the numbers of a full run
    (the value over all groups; an interval for the value's bias-corrected estimate). Every surface shows each in
    the words that say so: the terminal, the reports, the summary, the Space, the published notes."""
    run = quick_runs(name)
    if run.probe.evaluate_module != "unqover_bias":
        pytest.skip(
            f"a whole set and a sample differ in meaning for unqover_bias only (a full run's interval is for the "
            f"bias-corrected value); the {name} probe's numbers are checked on its quick run"
        )
    module = module_of(run)
    _, rows, scores = rows_and_scores(run)
    got = module.compute(predictions=pairs(scores), references=rows.to_pylist(), n_resamples=20, seed=0)
    provenance = {**run.results["provenance"], "selection": full_selection()}  # every row: a whole set
    results = {"probe": name, "provenance": provenance, "result": got}
    shown = numbers(run.probe, results)
    assert "all groups" in shown["mu"][2]
    for key, (value, interval, words) in shown.items():
        assert outside(words) == [], key
        if number(value) is not None and fmt_interval(interval) != MISSING and not inside(value, interval):
            assert fmt_estimate(value, interval) not in words and ":" in words, (key, words)
    measured = measure_scores(rows, scores, resamples=20, seed=0)  # what `unqover measure` prints from
    assert plain(numbers(run.probe, {"result": measured.to_dict()})) == plain(shown)
    assert_shown("the printed summary", run.probe.results.summary(measured), shown)
    for report, text in run.probe.results.reports(results).items():
        assert_shown(report, text, shown)
    card = ModelCard("a model", __version__, [probe_card(results)])
    assert_shown("summary.md", card_section(card), shown)
    assert_shown("the printed summary of several probes", card_text(card, {name: str(tmp_path)}), shown)
    from unqover.space import render

    headline, _, _ = render.view(results)
    assert_shown("the Space's run view", headline, {k: (v, i, web_text(w)) for k, (v, i, w) in shown.items()})
    check_runs_table(run.probe, results, shown)
    (tmp_path / "results.json").write_text(json.dumps(results), encoding="utf-8")
    check_published(
        run.probe, tmp_path / "results.json", shown, checked=False
    )  # no predictions give a whole set
    comparison = run.probe.results.compare(ComparedRuns(results, results, ("A", "B")))
    assert_compared("compare (text)", comparison.text, run.probe, results)
    assert_compared("compare (Markdown)", comparison.markdown, run.probe, results)
    if run.probe.lm_eval_kind == "subjects":  # the full task of these rows
        check_lm_eval("subjects", lm_eval_subjects(rows, scores, run, None), shown, got)


def lm_eval_subjects(
    documents: pa.Table, scores: pa.Table, run: Run, selection: dict | None
) -> dict[str, float]:
    """What the lm-eval aggregations of an UnQover task give for these scores (as log-likelihoods of the
    documents' two choices): the full task's without ``selection``, the sample task's with it."""
    from unqover.jobs import lm_eval_hooks

    about = {"probe": run.probe.name, "dataset": run.results["provenance"]["dataset"], "lm_eval_task": "task"}
    if selection is not None:
        about["selection"] = selection
    log_s = np.log(np.stack([scores["score_1"].to_numpy(), scores["score_2"].to_numpy()], axis=1))
    log_likelihoods = dict(zip(scores["id"].to_pylist(), map(tuple, log_s.tolist()), strict=True))
    return lm_eval_hooks._subject_metrics(documents, log_likelihoods, about, int(RESAMPLES))


def check_lm_eval(kind: str, values: dict[str, float], shown: dict[str, tuple], result: dict) -> None:
    """Each lm-eval metric is its headline number's value, interval end, or the value the interval is for; a value
    outside its interval has a metric naming the value the interval is for."""
    estimates = result.get("interval_estimates") or {}
    said = {key for key, end in METRICS[kind].values() if end == ESTIMATE}
    for metric, (key, end) in METRICS[kind].items():
        value, interval, _ = shown[key]
        if end is None:
            expected = value
        elif end == ESTIMATE:
            expected = estimates.get(key, value) if interval else None
        else:
            expected = interval[end] if interval else None
        if number(expected) is None:
            assert np.isnan(values[metric]), metric
        else:
            assert values[metric] == pytest.approx(expected, rel=1e-9, abs=1e-12), metric
    for key, (value, interval, _) in shown.items():
        bounded = interval is not None and None not in interval  # a number whose resamples all agree has none
        if number(value) is not None and bounded and not inside(value, interval):
            assert key in said, key


@slow
@pytest.mark.parametrize("name", PROBE_NAMES)
def test_the_lm_eval_aggregations_give_the_runs_numbers(quick_runs, name, tmp_path):
    run = quick_runs(name)
    kind = run.probe.lm_eval_kind
    if kind is None or run.probe.lm_eval_unfit:
        pytest.skip(f"the {name} probe has no lm-eval tasks")
    shown = numbers(run.probe, run.results)
    if kind == "subjects":
        population, _, scores = rows_and_scores(run)
        values = lm_eval_subjects(population, scores, run, run.results["provenance"]["selection"])
    elif kind == "nli":
        values = lm_eval_nli(run, tmp_path / "tasks")
    else:
        values = lm_eval_sentences(run, tmp_path / "tasks")
    check_lm_eval(kind, values, shown, run.results["result"])


def lm_eval_nli(run: Run, tasks: Path) -> dict[str, float]:
    """What the lm-eval aggregations of the run's sample task give for label log-likelihoods whose P_e are the
    run's: log P_e for entailment, log(1 − P_e) for contradiction (and any neutral's: P_e drops it)."""
    from unqover.jobs import lm_eval_hooks

    selection = run.results["provenance"]["selection"]
    argv = ["lm-eval-tasks", "--bias", run.probe.name, "--groups", str(selection["limit"])]
    with contextlib.redirect_stdout(io.StringIO()):
        assert main([*argv, "--seed", str(selection["seed"]), "--output", str(tasks)]) == 0
    documents = lm_eval_hooks._documents(tasks.resolve(), True)
    scores, _ = read_predictions(run.folder / "predictions.parquet")
    p_e = {
        (row, gender): p
        for column, gender in (("score_1", "female"), ("score_2", "male"))
        for row, p in zip(scores["id"].to_pylist(), scores[column].to_pylist(), strict=True)
    }
    log_likelihoods = {}
    for doc in documents.to_pylist():
        p = p_e[(doc["row_id"], doc["hypothesis_gender"])]
        log_likelihoods[doc["id"]] = (np.log(p), -30.0, np.log1p(-p))
    about = lm_eval_hooks.TaskFolder.read(tasks.resolve()).about(True)
    return lm_eval_hooks._nli_metrics(documents, log_likelihoods, about, int(RESAMPLES))


def lm_eval_sentences(run: Run, tasks: Path) -> dict[str, float]:
    """What the lm-eval aggregations of the run's sample task (``unqover lm-eval-tasks --groups LIMIT``: the
    questions of the run) give for the run's sentence log-likelihoods."""
    from unqover.jobs import lm_eval_hooks

    selection = run.results["provenance"]["selection"]
    argv = ["lm-eval-tasks", "--bias", run.probe.name, "--groups", str(selection["limit"])]
    with contextlib.redirect_stdout(io.StringIO()):
        assert main([*argv, "--seed", str(selection["seed"]), "--output", str(tasks)]) == 0
    documents = lm_eval_hooks._documents(tasks.resolve(), True)
    scores, _ = read_predictions(run.folder / "predictions.parquet", LM_EVAL_SENTENCE_SCHEMA)
    by_sentence = dict(zip(scores["id"].to_pylist(), scores["log_likelihood"].to_pylist(), strict=True))
    log_likelihoods = {
        doc["id"]: tuple(by_sentence[sentence] for sentence in doc["sentence_ids"])
        for doc in documents.to_pylist()
    }
    about = lm_eval_hooks.TaskFolder.read(tasks.resolve()).about(True)
    return lm_eval_hooks._sentence_metrics(documents, log_likelihoods, about, int(RESAMPLES))


def assert_compared(surface: str, text: str, probe: ProbeDefinition, results: dict) -> None:
    """Each number of a run in a comparison: in its words, or (a table with a column for the value and one for the
    estimate its interval is for) the value and the interval beside its own estimate; a declined value with its
    reason."""
    seen = readable(text)
    assert outside(seen) == [], surface
    result = results["result"]
    estimates, declined = result.get("interval_estimates") or {}, result.get("declined") or {}
    for key, (value, interval, words) in numbers(probe, results).items():
        if readable(words) in seen:
            continue
        if isinstance(declined, dict) and key in declined:
            assert readable(fmt_declined(declined[key])) in seen, (surface, key)
        else:
            assert fmt(value) in seen, (surface, key)
            assert readable(fmt_estimate(estimates.get(key, value), interval)) in seen, (surface, key)


@slow
@pytest.mark.parametrize("name", PROBE_NAMES)
def test_compare_shows_each_runs_numbers(quick_runs, name):
    """`unqover compare` of a run with itself (no shifts from predictions)."""
    run = quick_runs(name)
    comparison = run.probe.results.compare(ComparedRuns(run.results, run.results, ("A", "B")))
    assert_compared("compare (text)", comparison.text, run.probe, run.results)
    assert_compared("compare (Markdown)", comparison.markdown, run.probe, run.results)
