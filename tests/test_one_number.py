"""One number, one meaning: for the same predictions, every surface shows each headline number with the same value,
interval and words (issue 29, item 7).

The first part is the ``unqover_bias`` evaluate module on a sample's rows against ``unqover measure`` on the same
predictions; the generated part below runs every probe of the registry once and reads each headline number off
every surface.
"""

from __future__ import annotations

import json
from pathlib import Path

import evaluate
import numpy as np
import pyarrow as pa
import pytest

from unqover.cli import main
from unqover.generate.unqover import make_plan
from unqover.predictions import write_predictions
from unqover.probe.sampling import DESIGN, select_groups
from unqover.probes.unqover_rows import ROW_COLUMNS

MODULES = Path(__file__).resolve().parents[1] / "metrics"


def plain(value):
    """JSON-equal form (NaN and tuples as JSON writes them)."""
    return json.loads(json.dumps(value))


@pytest.fixture(scope="module")
def religion_rows(word_lists) -> pa.Table:
    return pa.Table.from_batches(list(make_plan(word_lists, "religion", "qa").batches()))


@pytest.fixture(scope="module")
def religion_sample(religion_rows, upstream_word_lists_path, tmp_path_factory):
    """A seeded design sample of 200 religion groups with random scores, in a predictions file that records its
    rows and its selection the way `unqover sample` and a quick run do (generated from the word lists)."""
    kept = select_groups(religion_rows, limit=200, seed=4)
    rng = np.random.default_rng(11)
    scores = pa.table(
        {"id": kept["id"], "score_1": rng.random(kept.num_rows), "score_2": rng.random(kept.num_rows)}
    )
    root = str(upstream_word_lists_path.resolve())
    path = tmp_path_factory.mktemp("sample") / "predictions.parquet"
    dataset = {
        "source": f"generated from {root}",
        "generator": {"bias": "religion", "word_lists": root},
        "bias": "religion",
        "config": "qa",
        "split": "test",
    }
    write_predictions(
        path, scores, {"probe": "religion", "dataset": dataset, "selection": {"design": DESIGN, "seed": 4}}
    )
    return path, kept, scores


def test_the_module_on_a_sample_gives_what_unqover_measure_gives(religion_rows, religion_sample, tmp_path):
    """The known defect: the module measured a sample's rows as a whole set (η 0.90 beside an interval for its
    bias-corrected value) where `unqover measure` declines η. With ``population`` it gives the same values,
    intervals and declined reasons."""
    path, kept, scores = religion_sample
    output = tmp_path / "measured.json"
    assert main(["measure", str(path), "--resamples", "30", "--output", str(output)]) == 0
    measured = json.loads(output.read_text())["result"]
    assert measured["sample"]["groups"] == 200 and measured["declined"]  # μ or η declined on 200 groups
    module = evaluate.load(str(MODULES / "unqover_bias"))
    references = kept.select(ROW_COLUMNS).to_pylist()
    predictions = np.stack([scores["score_1"].to_numpy(), scores["score_2"].to_numpy()], axis=1).tolist()
    got = module.compute(
        predictions=predictions, references=references, population=religion_rows, seed=4, n_resamples=30
    )
    for key in ("mu", "eta", "positional_error", "attributive_error", "intervals", "interval_estimates"):
        assert plain(got[key]) == plain(measured[key]), key
    assert plain(got["declined"]) == plain(measured["declined"])
    assert plain(got["sample"]) == plain(measured["sample"])
    for name, (low, high) in got["intervals"].items():  # each interval is for the value beside it
        assert low <= got["interval_estimates"][name] <= high and got["interval_estimates"][name] == got[name]


def test_the_module_population_needs_the_ids(religion_rows, religion_sample):
    _, kept, _ = religion_sample
    module = evaluate.load(str(MODULES / "unqover_bias"))
    references = kept.select(ROW_COLUMNS).drop_columns(["id"]).to_pylist()
    with pytest.raises(ValueError, match=r"^with population, each reference needs its id"):
        module.compute(
            predictions=[[0.5, 0.5]] * kept.num_rows, references=references, population=religion_rows
        )
