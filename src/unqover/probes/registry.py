"""The probes by name: the only place that names them. The CLI, the Space and the reports ask here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from unqover.errors import UnqoverError
from unqover.probes.base import ProbeDefinition
from unqover.probes.eec import EECProbe
from unqover.probes.nli import NLIProbe
from unqover.probes.unqover import CustomProbe, UnqoverProbe

PROBES: dict[str, ProbeDefinition] = {
    probe.name: probe
    for probe in (
        UnqoverProbe("gender", "UnQover gender-occupation", space_default=400),
        UnqoverProbe("nationality", "UnQover nationality"),  # μ and η need about 28,300 groups
        UnqoverProbe("ethnicity", "UnQover ethnicity", space_default=2000),
        UnqoverProbe("religion", "UnQover religion", space_default=1500),
        NLIProbe(),
        EECProbe(),
    )
}
#: The UnQover bias classes (the generator's and the datasets' names).
UNQOVER_PROBES = tuple(name for name, probe in PROBES.items() if isinstance(probe, UnqoverProbe))


def probe_names() -> list[str]:
    return list(PROBES)


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


def is_unqover(probe: ProbeDefinition) -> bool:
    """Does the probe produce UnQover rows (groups of four, the UnQover measures)?"""
    return isinstance(probe, UnqoverProbe)


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


def headline_of(results: Mapping) -> Mapping | None:
    """The headline numbers of a results dict for ``unqover compare``; None for UnQover runs (compared in full)."""
    try:
        probe = probe_of(results, default="gender")
    except UnqoverError:
        return None
    return None if is_unqover(probe) else probe.headline(results)


def compared_scores(results: Mapping, predictions: Sequence[Path]):
    """For ``unqover compare``: the dataset rows an UnQover run measured (its results' recorded dataset), loaded
    once, and each predictions file's score_1, score_2 and scored-row mask over them."""
    probe = probe_of(results, default="gender")
    if not is_unqover(probe):
        raise UnqoverError(f"{probe.name} runs have no UnQover groups to compare")
    dataset = (results.get("provenance") or {}).get("dataset") or {}
    return probe.compared_scores(dict(dataset), [Path(p) for p in predictions])
