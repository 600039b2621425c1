"""Custom UnQover-style probes: a user's subjects, attributes and templates in a YAML file
(``unqover.lexicon.custom``), probed and measured as the UnQover bias classes are."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from unqover.errors import UnqoverError
from unqover.probes.base import Loaded, RunOptions
from unqover.probes.row_identity import custom_card_name
from unqover.probes.unqover import UnqoverProbe

if TYPE_CHECKING:
    import pyarrow as pa


#: A probe file that makes this many rows (a few thousand subjects make millions) is said to be large before its
#: rows are made, with the options of a quick run: making them takes about a second per 200,000 rows, scoring
#: them hours on a CPU.
MANY_ROWS = 1_000_000
#: Memory a run of generated rows needs per byte of the rows: the rows themselves and the working arrays of
#: sampling and measuring them (generating and sampling 3.6 million rows peaks at about twice the rows' size).
MEMORY_PER_ROW_BYTE = 3


class CustomProbe(UnqoverProbe):
    """A user's UnQover-style probe from a YAML file: its rows are generated from the file."""

    group = None
    explorable = False
    built_by_default = False

    def __init__(self, path: Path) -> None:
        from unqover.lexicon.custom import read_probe_file

        self.path = Path(path)
        self.definition = read_probe_file(self.path)
        super().__init__(self.definition.name, f"custom probe {self.definition.name} ({self.path.name})")
        self.legacy_card_names = (custom_card_name(self.name),)

    def rebuild_command(self, folder: Path) -> str:
        return f"unqover build-datasets --probe {self.path} --output {folder.parent} --overwrite"

    def command_option(self) -> str:
        return f"--probe {self.path}"

    def check_source(self, run: RunOptions, settings: dict) -> None:
        """Nothing to find: the rows are generated from the probe's file."""

    def check_config(self, run: RunOptions, settings: dict) -> None:
        """Also refuse, before any model loads, rows too large for this machine's memory: a run generates all its
        rows first, but for a quick run (a fixed sample of groups) only their ids and groups, the texts of the sample's
        rows alone (its estimates are of the whole set)."""
        super().check_config(run, settings)
        if not run.dataset:
            config = (
                run.config or "qa"
            )  # a masked LM's quick run makes every row (its coverage reads the texts)
            self.check_memory(config, quick=self.samples_groups(run, settings) and config != "mlm")

    def check_memory(self, config: str, quick: bool = False) -> None:
        """Refuse generating rows that would not fit in the memory available now, with their count; ``quick``:
        only the rows' ids and groups (:func:`unqover.generate.custom.custom_population`)."""
        from unqover.env import available_memory
        from unqover.format import fmt_bytes, fmt_count, plural
        from unqover.generate.custom import POPULATION_COLUMNS, custom_plan, row_bytes

        available = available_memory()
        if available is None:
            return
        plan = custom_plan(self.definition, config)
        needed = (
            plan.num_rows
            * row_bytes(plan, columns=POPULATION_COLUMNS if quick else None)
            * MEMORY_PER_ROW_BYTE
        )
        if needed > available:
            d = self.definition
            why = (
                "a quick run keeps every row's id and groups (not its texts) to estimate the whole set"
                if quick
                else "all of them are generated first (a quick run of a QA or causal LM keeps only their ids and groups)"
            )
            raise UnqoverError(
                f"{self.path}: its {fmt_count(plan.num_rows)} rows ({plural(len(d.subjects), 'subject')}, "
                f"{plural(len(d.templates), 'template')}, {plural(len(d.attributes), 'attribute')}) need about "
                f"{fmt_bytes(needed)} of memory, more than the {fmt_bytes(available)} available: {why}; use fewer "
                "subjects, templates or attributes"
            )

    def load(self, run: RunOptions, settings: dict, model) -> Loaded:
        """A quick run of a QA or causal model (``--limit`` or ``--sample``) on generated rows makes every row's
        id and groups (the population its estimates are of) and the texts of its sample's rows alone: the same rows
        as making every row and sampling them. Other runs (a masked LM's coverage reads every row's text): every
        row."""
        from unqover.generate.custom import custom_rows_of
        from unqover.scoring.sampling import select_groups

        if run.dataset or not self.samples_groups(run, settings) or model.family == "mlm":
            return super().load(run, settings, model)
        config = self.config_for(model, run, settings)
        population, dataset = self._generated(run, settings, config, quick=True)
        chosen = select_groups(population, limit=run.limit, sample=settings["sample"], seed=run.seed)
        rows = custom_rows_of(self.definition, config, chosen)
        identity = self.checked_identity(rows, dataset, config, model, settings)
        return Loaded(
            rows, dataset, population, self.selection(run, settings), {"identity": identity, "config": config}
        )

    def rows(self, run: RunOptions, settings: dict, config: str) -> tuple[pa.Table, dict]:
        if run.dataset:
            return super().rows(run, settings, config)
        # also for `unqover measure` and `compare`, which make the rows again
        return self._generated(run, settings, config, quick=False)

    def _generated(self, run: RunOptions, settings: dict, config: str, quick: bool) -> tuple[pa.Table, dict]:
        """The rows generated from the file (``quick``: their ids and groups only), said first when there are many
        or a bar shows, and where they came from."""
        from unqover.format import fmt_count
        from unqover.generate.custom import custom_plan, custom_population, custom_rows

        self.check_memory(config, quick=quick)
        count = custom_plan(self.definition, config).num_rows  # known before any row is made
        many = count >= MANY_ROWS
        if run.progress or many:
            line = f"{self.path}: generating {fmt_count(count)} rows ({config})"
            if quick:
                line += ": every row's id and groups, the texts of the sample's rows only"
            sampled = run.limit is not None or any(
                settings.get(k) is not None for k in ("sample", "precision")
            )
            if many and not sampled:
                line += (
                    f"; a full run scores every one of them: for a quick run, add --limit N (N groups of 4 rows) "
                    f"or {self.quick_run_hint()}"
                )
            print(line, file=sys.stderr, flush=True)
        make = custom_population if quick else custom_rows
        rows = make(self.definition, config, progress=run.progress)
        source = str(self.path.resolve())
        return rows, {
            "source": source,
            "generator": {"probe_file": source},
            "config": config,
            "split": "test",
        }

    def check_dataset_configs(self, name: str, configs: Sequence[str] | None) -> list[str]:
        from unqover.generate.custom import custom_configs

        available = custom_configs(self.definition)
        unknown = [c for c in configs or () if c not in available]
        if unknown:
            raise UnqoverError(f"the probe {name!r} has the configs {available}, not {unknown}")
        return list(configs or available)

    def build_dataset(self, name: str, output: Path, settings: dict[str, Any]):
        from unqover.hub.build import build_custom_dataset

        return build_custom_dataset(
            self.definition,
            output,
            configs=settings["configs"],
            overwrite=settings["overwrite"],
            progress=settings["progress"],
        )
