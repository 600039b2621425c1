"""A plan knows its rows' fingerprint from their hashes alone (``ProbePlan.fingerprint``): it is the fingerprint of
the ids the rows carry, so a build records it before writing and makes every row once."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
import yaml

from unqover.generate.custom import custom_configs, custom_plan
from unqover.generate.ids import dataset_fingerprint, hashes_fingerprint, hex_ids
from unqover.generate.unqover import BIAS_CLASSES, make_plan
from unqover.lexicon.custom import read_probe_text

#: a custom probe of two clusters (2 x 3 subjects), two attributes and one template: 48 rows a config
PETS = {
    "name": "pets",
    "subjects": {"cats": ["Tom", "Felix"], "dogs": ["Rex", "Buddy", "Max"]},
    "attributes": [
        {"positive": "was lazy", "negated": "was never lazy"},
        {"positive": "ate", "negated": "fasted"},
    ],
    "templates": [{"context": "{subject_1} sat next to {subject_2}.", "question": "Who {attribute}?"}],
}


def _ids(plan, **batching) -> pa.ChunkedArray:
    return pa.chunked_array([batch.column("id") for batch in plan.batches(**batching)], type=pa.string())


@pytest.mark.parametrize("config", list(BIAS_CLASSES["religion"]))
def test_a_plans_fingerprint_is_that_of_its_rows_ids(word_lists, config):
    plan = make_plan(word_lists, "religion", config)
    assert plan.fingerprint() == dataset_fingerprint(_ids(plan))


@pytest.mark.parametrize("config", ["qa", "mlm"])
def test_a_custom_plans_fingerprint_is_that_of_its_rows_ids(config):
    probe = read_probe_text(yaml.safe_dump(PETS), "pets.yaml")
    assert config in custom_configs(probe)
    plan = custom_plan(probe, config)
    ids = _ids(plan, pairs_per_batch=5)  # batches of another size than the fingerprint's: the same rows
    assert len(ids) == 2 * 3 * 2 * 4
    assert plan.fingerprint() == dataset_fingerprint(ids)


def test_the_fingerprint_of_hashes_is_that_of_their_hex_ids():
    hashes = np.random.default_rng(0).integers(0, 2**64, size=1000, dtype=np.uint64)
    expected = dataset_fingerprint(hex_ids(hashes))
    assert hashes_fingerprint([hashes]) == expected
    assert hashes_fingerprint([hashes[:1], hashes[1:400], hashes[400:]]) == expected  # chunks in row order
    assert hashes_fingerprint([hashes[400:], hashes[:400]]) != expected  # another order, other rows
    assert hashes_fingerprint([]) == dataset_fingerprint(pa.array([], pa.string()))
