"""The person probe's rows and scores: its questions (read from the EEC dataset's ``person_questions`` config, or
generated; Beecher's own strings rebuilt from them in paper mode), the quick run's draw of questions per template
× form stratum, and the ranking of each question's persons with both measures of the answers. Loaded by
:mod:`unqover.probes.eec_person` when a run starts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from unqover.errors import UnqoverError
from unqover.generate.eec_person import person_questions, question_sentences
from unqover.measure.diagnostics import person_run_findings
from unqover.measure.emotion_person import person_bias_inputs, person_task
from unqover.probes.base import RunOptions
from unqover.probes.eec_rows import quick_run_selection, rank_answers, tally
from unqover.probes.row_identity import check_columns, given_or_built
from unqover.report.diagnostics import person_warnings
from unqover.scoring.sampling import seeded_keys

#: The dataset folder and config the questions are read from (``unqover build-datasets eec-emotion``).
DATASET = "eec-emotion"
CONFIG = "person_questions"
PERSON_QUESTION_COLUMNS = (
    "id", "question", "text", "form", "template", "emotion", "emotion_word", "choices", "choice_genders",
    "choice_races",
)  # fmt: skip
#: Beecher weights his top 3 answers (3, 2, 1); the tie flag looks at the same places.
TOP_K = 3


def load_person_questions(dataset: str | None, config: str | None, paper: bool) -> tuple[pa.Table, dict]:
    """--dataset (config ``person_questions``), else a local build in datasets/unqover/eec-emotion, else generated.

    The config holds the questions built from the columns; they are rebuilt from the sentences they spell out
    (:func:`~unqover.generate.eec_person.question_sentences`), which checks them, and in ``paper`` mode rebuilt as
    Beecher's code builds them (his strings, emotions and order).
    """
    config = config or CONFIG
    if config != CONFIG:
        raise UnqoverError(f"the person probe scores the {CONFIG!r} config, not {config!r}")
    mode = "paper" if paper else "default"
    found = given_or_built(DATASET, dataset, config, Path("datasets/unqover") / DATASET)
    if found is None:
        generated = "generated from the EEC templates (Beecher's spelling)"
        return person_questions(mode=mode), {"source": generated, "config": config, "split": "test"}
    rows, source = found
    check_columns(rows, PERSON_QUESTION_COLUMNS, source, f"the {DATASET} {config} config")
    questions = person_questions(question_sentences(rows), mode)
    return questions, {"source": source, "config": config, "split": "test"}


def _strata(questions: pa.Table) -> list[str]:
    return [
        f"{t}|{f}"
        for t, f in zip(questions["template"].to_pylist(), questions["form"].to_pylist(), strict=True)
    ]


def select_questions(questions: pa.Table, limit: int | None, seed: int) -> pa.Table:
    """Keep ``limit`` questions per template × form stratum (all of a smaller one), each with all its choices.

    Inside each stratum the questions are ordered by a seeded hash of (seed, stratum, question) and the first
    ``limit`` kept: a uniform random draw per stratum that depends only on the seed and the questions (not on the
    row order or the machine). Questions keep their order.
    """
    if limit is None:
        return questions
    if isinstance(limit, bool) or not isinstance(limit, int | np.integer) or limit < 1:
        raise UnqoverError(f"--limit must be at least 1 question per template x form, got {limit!r}")
    strata = _strata(questions)
    keys = seeded_keys(seed, "eec-person-question", strata, questions["question"].to_pylist())
    by_stratum: dict[str, list[tuple[float, int]]] = {}
    for i, (stratum, key) in enumerate(zip(strata, keys, strict=True)):
        by_stratum.setdefault(stratum, []).append((key, i))
    chosen = {i for members in by_stratum.values() for _, i in sorted(members)[: int(limit)]}
    keep = np.array([i in chosen for i in range(questions.num_rows)], dtype=bool)
    return questions if keep.all() else questions.filter(pa.array(keep))


def describe_question_selection(questions: pa.Table, kept: pa.Table, limit: int, seed: int) -> dict:
    """run.json's ``selection`` of a quick run: the rule, and how many questions (per stratum, with an emotion)
    were kept of how many."""

    def counts(table: pa.Table) -> dict:
        per_stratum = tally(_strata(table))
        return {
            "questions": table.num_rows,
            "with_emotion": sum(e is not None for e in table["emotion"].to_pylist()),
            "strata": len(per_stratum),
            "per_stratum": per_stratum,
        }

    unit = "question, with all its choices, drawn by a seeded hash"
    return quick_run_selection(limit, "template x form", seed, unit, counts(kept), counts(questions))


def rank_and_measure_persons(questions: pa.Table, sentences: pa.Table, scores: pa.Table, run: RunOptions,
                             settings: dict, selection: dict | None, paper: bool = False,
                             oov: dict | None = None):  # fmt: skip
    """Rank each question's persons from the sentence scores (aligned with ``sentences``) and measure the answers.

    ``paper``: Beecher's own ranking of his models' scores (``unqover.scoring.beecher.paper_ranking``); else the
    length rule and the seeded tie rule (``unqover.scoring.eec.rank_choices``). Both measures come from the same
    ranking (:func:`unqover.measure.emotion_person.person_task`): the valid test on the top-1 answers and
    Beecher's statistic on the top 3. A degenerate run's warnings come first in ``warnings``."""
    ranked, ranking = rank_answers(questions, sentences, scores, run, settings, paper, top_k=TOP_K)
    result = person_task(
        ranked.answers,
        questions,
        top_k=TOP_K,
        ties=ranked.ties,
        n_permutations=settings["permutations"],
        seed=run.seed,
    )
    if selection and selection.get("limit") is not None:
        result.selection = selection
    groups = person_bias_inputs(ranked.answers, questions)["top1_groups"]
    found = person_warnings(person_run_findings(ranking, ranked.ties, groups, TOP_K, oov))
    result.warnings = [*found, *result.warnings]
    return result, ranked
