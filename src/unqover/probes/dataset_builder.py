"""Building and recognising a probe's dataset folders: the builder part of a definition.

A definition (:class:`unqover.probes.base.ProbeDefinition`) holds its part as ``probe.builder``, a
:class:`DatasetBuilder` bound to it: which configs ``unqover build-datasets`` makes and from which settings, how it
writes the folder, which probe's rows a folder holds and how an earlier version's folder is recognised
(:mod:`unqover.probes.row_identity`). The base behaviour is here: a probe that builds no dataset; each probe's
own is a subclass beside its definition. The folders' names and options are the definition's data (``datasets``,
``dataset_options``, ``built_by_default``, ``legacy_card_names``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from unqover.errors import UnqoverError
from unqover.probes.base import ProbeDefinition


class DatasetBuilder:
    """A definition's builder part (``probe.builder``): it reads the definition's ``name`` and ``datasets``
    through :attr:`probe`; a probe's own building is a subclass."""

    def __init__(self, probe: ProbeDefinition) -> None:
        self.probe = probe  # the definition this part belongs to

    @property
    def rows_probe(self) -> str:
        """The probe whose datasets hold this probe's rows (a dataset records it; ``unqover.probes.row_identity``
        refuses rows of another): its own name unless it reads another probe's dataset."""
        return self.probe.name

    def recognises_columns(self, names: Sequence[str]) -> bool:
        """Whether rows with the columns ``names`` can only be this probe's: how a dataset folder of an earlier
        version whose card's title says nothing is recognised (the UnQover classes share their columns: no)."""
        return False

    def rebuild_command(self, folder: Path) -> str:
        """The command that builds this probe's rows again as the dataset folder ``folder`` would hold them."""
        name = self.probe.datasets[0] if self.probe.datasets else self.rows_probe
        return f"unqover build-datasets {name} --output {folder.parent} --overwrite"

    @staticmethod
    def build_options(settings: dict[str, Any]) -> dict[str, Any]:
        """What every build takes from ``build-datasets``: the configs, whether to overwrite, the progress bar."""
        return {key: settings[key] for key in ("configs", "overwrite", "progress")}

    def check_dataset_configs(self, name: str, configs: Sequence[str] | None) -> list[str]:
        """The configs of the dataset ``name`` to build (``None``: its default configs); unknown ones refused."""
        raise UnqoverError(f"the {self.probe.name} probe builds no dataset")

    def check_dataset_settings(self, name: str, settings: dict[str, Any]) -> dict[str, Any]:
        """The settings the dataset ``name`` builds from, checked: a definition keeps only its own entries of a
        repeatable option it shares with another dataset, and refuses a value it cannot build from (one line).
        The default takes the settings as they are."""
        return settings

    def build_dataset(self, name: str, output: Path, settings: dict[str, Any]):
        """``unqover build-datasets NAME``: write the dataset folder ``output/NAME``; returns a ``BuiltDataset``
        (path, rows per config, seconds). ``settings`` holds ``configs``, ``overwrite``, ``progress`` and the
        values of the definition's ``dataset_options``."""
        raise UnqoverError(f"the {self.probe.name} probe builds no dataset")
