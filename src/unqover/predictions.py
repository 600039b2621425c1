"""The predictions file: one Parquet file with ``id``, ``score_1``, ``score_2`` and the run's provenance.

Provenance (model id and revision, dtype, batch size, library versions, the dataset it scored: source, config,
split, fingerprint) is JSON in the Parquet schema metadata under the key ``unqover``, so it travels with the
scores. Written atomically: a crash never leaves a truncated file under the final name.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from unqover.errors import UnqoverError
from unqover.files import atomic_path
from unqover.generate.ids import count_distinct, match_ids

PREDICTION_SCHEMA = pa.schema([("id", pa.string()), ("score_1", pa.float64()), ("score_2", pa.float64())])
#: an NLI model's labels, in the order of a prompted model's label words
NLI_LABELS = ("entailment", "neutral", "contradiction")


def entailment_from_logits(logits: np.ndarray, label_ids: Mapping[str, int]) -> np.ndarray:
    """``P_e = sigmoid(z_e − z_c)`` per row of ``logits`` (N, labels), in float64; the neutral logit is dropped."""
    z = np.asarray(logits, dtype=np.float64)
    diff = z[:, label_ids["entailment"]] - z[:, label_ids["contradiction"]]
    return np.exp(-np.logaddexp(0.0, -diff))  # sigmoid, stable for large |diff|


def scores_from_logits(logits: np.ndarray, label_ids: Mapping[str, int]) -> dict[str, np.ndarray]:
    """``p_entail`` (P_e = sigmoid(z_e − z_c)) and each label's probability under the softmax over every column of
    ``logits`` (N, labels), in float64: an NLI classifier's logits, or a prompted model's label log-likelihoods."""
    result = {"p_entail": entailment_from_logits(logits, label_ids)}
    z = np.asarray(logits, dtype=np.float64)
    log_p = z - np.logaddexp.reduce(z, axis=1, keepdims=True) if len(z) else z
    for label, i in label_ids.items():
        result[label] = np.exp(log_p[:, i])
    return result


#: ``unqover sample``'s file: the row ids to score, with the selection and dataset as provenance.
SAMPLE_IDS_SCHEMA = pa.schema([("id", pa.string())])
METADATA_KEY = b"unqover"


def write_predictions(
    path: str | Path, table: pa.Table, provenance: dict, schema: pa.Schema = PREDICTION_SCHEMA
) -> Path:
    """Write scores with provenance; ``table`` needs the columns of ``schema`` (default: id, score_1, score_2)."""
    path = Path(path)
    missing = [name for name in schema.names if name not in table.column_names]
    if missing:
        raise UnqoverError(f"predictions lack the columns {missing}")
    table = table.select(schema.names).cast(schema)
    table = table.replace_schema_metadata({METADATA_KEY: json.dumps(provenance, sort_keys=True).encode()})
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd")
    return path


def read_provenance(path: str | Path) -> dict:
    """The provenance of a predictions file (``{}`` when it has none), without reading its rows."""
    path = Path(path)
    if not path.is_file():
        raise UnqoverError(f"predictions file not found: {path}")
    if path.suffix == ".jsonl":
        return read_lm_eval_samples(path)[1]
    try:
        metadata = pq.read_schema(path).metadata or {}
    except (pa.ArrowInvalid, OSError) as err:
        raise UnqoverError(f"{path} is not a readable Parquet predictions file: {err}") from err
    try:
        return json.loads(metadata[METADATA_KEY]) if METADATA_KEY in metadata else {}
    except json.JSONDecodeError as err:
        raise UnqoverError(f"{path} has unreadable provenance metadata: {err}") from err


def read_predictions(path: str | Path, schema: pa.Schema = PREDICTION_SCHEMA) -> tuple[pa.Table, dict]:
    """Scores and provenance of a predictions file, checked for the columns of ``schema`` and unique ids."""
    path = Path(path)
    provenance = read_provenance(path)
    try:
        table = read_lm_eval_samples(path)[0] if path.suffix == ".jsonl" else pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as err:
        raise UnqoverError(f"{path} is not a readable Parquet predictions file: {err}") from err
    missing = [name for name in schema.names if name not in table.column_names]
    if missing:
        raise UnqoverError(
            f"{path} lacks the columns {missing} (this predictions file has {', '.join(schema.names)})"
        )
    table = _checked_columns(path, table.select(schema.names), schema)
    if count_distinct(table["id"]) != table.num_rows:
        raise UnqoverError(f"{path} has duplicate ids")
    return table, provenance


def _checked_columns(path: Path, table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` cast to ``schema``, or one line naming the first column of the wrong kind or holding NaN.

    Ids are text: the dataset's row ids (16 hex digits such as ``9ab4079fb01d17b9``). An integer id column is
    refused rather than cast, since a number names no row unambiguously (a position? a hash without its leading
    zeros?). Score columns take any numbers (integers are cast to float64); NaN is refused, as the measures do.
    """
    for field in schema:
        column = table[field.name]
        kind = column.type
        if pa.types.is_dictionary(kind):
            kind = kind.value_type
        if pa.types.is_string(field.type):
            fits = pa.types.is_string(kind) or pa.types.is_large_string(kind) or kind == pa.string_view()
            want = "text (the dataset's row ids, such as '9ab4079fb01d17b9')"
        else:
            fits = pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)
            want = "numbers"
        if not fits:
            raise UnqoverError(
                f"{path}: the column {field.name!r} holds {column.type}, expected {want}: write it as {field.type}"
            )
        if column.null_count:
            raise UnqoverError(f"{path}: the column {field.name!r} has {column.null_count:,} empty values")
    table = table.cast(schema)
    for field in schema:
        if pa.types.is_floating(field.type):
            nan = pc.is_nan(table[field.name])
            count = pc.sum(nan).as_py() or 0
            if count:
                first = table["id"].filter(nan)[0].as_py()
                raise UnqoverError(
                    f"{path}: {count:,} rows have a NaN {field.name} (the first: id {first!r}); scores must be "
                    "numbers: score those rows again"
                )
    return table


#: lm-eval's logged samples of an emotion or person task, as sentence predictions: no token counts are logged
LM_EVAL_SENTENCE_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("question_id", pa.string()),
        ("choice", pa.string()),
        ("log_likelihood", pa.float64()),
    ]
)


def subject_scores(log_likelihoods: Mapping[str, Sequence[float]]) -> pa.Table:
    """Predictions (id, score_1, score_2) from each UnQover document's two log-likelihoods: S = exp(log S)."""
    log_s = np.array(list(log_likelihoods.values()), dtype=np.float64).reshape(-1, 2)
    return pa.table(
        {"id": list(log_likelihoods), "score_1": np.exp(log_s[:, 0]), "score_2": np.exp(log_s[:, 1])}
    )


def sentence_log_likelihoods(
    documents: Iterable[Mapping], log_likelihoods: Mapping[str, Sequence[float]]
) -> pa.Table:
    """One row per choice sentence (``LM_EVAL_SENTENCE_SCHEMA``) from emotion/person documents (id, sentence_ids,
    sentence_choices) and each document's log-likelihoods in its choices' order."""
    columns: dict[str, list] = {name: [] for name in LM_EVAL_SENTENCE_SCHEMA.names}
    for doc in documents:
        values = log_likelihoods[doc["id"]]
        if len(values) != len(doc["sentence_ids"]):
            raise UnqoverError(
                f"question {doc['id']}: {len(values)} log-likelihoods for {len(doc['sentence_ids'])} sentences"
            )
        columns["id"] += doc["sentence_ids"]
        columns["question_id"] += [doc["id"]] * len(values)
        columns["choice"] += doc["sentence_choices"]
        columns["log_likelihood"] += [float(v) for v in values]
    return pa.table(columns, schema=LM_EVAL_SENTENCE_SCHEMA)


#: an UnQover row's columns that its prompt is built from and that name it (besides ``id``; the data contract of
#: ``DESIGN.md``): its subjects, template, attribute, polarity, text and the subjects' spans in the context
UNQOVER_ROW_FIELDS = (
    "subject_1",
    "subject_2",
    "template_id",
    "attribute",
    "polarity",
    "context",
    "question",
    "subject_1_span",
    "subject_2_span",
)
#: the fields of a logged document that its prompt and choices are built from (``unqover.jobs.lm_eval_hooks``)
#: and that name its row: UnQover tasks' row fields; emotion and person tasks' choice sentences. ``unqover
#: measure`` checks them against the dataset row of the document's id.
LOGGED_FIELDS = (*UNQOVER_ROW_FIELDS, "sentences", "sentence_ids", "sentence_choices")
_ABSENT = object()  # a field a logged document lacks (None is a value: a missing cluster)


#: how far above 0 a logged log-likelihood may lie (lm-eval sums float32 log-softmax values: a rounding's worth);
#: beyond it a value is the log of no probability
LOG_LIKELIHOOD_SLACK = 1e-4


def _no_log_probability(value: float) -> bool:
    return not (math.isfinite(value) and value <= LOG_LIKELIHOOD_SLACK)


def _check_log_likelihoods(path: Path, bad: list[tuple[int, float]]) -> None:
    """Refuse, in one line naming the samples file's lines, log-likelihoods that are not finite numbers ≤ 0 (before
    any S = exp(log S) is taken)."""
    if not bad:
        return
    number, value = bad[0]
    others = [str(n) for n, _ in bad[1:]]
    more = f"; so are those of line{'s' if len(others) > 1 else ''} {', '.join(others[:5])}" if others else ""
    more += f" and {len(others) - 5:,} more" if len(others) > 5 else ""
    raise UnqoverError(
        f"{path}, line {number}: the log-likelihood {value!r} is not a finite number ≤ 0 (the log of a probability)"
        f"{more}: measure the samples as lm-eval logged them"
    )


@functools.lru_cache(maxsize=2)  # read_provenance and read_predictions read it once
def _lm_eval_samples(path: Path, stamp: tuple[int, int]) -> tuple[pa.Table, str, dict[str, list]]:
    documents, log_likelihoods, about, bad = [], {}, set(), []
    logged: dict[str, list] = {"id": [], "line": [], **{field: [] for field in LOGGED_FIELDS}}
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                sample = json.loads(line)
                doc = sample["doc"]
                about.add(doc["unqover"])
                values = tuple(float(log_likelihood) for log_likelihood, _ in sample["filtered_resps"])
                bad += [(number, value) for value in values if _no_log_probability(value)][:1]
                if "hypothesis_gender" in doc and len(values) != len(NLI_LABELS):
                    raise ValueError(f"{len(values)} choices, not the three NLI labels")
                if "sentence_ids" not in doc and "hypothesis_gender" not in doc and len(values) != 2:
                    raise ValueError(f"{len(values)} choices, not the two subjects")
                if doc["id"] in log_likelihoods:
                    raise ValueError(f"the document {doc['id']!r} is logged twice")
                log_likelihoods[doc["id"]] = values
                documents.append({k: doc[k] for k in DOCUMENT_FIELDS if k in doc})
                logged["id"].append(doc["id"])
                logged["line"].append(number)
                for field in LOGGED_FIELDS:
                    logged[field].append(doc.get(field, _ABSENT))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as err:
                raise UnqoverError(
                    f"{path}, line {number}: not a logged sample of an lm-eval task from `unqover lm-eval-tasks` "
                    f"(a JSON object with doc.id, doc.unqover and the choices' filtered_resps): {err}"
                ) from None
    if not log_likelihoods:
        raise UnqoverError(f"{path} has no logged samples")
    if len(about) > 1:
        raise UnqoverError(f"{path} mixes the samples of several tasks: measure one task's file at a time")
    _check_log_likelihoods(path, bad)
    if "sentence_ids" in documents[0]:
        return sentence_log_likelihoods(documents, log_likelihoods), about.pop(), logged
    if "hypothesis_gender" in documents[0]:
        return nli_pair_scores(documents, log_likelihoods), about.pop(), logged
    return subject_scores(log_likelihoods), about.pop(), logged


#: what a logged document keeps beside its log-likelihoods: its id, an emotion or person question's sentences, an
#: NLI pair's row and hypothesis
DOCUMENT_FIELDS = ("id", "sentence_ids", "sentence_choices", "row_id", "hypothesis_gender")


def nli_pair_scores(documents: Sequence[Mapping], log_likelihoods: Mapping[str, Sequence[float]]) -> pa.Table:
    """NLI predictions (id, score_1, score_2: P_e of the female and the male hypothesis) of a prompted model's
    documents, one per row and hypothesis, whose log-likelihoods are the three label words' (entailment,
    neutral, contradiction: the label ids of :data:`NLI_LABELS`)."""
    ids = {label: i for i, label in enumerate(NLI_LABELS)}
    pairs: dict[str, dict[str, Sequence[float]]] = {}
    for doc in documents:
        pairs.setdefault(doc["row_id"], {})[doc["hypothesis_gender"]] = log_likelihoods[doc["id"]]
    lacking = [row for row, both in pairs.items() if set(both) != {"female", "male"}]
    if lacking:
        raise UnqoverError(
            f"{len(lacking):,} rows have one hypothesis logged, not both (the first: row {lacking[0]!r}): measure "
            "a whole task's samples"
        )
    rows = list(pairs)
    score = {
        g: entailment_from_logits(np.array([pairs[row][g] for row in rows], dtype=np.float64), ids)
        for g in ("female", "male")
    }
    return pa.table(
        {"id": rows, "score_1": score["female"], "score_2": score["male"]}, schema=PREDICTION_SCHEMA
    )


def _cached_samples(path: Path) -> tuple[pa.Table, str, dict[str, list]]:
    stat = path.stat()
    return _lm_eval_samples(path.resolve(), (stat.st_mtime_ns, stat.st_size))


def read_lm_eval_samples(path: Path) -> tuple[pa.Table, dict]:
    """An lm-eval ``--log_samples`` file of an ``unqover lm-eval-tasks`` task as predictions, with the provenance
    its documents carry (probe, dataset and, for a sample task, the selection), the file, and lm-eval's model from
    the results file beside it. UnQover tasks: id, S = exp(log-likelihood) of the two subjects; emotion and person
    tasks: each choice sentence's log-likelihood (``LM_EVAL_SENTENCE_SCHEMA``)."""
    table, about, _ = _cached_samples(path)
    provenance = json.loads(about)
    task = provenance.get("lm_eval_task") if isinstance(provenance, dict) else None
    provenance["lm_eval"] = {"samples": str(path.resolve()), **_lm_eval_run(path, task)}
    return table, provenance


def _lm_eval_run(samples: Path, task: object) -> dict:
    """lm-eval's model, model arguments and ``--limit`` (with the task's documents: ``original``, and those
    scored: ``effective``), from the results file written with the samples (if it is there)."""
    stamp = samples.stem.rsplit("_", 1)[-1]
    results = samples.with_name(f"results_{stamp}.json")
    try:
        written = json.loads(results.read_text())
        config = written["config"]
        counts = (written.get("n-samples") or {}).get(task)
    except (OSError, json.JSONDecodeError, KeyError, TypeError, AttributeError):
        return {}
    if not isinstance(config, dict):
        return {}
    return {
        "results": str(results.resolve()),
        "model": config.get("model"),
        "model_args": config.get("model_args"),
        # what lm-eval's hf model adds: the revision asked for, and the commit it resolved (empty offline)
        "model_revision": config.get("model_revision"),
        "model_sha": config.get("model_sha"),
        "limit": config.get("limit"),
        "documents": counts if isinstance(counts, dict) else None,
    }


def lm_eval_subset(provenance: Mapping) -> str | None:
    """Why lm-eval's logged samples are a subset of their task that matches no sampling design (its ``--limit``
    scored the task's first documents), or None when lm-eval scored the whole task (or says nothing)."""
    run = provenance.get("lm_eval")
    if not isinstance(run, Mapping) or run.get("limit") is None:
        return None
    counts = run.get("documents") if isinstance(run.get("documents"), Mapping) else {}
    original, effective = counts.get("original"), counts.get("effective")
    if isinstance(original, int) and isinstance(effective, int) and effective >= original:
        return None  # a limit at or above the task's size scores every document
    limit = run["limit"]
    limit = int(limit) if isinstance(limit, float) and limit.is_integer() and limit >= 1 else limit
    of = (
        f"the first {effective:,} of the task's {original:,} documents"
        if isinstance(original, int) and isinstance(effective, int)
        else "the task's first documents"
    )
    return f"lm-eval's --limit {limit} scored {of}"


def _differing(values: list, expected: pa.ChunkedArray | None) -> np.ndarray:
    """Positions where ``values`` (a field of logged documents) differ from ``expected`` (the rows' values):
    compared as Arrow arrays where both are plain scalars of one type, else value by value."""
    if expected is None:
        return np.arange(len(values))
    if not pa.types.is_nested(expected.type) and _ABSENT not in values:
        try:
            same = pc.equal(pa.array(values).cast(expected.type), expected)
            return np.flatnonzero(~pc.fill_null(same, False).to_numpy(zero_copy_only=False))
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            pass  # values of another type: compared one by one below
    return np.flatnonzero([a != b for a, b in zip(values, expected.to_pylist(), strict=True)])


def logged_documents(path: Path) -> dict[str, list]:
    """The logged documents of an lm-eval samples file, as columns: ``id``, ``line`` (in the file) and each of
    ``LOGGED_FIELDS`` (a field a document lacks holds a marker that equals no value)."""
    return _cached_samples(path)[2]


def check_logged_documents(
    path: Path, logged: Mapping[str, list], rows: pa.Table, fields: Sequence[str]
) -> None:
    """Refuse logged documents that contradict the row of their id in ``rows`` (the dataset the samples are
    measured against) in any of ``fields``: edited or shuffled ids would give one row's scores to another row.
    Ids that ``rows`` lacks are left to the caller (its error names them)."""
    position = match_ids(pa.chunked_array([pa.array(logged["id"], pa.string())]), rows["id"])
    known = np.flatnonzero(position >= 0)
    first, differ = None, []
    for field in fields:
        values = [logged[field][i] for i in known]
        expected = rows[field].take(position[known]) if field in rows.column_names else None
        wrong = _differing(values, expected)
        if not len(wrong):
            continue
        index = int(known[wrong[0]])
        if first is None or index < first:
            first, differ = index, [field]
        elif index == first:
            differ.append(field)
    if first is None:
        return
    raise UnqoverError(
        f"{path}, line {logged['line'][first]}: the logged document {logged['id'][first]!r} does not match the "
        f"dataset row of its id (it differs in {', '.join(differ)}): its scores would be "
        "measured as another row's; measure the samples file lm-eval wrote, unedited, against its task's dataset"
    )
