"""What a probe is: one definition object per probe, and the options every run shares.

A definition says where its rows come from, what a quick run keeps, which model families and scorers it takes,
which options it accepts, which measure it calls and how its results render. ``unqover.probes.job`` carries any
definition through load -> select -> score -> predictions -> measure -> results -> reports; the registry
(``unqover.probes.registry``) is the only place that names them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from unqover.errors import UnqoverError


@dataclass(frozen=True)
class QuickRunSize:
    """What ``--limit N`` counts for a probe (its unit), about how many model inputs one unit makes, and the
    bounds the Space offers (``default`` is large enough for every headline number where the bound allows)."""

    unit: str
    default: int
    maximum: int
    rows_each: int
    detail: str = ""  # how the sample is drawn, in a few words

    @property
    def label(self) -> str:
        """``sample: groups (1 to 2,000; 4 inputs each)``."""
        return f"sample: {self.unit} (1 to {self.maximum:,}" + (f"; {self.detail})" if self.detail else ")")


@dataclass
class RunOptions:
    """What every probe run takes (the CLI's shared options); each probe's own options go in ``settings``."""

    dataset: str | None = None  # a dataset folder or Hub id (default: the probe's own fallbacks)
    config: str | None = None  # dataset config (default: the probe's, by model family)
    output: Path | None = None
    batch_size: int | None = None
    device: str = "auto"
    dtype: str = "auto"
    shard: tuple[int, int] | None = None
    limit: int | None = None  # a quick run: what N means is the probe's (``limit_meaning``)
    seed: int = 0
    resamples: int = 1000
    progress: bool = True
    revision: str | None = None
    token: str | None = None
    allow_pickle: bool = False
    chunk_rows: int = 8192
    checkpoint_seconds: float = 60.0  # a chunk being scored is also saved this often (a kill loses <= this)
    started: float | None = None  # time.monotonic() when the command started: --max-time counts from it
    settings: dict[str, Any] = field(default_factory=dict)  # the probe's own options, checked by the probe


@dataclass
class Loaded:
    """The rows a run scores and where they came from."""

    rows: pa.Table  # what the scorer sees (e.g. the emotion probe's choice sentences)
    dataset: dict  # source, config, split (and how to rebuild it when generated)
    population: pa.Table | None = None  # a quick run's whole dataset, when the measure estimates it
    selection: dict | None = None  # what a quick run kept
    context: dict = field(default_factory=dict)  # anything the measure needs besides rows and scores


@dataclass
class Measured:
    """What a probe's measure gives: the result, extra keys for results.json and extra tables to write."""

    result: Any  # an object with to_dict()
    extra: dict = field(default_factory=dict)
    tables: dict[str, pa.Table] = field(default_factory=dict)  # file name -> table (written with provenance)


@dataclass
class ProbeRun:
    """A finished run: where it is, what it measured (an object with ``to_dict``) and its provenance."""

    folder: Path
    result: Any
    provenance: dict
    probe: str = "unqover"


def selection_suffix(selection: dict | None) -> str:
    """The default run folder's mark of a quick run's selection (``-limit200-seed0``), so that runs of other
    sizes or seeds get folders of their own; "" for a full run with seed 0."""
    selection = selection or {}
    parts = []
    for key in ("limit", "sample", "precision"):
        value = selection.get(key)
        if value is not None:
            parts.append(f"{key}{value:g}" if isinstance(value, float) else f"{key}{value}")
    seed = selection.get("seed")
    if seed is not None and (parts or seed != 0):
        parts.append(f"seed{seed}")
    return "".join(f"-{part}" for part in parts)


def load_for_run(loader: Callable, model_id: str, run: RunOptions, **extra):
    """(placement, model): ``loader`` (``load_model``, ``load_nli_model``) with the run's options, on this
    process's device (its own GPU under ``accelerate launch``)."""
    from unqover.probe.placement import load_placed

    return load_placed(
        loader,
        model_id,
        shard=run.shard,
        device=run.device,
        revision=run.revision,
        dtype=run.dtype,
        token=run.token,
        allow_pickle=run.allow_pickle,
        **extra,
    )


class ProbeDefinition:
    """The base of every probe definition; subclasses fill in the hooks the job runner calls."""

    name: str = ""
    title: str = ""
    families: tuple[str, ...] = ()  # model families this probe scores
    limit_meaning: str = ""  # what --limit N keeps
    quick_run: QuickRunSize = QuickRunSize("rows", 100, 1000, 1)
    settings: Mapping[str, Any] = {}  # this probe's own options and their defaults

    def check_settings(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """The probe's settings: defaults filled in; an option another probe owns is refused here."""
        unknown = sorted(k for k, v in given.items() if v is not None and k not in self.settings)
        if unknown:
            names = ", ".join("--" + k.replace("_", "-") for k in unknown)
            raise UnqoverError(
                f"{names} do(es) not apply to the {self.name} probe (its quick run: --limit N keeps {self.limit_meaning})"
            )
        return {
            k: (given[k] if given.get(k) is not None else default) for k, default in self.settings.items()
        }

    def load_model(self, model_id: str, run: RunOptions, settings: dict):
        """(placement, loaded model) for this process."""
        raise NotImplementedError

    def load(self, run: RunOptions, settings: dict, model) -> Loaded:
        """The rows to score (after a quick run's selection) and where they came from."""
        raise NotImplementedError

    def score(self, loaded: Loaded, model, folder: Path, identity: dict, run: RunOptions, settings: dict, placement,
              claim_and_score: Callable):  # fmt: skip
        """(loaded, main scores, extra scores by name), or None on a process that only scored its shard.

        The default claims the folder and scores ``loaded.rows`` with :meth:`scorers` (``claim_and_score`` is the
        job runner's); a probe that scores in rounds overrides this.
        """
        scores, extra = claim_and_score(
            loaded.rows, self.scorers(model, settings), folder, identity, run, placement
        )
        return None if scores is None else (loaded, scores, extra)

    def scorers(self, model, settings: dict) -> dict[str, Any]:
        """Runner scorers by name: "" is the main one (``predictions.parquet``), others go to ``<name>/``."""
        raise NotImplementedError

    def scoring(self, model, settings: dict) -> dict | str:
        """How the rows are scored, for run.json."""
        return "default"

    def output_name(self, loaded: Loaded, settings: dict) -> str:
        """The default run folder's last part."""
        return f"{self.name}-{loaded.dataset.get('config')}" + selection_suffix(loaded.selection)

    def predictions(self, loaded: Loaded, scores: pa.Table) -> pa.Table:
        """What ``predictions.parquet`` holds (default: id, score_1, score_2)."""
        return scores

    def measure(
        self, loaded: Loaded, scores: pa.Table, extra: dict[str, pa.Table], run: RunOptions, settings: dict
    ) -> Measured:
        """The measures of the scored rows."""
        raise NotImplementedError

    def reports(self, results: dict) -> dict[str, str]:
        """File name -> text of the reports written beside results.json."""
        raise NotImplementedError

    def quick_run_line(self, result: dict) -> str | None:
        """What a quick run's numbers come from, in words (None for a full run)."""
        return None

    def highlights(self, results: dict) -> list[dict]:
        """The rows worth a table beside the report (e.g. the most biased occupations), as records."""
        return []

    def summary(self, result, top: int = 10) -> str:
        """The text printed at the end of a run or by ``unqover measure``."""
        raise NotImplementedError

    def headline(self, results: dict) -> dict[str, tuple[float | None, list | None]]:
        """The numbers ``unqover compare`` sets side by side: name -> (value, interval)."""
        raise NotImplementedError

    def measure_file(self, predictions: Path, run: RunOptions, **options) -> tuple[Any, dict]:
        """``unqover measure``: the result of a predictions file against its dataset, and its provenance
        (``run.dataset``/``run.config`` and a ``split`` option override what the file records; the other
        ``options`` go to the measure)."""
        raise UnqoverError(f"`unqover measure` does not read {self.name} predictions")
