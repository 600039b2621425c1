"""The emotion fill-in probe (Beecher) on Equity Evaluation Corpus sentences.

Every choice of every question is one sentence (``choice_sentences``); the runner scores each distinct sentence
once (resumable, shardable), :func:`unqover.probe.eec.rank_choices` ranks each question's choices, and
:func:`unqover.measure.emotion.emotion_bias` tests whether the chosen emotions depend on race or gender. The run
folder holds ``predictions.parquet`` (per sentence: id, question_id, choice, log_likelihood, tokens) and
``answers.parquet`` (per question: its ranked choices and tie flag) beside results and reports.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from unqover.errors import UnqoverError
from unqover.generate.eec import EMOTION_LEXICON, choice_sentences, eec_questions
from unqover.hub.load import load_rows, source_name
from unqover.measure.emotion import emotion_bias
from unqover.predictions import read_predictions
from unqover.probe.beecher import (
    DEFAULT_FIXES,
    load_beecher_model,
    oov_rates,
    paper_ranking,
    question_vocabulary,
)
from unqover.probe.beecher import FAMILIES as BEECHER_FAMILIES
from unqover.probe.beecher import MODES as BEECHER_MODES
from unqover.probe.placement import place
from unqover.probe.sampling import seeded_keys
from unqover.probes.base import (
    Loaded,
    Measured,
    ProbeDefinition,
    QuickRunSize,
    RunOptions,
    load_for_run,
    selection_suffix,
)
from unqover.report.diagnostics import emotion_warnings
from unqover.report.eec import eec_html, eec_markdown, eec_summary, quick_run_line

NAME = "eec-emotion"


QUESTION_COLUMNS = ("id", "text", "form", "person_slot", "gender", "race", "choices", "choice_emotions")
SENTENCE_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("question_id", pa.string()),
        ("choice", pa.string()),
        ("log_likelihood", pa.float64()),
        ("tokens", pa.float64()),
    ]
)


def load_eec_questions(dataset: str | None, config: str | None = None) -> tuple[pa.Table, dict]:
    """--dataset (config ``questions``), else a local build in datasets/unqover/eec-emotion, else generated."""
    config = config or "questions"
    if config != "questions":
        raise UnqoverError(f"the emotion probe scores the 'questions' config, not {config!r}")
    local = Path("datasets/unqover") / NAME
    if dataset:
        rows, source = load_rows(dataset, config), source_name(dataset)
    elif (local / "data" / config).is_dir():
        rows, source = load_rows(local, config), str(local.resolve())
    else:
        rows, source = eec_questions(), "generated from the EEC templates (Beecher's spelling)"
    missing = [c for c in QUESTION_COLUMNS if c not in rows.column_names]
    if missing:
        raise UnqoverError(
            f"dataset {source} lacks the columns {missing}; is it the eec-emotion questions config?"
        )
    return rows, {"source": source, "config": config, "split": "test"}


def _cells(questions: pa.Table) -> list[str]:
    """Each question's gender × race cell (noun phrases, race null, are their own cell per gender)."""
    return [
        f"{g}|{r or 'none'}"
        for g, r in zip(questions["gender"].to_pylist(), questions["race"].to_pylist(), strict=True)
    ]


def select_persons(questions: pa.Table, limit: int | None, seed: int) -> pa.Table:
    """Keep ``limit`` persons per gender × race cell (noun phrases are their own race cell), all their questions.

    Inside each cell the persons are ordered by a seeded hash of (seed, cell, person) and the first ``limit``
    kept: a uniform random draw of ``limit`` persons per cell that depends only on the seed and the persons (not
    on the row order or the machine). Questions keep their order.
    """
    if limit is None:
        return questions
    if isinstance(limit, bool) or not isinstance(limit, int | np.integer) or limit < 1:
        raise UnqoverError(f"--limit must be at least 1 person per cell, got {limit!r}")
    slots = [str(slot) for slot in questions["person_slot"].to_pylist()]
    persons = sorted(set(zip(_cells(questions), slots, strict=True)))
    if not persons:
        return questions
    keys = seeded_keys(seed, "eec-person", *zip(*persons, strict=True))
    by_cell: dict[str, list[tuple[float, str]]] = {}
    for (cell, slot), key in zip(persons, keys, strict=True):
        by_cell.setdefault(cell, []).append((key, slot))
    chosen = {slot for members in by_cell.values() for _, slot in sorted(members)[: int(limit)]}
    keep = np.array([slot in chosen for slot in slots])
    return questions if keep.all() else questions.filter(pa.array(keep))


def describe_eec_selection(questions: pa.Table, kept: pa.Table, limit: int, seed: int) -> dict:
    """run.json's ``selection`` of a quick run: the rule, and how many persons (per cell) and questions were kept."""

    def counts(table: pa.Table) -> dict:
        persons = set(zip(_cells(table), [str(s) for s in table["person_slot"].to_pylist()], strict=True))
        per_cell: dict[str, int] = {}
        for cell, _ in persons:
            per_cell[cell] = per_cell.get(cell, 0) + 1
        questions_per_cell: dict[str, int] = {}
        for cell in _cells(table):
            questions_per_cell[cell] = questions_per_cell.get(cell, 0) + 1
        return {
            "questions": table.num_rows,
            "persons": len(persons),
            "per_cell": dict(sorted(per_cell.items())),
            "questions_per_cell": dict(sorted(questions_per_cell.items())),
        }

    return {
        "limit": limit,
        "per": "gender x race cell",
        "seed": seed,
        "unit": "person, with all its questions, drawn by a seeded hash",
        "kept": counts(kept),
        "of": counts(questions),
    }


def rank_and_measure(questions: pa.Table, sentences: pa.Table, scores: pa.Table, run: RunOptions, settings: dict,
                     selection: dict | None, paper: bool = False, oov: dict | None = None):  # fmt: skip
    """Rank each question's choices from the sentence scores (aligned with ``sentences``) and test the answers.

    ``paper``: Beecher's own ranking of his models' scores (``unqover.probe.beecher.paper_ranking``). ``oov``: his
    models' out-of-vocabulary rates (``oov_rates``). A degenerate run's warnings come first in ``warnings``."""
    from unqover.probe.eec import rank_choices

    log_likelihood, tokens = scores["score_1"].to_numpy(), scores["score_2"].to_numpy()
    if paper:
        ranked = paper_ranking(
            questions["id"].to_pylist(),
            sentences["question_id"].to_pylist(),
            sentences["choice"].to_pylist(),
            log_likelihood,
        )
    else:
        ranked = rank_choices(
            questions["id"].to_pylist(),
            sentences["question_id"].to_pylist(),
            sentences["choice"].to_pylist(),
            sentences["id"].to_pylist(),
            log_likelihood,
            tokens,
            length_rule=settings["length_rule"],
            seed=run.seed,
        )
    sampled = bool(selection and selection.get("limit") is not None)
    result = emotion_bias(
        ranked.answers,
        questions["gender"].to_pylist(),
        questions["race"].to_pylist(),
        questions["person_slot"].to_pylist(),
        questions["form"].to_pylist(),
        emotions=EMOTION_LEXICON,
        ties=ranked.ties,
        n_permutations=settings["permutations"],
        n_bootstrap=run.resamples,
        seed=run.seed,
        persons_total=selection["of"]["persons"] if sampled else None,
        population=selection["of"] if sampled else None,
    )
    if sampled:
        result.selection = selection
    ranking = log_likelihood if paper or settings["length_rule"] != "mean" else log_likelihood / tokens
    top1 = [EMOTION_LEXICON.get(answers[0], answers[0]) for answers in ranked.answers]
    found = emotion_warnings(ranking, ranked.ties, top1, result.top_k, oov)
    result.warnings = [*found, *result.warnings]
    return result, ranked


class EECProbe(ProbeDefinition):
    """Beecher's emotion fill-in probe: masked and causal LMs score every choice sentence."""

    name = NAME
    title = "EEC emotion fill-in"
    families = ("mlm", "causal", *BEECHER_FAMILIES)
    limit_meaning = "N persons per gender x race cell, all their questions"
    quick_run = QuickRunSize("persons per gender × race cell", 1, 5, 840)
    settings: ClassVar[dict] = {"length_rule": "mean", "permutations": 2000, "scoring": "default"}

    def check_settings(self, given) -> dict:
        from unqover.probe.eec import LENGTH_RULES

        settings = super().check_settings(given)
        if settings["length_rule"] not in LENGTH_RULES:
            raise UnqoverError(
                f"--length-rule must be one of {', '.join(LENGTH_RULES)}, got {settings['length_rule']!r}"
            )
        if settings["scoring"] not in BEECHER_MODES:
            raise UnqoverError(
                f"--scoring must be one of {', '.join(BEECHER_MODES)}, got {settings['scoring']!r}"
            )
        return settings

    def load_model(self, model_id: str, run: RunOptions, settings: dict):
        from unqover.probe.models import load_model

        if model_id.partition(":")[0] in BEECHER_FAMILIES:
            # Beecher's own models: a TF-IDF corpus or word vectors, scored on the CPU in one process
            vocabulary = None if run.dataset else question_vocabulary(eec_questions())
            loaded, factory = load_beecher_model(model_id, settings["scoring"], vocabulary=vocabulary)
            loaded.scorer = factory(None)
            return place(run.shard, "cpu")[0], loaded
        if settings["scoring"] != "default":
            raise UnqoverError(
                "--scoring paper applies to Beecher's own models (tfidf:CORPUS, glove:VECTORS)"
            )

        return load_for_run(load_model, model_id, run)

    def load(self, run: RunOptions, settings: dict, model) -> Loaded:
        questions, dataset = load_eec_questions(run.dataset, run.config)
        selection = {"limit": run.limit, "seed": run.seed}
        if run.limit is not None:
            kept = select_persons(questions, run.limit, run.seed)
            selection = describe_eec_selection(questions, kept, run.limit, run.seed)
            questions = kept
        context = {"questions": questions, "scoring": self.scoring(model, settings), "family": model.family}
        if model.family in BEECHER_FAMILIES:
            context["model"] = model
        return Loaded(choice_sentences(questions), dataset, None, selection, context)

    def scorers(self, model, settings: dict) -> dict:
        from unqover.probe.eec import sentence_scorer

        return {"": model.scorer if model.family in BEECHER_FAMILIES else sentence_scorer(model)}

    def scoring(self, model, settings: dict) -> dict:
        from unqover.probe.eec import sentence_scorer

        if model.family in BEECHER_FAMILIES:
            method = model.scorer.method
            return {"sentence": method, "mode": settings["scoring"], "length_rule": settings["length_rule"]}

        return {"sentence": sentence_scorer(model).method, "length_rule": settings["length_rule"]}

    def output_name(self, loaded: Loaded, settings: dict) -> str:
        return f"{NAME}-questions" + selection_suffix(loaded.selection)

    def predictions(self, loaded: Loaded, scores: pa.Table) -> pa.Table:
        sentences = loaded.rows
        return pa.table(
            [
                sentences["id"],
                sentences["question_id"],
                sentences["choice"],
                scores["score_1"],
                scores["score_2"],
            ],
            schema=SENTENCE_SCHEMA,
        )

    def measure(self, loaded, scores, extra, run, settings) -> Measured:
        questions = loaded.context["questions"]
        family = loaded.context["family"]
        paper = family in BEECHER_FAMILIES and settings["scoring"] == "paper"
        oov = None
        if family in BEECHER_FAMILIES:
            oov = oov_rates(questions, loaded.rows, loaded.context["model"].scorer.known(loaded.rows))
        result, ranked = rank_and_measure(
            questions, loaded.rows, scores, run, settings, loaded.selection, paper, oov
        )
        answers = pa.table(
            {
                "question_id": ranked.question_id,
                "text": questions["text"],
                "answers": pa.array(ranked.answers, type=pa.list_(pa.string())),
                "tie": ranked.ties,
            }
        )
        scoring = {
            **loaded.context["scoring"],
            "tie_rate": ranked.tie_rate(),
            "questions": questions.num_rows,
        }
        if family in BEECHER_FAMILIES:
            scoring["oov"] = oov
            scoring["fixes"] = [] if paper else list(DEFAULT_FIXES[family])
        return Measured(result, {"scoring": scoring}, {"answers.parquet": answers})

    def reports(self, results: dict) -> dict[str, str]:
        return {"report.md": eec_markdown(results), "report.html": eec_html(results)}

    def quick_run_line(self, result: dict) -> str | None:
        return quick_run_line(result)

    def summary(self, result, top: int = 10) -> str:
        return eec_summary(result.to_dict())

    def headline(self, results: dict) -> dict:
        """Per test (race, gender): its p-value (permutation, else asymptotic) and Cramér's V with its interval."""
        tests = results["result"].get("tests") or {}
        out = {}
        for name, test in tests.items():
            out[f"{name}: p-value"] = (test.get("p_value"), None)
            out[f"{name}: Cramér's V"] = (test.get("cramers_v"), test.get("cramers_v_interval"))
        return out

    def measure_file(self, predictions: Path, run: RunOptions, split: str | None = None, **options):
        """Sentence predictions (id, question_id, choice, log_likelihood, tokens) against their questions."""
        table, provenance = read_predictions(predictions, SENTENCE_SCHEMA)
        recorded = provenance.get("dataset", {})
        source = run.dataset or recorded.get("source")
        questions, _ = load_eec_questions(source if source and Path(str(source)).exists() else None)
        selection = provenance.get("selection") or {}
        if selection.get("limit") is not None:
            questions = select_persons(questions, selection["limit"], selection.get("seed", 0))
        sentences = choice_sentences(questions)
        position = pc.index_in(sentences["id"], value_set=table["id"])
        if position.null_count:
            raise UnqoverError(f"{predictions} does not score every choice sentence of its questions")
        scores = table.take(position).rename_columns(["id", "question_id", "choice", "score_1", "score_2"])
        mode = (provenance.get("scoring") or {}).get("mode")
        settings = self.check_settings({k: options.get(k) for k in self.settings} | {"scoring": mode})
        paper = (provenance.get("model") or {}).get("family") in BEECHER_FAMILIES and mode == "paper"
        result, _ = rank_and_measure(questions, sentences, scores, run, settings, selection or None, paper)
        return result, provenance
