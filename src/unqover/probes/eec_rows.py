"""The emotion probe's rows and scores: its questions (loaded and checked), the quick run's draw of persons per
gender × race cell, and the ranking of each question's choices with the tests of the answers. Loaded by
:mod:`unqover.probes.eec` when a run starts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import pyarrow as pa

from unqover.errors import UnqoverError
from unqover.generate.eec import EMOTION_LEXICON, eec_questions
from unqover.measure.diagnostics import emotion_run_findings
from unqover.measure.emotion import cell_label, emotion_bias
from unqover.predictions import LM_EVAL_SENTENCE_SCHEMA
from unqover.probes.base import (
    RunOptions,
)
from unqover.probes.row_identity import check_columns, given_or_built
from unqover.report.diagnostics import emotion_warnings
from unqover.scoring.beecher import (
    paper_ranking,
)
from unqover.scoring.sampling import seeded_keys

QUESTION_COLUMNS = ("id", "text", "form", "person_slot", "gender", "race", "choices", "choice_emotions")
#: the scored choice sentences: lm-eval's logged columns and each sentence's token count
SENTENCE_SCORE_SCHEMA = LM_EVAL_SENTENCE_SCHEMA.append(pa.field("tokens", pa.float64()))


#: an lm-eval document's choice columns (``with_sentences``): what its choices are built from
CHOICE_FIELDS = ("sentence_ids", "sentences", "sentence_choices")


def with_sentences(probe, questions: pa.Table) -> pa.Table:
    """Each question with its choice sentences, their ids and choices, in the order its choices are scored (the
    documents of ``unqover lm-eval-tasks``; ``probe``: the emotion or person probe)."""
    sentences = probe.choice_rows(questions).to_pylist()
    by_question: dict[str, list[dict]] = {}
    for sentence in sentences:
        by_question.setdefault(sentence["question_id"], []).append(sentence)
    for column, key in zip(CHOICE_FIELDS, ("id", "sentence", "choice"), strict=True):
        values = [[s[key] for s in by_question.get(q, [])] for q in questions["id"].to_pylist()]
        questions = questions.append_column(column, pa.array(values, pa.list_(pa.string())))
    return questions


def without_token_counts(table: pa.Table) -> pa.Table:
    """Sentence log-likelihoods whose token counts were not logged (lm-eval's samples) in ``SENTENCE_SCHEMA``:
    tokens NaN, which only ``--length-rule mean`` would read (such files are measured with ``sum``)."""
    return table.append_column("tokens", pa.array(np.full(table.num_rows, np.nan)))


def load_eec_questions(name: str, dataset: str | None, config: str | None = None) -> tuple[pa.Table, dict]:
    """--dataset (config ``questions``), else a local build in datasets/unqover/<name>, else generated."""
    config = config or "questions"
    if config != "questions":
        raise UnqoverError(f"the emotion probe scores the 'questions' config, not {config!r}")
    found = given_or_built(name, dataset, config, Path("datasets/unqover") / name)
    rows, source = found or (eec_questions(), "generated from the EEC templates (Beecher's spelling)")
    check_columns(rows, QUESTION_COLUMNS, source, f"the {name} questions config")
    return rows, {"source": source, "config": config, "split": "test"}


def _cells(questions: pa.Table) -> list[str]:
    """Each question's gender × race cell (noun phrases, race null, are their own cell per gender)."""
    return [
        cell_label(g, r)
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
        return {
            "questions": table.num_rows,
            "persons": len(persons),
            "per_cell": tally(cell for cell, _ in persons),
            "questions_per_cell": tally(_cells(table)),
        }

    unit = "person, with all its questions, drawn by a seeded hash"
    return quick_run_selection(limit, "gender x race cell", seed, unit, counts(kept), counts(questions))


def quick_run(
    questions: pa.Table,
    limit: int | None,
    seed: int,
    select: Callable[[pa.Table, int, int], pa.Table],
    describe: Callable[[pa.Table, pa.Table, int, int], dict],
) -> tuple[pa.Table, dict]:
    """A quick run's questions, as ``select`` keeps them, and its ``selection`` record, as ``describe`` writes it
    (all questions when ``limit`` is None): the emotion probe's and the person probe's."""
    if limit is None:
        return questions, {"limit": None, "seed": seed}
    kept = select(questions, limit, seed)
    return kept, describe(questions, kept, limit, seed)


def tally(keys: Iterable[str]) -> dict[str, int]:
    """How many times each key occurs, in the keys' sorted order (a quick run's count per stratum)."""
    return dict(sorted(Counter(keys).items()))


def quick_run_selection(limit: int, per: str, seed: int, unit: str, kept: dict, of: dict) -> dict:
    """run.json's ``selection`` of an emotion or person quick run: ``limit`` units (``unit``) ``per`` stratum,
    drawn with ``seed``, and the counts of the ``kept`` questions and of all (``of``)."""
    return {"limit": limit, "per": per, "seed": seed, "unit": unit, "kept": kept, "of": of}


def rank_answers(questions: pa.Table, sentences: pa.Table, scores: pa.Table, run: RunOptions, settings: dict,
                 paper: bool, top_k: int = 3):  # fmt: skip
    """(ranked choices, the score each choice was ranked by) of every question, from the sentence scores (aligned
    with ``sentences``): Beecher's own ranking of his models' scores in ``paper`` mode
    (``unqover.scoring.beecher.paper_ranking``), else the length rule and the seeded tie rule
    (``unqover.scoring.eec.rank_choices``)."""
    from unqover.scoring.eec import rank_choices

    log_likelihood, tokens = scores["score_1"].to_numpy(), scores["score_2"].to_numpy()
    question_ids, question_of = questions["id"].to_pylist(), sentences["question_id"].to_pylist()
    if paper:
        ranked = paper_ranking(
            question_ids, question_of, sentences["choice"].to_pylist(), log_likelihood, top_k=top_k
        )
    else:
        ranked = rank_choices(
            question_ids,
            question_of,
            sentences["choice"].to_pylist(),
            sentences["id"].to_pylist(),
            log_likelihood,
            tokens,
            length_rule=settings["length_rule"],
            top_k=top_k,
            seed=run.seed,
        )
    ranking = log_likelihood if paper or settings["length_rule"] != "mean" else log_likelihood / tokens
    return ranked, ranking


def rank_and_measure(questions: pa.Table, sentences: pa.Table, scores: pa.Table, run: RunOptions, settings: dict,
                     selection: dict | None, paper: bool = False, oov: dict | None = None):  # fmt: skip
    """Rank each question's choices (:func:`rank_answers`) and test the answers. ``oov``: his models'
    out-of-vocabulary rates (``oov_rates``). A degenerate run's warnings come first in ``warnings``."""
    ranked, ranking = rank_answers(questions, sentences, scores, run, settings, paper)
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
    top1 = [EMOTION_LEXICON.get(answers[0], answers[0]) for answers in ranked.answers]
    found = emotion_warnings(emotion_run_findings(ranking, ranked.ties, top1, result.top_k, oov))
    result.warnings = [*found, *result.warnings]
    return result, ranked
