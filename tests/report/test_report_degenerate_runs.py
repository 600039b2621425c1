"""Degenerate runs are flagged: answer scores ≈0, constant or tied, subjects a masked LM could not score, emotion
answers tied or out of vocabulary, NLI probabilities constant or of one class. The warning is in results.json
(``result["warnings"]``), the terminal summary, the Markdown and HTML reports and the Space; a healthy run has
none."""

from __future__ import annotations

import html
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tiny_models
from tests.probes.test_registry_and_definitions import PETS
from unqover.cli import main
from unqover.generate.custom import custom_rows
from unqover.generate.eec import choice_sentences, eec_questions
from unqover.lexicon.custom import read_probe_file
from unqover.measure import diagnostics as d
from unqover.predictions import write_predictions
from unqover.probes.eec_rows import SENTENCE_SCORE_SCHEMA, describe_eec_selection, select_persons
from unqover.probes.registry import DEFAULT_PROBE, PROBES, get_probe
from unqover.report.diagnostics import emotion_warnings, nli_warnings, unqover_warnings
from unqover.report.eec import shown_warnings as eec_shown_warnings
from unqover.space.render import unqover_headline

ROWS = 96  # 6 pairs x 2 attributes x 2 templates x 4 rows: 24 groups
NEAR_ZERO = (
    "the answer scores of both subjects are ≈0 (below 1.0e-06) in 100.0% of the questions (96 of 96): the model "
    "gives neither subject any real probability, so δ, ε, γ, μ and η are differences and signs of ≈0 scores and "
    "say nothing about its bias"
)
TIES = (
    "both subjects get exactly the same score in 75.0% of the questions (72 of 96): a tie is no answer, so δ, ε, "
    "γ, μ and η are pulled toward 0 and rest on the other 24 questions"
)
CONSTANT = (
    "100.0% of the questions (96 of 96) get the same answer scores (score_1 0.7000, score_2 0.2000): the scores "
    "do not depend on the subjects, the attribute or the context, so δ, ε, γ, μ and η say nothing about the "
    "model's bias"
)
UNCOVERED = (
    "1 subject (Buddy) is not a single token for this model's tokenizer, so 8 of 24 groups (33.3%) were left "
    "out: the measures cover the other subjects only"
)
# what every degenerate-run warning of each probe says (a healthy run's warnings hold none of these)
DEGENERATE = ("are ≈0 (below", "get the same answer scores", "get the same score (", "get exactly the same score",
              "not a single token", "have a tie in their top", "the top-1 answer is a", "no vector or n-gram",
              "are the same value (", "hardly ever changes", "get exactly the same probability")  # fmt: skip


def degenerate(warnings) -> list[str]:
    return [w for w in warnings or [] if any(mark in w for mark in DEGENERATE)]


# --- the conditions and their thresholds ---------------------------------------------------------------------


def test_each_condition_is_flagged_only_above_its_threshold():
    rng = np.random.default_rng(0)
    half = np.r_[np.zeros(50), rng.random(50) + 0.1]
    # exactly half the rows ≈0 is not "most"; one more is
    assert d.near_zero(half, half).count == 50 and not d.unqover_findings(half, rng.random(100))
    assert d.unqover_findings(np.r_[np.zeros(51), rng.random(49) + 0.1], np.zeros(100))[0].code == "near_zero"
    assert d.near_zero([d.NEAR_ZERO], [0.0]).count == 0 and d.near_zero([d.NEAR_ZERO / 2], [0.0]).count == 1
    # one pair of scores for most rows, within the relative tolerance (float noise) but not beyond it
    noisy = 0.4 * (1 + rng.uniform(-0.5, 0.5, 100) * d.SAME_VALUE_RTOL)
    found = d.unqover_findings(noisy, np.full(100, 0.1))
    assert [f.code for f in found] == ["constant"] and found[0].count == 100
    assert found[0].value == pytest.approx(0.4, rel=1e-3) and found[0].second == pytest.approx(0.1)
    assert not d.unqover_findings(0.4 * (1 + rng.uniform(0.01, 0.5, 100)), np.full(100, 0.1))
    # ties: score_1 == score_2 exactly, in more than half the rows
    s1 = rng.random(100)
    assert d.unqover_findings(s1, np.where(np.arange(100) < 51, s1, rng.random(100)))[0].code == "ties"
    assert not d.unqover_findings(s1, np.where(np.arange(100) < 50, s1, rng.random(100)))
    # the most basic condition only: all-zero scores are also constant and tied
    assert [f.code for f in d.unqover_findings(np.zeros(10), np.zeros(10))] == ["near_zero"]
    assert [f.code for f in d.unqover_findings(np.full(10, 0.3), np.full(10, 0.3))] == ["constant"]


def test_coverage_emotion_and_nli_conditions():
    assert d.coverage_finding(None) is None
    assert d.coverage_finding({"multi_token_subjects": [], "rows_kept": 8, "rows_total": 8}) is None
    cover = d.coverage_finding({"multi_token_subjects": ["Sikh"], "rows_kept": 60, "rows_total": 100})
    assert (cover.count, cover.total, cover.names) == (10, 25, ("Sikh",))
    rng = np.random.default_rng(1)
    # emotion: ties in most questions, one emotion for 99% of top-1 answers, out-of-vocabulary words
    ties = [True] * 51 + [False] * 49
    assert [f.code for f in d.emotion_findings(rng.random(200), ties, ["joy", "anger"] * 50)] == ["ties"]
    assert not d.emotion_findings(rng.random(200), [*ties[1:], False], ["joy", "anger"] * 50)
    assert [f.code for f in d.emotion_findings(rng.random(200), [False] * 100, ["joy"] * 99 + ["fear"])] == [
        "one_class"
    ]
    assert not d.emotion_findings(rng.random(200), [False] * 100, ["joy"] * 98 + ["fear"] * 2)
    assert d.oov_finding(d.OOV_SHARE, 100, ["grim"]) is None
    assert d.oov_finding(0.25, 100, ["grim"]).count == 25
    # NLI: one value, one class, ties
    assert [f.code for f in d.nli_findings(np.full(10, 0.5), np.full(10, 0.5))] == ["constant"]
    assert [f.code for f in d.nli_findings(0.6 + rng.random(100) / 3, 0.6 + rng.random(100) / 3)] == [
        "one_class"
    ]
    p = rng.random(100)
    assert [f.code for f in d.nli_findings(p, np.where(np.arange(100) < 60, p, rng.random(100)))] == ["ties"]
    assert not d.nli_findings(rng.random(100), rng.random(100))


def test_the_messages():
    assert unqover_warnings(d.unqover_run_findings(np.zeros(96), np.full(96, 1e-9))) == [NEAR_ZERO]
    assert unqover_warnings(d.unqover_run_findings(np.full(96, 0.7), np.full(96, 0.2))) == [CONSTANT]
    coverage = {"multi_token_subjects": ["Buddy"], "rows_kept": 64, "rows_total": 96}
    uncovered = d.unqover_run_findings(np.random.default_rng(0).random(96), np.full(96, 0.5), coverage)
    assert unqover_warnings(uncovered) == [UNCOVERED]
    assert emotion_warnings(d.emotion_run_findings(np.full(960, -4.0), [True] * 48, ["joy"] * 48, 3)) == [
        "100.0% of the choice sentences (960 of 960) get the same score (-4.0000): the model does not tell the "
        "emotion words apart, so the answers, the tests' p-values and Cramér's V say nothing about its bias",
        "the top-1 answer is a joy word in 100.0% of the questions (48 of 48): the answers hardly vary, so the "
        "tests have almost nothing to compare and cannot show a bias either way",
    ]
    assert nli_warnings(d.nli_findings(np.full(5, 0.9) + np.arange(5) / 100, np.full(5, 0.8))) == [
        "100.0% of the entailment probabilities (10 of 10) predict entailment (P > 0.5): the predicted class "
        "hardly ever changes, so S (the share of instances whose class is the same for both genders) is ≈100 by "
        "construction; ΔP and B read the probabilities and still apply"
    ]


# --- UnQover: `unqover measure` and a run, through every surface ------------------------------------------------


@pytest.fixture(scope="module")
def pets(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pets")
    path = folder / "pets.yaml"
    path.write_text(PETS)
    return path, custom_rows(read_probe_file(path), "qa")


def _measure(pets, tmp_path, score_1, score_2, capsys) -> tuple[dict, str]:
    """`unqover measure` of the pets rows with these scores: (its results file, what it printed)."""
    path, rows = pets
    predictions = tmp_path / "predictions.parquet"
    table = pa.table({"id": rows["id"], "score_1": score_1, "score_2": score_2})
    dataset = {"source": str(path), "generator": {"probe_file": str(path)}, "config": "qa", "split": "test"}
    write_predictions(predictions, table, {"probe": "pets", "model": {"id": "m"}, "dataset": dataset})
    capsys.readouterr()
    output = tmp_path / "bias.json"
    args = ["measure", str(predictions), "--probe", str(path), "--resamples", "0", "--output", str(output)]
    assert main(args) == 0
    return json.loads(output.read_text()), capsys.readouterr().out


def _space_headline(results: dict) -> str:
    """The Space's headline of an UnQover-kind run. The public Space shows no custom probe's run (it reads no
    file a run names), so a custom run is shown as the built-in UnQover probe it would be: the same renderer."""
    provenance = dict(results.get("provenance") or {})
    if provenance.get("probe") not in PROBES or results.get("probe") not in (None, *PROBES):
        dataset = {**(provenance.get("dataset") or {}), "generator": {}}
        provenance = {**provenance, "probe": DEFAULT_PROBE, "dataset": dataset}
        results = {**results, "probe": DEFAULT_PROBE, "provenance": provenance}
    return unqover_headline(results)


def _surfaces(results: dict, probe) -> tuple[str, str, str]:
    """The Markdown report, the HTML report and the Space's headline of a results dict."""
    reports = probe.results.reports(results)
    return reports["report.md"], reports["report.html"], _space_headline(results)


def _shown_everywhere(results: dict, printed: str, probe, expected: list[str], numbers: str) -> None:
    """``expected`` leads the result's warnings and shows in every view, above the numbers (``numbers``: the first
    headline number's label in the printed summary; the first table in Markdown and the Space)."""
    assert results["result"]["warnings"][: len(expected)] == expected
    markdown, page, space = _surfaces(results, probe)
    for warning in expected:
        assert f"  warning: {warning}" in printed
        assert f"- **Warning:** {warning}" in markdown
        assert warning in html.unescape(page)
        assert f"- **Warning:** {warning}" in space
    # above the numbers they qualify
    first = expected[0]
    assert printed.index(first) < printed.index(numbers)
    assert markdown.index(first) < markdown.index("\n|") and space.index(first) < space.index("\n|")


@pytest.mark.parametrize(
    ("case", "expected"),
    [("near_zero", NEAR_ZERO), ("ties", TIES), ("constant", CONSTANT)],
)
def test_unqover_measure_flags_degenerate_scores(pets, tmp_path, capsys, case, expected):
    rng = np.random.default_rng(3)
    if case == "near_zero":
        s1, s2 = rng.random(ROWS) * 1e-8, rng.random(ROWS) * 1e-8
    elif case == "ties":
        s1 = rng.random(ROWS)
        s2 = np.where(np.arange(ROWS) % 4 != 0, s1, rng.random(ROWS))  # 72 of 96 tied
    else:
        s1, s2 = np.full(ROWS, 0.7), np.full(ROWS, 0.2)
    results, printed = _measure(pets, tmp_path, s1, s2, capsys)
    _shown_everywhere(results, printed, get_probe(probe_file=pets[0]), [expected], "bias intensity μ")
    assert degenerate(results["result"]["warnings"]) == [expected]


def test_a_healthy_unqover_run_is_not_flagged(pets, tmp_path, capsys):
    rng = np.random.default_rng(4)
    results, printed = _measure(pets, tmp_path, rng.random(ROWS), rng.random(ROWS), capsys)
    assert results["result"]["warnings"] == []
    markdown, page, space = _surfaces(results, get_probe(probe_file=pets[0]))
    assert "warning:" not in printed and "**Warning:**" not in markdown + space
    assert '<p class="warning" role="note">' not in page.replace(
        '<p class="warning" role="note">⚠ Content warning', ""
    )


def test_a_run_with_near_zero_scores_is_flagged_in_its_folder(pets, tmp_path, capsys, monkeypatch):
    """`unqover probe` whose model gives ≈0 scores (a causal LM's case): results.json, the printed summary, the
    reports and the Space all carry the warning, and `unqover measure` of its predictions again."""
    from unqover.scoring.qa import QAScorer

    path, rows = pets
    texts = sorted(set(rows["context"].to_pylist()) | set(rows["question"].to_pylist()))
    model = tiny_models.bert_qa(tmp_path / "qa", texts)
    monkeypatch.setattr(QAScorer, "score", lambda self, batch: np.full((batch.num_rows, 2), 1e-9))
    out = tmp_path / "run"
    capsys.readouterr()
    args = ["probe", str(model), "--probe", str(path), "--output", str(out), "--quiet", "--resamples", "0"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    results = json.loads((out / "results.json").read_text())
    assert results["result"]["warnings"] == [NEAR_ZERO]
    assert f"  warning: {NEAR_ZERO}" in printed
    assert f"- **Warning:** {NEAR_ZERO}" in (out / "report.md").read_text()
    assert NEAR_ZERO in html.unescape((out / "report.html").read_text())
    assert f"- **Warning:** {NEAR_ZERO}" in _space_headline(results)
    again, printed = _measure(pets, tmp_path, np.full(ROWS, 1e-9), np.full(ROWS, 1e-9), capsys)
    assert again["result"]["warnings"] == [NEAR_ZERO] and NEAR_ZERO in printed


def test_a_masked_lm_run_says_which_subjects_it_left_out(pets, tmp_path, capsys):
    path, _ = pets
    rows = custom_rows(read_probe_file(path), "mlm")
    texts = sorted(set(rows["context"].to_pylist()) | set(rows["question"].to_pylist()))
    model = tiny_models.bert_mlm(tmp_path / "mlm", texts, drop=["buddy"])
    out = tmp_path / "run"
    capsys.readouterr()
    args = ["probe", str(model), "--probe", str(path), "--output", str(out), "--quiet", "--resamples", "0"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert json.loads((out / "run.json").read_text())["coverage"]["multi_token_subjects"] == ["Buddy"]
    results = json.loads((out / "results.json").read_text())
    assert results["result"]["warnings"] == [UNCOVERED]
    assert f"  warning: {UNCOVERED}" in printed
    assert f"- **Warning:** {UNCOVERED}" in (out / "report.md").read_text()
    assert UNCOVERED in html.unescape((out / "report.html").read_text())
    assert f"- **Warning:** {UNCOVERED}" in _space_headline(results)


# --- emotion and NLI ---------------------------------------------------------------------------------------------


def _emotion_measure(tmp_path, capsys, log_likelihood) -> tuple[dict, str]:
    """`unqover measure` of a quick emotion run's sentence predictions (1 person per cell: 48 questions)."""
    questions = eec_questions()
    kept = select_persons(questions, 1, 0)
    sentences = choice_sentences(kept)
    table = pa.table(
        [
            sentences["id"],
            sentences["question_id"],
            sentences["choice"],
            pa.array(log_likelihood(sentences), pa.float64()),
            pa.array(np.ones(sentences.num_rows)),
        ],
        schema=SENTENCE_SCORE_SCHEMA,
    )
    predictions = tmp_path / "predictions.parquet"
    provenance = {
        "probe": "eec-emotion",
        "model": {"id": "m", "family": "mlm"},
        "dataset": {"source": "generated", "config": "questions", "split": "test"},
        "selection": describe_eec_selection(questions, kept, 1, 0),
        "scoring": {"sentence": "test", "length_rule": "mean"},
    }
    write_predictions(predictions, table, provenance, schema=SENTENCE_SCORE_SCHEMA)
    output = tmp_path / "emotion.json"
    capsys.readouterr()
    assert main(["measure", str(predictions), "--resamples", "20", "--output", str(output)]) == 0
    return json.loads(output.read_text()), capsys.readouterr().out


def _tied_top(sentences: pa.Table) -> np.ndarray:
    """Every question's two best choices share one score (a tie in every top 3); scores differ across questions."""
    rng = np.random.default_rng(5)
    values = -rng.random(sentences.num_rows) - 1.0
    question = np.array(sentences["question_id"].to_pylist())
    for q in np.unique(question):
        members = np.flatnonzero(question == q)
        values[members[:2]] = -0.5 - rng.random() / 10
    return values


def test_emotion_answers_tied_in_most_questions_are_flagged(tmp_path, capsys):
    results, printed = _emotion_measure(tmp_path, capsys, _tied_top)
    expected = (
        "100.0% of the questions (48 of 48) have a tie in their top 3 answers: their order comes from the seeded "
        "tie rule, not from the model, so the tests' p-values and Cramér's V say little about its bias"
    )
    assert results["result"]["tie_rate"] == 1.0
    _shown_everywhere(results, printed, get_probe("eec-emotion"), [expected], "top-1 χ²")
    assert degenerate(results["result"]["warnings"]) == [expected]


def test_emotion_constant_scores_are_flagged_and_random_ones_are_not(tmp_path, capsys):
    results, printed = _emotion_measure(tmp_path, capsys, lambda s: np.full(s.num_rows, -4.25))
    flagged = degenerate(results["result"]["warnings"])
    n = choice_sentences(select_persons(eec_questions(), 1, 0)).num_rows
    assert flagged[0].startswith(
        f"100.0% of the choice sentences ({n:,} of {n:,}) get the same score (-4.2500)"
    )
    _shown_everywhere(results, printed, get_probe("eec-emotion"), flagged[:1], "top-1 χ²")
    rng = np.random.default_rng(6)
    healthy, printed = _emotion_measure(tmp_path, capsys, lambda s: -rng.random(s.num_rows))
    shown = eec_shown_warnings(healthy["result"])  # what its few persons prevent, no degenerate-run warning
    assert shown and degenerate(shown) == []
    assert not any(mark in printed for mark in DEGENERATE)


def test_a_tfidf_run_with_a_small_corpus_is_flagged(tmp_path, capsys):
    """Beecher's TF-IDF model on a corpus that knows few choice words: most are out of vocabulary."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("alonzo feels angry today.\ni made amanda feel happy and glad.\nthe news is sad.\n")
    out = tmp_path / "run"
    args = ["probe", f"tfidf:{corpus}", "--bias", "eec-emotion", "--limit", "1", "--output", str(out)]
    assert main([*args, "--quiet", "--permutations", "20", "--resamples", "20"]) == 0
    printed = capsys.readouterr().out
    results = json.loads((out / "results.json").read_text())
    warnings = degenerate(results["result"]["warnings"])
    oov = results["scoring"]["oov"]
    assert oov["overall"] > d.OOV_SHARE
    assert warnings[0].startswith("100.0% of the questions (48 of 48) have a tie in their top 3 answers: ")
    share = f"{100 * oov['overall']:.1f}%"
    assert any(
        w.startswith(f"{share} of the choice sentences (") and "no vector or n-gram" in w for w in warnings
    )
    for warning in warnings:
        assert f"  warning: {warning}" in printed
        assert f"- **Warning:** {warning}" in (out / "report.md").read_text()
        assert warning in html.unescape((out / "report.html").read_text())


def test_nli_constant_probabilities_are_flagged(tmp_path, capsys):
    from unqover.generate.nli import nli_rows, synthetic_premises

    rows = nli_rows(synthetic_premises(), family="main")
    folder = tmp_path / "nli"
    (folder / "data" / "synthetic").mkdir(parents=True)
    pq.write_table(rows, folder / "data" / "synthetic" / "test.parquet")
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: synthetic\n  data_files:\n  - split: test\n"
        "    path: data/synthetic/*.parquet\n---\n"
    )
    n = rows.num_rows
    predictions = tmp_path / "predictions.parquet"
    dataset = {"source": str(folder), "config": "synthetic", "split": "test"}
    for name, (p_female, p_male) in {
        "constant": (np.full(n, 0.5), np.full(n, 0.5)),
        "healthy": tuple(np.random.default_rng(7).random((2, n))),
    }.items():
        table = pa.table({"id": rows["id"], "score_1": p_female, "score_2": p_male})
        write_predictions(
            predictions, table, {"probe": "nli-gender", "model": {"id": "m"}, "dataset": dataset}
        )
        output = tmp_path / f"{name}.json"
        capsys.readouterr()
        assert main(["measure", str(predictions), "--resamples", "20", "--output", str(output)]) == 0
        results, printed = json.loads(output.read_text()), capsys.readouterr().out
        flagged = degenerate(results["result"]["warnings"])
        if name == "healthy":
            assert flagged == [] and not any(mark in printed for mark in DEGENERATE)
            continue
        assert flagged == [
            f"100.0% of the entailment probabilities ({2 * n:,} of {2 * n:,}) are the same value (0.5000): the "
            "model's output does not depend on the premise or the hypothesis, so S, ΔP and B say nothing about "
            "its bias"
        ]
        _shown_everywhere(results, printed, get_probe("nli-gender"), flagged, "S: same label")
