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
    from unqover.probe.nli_run import seeded_keys

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
        return {
            "questions": table.num_rows,
            "persons": len(persons),
            "per_cell": dict(sorted(per_cell.items())),
        }

    return {
        "limit": limit,
        "per": "gender x race cell",
        "seed": seed,
        "unit": "person, with all its questions, drawn by a seeded hash",
        "kept": counts(kept),
        "of": counts(questions),
    }


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
    selection = {"limit": options.limit, "seed": options.seed}
    if options.limit is not None:
        kept = select_persons(questions, options.limit, options.seed)
        selection = describe_eec_selection(questions, kept, options.limit, options.seed)
        questions = kept
    sentences = choice_sentences(questions)
    dataset = {**dataset, "rows": sentences.num_rows, "fingerprint": dataset_fingerprint(sentences["id"])}
    folder = options.output or default_output(model_id, EEC_BIAS, "questions", "default")
    identity = {
        "model": {"id": model_id, "revision": loaded.revision, "family": loaded.family},
        "dataset": dataset,
        "scoring": {"sentence": scorer.method, "length_rule": length_rule},
        "dtype": loaded.dtype,
        "selection": selection,
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
        persons_total=selection["of"]["persons"] if options.limit is not None else None,
    )
    if options.limit is not None:
        result.selection = selection
    results = {
        "provenance": provenance,
        "scoring": {**identity["scoring"], "tie_rate": ranked.tie_rate(), "questions": questions.num_rows},
        "result": result.to_dict(),
    }
    write_json_atomic(folder / "results.json", results)
    write_text_atomic(folder / "report.md", eec_markdown(results))
    write_text_atomic(folder / "report.html", eec_html(results))
    return EECRun(folder, result, provenance)
