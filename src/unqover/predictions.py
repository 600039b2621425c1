"""The predictions file: one Parquet file with ``id``, ``score_1``, ``score_2`` and the run's provenance.

Provenance (model id and revision, dtype, batch size, library versions, the dataset it scored: source, config,
split, fingerprint) is JSON in the Parquet schema metadata under the key ``unqover``, so it travels with the
scores. Written atomically: a crash never leaves a truncated file under the final name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from unqover.errors import UnqoverError
from unqover.files import atomic_path
from unqover.generate.ids import count_distinct

PREDICTION_SCHEMA = pa.schema([("id", pa.string()), ("score_1", pa.float64()), ("score_2", pa.float64())])
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
        table = pq.read_table(path)
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
