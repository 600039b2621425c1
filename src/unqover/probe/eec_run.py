"""`unqover probe MODEL --bias eec-emotion`: Beecher's emotion fill-in probe with the same runner and run folder.

Every choice of every question is one sentence (``choice_sentences``); the runner scores each distinct sentence
once (resumable, shardable), :func:`unqover.probe.eec.rank_choices` ranks each question's choices, and
:func:`unqover.measure.emotion.emotion_bias` tests whether the chosen emotions depend on race or gender.

Run folder: ``run.json``, ``shards/``, ``predictions.parquet`` (per sentence: id, question_id, choice,
log_likelihood, tokens, with provenance), ``answers.parquet`` (per question: its ranked choices and tie flag),
``results.json``, ``report.md`` and ``report.html``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from unqover.errors import UnqoverError
from unqover.files import write_json_atomic, write_text_atomic
from unqover.predictions import write_predictions
from unqover.probe.run import (
    EEC_BIAS,
    ProbeOptions,
    claim_and_score,
    dataset_fingerprint,
    default_output,
    library_versions,
    load_for_process,
    refuse_unqover_options,
)

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


@dataclass
class EECRun:
    """A finished emotion probe: where it is, what it measured (``result.to_dict()``) and where it came from."""

    folder: Path
    result: object
    provenance: dict


def load_eec_questions(options: ProbeOptions) -> tuple[pa.Table, dict]:
    """--dataset (config ``questions``), else a local build in datasets/unqover/eec-emotion, else generated."""
    from unqover.hub.load import load_rows

    config = options.config or "questions"
    if config != "questions":
        raise UnqoverError(f"the emotion probe scores the 'questions' config, not {config!r}")
    local = Path("datasets/unqover") / EEC_BIAS
    if options.dataset:
        rows, source = load_rows(options.dataset, config), str(options.dataset)
    elif (local / "data" / config).is_dir():
        rows, source = load_rows(local, config), str(local)
    else:
        from unqover.generate.eec import eec_questions

        rows, source = eec_questions(), "generated from the EEC templates (Beecher's spelling)"
    missing = [c for c in QUESTION_COLUMNS if c not in rows.column_names]
    if missing:
        raise UnqoverError(
            f"dataset {source} lacks the columns {missing}; is it the eec-emotion questions config?"
        )
    return rows, {"source": source, "config": config, "split": "test"}


def select_persons(questions: pa.Table, limit: int | None, seed: int) -> pa.Table:
    """Keep ``limit`` persons per gender × race cell (noun phrases are their own race cell), all their questions.

    Persons are drawn by a seeded hash of their name, so the same limit and seed keep the same persons anywhere.
    """
    if limit is None:
        return questions
    if limit < 1:
        raise UnqoverError(f"--limit must be at least 1 person per cell, got {limit}")
    from unqover.probe.eec import tie_keys

    slots = questions["person_slot"].to_pylist()
    cells = [
        f"{g}|{r}"
        for g, r in zip(questions["gender"].to_pylist(), questions["race"].to_pylist(), strict=True)
    ]
    persons = sorted(set(zip(cells, slots, strict=True)))
    keys = tie_keys([slot for _, slot in persons], seed)
    chosen = set()
    for cell in sorted({c for c, _ in persons}):
        members = sorted((k, slot) for (c, slot), k in zip(persons, keys, strict=True) if c == cell)
        chosen.update(slot for _, slot in members[:limit])
    keep = np.array([slot in chosen for slot in slots])
    return questions.filter(pa.array(keep))


def probe_eec(model_id: str, options: ProbeOptions) -> EECRun | None:
    """Score every choice sentence, rank, measure and report the emotion fill-in probe."""
    from unqover.generate.eec import choice_sentences
    from unqover.measure.emotion import emotion_bias
    from unqover.probe.eec import LENGTH_RULES, rank_choices, sentence_scorer
    from unqover.report.eec import eec_html, eec_markdown

    refuse_unqover_options(options, "persons per gender × race cell")
    length_rule = options.length_rule
    if length_rule not in LENGTH_RULES:
        raise UnqoverError(f"--length-rule must be one of {', '.join(LENGTH_RULES)}, got {length_rule!r}")
    state, loaded = load_for_process(model_id, options)
    scorer = sentence_scorer(loaded)
    questions, dataset = load_eec_questions(options)
    questions = select_persons(questions, options.limit, options.seed)
    sentences = choice_sentences(questions)
    dataset = {**dataset, "rows": sentences.num_rows, "fingerprint": dataset_fingerprint(sentences["id"])}
    folder = options.output or default_output(model_id, EEC_BIAS, "questions", "default")
    identity = {
        "model": {"id": model_id, "revision": loaded.revision, "family": loaded.family},
        "dataset": dataset,
        "scoring": {"sentence": scorer.method, "length_rule": length_rule},
        "dtype": loaded.dtype,
        "selection": {"limit": options.limit, "seed": options.seed},
    }
    scores, _, _ = claim_and_score(sentences, scorer, folder, identity, options, state)
    if scores is None:
        return None
    from unqover.probe.runner import recorded_batch_size

    provenance = {
        **identity,
        "model": {**identity["model"], **loaded.provenance()},
        "batch_size": recorded_batch_size(folder),
        "versions": library_versions(),
    }
    log_likelihood, tokens = scores["score_1"].to_numpy(), scores["score_2"].to_numpy()
    per_sentence = pa.table(
        [
            sentences["id"],
            sentences["question_id"],
            sentences["choice"],
            pa.array(log_likelihood),
            pa.array(tokens),
        ],
        schema=SENTENCE_SCHEMA,
    )
    write_predictions(folder / "predictions.parquet", per_sentence, provenance, schema=SENTENCE_SCHEMA)
    ranked = rank_choices(
        questions["id"].to_pylist(),
        sentences["question_id"].to_pylist(),
        sentences["choice"].to_pylist(),
        sentences["id"].to_pylist(),
        log_likelihood,
        tokens,
        length_rule=length_rule,
        seed=options.seed,
    )
    answers = pa.table(
        {
            "question_id": ranked.question_id,
            "text": questions["text"],
            "answers": pa.array(ranked.answers, type=pa.list_(pa.string())),
            "tie": ranked.ties,
        }
    )
    write_predictions(folder / "answers.parquet", answers, provenance, schema=answers.schema)
    emotions = dict(
        zip(
            pc.list_flatten(questions["choices"]).to_pylist(),
            pc.list_flatten(questions["choice_emotions"]).to_pylist(),
            strict=True,
        )
    )
    result = emotion_bias(
        ranked.answers,
        questions["gender"].to_pylist(),
        questions["race"].to_pylist(),
        questions["person_slot"].to_pylist(),
        questions["form"].to_pylist(),
        emotions=emotions,
        ties=ranked.ties,
        n_permutations=options.permutations,
        n_bootstrap=options.resamples,
        seed=options.seed,
    )
    results = {
        "provenance": provenance,
        "scoring": {**identity["scoring"], "tie_rate": ranked.tie_rate(), "questions": questions.num_rows},
        "result": result.to_dict(),
    }
    write_json_atomic(folder / "results.json", results)
    write_text_atomic(folder / "report.md", eec_markdown(results))
    write_text_atomic(folder / "report.html", eec_html(results))
    return EECRun(folder, result, provenance)
