"""Custom UnQover-style probes: a user's subjects, attributes and templates in a YAML file
(``unqover.lexicon.custom``), probed and measured as the UnQover bias classes are."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from unqover.errors import UnqoverError
from unqover.probes.base import Loaded, Part, RunOptions
from unqover.probes.row_identity import custom_card_name
from unqover.probes.unqover import UnqoverBuilder, UnqoverProbe
from unqover.probes.unqover_results import UnqoverResults
from unqover.scoring.requests import FILL_IN, first_wanted

if TYPE_CHECKING:
    import pyarrow as pa


#: A probe file that makes this many rows (a few thousand subjects make millions) is said to be large before its
#: rows are made, with the options of a quick run: making them takes about a second per 200,000 rows, scoring
#: them hours on a CPU.
MANY_ROWS = 1_000_000
#: Memory a run of generated rows needs per byte of the rows: the rows themselves and the working arrays of
#: sampling and measuring them (generating and sampling 3.6 million rows peaks at about twice the rows' size).
MEMORY_PER_ROW_BYTE = 3


class CustomBuilder(UnqoverBuilder):
    """A custom probe's dataset: generated from its file (:func:`unqover.hub.build.build_custom_dataset`)."""

    def rebuild_command(self, folder: Path) -> str:
        return f"unqover build-datasets --probe {self.probe.path} --output {folder.parent} --overwrite"

    def check_dataset_configs(self, name: str, configs: Sequence[str] | None) -> list[str]:
        from unqover.generate.custom import custom_configs

        available = custom_configs(self.probe.definition)
        unknown = [c for c in configs or () if c not in available]
        if unknown:
            raise UnqoverError(f"the probe {name!r} has the configs {available}, not {unknown}")
        return list(configs or available)

    def build_dataset(self, name: str, output: Path, settings: dict[str, Any]):
        from unqover.hub.build import build_custom_dataset

        return build_custom_dataset(
            self.probe.definition,
            output,
            **self.build_options(settings),
        )


class CustomResults(UnqoverResults):
    """A custom probe's results: a quick run's predictions measured against its sample's rows alone."""

    def measure_file(
        self, predictions: Path, run: RunOptions, dataset: Mapping | None = None, **options
    ) -> tuple[Any, dict]:
        """A quick run's predictions on rows generated from the file (a QA or causal LM's: a masked LM's sample is
        drawn from the rows its tokenizer covers), when they are exactly the draw they record, are measured as the
        run measured them: against its sample's rows and the probe's counts (:mod:`unqover.probes.custom_population`),
        every row unmade. Others (a full run, part of a draw, another dataset): against every row."""
        from unqover.predictions import read_predictions, read_provenance
        from unqover.probes.custom_population import population_counts, sampled_rows
        from unqover.probes.unqover_rows import add_warnings, measure_scores
        from unqover.scoring.sampling import DESIGN

        provenance = read_provenance(predictions) if predictions.suffix == ".parquet" else {}
        recorded = dict(dataset) if dataset is not None else provenance.get("dataset") or {}
        selection = provenance.get("selection") or {}
        config = run.config or recorded.get("config")
        seed = selection.get("seed")
        drawn = (
            run.dataset is None
            and recorded.get("generator")
            and config == "qa"
            and provenance.get("coverage") is None
            and selection.get("design") == DESIGN
            and selection.get("kind") in (None, "design")
            and (selection.get("limit"), selection.get("sample")).count(None) == 1
            and isinstance(seed, int)
            and not isinstance(seed, bool)
        )
        if drawn:
            scores, provenance = read_predictions(predictions)
            rows = sampled_rows(
                self.probe.definition, config, limit=selection["limit"], sample=selection["sample"], seed=seed
            )
            drawn = set(rows["id"].to_pylist()) == set(scores["id"].to_pylist())
        if not drawn:
            return super().measure_file(predictions, run, dataset, **options)
        options.pop("split", None)
        result = measure_scores(
            rows,
            scores,
            resamples=run.resamples,
            seed=run.seed,
            sample_info={"design": DESIGN, "seed": seed, "matches_design": True},
            population=population_counts(self.probe.definition, config, options.get("mode", "default")),
            **options,
        )
        source = self.probe._source(config)
        return add_warnings(result, scores, provenance.get("coverage")), {
            **provenance,
            "dataset": {**recorded, **source, "source": source["source"]},
        }


class CustomProbe(UnqoverProbe):
    """A user's UnQover-style probe from a YAML file: its rows are generated from the file."""

    group = None
    explorable = False
    built_by_default = False
    results = Part(CustomResults)
    builder = Part(CustomBuilder)

    def __init__(self, path: Path) -> None:
        from unqover.lexicon.custom import read_probe_file

        self.path = Path(path)
        self.definition = read_probe_file(self.path)
        super().__init__(self.definition.name, f"custom probe {self.definition.name} ({self.path.name})")
        self.legacy_card_names = (custom_card_name(self.name),)

    def command_option(self) -> str:
        return f"--probe {self.path}"

    def check_source(self, run: RunOptions, settings: dict) -> None:
        """Nothing to find: the rows are generated from the probe's file."""

    def check_config(self, run: RunOptions, settings: dict) -> None:
        """Also refuse, before any model loads, rows too large for this machine's memory: a full run makes every
        row; a quick run of a QA or causal LM (a fixed sample of groups) only its sample's rows."""
        super().check_config(run, settings)
        if not run.dataset:
            config = (
                run.config or "qa"
            )  # a masked LM's quick run makes every row (its coverage reads the texts)
            quick = self.samples_groups(run, settings) and config != "mlm"
            self.check_memory(config, self._sample_size(run, settings, config) if quick else None)

    def _sample_size(self, run: RunOptions, settings: dict, config: str) -> int:
        from unqover.probes.custom_population import num_groups
        from unqover.scoring.sampling import budget

        return budget(num_groups(self.definition, config), run.limit, settings["sample"])

    def check_memory(self, config: str, quick_groups: int | None = None) -> None:
        """Refuse making rows that would not fit in the memory available now, with their count; ``quick_groups``:
        a quick run's sample of that many groups (their rows, and the draw over every subject pair)."""
        from unqover.env import available_memory
        from unqover.format import fmt_bytes, fmt_count, plural
        from unqover.generate.custom import custom_plan, row_bytes, unordered_pairs
        from unqover.probes.custom_population import BYTES_PER_PAIR

        available = available_memory()
        if available is None:
            return
        plan = custom_plan(self.definition, config)
        pairs = len(unordered_pairs(plan))
        made = plan.num_rows if quick_groups is None else 4 * quick_groups
        needed = made * row_bytes(plan) * MEMORY_PER_ROW_BYTE + (
            0 if quick_groups is None else pairs * BYTES_PER_PAIR
        )
        if needed <= available:
            return
        d = self.definition
        sizes = (
            f"{plural(len(d.subjects), 'subject')}, {plural(len(d.templates), 'template')}, "
            f"{plural(len(d.attributes), 'attribute')}"
        )
        memory = f"about {fmt_bytes(needed)} of memory, more than the {fmt_bytes(available)} available"
        if quick_groups is None:
            raise UnqoverError(
                f"{self.path}: its {fmt_count(plan.num_rows)} rows ({sizes}) need {memory}, and this makes every row "
                "(a full run, a --precision run, a masked LM's quick run, or a leaderboard or comparison of its runs); a quick run "
                "of a QA or causal LM (--limit or --sample) makes only its sample's rows, or use fewer subjects, "
                "templates or attributes"
            )
        raise UnqoverError(
            f"{self.path}: a quick run of {plural(quick_groups, 'group')} of its {fmt_count(plan.num_groups)} "
            f"({sizes}) makes {fmt_count(made)} rows and draws from "
            f"{fmt_count(pairs)} subject pairs: {memory}; use a smaller --limit or --sample, or fewer subjects"
        )

    def load(self, run: RunOptions, settings: dict, model) -> Loaded:
        """A quick run of a QA or causal model (``--limit`` or ``--sample``) on generated rows makes its sample's
        rows alone, and counts what its estimates need of the other groups
        (:mod:`unqover.probes.custom_population`): the same rows and numbers as making every row and sampling them.
        Other runs (a masked LM's coverage reads every row's text): every row."""
        from unqover.format import fmt_count, plural
        from unqover.probes.custom_population import num_groups, population_counts, sampled_rows

        if (
            run.dataset
            or not self.samples_groups(run, settings)
            or first_wanted(model.capabilities, self.wants) == FILL_IN
        ):
            return super().load(run, settings, model)
        config = self.config_for(model, run, settings)
        groups = self._sample_size(run, settings, config)
        self.check_memory(config, groups)
        if run.progress:
            total = num_groups(self.definition, config)
            print(
                f"{self.path}: making the rows of a sample of {plural(groups, 'group')} of its {fmt_count(total)} "
                f"({config})",
                file=sys.stderr,
                flush=True,
            )
        rows = sampled_rows(
            self.definition, config, limit=run.limit, sample=settings["sample"], seed=run.seed
        )
        dataset = self._source(config)
        identity = self.checked_identity(rows, dataset, config, model, settings)
        population = population_counts(self.definition, config, settings["mode"])
        context = {"identity": identity, "config": config, "scoring": settings["scoring"]}
        return Loaded(rows, dataset, population, self.selection(run, settings), context)

    def rows(self, run: RunOptions, settings: dict, config: str) -> tuple[pa.Table, dict]:
        """Every row, generated from the file (said first when there are many or a bar shows); also for `unqover
        measure` and `compare`, which make the rows again."""
        from unqover.format import fmt_count
        from unqover.generate.custom import custom_plan, custom_rows

        if run.dataset:
            return super().rows(run, settings, config)
        self.check_memory(config)
        count = custom_plan(self.definition, config).num_rows  # known before any row is made
        many = count >= MANY_ROWS
        if run.progress or many:
            line = f"{self.path}: generating {fmt_count(count)} rows ({config})"
            sampled = run.limit is not None or any(
                settings.get(k) is not None for k in ("sample", "precision")
            )
            if many and not sampled:
                line += (
                    f"; a full run scores every one of them: for a quick run, add --limit N (N groups of 4 rows) "
                    f"or {self.quick_run.hint}"
                )
            print(line, file=sys.stderr, flush=True)
        return custom_rows(self.definition, config, progress=run.progress), self._source(config)

    def _source(self, config: str) -> dict:
        """Where the rows came from, as run.json records it."""
        source = str(self.path.resolve())
        return {"source": source, "generator": {"probe_file": source}, "config": config, "split": "test"}
