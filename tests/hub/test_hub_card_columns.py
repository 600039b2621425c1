"""The column tables of the dataset cards are written from the rows' schemas: every column, its Arrow type, and
a meaning for each, so that a column added to the rows cannot be left out of (or misnamed in) a card."""

from __future__ import annotations

import pyarrow as pa
import pytest

from unqover.generate.eec import QUESTION_SCHEMA, SENTENCE_SCHEMA
from unqover.generate.eec_person import PERSON_QUESTION_SCHEMA
from unqover.generate.nli import NLI_ROW_SCHEMA
from unqover.generate.unqover import ROW_SCHEMA
from unqover.hub.card import COLUMN_MEANINGS, column_table
from unqover.hub.custom_card import CUSTOM_COLUMN_MEANINGS
from unqover.hub.eec_dataset import (
    PERSON_QUESTION_COLUMN_MEANINGS,
    QUESTION_COLUMN_MEANINGS,
    SENTENCE_COLUMN_MEANINGS,
)
from unqover.hub.nli_card import NLI_COLUMN_MEANINGS

TABLES = [
    (ROW_SCHEMA, COLUMN_MEANINGS),
    (ROW_SCHEMA, CUSTOM_COLUMN_MEANINGS),
    (NLI_ROW_SCHEMA, NLI_COLUMN_MEANINGS),
    (SENTENCE_SCHEMA, SENTENCE_COLUMN_MEANINGS),
    (QUESTION_SCHEMA, QUESTION_COLUMN_MEANINGS),
    (PERSON_QUESTION_SCHEMA, PERSON_QUESTION_COLUMN_MEANINGS),
]


@pytest.mark.parametrize(("schema", "meanings"), TABLES)
def test_every_column_of_the_rows_has_a_row_with_its_type(schema, meanings):
    lines = column_table(schema, meanings).split("\n")
    assert [line.split(" | ")[0] for line in lines] == [f"| `{name}`" for name in schema.names]
    assert all(line.endswith(f" | {meanings[f.name]} |") for line, f in zip(lines, schema, strict=True))


def test_types_are_the_schemas():
    schema = pa.schema([("n", pa.int32()), ("ok", pa.bool_()), ("spans", pa.list_(pa.int32()))])
    meanings = {"n": "a count", "ok": "a flag", "spans": "offsets"}
    assert column_table(schema, meanings) == (
        "| `n` | int32 | a count |\n| `ok` | bool | a flag |\n| `spans` | list<int32> | offsets |"
    )
    assert column_table(schema, meanings, code_lists=True).endswith("| `spans` | `list<int32>` | offsets |")


@pytest.mark.parametrize(
    "meanings",
    [{"n": "a count"}, {"ok": "a flag", "n": "a count"}, {"n": "a count", "ok": "a flag", "x": "more"}],
    ids=["one left out", "out of order", "one too many"],
)
def test_meanings_must_name_the_schemas_columns_in_order(meanings):
    with pytest.raises(ValueError, match="the meanings name"):
        column_table(pa.schema([("n", pa.int32()), ("ok", pa.bool_())]), meanings)
