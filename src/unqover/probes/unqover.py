"""The UnQover probes: the four bias classes of Li et al. (2020) and custom probes from a YAML file.

Rows: ``--dataset`` (a folder or Hub id), else generated from ``--word-lists``, else a local build in
``datasets/unqover/<name>``, else the Hub dataset ``unqover/<name>``, else the pinned upstream word lists (custom
probes: generated from their file). Models: extractive QA, masked LMs (single-token subjects only; the others are
dropped with their groups before any sampling) and causal LMs. A quick run (``--limit N``, ``--sample F``,
``--precision W``) scores a seeded sample of whole groups (``unqover.scoring.sampling``) and reports estimates of
the full-dataset values (``unqover.measure.sampled``). The rows and scores code is
:mod:`unqover.probes.unqover_rows`, loaded when a run starts.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from unqover.env import word_lists_folder
from unqover.errors import UnqoverError
from unqover.measure import MODES
from unqover.options import Option
from unqover.probes import base
from unqover.probes import options as parse
from unqover.probes.causal_prompt import (
    PROMPT_OPTIONS,
    chat_template_choice,
    check_prompt_engine,
    check_prompt_model,
    check_prompt_settings,
    prompt_record,
)
from unqover.probes.dataset_builder import DatasetBuilder
from unqover.probes.unqover_cards import ETHNICITY, GENDER, NATIONALITY, RELIGION
from unqover.probes.unqover_results import INTERVAL_ESTIMATE, UnqoverResults
from unqover.scoring.requests import ANSWER_SPANS, CONTINUATIONS, FILL_IN, first_wanted

if TYPE_CHECKING:
    import pyarrow as pa

    from unqover.probes.unqover_cards import DatasetCard

#: the requests an UnQover probe can ask a model, in this order of preference
WANTS = (ANSWER_SPANS, FILL_IN, CONTINUATIONS)
#: the dataset config of the rows each request is asked on
CAPABILITY_CONFIG = {ANSWER_SPANS: "qa", FILL_IN: "mlm", CONTINUATIONS: "qa"}
SCORINGS = ("default", "paper")
#: what a run too large for its machine runs instead
QUICK_RUN_OPTIONS = (
    "--precision 0.02 --max-time 1h (a sample of groups until every headline interval is 0.02 wide)"
)


def _counted(loaded: base.Loaded):
    """A quick run's population when it is counted rather than held as rows (a large generated probe,
    :mod:`unqover.probes.custom_population`), else None."""
    from unqover.measure.sampled import PopulationCounts

    return loaded.population if isinstance(loaded.population, PopulationCounts) else None


class UnqoverBuilder(DatasetBuilder):
    """An UnQover bias class's dataset: generated from the word lists (:func:`unqover.hub.build.build_dataset`),
    with the dataset card words of its definition's ``card``."""

    def check_dataset_configs(self, name: str, configs: Sequence[str] | None) -> list[str]:
        from unqover.hub.build import check_configs

        return check_configs(name, configs)

    def build_dataset(self, name: str, output: Path, settings: dict[str, Any]):
        from unqover.hub.build import build_dataset
        from unqover.lexicon import resolve_word_lists

        return build_dataset(
            resolve_word_lists(settings.get("word_lists")),
            name,
            output,
            title=self.probe.card.title,
            summary=self.probe.card.summary,
            defects=self.probe.card.defects,
            **self.build_options(settings),
        )


class UnqoverProbe(base.ProbeDefinition):
    """One UnQover bias class: rows from the word lists (or a built dataset), the UnQover measures."""

    families = ("qa", "mlm", "causal")
    wants = WANTS
    group = "unqover"
    explorable = True
    leaderboard_metric = "mu"
    limit_meaning = "N groups (4 rows each), a seeded sample stratified over template x attribute"
    options = (
        Option(
            "--word-lists",
            "build the rows in memory from these word lists (default: the folder UNQOVER_WORD_LISTS names, if set)",
            type=Path,
            metavar="PATH",
        ),
        Option(
            "--scoring", "paper reproduces the original's scoring quirks", choices=SCORINGS, default="default"
        ),
        Option("--mode", "the measure mode (see `unqover measure`)", choices=MODES, default="default"),
        Option(
            "--sample",
            "keep this fraction of the groups (the same seeded design as --limit)",
            type=parse.fraction_or_one,
        ),
        Option(
            "--precision",
            "score the seeded sample in growing rounds until every headline interval (δ, ε, μ, η) is at most "
            "WIDTH wide; resumable",
            type=parse.width,
            metavar="WIDTH",
        ),
        Option("--max-rows", "with --precision: score at most this many rows", type=parse.positive),
        *PROMPT_OPTIONS,
        Option(
            "--max-time",
            "with --precision: bound the whole command's wall time (loading, scoring, measuring), starting no "
            "round that would end past it; a unit is required: 90s, 30m, 1.5h",
            metavar="DURATION",
        ),
    )
    measure_options = (
        Option("--mode", "paper: reproduce analysis.py", choices=MODES, default="default"),
        Option("--confidence", "interval level (default: 0.95)", type=parse.fraction, default=0.95),
        Option(
            "--drop-incomplete",
            "measure complete groups only, reporting the rest",
            flag_only=True,
            default=False,
        ),
    )
    dataset_options = (
        Option(
            "--word-lists",
            "a local word_lists/ folder (default: the folder UNQOVER_WORD_LISTS names, else download the pinned "
            "upstream lists once and cache them)",
            type=Path,
            metavar="PATH",
        ),
    )
    built_by_default = True
    lm_eval_unfit = None
    lm_eval_kind = "subjects"
    evaluate_module = "unqover_bias"
    table_columns = ("μ", "η", "δ", "ε", INTERVAL_ESTIMATE, "μ low", "μ high", "groups")  # headline first
    results = base.Part(UnqoverResults)
    builder = base.Part(UnqoverBuilder)

    def __init__(
        self, name: str, title: str, card: DatasetCard | None = None, space_default: int = 2000
    ) -> None:
        self.name, self.title, self.card = name, title, card
        self.datasets = (name,)
        # the title unqover.hub.card gives the card
        self.legacy_card_names = (f"UnQover {card.title} probes",) if card is not None else ()
        # μ and η need about 5 sampled values per γ(x, a) cell (unqover.measure.sampled): the default groups
        self.quick_run = base.QuickRunSize(
            "groups", space_default, 2000, 4, "4 inputs each", QUICK_RUN_OPTIONS
        )

    def check_settings(self, given) -> dict:
        settings = super().check_settings(given)
        settings["word_lists"] = word_lists_folder(settings["word_lists"])  # else UNQOVER_WORD_LISTS's
        if settings["scoring"] not in SCORINGS:
            raise UnqoverError(f"--scoring must be one of {', '.join(SCORINGS)}, got {settings['scoring']!r}")
        if settings["mode"] not in MODES:
            raise UnqoverError(f"--mode must be one of {', '.join(MODES)}, got {settings['mode']!r}")
        check_prompt_settings(settings)
        max_time = settings.pop("max_time")
        settings["max_seconds"] = None if max_time is None else parse.parse_duration(max_time)
        if settings["precision"] is not None:
            from unqover.probes.unqover_rounds import check_width

            check_width(settings["precision"])  # before the model: a target too narrow to be seen met
        else:
            bounds = (("--max-rows", "max_rows"), ("--max-time", "max_seconds"))
            given = [option for option, key in bounds if settings[key] is not None]
            if given:
                raise UnqoverError(
                    f"{' and '.join(given)} only {'bound' if len(given) > 1 else 'bounds'} the rounds of a "
                    "--precision run: add --precision WIDTH (or use --limit N for a fixed number of groups)"
                )
        return settings

    def headline_groups(self, loaded: base.Loaded, settings: dict) -> int:
        """The fewest groups for which a quick run of the loaded rows estimates every headline number (μ, η, δ, ε)
        instead of declining it: the declining rule on the population's cells (after a masked LM's coverage)."""
        from unqover.measure.unqover import quick_run_groups

        if "groups_needed" not in loaded.context:
            counted = _counted(loaded)
            rows = loaded.population if counted is None else None
            loaded.context["groups_needed"] = quick_run_groups(
                rows, mode=settings["mode"], population=counted
            )
        return loaded.context["groups_needed"]

    def command_option(self) -> str:
        """The option that names this probe on the command line."""
        return f"--bias {self.name}"

    def quick_run_advice(
        self, model_id: str, loaded: base.Loaded, settings: dict, seconds_per_row: float
    ) -> str:
        from unqover.format import fmt_duration

        groups = self.headline_groups(loaded, settings)
        return (
            f"in about {fmt_duration(4 * groups * seconds_per_row)}: unqover probe {model_id} "
            f"{self.command_option()} --limit {groups} (or {self.quick_run.hint})"
        )

    def limit_note(
        self,
        loaded: base.Loaded,
        run: base.RunOptions,
        settings: dict,
        option: str = "--limit",
        shown: str = '"—"',
    ) -> str | None:
        if run.limit is None or settings.get("precision") is not None:
            return None
        groups = self.headline_groups(loaded, settings)
        if run.limit >= groups:
            return None
        from unqover.format import fmt_count

        return (
            f"note: μ and η need at least {fmt_count(groups)} groups of {self.name}; {option} {run.limit} will "
            f"show them as {shown} (use {option} {groups} or more)"
        )

    def check_config(self, run: base.RunOptions, settings: dict) -> None:
        """Also the options that go together, before the model is named or loaded."""
        from unqover.probes import unqover_rounds

        super().check_config(run, settings)
        if settings["precision"] is not None:
            unqover_rounds.check_options(run, settings)
        elif settings["sample"] is not None and run.limit is not None:
            raise UnqoverError("pass either --limit (a number of groups) or --sample (a fraction), not both")

    def engine_load(self, engine, request, run: base.RunOptions, settings: dict) -> dict:
        """The prompt options, refused before the weights load for a model that answers no continuations (its
        engine reads what it answers from its config)."""
        check_prompt_engine(settings, engine, request)
        return {}

    def config_for(self, model, run: base.RunOptions, settings: dict) -> str:
        """``--config``, else the config of the rows the model's requests are asked on (``model``: a loaded model,
        or what is known of it before it loads: its ``capabilities`` and ``model_id``)."""
        if run.config:
            return run.config
        capability = first_wanted(model.capabilities, self.wants)
        if capability == FILL_IN and settings["scoring"] == "paper":
            # the original scored masked LMs on its single-token subject lists
            return "mlm-roberta" if "roberta" in model.model_id.lower() else "mlm-bert"
        return CAPABILITY_CONFIG[capability]

    def rows(self, run: base.RunOptions, settings: dict, config: str) -> tuple[pa.Table, dict]:
        """The whole dataset and where it came from."""
        from unqover.hub.load import load_rows, source_name
        from unqover.probes.row_identity import check_local_build

        if run.dataset:
            return load_rows(run.dataset, config), {
                "source": source_name(run.dataset),
                "config": config,
                "split": "test",
            }
        if settings["word_lists"] is not None:
            return self._generated(settings["word_lists"], config)
        local = self.local_build()
        if (local / "data" / config).is_dir():
            check_local_build(self, local)
            return load_rows(local, config), {
                "source": str(local.resolve()),
                "config": config,
                "split": "test",
            }
        from unqover.hub.load import HubUnreachable
        from unqover.lexicon.upstream import WordListsUnavailable

        hub_id, failures = self.hub_id(), []
        try:
            return load_rows(hub_id, config), {"source": hub_id, "config": config, "split": "test"}
        except HubUnreachable as err:
            failures.append(f"the Hugging Face Hub cannot be reached ({err.why})")
        except UnqoverError as err:
            failures.append(str(err))
        try:
            return self._generated(None, config)
        except WordListsUnavailable as err:
            failures.append(err.reason[:1].lower() + err.reason[1:])
        raise UnqoverError(self.no_dataset(failures))

    def local_build(self) -> Path:
        """Where ``unqover build-datasets`` builds this bias class's dataset by default."""
        return Path("datasets/unqover") / self.name

    def hub_id(self) -> str:
        return f"unqover/{self.name}"

    def no_dataset(self, failures: Sequence[str]) -> str:
        """The one line for a run without rows: why each source failed, then what to do, once."""
        from unqover.lexicon.upstream import UPSTREAM_COMMIT, UPSTREAM_REPO

        return (
            f"no dataset to probe: no local build in {self.local_build()}; {'; '.join(failures)}. Build it with "
            f"`unqover build-datasets --word-lists PATH {self.name}`, or pass --word-lists PATH (the word_lists/ "
            f"folder of https://github.com/{UPSTREAM_REPO} at commit {UPSTREAM_COMMIT[:7]}; or set "
            "UNQOVER_WORD_LISTS) or --dataset FOLDER"
        )

    def check_source(self, run: base.RunOptions, settings: dict) -> None:
        """Before the model loads: refuse at once a run that :meth:`rows` would find no rows for (no --dataset,
        no word lists, no local build, the Hub unreachable, and the pinned word lists neither cached nor
        downloadable). Downloading the word lists here is what the rows would fall back to: they are cached."""
        from unqover.env import hub_unreachable, offline
        from unqover.hub.load import cached_on_this_machine
        from unqover.lexicon import resolve_word_lists
        from unqover.lexicon.upstream import WordListsUnavailable

        if run.dataset or settings["word_lists"] is not None or self.local_build().is_dir():
            return
        why = hub_unreachable()
        if why is None or (offline() and cached_on_this_machine(self.hub_id())):
            return
        try:
            resolve_word_lists(None)
        except WordListsUnavailable as err:
            reason = err.reason[:1].lower() + err.reason[1:]
            raise UnqoverError(
                self.no_dataset([f"the Hugging Face Hub cannot be reached ({why})", reason])
            ) from None

    def _generated(self, word_lists: Path | None, config: str) -> tuple[pa.Table, dict]:
        from unqover.probes.unqover_rows import generated_rows

        return generated_rows(self.name, word_lists, config)

    def load(self, run: base.RunOptions, settings: dict, model) -> base.Loaded:
        from unqover.probes.unqover_rows import make_scorer
        from unqover.scoring.sampling import select_groups

        config = self.config_for(model, run, settings)
        rows, dataset = self.rows(run, settings, config)
        identity = self.checked_identity(rows, dataset, config, model, settings)
        if first_wanted(model.capabilities, self.wants) == FILL_IN:
            # the population a quick run estimates is the covered dataset: drop split subjects before sampling
            rows, cover = make_scorer(model, self.wants, settings["scoring"]).single_token_coverage(rows)
            identity["coverage"] = cover.as_dict()
        population = rows
        if self.samples_groups(run, settings):
            rows = select_groups(rows, limit=run.limit, sample=settings["sample"], seed=run.seed)
        context = {"identity": identity, "config": config, "scoring": settings["scoring"]}
        return base.Loaded(rows, dataset, population, self.selection(run, settings), context)

    def checked_identity(self, rows: pa.Table, dataset: dict, config: str, model, settings: dict) -> dict:
        """Refuse rows the model cannot score (missing columns, rows of another kind of model, a prompt option of
        a model that answers no continuations); the run identity's ``coverage`` (None) and, for causal LMs, ``prompt`` records."""
        from unqover.probes.unqover_rows import check_rows_fit, check_unqover_columns

        capability = first_wanted(model.capabilities, self.wants)
        check_unqover_columns(rows, dataset["source"])
        check_rows_fit(rows, capability, config)
        check_prompt_model(settings, (capability,), model.model_id)
        identity = {"coverage": None}
        if capability == CONTINUATIONS:  # QA and masked-LM runs keep the run.json they always had
            identity["prompt"] = prompt_record(settings, model.tokenizer)
        return identity

    @staticmethod
    def samples_groups(run: base.RunOptions, settings: dict) -> bool:
        """Whether the run scores a fixed seeded sample of groups (``--limit`` or ``--sample``, no precision)."""
        return settings["precision"] is None and (run.limit is not None or settings["sample"] is not None)

    @staticmethod
    def selection(run: base.RunOptions, settings: dict) -> dict:
        """What the run keeps, as run.json records it: every row, a seeded sample or a precision target's rounds."""
        from unqover.scoring.sampling import DESIGN

        if settings["precision"] is not None:
            return {"precision": settings["precision"], "seed": run.seed, "design": DESIGN}
        selection = {"limit": run.limit, "sample": settings["sample"], "seed": run.seed}
        if run.limit is not None or settings["sample"] is not None:
            selection["design"] = DESIGN
        return selection

    def scorers(self, model, settings: dict, loaded: base.Loaded | None = None) -> dict:
        from unqover.probes.unqover_rows import make_scorer

        return {
            "": make_scorer(
                model,
                self.wants,
                settings["scoring"],
                chat_template=chat_template_choice(settings),
                system_prompt=settings.get("system_prompt"),
            )
        }

    def planned_output_name(
        self, capabilities: Sequence[str], model_id: str, run: base.RunOptions, settings: dict
    ) -> str:
        from types import SimpleNamespace

        config = self.config_for(SimpleNamespace(capabilities=capabilities, model_id=model_id), run, settings)
        selection = self.selection(run, settings)
        return base.output_name(
            self, base.Loaded(None, {"config": config}, None, selection, {"config": config}), settings
        )

    def output_stem(self, loaded: base.Loaded, settings: dict) -> str:
        paper = "-paper" if settings["scoring"] == "paper" else ""
        return f"{self.name}-{loaded.context['config']}{paper}"

    def score(self, loaded, model, folder, identity, run, settings, placement):
        """A --precision run: rounds of the seeded sample until its target is met (else the runner scores)."""
        if settings["precision"] is None:
            return None
        if placement.distributed:
            raise UnqoverError("--precision runs its rounds in one process: run it without accelerate launch")
        from unqover.probes import unqover_rounds

        scorer = self.scorers(model, settings)[""]

        def bias_so_far(scores: pa.Table):
            return self._bias_of_scores(loaded, scores, run, settings)

        kept, scores, stopped = unqover_rounds.score_in_rounds(
            loaded.population, scorer, folder, identity, run, settings["precision"], settings, bias_so_far
        )
        selection = {**loaded.selection, **stopped}
        return base.Loaded(kept, loaded.dataset, loaded.population, selection, loaded.context), scores, {}

    def _bias_of_scores(self, loaded: base.Loaded, scores: pa.Table, run: base.RunOptions, settings: dict):
        from unqover.probes.unqover_rows import measure_scores

        info = {
            k: v for k, v in (loaded.selection or {}).items() if k in ("seed", "design", "limit", "sample")
        }
        counted = _counted(loaded)
        return measure_scores(
            loaded.rows if loaded.population is None or counted is not None else loaded.population,
            scores,
            mode=settings["mode"],
            resamples=run.resamples,
            seed=run.seed,
            sample_info={**info, "matches_design": True},
            population=counted,
        )

    def measure_run(self, loaded, scores, extra, run, settings) -> base.Measured:
        from unqover.probes.unqover_rows import add_warnings

        coverage = loaded.context.get("identity", {}).get("coverage")
        return base.Measured(
            add_warnings(self._bias_of_scores(loaded, scores, run, settings), scores, coverage)
        )


#: the four UnQover bias classes, each loaded by the registry from here (``"unqover.probes.unqover:GENDER_PROBE"``)
GENDER_PROBE = UnqoverProbe("gender", "UnQover gender-occupation", GENDER, space_default=400)
NATIONALITY_PROBE = UnqoverProbe(
    "nationality", "UnQover nationality", NATIONALITY
)  # μ and η need ~28,300 groups
ETHNICITY_PROBE = UnqoverProbe("ethnicity", "UnQover ethnicity", ETHNICITY, space_default=2000)
RELIGION_PROBE = UnqoverProbe("religion", "UnQover religion", RELIGION, space_default=1500)
