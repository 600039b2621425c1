"""Custom UnQover-style probes: a user's subjects, attributes and templates in a YAML file
(``unqover.lexicon.custom``), probed and measured as the UnQover bias classes are."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from unqover.errors import UnqoverError
from unqover.probes.base import RunOptions
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
        """Also refuse, before any model loads, rows too large for this machine's memory: every run of a custom
        probe (a quick one too: its estimates are of the whole set) generates all its rows first."""
        super().check_config(run, settings)
        if not run.dataset:
            self.check_memory(run.config or "qa")

    def check_memory(self, config: str) -> None:
        """Refuse generating rows that would not fit in the memory available now, with their count."""
        from unqover.env import available_memory
        from unqover.generate.custom import custom_plan, row_bytes
        from unqover.report.format import fmt_bytes, fmt_count, plural

        available = available_memory()
        if available is None:
            return
        plan = custom_plan(self.definition, config)
        needed = plan.num_rows * row_bytes(plan) * MEMORY_PER_ROW_BYTE
        if needed > available:
            d = self.definition
            raise UnqoverError(
                f"{self.path}: its {fmt_count(plan.num_rows)} rows ({plural(len(d.subjects), 'subject')}, "
                f"{plural(len(d.templates), 'template')}, {plural(len(d.attributes), 'attribute')}) need about {fmt_bytes(needed)} of memory, more than "
                f"the {fmt_bytes(available)} available: every run, a quick one too, generates all the "
                "rows first; use fewer subjects, templates or attributes"
            )

    def rows(self, run: RunOptions, settings: dict, config: str) -> tuple[pa.Table, dict]:
        from unqover.generate.custom import custom_plan, custom_rows
        from unqover.report.format import fmt_count

        if run.dataset:
            return super().rows(run, settings, config)
        self.check_memory(config)  # also for `unqover measure` and `compare`, which make the rows again
        count = custom_plan(self.definition, config).num_rows  # known before any row is made
        many = count >= MANY_ROWS
        if run.progress or many:
            line = f"{self.path}: generating {fmt_count(count)} rows ({config})"
            quick = run.limit is not None or any(settings.get(k) is not None for k in ("sample", "precision"))
            if many and not quick:
                line += (
                    f"; a full run scores every one of them: for a quick run, add --limit N (N groups of 4 rows) "
                    f"or {self.quick_run_hint()}"
                )
            print(line, file=sys.stderr, flush=True)
        rows = custom_rows(self.definition, config, progress=run.progress)
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
