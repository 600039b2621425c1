"""The probes by name: the only place that names them. The CLI, the Space, the reports and the dataset builds ask
here, and each definition says the rest (its options, datasets, table columns, group).

Importing this module loads the definitions only: no model, measure or report code (they load when a run
starts), so that ``unqover --help`` answers at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from unqover.errors import UnqoverError
from unqover.probes.base import REGISTERED, ProbeDefinition
from unqover.probes.custom import CustomProbe
from unqover.probes.eec import EECProbe
from unqover.probes.eec_person import EECPersonProbe
from unqover.probes.nli import NLIProbe
from unqover.probes.unqover import UnqoverProbe
from unqover.probes.unqover_cards import ETHNICITY, GENDER, NATIONALITY, RELIGION

#: the same dict as ``unqover.probes.base.REGISTERED`` (what the modules below the registry see)
PROBES: dict[str, ProbeDefinition] = REGISTERED
PROBES.update(
    {
        probe.name: probe
        for probe in (
            UnqoverProbe("gender", "UnQover gender-occupation", GENDER, space_default=400),
            UnqoverProbe("nationality", "UnQover nationality", NATIONALITY),  # μ and η need ~28,300 groups
            UnqoverProbe("ethnicity", "UnQover ethnicity", ETHNICITY, space_default=2000),
            UnqoverProbe("religion", "UnQover religion", RELIGION, space_default=1500),
            NLIProbe(),
            EECProbe(),
            EECPersonProbe(),
        )
    }
)
#: the probe ``unqover measure`` assumes for a predictions file that names none (files of early versions)
DEFAULT_PROBE = "gender"


def probe_names() -> list[str]:
    return list(PROBES)


def group_members(group: str) -> list[str]:
    """The probes of one group, in registry order (``"unqover"``: the UnQover bias classes)."""
    return [name for name, probe in PROBES.items() if probe.group == group]


def groups() -> dict[str, list[str]]:
    """Every group a definition declares -> its probes, in registry order."""
    names = dict.fromkeys(probe.group for probe in PROBES.values() if probe.group)
    return {group: group_members(group) for group in names}


def dataset_names() -> list[str]:
    """Every dataset ``unqover build-datasets`` makes, in registry order."""
    return [dataset for probe in PROBES.values() for dataset in probe.datasets]


def dataset_owner(name: str) -> ProbeDefinition:
    """The probe whose definition builds the dataset ``name``."""
    for probe in PROBES.values():
        if name in probe.datasets:
            return probe
    raise UnqoverError(f"unknown dataset {name}; choose from {', '.join(dataset_names())}")


def get_probe(name: str | None = None, probe_file: str | Path | None = None) -> ProbeDefinition:
    """A built-in probe by name, or a custom probe from its YAML file."""
    if probe_file is not None:
        custom = CustomProbe(Path(probe_file))
        if custom.name in PROBES:
            raise UnqoverError(
                f"{probe_file}: name: {custom.name!r} is a built-in probe; give your probe another name"
            )
        return custom
    if name not in PROBES:
        raise UnqoverError(
            f"unknown probe {name!r}; choose from {', '.join(PROBES)} or pass --probe FILE.yaml"
        )
    return PROBES[name]


def recorded_probe(record: Mapping) -> str | None:
    """The probe a results.json or a predictions file's provenance names (its ``probe``, its dataset's ``bias``
    or a custom probe's file), or None: a bare file, or one of a version that recorded none."""
    provenance = record.get("provenance", record)
    dataset = provenance.get("dataset") or {}
    generator = dataset.get("generator") or {}
    return (
        record.get("probe") or provenance.get("probe") or dataset.get("bias") or generator.get("probe_file")
    )


def probe_of(record: Mapping, default: str | None = None) -> ProbeDefinition:
    """The probe that wrote a results.json or a predictions file's provenance.

    Files written before the ``"probe"`` key existed are recognised by their dataset's name, else ``default``.
    """
    provenance = record.get("provenance", record)
    name = record.get("probe") or provenance.get("probe")
    generator = (provenance.get("dataset") or {}).get("generator") or {}
    if generator.get("probe_file") and Path(generator["probe_file"]).is_file():
        return CustomProbe(Path(generator["probe_file"]))
    if name in PROBES:
        return PROBES[name]
    bias = (provenance.get("dataset") or {}).get("bias")
    if bias in PROBES:
        return PROBES[bias]
    if name is None and default in PROBES:
        return PROBES[default]
    if name is not None:
        raise UnqoverError(f"this file was written by the probe {name!r}; pass --probe FILE.yaml to read it")
    raise UnqoverError("this file does not say which probe wrote it; pass --bias NAME (or --probe FILE.yaml)")


def results_probe(results: Mapping) -> ProbeDefinition:
    """The probe of a results.json (files of early versions name none: they are UnQover gender runs)."""
    return probe_of(results, default=DEFAULT_PROBE)
