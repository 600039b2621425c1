"""The probes by name: the only place that names them. The CLI, the Space, the reports and the dataset builds ask
here, and each definition says the rest (its options, datasets, table columns, group).

Importing this module loads no definition: :data:`SPECS` says where each lives (``"module:attr"``) and its
group, and :data:`PROBES` imports a definition's module the first time that probe is asked for by name. A
definition module loads no model, measure or report code either (they load when a run starts).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from unqover.errors import UnqoverError
from unqover.probes.base import REGISTERED, ProbeDefinition, ProbeSpec, ProbeTable

#: every built-in probe, in order: where its definition lives and its group; nothing is imported until a probe
#: is asked for by name
SPECS: dict[str, ProbeSpec] = {
    "gender": ProbeSpec("unqover.probes.unqover:GENDER_PROBE", group="unqover"),
    "nationality": ProbeSpec("unqover.probes.unqover:NATIONALITY_PROBE", group="unqover"),
    "ethnicity": ProbeSpec("unqover.probes.unqover:ETHNICITY_PROBE", group="unqover"),
    "religion": ProbeSpec("unqover.probes.unqover:RELIGION_PROBE", group="unqover"),
    "nli-gender": ProbeSpec("unqover.probes.nli:NLI_PROBE"),
    "eec-emotion": ProbeSpec("unqover.probes.eec:EEC_PROBE"),
    "eec-person": ProbeSpec("unqover.probes.eec_person:EEC_PERSON_PROBE"),
}
#: name -> definition, loaded on first access: the same table as ``unqover.probes.base.REGISTERED`` (what the
#: modules below the registry see)
PROBES: ProbeTable = REGISTERED
PROBES.declare(SPECS)
#: the probe ``unqover measure`` assumes for a predictions file that names none (files of early versions)
DEFAULT_PROBE = "gender"


def probe_names() -> list[str]:
    return list(PROBES)


def group_members(group: str) -> list[str]:
    """The probes of one group, in registry order (``"unqover"``: the UnQover bias classes)."""
    return [name for name in PROBES if PROBES.group_of(name) == group]


def groups() -> dict[str, list[str]]:
    """Every group a definition declares -> its probes, in registry order."""
    names = dict.fromkeys(PROBES.group_of(name) for name in PROBES if PROBES.group_of(name))
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
        from unqover.probes.custom import CustomProbe

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
        from unqover.probes.custom import CustomProbe

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
