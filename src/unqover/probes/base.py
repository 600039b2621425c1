"""What a probe is: one definition object per probe, and the options every run shares.

A definition says where its rows come from, what a quick run keeps, which model families and scorers it takes,
which options it accepts and which measure it calls; its parts say how its results read
(:mod:`unqover.probes.readings`) and how its datasets are built (:mod:`unqover.probes.dataset_builder`). ``unqover.jobs.run`` carries any
definition through load -> select -> score -> predictions -> measure -> results -> reports; the registry
(``unqover.probes.registry``) is the only place that names them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from unqover.errors import UnqoverError
from unqover.options import Option

if TYPE_CHECKING:  # the definitions are read before any run starts: nothing heavy is imported here
    import pyarrow as pa

    from unqover.measure.sampled import PopulationCounts


@dataclass(frozen=True)
class QuickRunSize:
    """What ``--limit N`` counts for a probe (its unit), about how many model inputs one unit makes, and the
    bounds the Space offers (``default`` is large enough for every headline number where the bound allows)."""

    unit: str
    default: int
    maximum: int
    rows_each: int
    detail: str = ""  # how the sample is drawn, in a few words
    #: the options that turn a full run into a quick one, for a run too large for its machine (default: --limit)
    options: str | None = None

    @property
    def hint(self) -> str:
        """:attr:`options`, else ``--limit N (unit)`` with the default size."""
        return self.options or f"--limit {self.default} ({self.unit})"

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
    quick: bool = (
        False  # ``--quick``: each probe's own default quick run (``quick_run.default`` as its limit)
    )
    seed: int = 0
    resamples: int = 1000
    progress: bool = True
    revision: str | None = None
    token: str | None = None
    allow_pickle: bool = False
    adapter: str | None = None  # a PEFT adapter (folder or Hub id) merged into the model after it loads
    model_args: dict[str, Any] = field(default_factory=dict)  # more keywords for the model's from_pretrained
    gguf_file: str | None = None  # the GGUF file inside a model folder or Hub repo (``--gguf-file``)
    chunk_rows: int = 8192
    checkpoint_seconds: float = 60.0  # a chunk being scored is also saved this often (a kill loses <= this)
    started: float | None = None  # time.monotonic() when the command started: --max-time counts from it
    threads: int | None = None  # torch intra-op threads to score with (None: its default); a sweep sets it
    engine: str = (
        "auto"  # the engine that runs the model (``unqover.scoring.engines``; auto: the one serving it)
    )
    engine_options: dict[str, Any] = field(default_factory=dict)  # the engine's own options (``--base-url``)
    settings: dict[str, Any] = field(default_factory=dict)  # the probe's own options, checked by the probe


@dataclass
class Loaded:
    """The rows a run scores and where they came from."""

    rows: pa.Table  # what the scorer sees (e.g. the emotion probe's choice sentences)
    dataset: dict  # source, config, split (and how to rebuild it when generated)
    # a quick run's whole dataset, when the measure estimates it: its rows, or (a large generated probe) its counts
    population: pa.Table | PopulationCounts | None = None
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


@dataclass(frozen=True)
class Ranking:
    """What ``unqover leaderboard`` asks a probe to rank (``probe.results.leaderboard_numbers``): the runs'
    results, their files and names, the headline number to rank by, and the confidence of each run's interval
    (``each``) and of each pair's shift (``pairs``), simultaneous over all of them."""

    runs: Sequence[dict]
    paths: Sequence[Path]
    names: Sequence[str]
    metric: str
    each: float
    pairs: float


@dataclass(frozen=True)
class ComparedRuns:
    """What ``unqover compare`` asks a probe to set side by side (``probe.results.compare``): two runs'
    results dicts (provenance and result), shifts B − A, and their names; ``paths`` are the run folders or results
    files they were read from (None where the caller has none: no predictions are read; ``no_shifts`` then says
    why, where a probe's shifts could have intervals), ``top`` the rows per table."""

    a: dict
    b: dict
    names: tuple[str, str]
    paths: tuple[Path, Path] | None = None
    top: int = 10
    no_shifts: str | None = None


#: A probe's leaderboard numbers: each run's (value, interval, groups), and the shift of every pair (i, j), i < j.
LeaderboardNumbers = tuple[list[dict], dict[tuple[int, int], dict]]


@dataclass
class Comparison:
    """Two runs of one probe set side by side (``unqover compare``, the Space): the plain data (written as JSON),
    the text printed on the terminal and the Markdown (written as FILE.md, shown by the Space)."""

    data: dict
    text: str
    markdown: str


def output_name(probe: ProbeDefinition, loaded: Loaded, settings: dict) -> str:
    """The default run folder's last part: the probe's ``output_stem``, then the mark of a quick run's selection."""
    return probe.output_stem(loaded, settings) + selection_suffix(loaded.selection)


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


def score_for_run(rows: pa.Table, scorer, folder: Path, run: RunOptions, **keywords) -> None:
    """Score ``rows`` with ``scorer`` into ``folder`` (:func:`unqover.scoring.runner.run_shard`) in the run's
    batches, chunks and checkpoints, with its progress bar unless ``keywords`` say otherwise (``keywords``:
    run_shard's others, such as ``shard`` and ``speed``)."""
    from unqover.scoring.runner import run_shard

    keywords.setdefault("progress", run.progress)
    run_shard(
        rows,
        scorer,
        folder,
        batch_size=run.batch_size,
        chunk_rows=run.chunk_rows,
        checkpoint_seconds=run.checkpoint_seconds,
        **keywords,
    )


@dataclass(frozen=True)
class ReportWords:
    """Where a probe's words are: its report module (imported when first asked) and the names of the functions
    there that write its Markdown report, its HTML page and its summary from a results dict; the module's
    ``quick_run_line`` words a quick run's scope."""

    module: str
    markdown: str
    html: str
    summary: str

    def __call__(self, name: str) -> Callable:
        return getattr(importlib.import_module(self.module), name)


class Part:
    """One of a definition's parts, declared on its class (``results = Part(UnqoverResults)``): each definition
    gets its own part object, made on first use and bound to it (the part reads the definition's name, options and
    data through its ``probe``)."""

    def __init__(self, kind: type) -> None:
        self.kind = kind

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, probe: object, owner: type | None = None) -> Any:
        if probe is None:
            return self
        made = probe.__dict__[self.name] = self.kind(probe)  # kept: the next access finds it in the instance
        return made


class ProbeDefinition:
    """The base of every probe definition; subclasses fill in the hooks the job runner calls.

    A definition module imports only what describing the probe needs (its options, datasets, table columns);
    its hooks import the heavy code (models, measures, reports) when a run starts, so that the command line
    answers at once. Besides its hooks, a definition class declares its two parts with :class:`Part`:
    ``results`` (a :class:`unqover.probes.readings.ProbeResults`: what its finished runs' results and predictions
    mean: reports, headline numbers, comparisons, leaderboards, measuring a predictions file) and ``builder`` (a
    :class:`unqover.probes.dataset_builder.DatasetBuilder`: building and recognising its dataset folders).
    """

    name: str = ""
    title: str = ""
    families: tuple[str, ...] = ()  # model families this probe scores (in words: ``unqover probe --help``)
    #: the requests this probe can ask a model (``unqover.scoring.requests``), in its order of preference: an
    #: engine that answers one of them runs its model
    wants: tuple[str, ...] = ()
    limit_meaning: str = ""  # what --limit N keeps
    quick_run: QuickRunSize = QuickRunSize("rows", 100, 1000, 1)
    #: the probes of one group share a name for it (the four UnQover bias classes: "unqover"), else None
    group: str | None = None
    #: this probe's own ``unqover probe`` options (the shared ones are ``unqover.cli``'s); their defaults are
    #: the probe's settings
    options: tuple[Option, ...] = ()
    #: this probe's own ``unqover measure`` options
    measure_options: tuple[Option, ...] = ()
    #: the dataset folders ``unqover build-datasets`` makes for this probe, and the options that building takes
    datasets: tuple[str, ...] = ()
    dataset_options: tuple[Option, ...] = ()
    built_by_default: bool = False  # built when ``build-datasets`` is given no names
    #: the columns this probe's runs fill in the Space's results table (see ``results.table_row``)
    table_columns: tuple[str, ...] = ()
    #: the Space offers this probe's dataset rows one at a time (a model's answers to one question)
    explorable: bool = False
    #: why ``unqover lm-eval-tasks`` writes no lm-evaluation-harness tasks for this probe (None: it does)
    lm_eval_unfit: str | None = "its scores are not log-likelihoods of choices that lm-eval's requests give"
    #: how its lm-eval tasks ask: "subjects" (which subject answers a question) or "sentences" (which filled-in
    #: sentence is likelier)
    lm_eval_kind: str | None = None
    #: the evaluate module (``metrics/<name>/``) that measures this probe's rows and scores, if one does (a probe
    #: may use one of its configs)
    evaluate_module: str | None = None
    #: the ``results.headline`` number ``unqover leaderboard`` ranks by when no ``--metric`` is given (None: its runs
    #: are not ranked)
    leaderboard_metric: str | None = None
    #: how ``results.leaderboard_numbers`` makes its intervals and pairs, in the leaderboard's ``method`` (None:
    #: ``unqover.measure.leaderboard.METHOD``, the UnQover probes')
    leaderboard_method: str | None = None
    #: whether its leaderboards rank quick runs (estimates from a sample), or full runs only
    leaderboard_ranks_samples: bool = True
    #: the card titles (``pretty_name``) of its datasets as versions before the ``unqover:`` card entry wrote
    #: them: how such a folder is recognised (``unqover.probes.row_identity``)
    legacy_card_names: tuple[str, ...] = ()

    @property
    def settings(self) -> dict[str, Any]:
        """This probe's own options and their defaults."""
        return {option.dest: option.default for option in self.options}

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

    def engine_load(self, engine, request, run: RunOptions, settings: dict[str, Any]) -> dict[str, Any]:
        """What this probe passes to the engine's load (``EngineRequest.load``: an NLI classifier's label map),
        after refusing, before anything loads, an ``engine`` (:class:`unqover.scoring.engines.base.Engine`) or a
        model it cannot use with these settings. Default: nothing."""
        return {}

    def check_source(self, run: RunOptions, settings: dict[str, Any]) -> None:
        """Refuse, before any model is loaded, a run whose rows cannot be found (no local build, the Hub
        unreachable, nothing to generate them from); default: nothing to check (the rows come with the probe)."""

    def check_config(self, run: RunOptions, settings: dict[str, Any]) -> None:
        """Refuse, before any model is loaded, a ``--config`` that the probe's own rows do not have (without
        ``--dataset``): one its datasets do not have (``builder.check_dataset_configs``). The configs of a ``--dataset``
        are its own: the job runner checks a local folder's card (``unqover.hub.load.check_local_dataset``), a Hub
        dataset is checked as it loads."""
        if run.config is not None and run.dataset is None and self.datasets:
            self.builder.check_dataset_configs(self.datasets[0], [run.config])

    def quick_run_advice(self, model_id: str, loaded: Loaded, settings: dict, seconds_per_row: float) -> str:
        """What a large run on the CPU offers instead (after "for a quick estimate of the same numbers"); the
        default: add the options of :attr:`quick_run`'s ``hint``."""
        return f"add {self.quick_run.hint}"

    def limit_note(
        self, loaded: Loaded, run: RunOptions, settings: dict, option: str = "--limit", shown: str = '"—"'
    ) -> str | None:
        """One line before scoring when ``--limit`` is too small for the headline numbers to be estimated (they
        would be printed as "—"), with the size that is enough; None when it is enough (the default). ``option``
        and ``shown``: the option that gave ``run.limit`` and how the declined numbers show (``unqover
        lm-eval-tasks --groups``: NaN in lm-eval's table)."""
        return None

    def load(self, run: RunOptions, settings: dict, model) -> Loaded:
        """The rows to score (after a quick run's selection) and where they came from."""
        raise NotImplementedError

    def score(
        self, loaded: Loaded, model, folder: Path, identity: dict, run: RunOptions, settings: dict, placement
    ) -> tuple[Loaded, pa.Table, dict[str, pa.Table]] | None:
        """A probe that scores in a way of its own (UnQover's precision rounds): (loaded, main scores, extra scores
        by name). None (the default): the job runner scores ``loaded.rows`` with :meth:`scorers`."""
        return None

    def scorers(self, model, settings: dict, loaded: Loaded | None = None) -> dict[str, Any]:
        """Runner scorers by name: "" is the main one (``predictions.parquet``), others go to ``<name>/``: each the
        scorer of a request :attr:`wants` names, from the engine that loaded ``model``
        (:func:`unqover.scoring.engines.scorer_for`); ``loaded``: the run's rows, where a scorer reads them."""
        raise NotImplementedError

    def planned_output_name(
        self, capabilities: Sequence[str], model_id: str, run: RunOptions, settings: dict
    ) -> str | None:
        """:meth:`output_name` as known before the model loads, from what the model answers (``capabilities``: its
        engine reads them from its config),
        so that a folder holding another run is refused before the slow part; None (the default): not known then."""
        return None

    def output_stem(self, loaded: Loaded, settings: dict) -> str:
        """The default run folder's last part for a full run with seed 0 (default: PROBE-CONFIG)."""
        return f"{self.name}-{loaded.dataset.get('config')}"

    def predictions(self, loaded: Loaded, scores: pa.Table) -> pa.Table:
        """What ``predictions.parquet`` holds (default: id, score_1, score_2)."""
        return scores

    def measure_run(
        self, loaded: Loaded, scores: pa.Table, extra: dict[str, pa.Table], run: RunOptions, settings: dict
    ) -> Measured:
        """The measures of the scored rows."""
        raise NotImplementedError


@dataclass(frozen=True)
class ProbeSpec:
    """Where a built-in definition lives (``"module:attr"``) and what the command line needs before loading it."""

    target: str
    group: str | None = None

    def load(self) -> ProbeDefinition:
        """The definition object, importing its module (once; Python caches it)."""
        module, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(module), attr)


class ProbeTable(MutableMapping):
    """Probe name -> definition, each loaded from its :class:`ProbeSpec` on first access, so that asking for one
    probe imports that probe's module only. Names, order and groups are known without loading anything; a
    definition can also be set directly (a test's toy probe)."""

    def __init__(self) -> None:
        self._entries: dict[str, ProbeSpec | ProbeDefinition] = {}

    def declare(self, specs: Mapping[str, ProbeSpec]) -> None:
        """Add the specs of built-in definitions (the registry's table), not loaded yet."""
        self._entries.update(specs)

    def group_of(self, name: str) -> str | None:
        """The group of the probe ``name`` without loading it."""
        entry = self._entries[name]
        return entry.group

    def __getitem__(self, name: str) -> ProbeDefinition:
        entry = self._entries[name]
        if isinstance(entry, ProbeSpec):
            entry = self._entries[name] = entry.load()
        return entry

    def __setitem__(self, name: str, probe: ProbeDefinition) -> None:
        self._entries[name] = probe

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"ProbeTable({list(self._entries)})"


#: every registered definition by name, declared by ``unqover.probes.registry`` when it loads (the modules below
#: it, such as the identity check, look other probes up here without importing the definitions)
REGISTERED = ProbeTable()


def table_text(row: Mapping[str, Any], digits: int) -> dict[str, str]:
    """A results-table row as text: numbers by :func:`unqover.format.fmt` with ``digits`` decimals (missing:
    "—"), text as it is."""
    from unqover.format import fmt

    return {column: value if isinstance(value, str) else fmt(value, digits) for column, value in row.items()}
