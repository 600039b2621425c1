"""A toy probe: one definition module, registered by a test, that goes through every surface.

Rows are words; the "model" ``toy:NAME``, loaded by the toy engine, scores a word by its letters (score_1: share of vowels, score_2: share of
consonants), so the toy measure, "vowel lead" (mean of score_1 − score_2), is known exactly. The definition says
everything a surface needs: its options (``--toy-vowels``), its measure option (``--toy-scale``), its dataset
(``toy-words``, built by its ``builder`` part for ``build-datasets``), its results-table column, and (its
``results`` part) its headline numbers and its reports.
Nothing else in the package names it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from unqover.errors import UnqoverError
from unqover.format import fmt
from unqover.options import Option
from unqover.probes.base import Loaded, Measured, Part, ProbeDefinition, QuickRunSize, RunOptions
from unqover.probes.dataset_builder import DatasetBuilder
from unqover.probes.readings import ProbeResults
from unqover.scoring.engines.base import Engine
from unqover.scoring.requests import EngineRequest

NAME = "toy-length"
DATASET = "toy-words"
WORDS = ("apple", "banana", "cherry", "kiwi", "strawberry", "fig", "grape", "melon", "plum", "quince")


@dataclass
class ToyResult:
    vowel_lead: float
    interval: list[float]
    count: int
    warnings: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "vowel_lead": self.vowel_lead,
            "intervals": {"vowel_lead": self.interval},
            "count": self.count,
        }


def toy_measure(scores: pa.Table, scale: float = 1.0) -> ToyResult:
    lead = (scores["score_1"].to_numpy() - scores["score_2"].to_numpy()) * scale
    half = 2 * lead.std(ddof=1) / np.sqrt(len(lead)) if len(lead) > 1 else 0.0
    return ToyResult(float(lead.mean()), [float(lead.mean() - half), float(lead.mean() + half)], len(lead))


#: what the toy engine answers: a word's share of vowels and of consonants
TOY_REQUESTS = "toy-vowels"


@dataclass
class ToyModel:
    model_id: str
    vowels: str
    family: str = "toy"
    revision: str | None = None
    dtype: str = "float64"
    engine: str = "toy"
    capabilities: tuple[str, ...] = (TOY_REQUESTS,)

    def provenance(self) -> dict:
        return {"id": self.model_id, "family": self.family, "vowels": self.vowels}


class ToyScorer:
    def __init__(self, vowels: str) -> None:
        self.vowels = vowels

    def input_key(self, rows: pa.Table) -> pa.Array:
        return rows["word"].combine_chunks() if isinstance(rows["word"], pa.ChunkedArray) else rows["word"]

    def length_key(self, rows: pa.Table) -> np.ndarray:
        return np.array([len(w) for w in rows["word"].to_pylist()], dtype=np.int64)

    def score(self, rows: pa.Table) -> np.ndarray:
        words = rows["word"].to_pylist()
        share = np.array([sum(c in self.vowels for c in w) / len(w) for w in words])
        return np.stack([share, 1 - share], axis=1)


class ToyEngine(Engine):
    """The toy models ``toy:NAME``, registered beside the probe by a test (one line of the engine registry)."""

    name = "toy"
    capabilities = (TOY_REQUESTS,)

    def serves(self, model_id: str) -> bool:
        return model_id.startswith("toy:")

    def load(self, request: EngineRequest, wants):
        from unqover.scoring.placement import place

        return place(request.shard, "cpu")[0], ToyModel(request.model_id, request.load["vowels"])

    def scorer(self, model, capability: str, **how):
        return ToyScorer(model.vowels)


class ToyProbeResults(ProbeResults):
    """The toy probe's results: its reports, summary, headline, table row and measure of a predictions file."""

    def reports(self, results: dict) -> dict[str, str]:
        lead = fmt(results["result"]["vowel_lead"])
        return {
            "report.md": f"# Toy probe\n\nvowel lead: {lead}\n",
            "report.html": f"<html><body><h1>Toy probe</h1><p>vowel lead: {lead}</p></body></html>",
        }

    def summary(self, result, top: int = 10) -> str:
        return f"toy vowel lead over {result.count} words"

    def headline(self, results: dict) -> dict:
        result = results["result"]
        return {"vowel lead": (result.get("vowel_lead"), (result.get("intervals") or {}).get("vowel_lead"))}

    def table_row(self, results) -> dict:
        return {"vowel lead": results["result"].get("vowel_lead")}

    def measure_file(self, predictions: Path, run: RunOptions, **options):
        from unqover.predictions import read_predictions

        scores, provenance = read_predictions(predictions)
        return toy_measure(scores, scale=options["toy_scale"]), provenance


class ToyBuilder(DatasetBuilder):
    """The toy probe's dataset: its words in one config."""

    def check_dataset_configs(self, name: str, configs) -> list[str]:
        if configs and list(configs) != ["words"]:
            raise UnqoverError(f"{name} has the config words only")
        return ["words"]

    def build_dataset(self, name: str, output: Path, settings: dict):
        from unqover.hub.folder import BuiltDataset

        started = time.perf_counter()
        folder = output / name / "data" / "words"
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(toy_rows(), folder / "test-00000-of-00001.parquet")
        card = (
            "---\nconfigs:\n- config_name: words\n  data_files:\n  - split: test\n"
            "    path: data/words/test-*.parquet\n---\n# toy words\n"
        )
        (output / name / "README.md").write_text(card, encoding="utf-8")
        return BuiltDataset(output / name, {"words": len(WORDS)}, time.perf_counter() - started)


class ToyProbe(ProbeDefinition):
    name = NAME
    title = "Toy vowel probe"
    families = ("toy",)
    wants = (TOY_REQUESTS,)
    limit_meaning = "the first N words"
    quick_run = QuickRunSize("words", 5, 10, 1)
    options = (Option("--toy-vowels", "the letters the toy model counts as vowels", default="aeiou"),)
    measure_options = (Option("--toy-scale", "multiply the vowel lead by this", type=float, default=1.0),)
    datasets = (DATASET,)
    table_columns = ("vowel lead",)
    results = Part(ToyProbeResults)
    builder = Part(ToyBuilder)

    def engine_load(self, engine, request, run: RunOptions, settings: dict) -> dict:
        if engine.name != "toy":
            raise UnqoverError(f"the toy probe scores toy:NAME models, not {request.model_id!r}")
        return {"vowels": settings["toy_vowels"]}

    def load(self, run: RunOptions, settings: dict, model) -> Loaded:
        if run.dataset:
            from unqover.hub.load import load_rows

            rows = load_rows(run.dataset, "words")
            source = str(Path(run.dataset).resolve())
        else:
            rows, source = toy_rows(), "generated"
        if run.limit is not None:
            rows = rows.slice(0, run.limit)
        return Loaded(
            rows, {"source": source, "config": "words", "split": "test"}, None, {"limit": run.limit}
        )

    def scorers(self, model, settings: dict, loaded=None) -> dict:
        from unqover.scoring.engines import scorer_for

        return {"": scorer_for(model, self.wants)}

    def measure_run(self, loaded, scores, extra, run, settings) -> Measured:
        return Measured(toy_measure(scores))


def toy_rows() -> pa.Table:
    return pa.table({"id": [f"w{i:02d}" for i in range(len(WORDS))], "word": list(WORDS)})
