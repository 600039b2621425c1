"""``unqover build-datasets``: the dataset folders the probe definitions build, all checked before any is written.

The registry says which datasets there are and which definition builds each; a definition says the rest: its
configs (its builder's ``check_dataset_configs``), the build options it takes (``dataset_options``), whether it is
built when no names are given (``built_by_default``) and how it builds (``builder.build_dataset``). Nothing here names a probe or a
dataset, so a new probe's dataset needs no change here.

Every check that can be made without building comes first: the output folder, the names, each dataset's configs
and the options given (an option that no requested dataset takes is refused with one line that says which
datasets take it). Only then are the datasets built, one at a time, each yielded as soon as it is written.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from unqover.errors import UnqoverError

if TYPE_CHECKING:
    from unqover.hub.folder import BuiltDataset
    from unqover.options import Option
    from unqover.probes.base import ProbeDefinition


@dataclass(frozen=True)
class DatasetBuild:
    """One checked build: the dataset's name, the definition that builds it and the settings it builds from."""

    name: str
    definition: ProbeDefinition
    settings: dict[str, Any]


def build_datasets(
    names: Sequence[str],
    output: Path,
    *,
    configs: Sequence[str] | None,
    overwrite: bool,
    progress: bool,
    given: Mapping[str, Any],
) -> Iterator[BuiltDataset]:
    """Build the datasets ``names`` (none: every dataset of the definitions built by default) into ``output``.

    ``configs``: only these configs of each (None: each dataset's default configs); ``given``: the values of the
    build options (``dest`` -> value, None where not given), as the command line parsed them. Everything is
    checked when this is called, before anything is built; the returned iterator then builds the datasets in
    order and yields each one's :class:`~unqover.hub.folder.BuiltDataset` as soon as it is written.
    """
    from unqover.files import check_writable
    from unqover.probes.registry import dataset_owner

    check_writable(output, folder=True)
    requested = requested_datasets(names)
    owners = {name: dataset_owner(name) for name in requested}
    for name, owner in owners.items():
        owner.builder.check_dataset_configs(name, configs)
    declared = {option.dest for owner in owners.values() for option in owner.dataset_options}
    refused = [dest for dest, value in given.items() if value is not None and dest not in declared]
    if any(not _option(dest).repeat for dest in refused):
        raise UnqoverError(_takers(refused))
    # a repeatable option's entries may belong to different datasets: each is checked on its own below
    common = {"configs": configs, "overwrite": overwrite, "progress": progress}
    builds = [
        DatasetBuild(name, owner, _settings(owner, name, common, given)) for name, owner in owners.items()
    ]
    _refuse_values_nobody_takes(builds, common, given)
    return _build_each(builds, Path(output))


def _build_each(builds: Sequence[DatasetBuild], output: Path) -> Iterator[BuiltDataset]:
    """Build each dataset; each records the probe whose rows it holds (where its builder did not)."""
    from unqover.hub.identity import stamp_identity

    for build in builds:
        built = build.definition.builder.build_dataset(build.name, output, build.settings)
        stamp_identity(built.path, build.definition.builder.rows_probe)
        yield built


def build_custom(
    probe_file: Path, output: Path, configs: Sequence[str] | None, overwrite: bool, progress: bool
) -> BuiltDataset:
    """``build-datasets --probe FILE``: a custom probe's dataset folder ``output/<its name>``."""
    from unqover.files import check_writable
    from unqover.probes.registry import get_probe

    check_writable(output, folder=True)
    probe = get_probe(probe_file=probe_file)
    probe.builder.check_dataset_configs(probe.name, configs)
    settings = {"configs": configs, "overwrite": overwrite, "progress": progress}
    built = probe.builder.build_dataset(probe.name, Path(output), settings)
    from unqover.hub.identity import stamp_identity

    stamp_identity(built.path, probe.builder.rows_probe)
    return built


def requested_datasets(names: Sequence[str]) -> list[str]:
    """``names`` checked against the registry, each once and in the order given; none: every dataset of the
    definitions that are built by default, in registry order."""
    from unqover.probes.registry import PROBES, dataset_names

    if not names:
        return [name for probe in PROBES.values() if probe.built_by_default for name in probe.datasets]
    known = dataset_names()
    unknown = [name for name in dict.fromkeys(names) if name not in known]
    if unknown:
        from unqover.probes.options import did_you_mean

        hint = did_you_mean(unknown[0], known) if len(unknown) == 1 else ""
        raise UnqoverError(f"unknown dataset {', '.join(unknown)}{hint}; choose from {', '.join(known)}")
    return list(dict.fromkeys(names))


def _settings(
    owner: ProbeDefinition, name: str, common: Mapping[str, Any], given: Mapping[str, Any]
) -> dict[str, Any]:
    """What ``owner.builder.build_dataset(name, ...)`` is given: the common settings and the values of its own build
    options (an option's default where it was not given), as the definition's own check leaves them.

    The definition's ``builder.check_dataset_settings`` checks the values and keeps only its own entries of an option it
    shares with another dataset (a repeatable option's value stays a list of the entries as given; a single value
    may be replaced by what the dataset builds from).
    """
    settings = dict(common)
    for option in owner.dataset_options:
        value = given.get(option.dest)
        settings[option.dest] = option.default if value is None else value
    return dict(owner.builder.check_dataset_settings(name, settings))


def _refuse_values_nobody_takes(
    builds: Sequence[DatasetBuild], common: Mapping[str, Any], given: Mapping[str, Any]
) -> None:
    """Refuse a value given that none of the requested datasets builds from (an entry of a repeatable option
    another dataset takes, such as a source of another probe's dataset), naming the dataset that would take it."""
    from unqover.probes.registry import PROBES

    requested = {build.name for build in builds}
    for dest, value in given.items():
        if value is None:
            continue
        for entry in value if isinstance(value, list) else [value]:
            if any(_takes(build.settings.get(dest), entry) for build in builds):
                continue
            option = _option(dest)
            shown = f"{option.flag} {_shown(entry)}" if not option.flag_only else option.flag
            takers = []
            for probe in PROBES.values():
                if not any(o.dest == dest for o in probe.dataset_options):
                    continue
                for name in probe.datasets:
                    if name in requested:
                        continue
                    # a definition that refuses the value says why (one line of its own)
                    settings = _settings(probe, name, common, {dest: [entry] if option.repeat else entry})
                    if _takes(settings.get(dest), entry):
                        takers.append(name)
            if takers:
                raise UnqoverError(f"{shown} needs the {_and(takers)} dataset{_s(takers)}")
            raise UnqoverError(f"no dataset builds from {shown}")


def _takes(setting: Any, entry: Any) -> bool:
    """Whether a dataset builds from ``entry``: a repeatable option's entry is in its list; a single value is
    taken when the setting is kept (a definition's check may turn the value into what it builds from)."""
    return entry in setting if isinstance(setting, list) else setting is not None


def _option(dest: str) -> Option:
    """The build option ``dest`` as the first definition that takes it declares it."""
    from unqover.probes.registry import PROBES

    for probe in PROBES.values():
        for option in probe.dataset_options:
            if option.dest == dest:
                return option
    raise UnqoverError(f"--{dest.replace('_', '-')} is not a build-datasets option")


def _takers(refused: Sequence[str]) -> str:
    """One line: which datasets take the options ``refused`` (dests), with the other options they take.

    ``--source and --labels apply to the nli-gender dataset (and --source eec=PATH to eec-emotion)``: datasets
    whose definitions take the same options are named together; an option named before is shown with its metavar.
    """
    from unqover.probes.registry import PROBES

    groups: dict[tuple[str, ...], tuple[tuple[Option, ...], list[str]]] = {}
    for probe in PROBES.values():
        if any(option.dest in refused for option in probe.dataset_options):
            key = tuple(option.flag for option in probe.dataset_options)
            groups.setdefault(key, (probe.dataset_options, []))[1].extend(probe.datasets)
    if not groups:
        flags = [f"--{dest.replace('_', '-')}" for dest in refused]
        return f"{_and(flags)} appl{'y' if len(flags) > 1 else 'ies'} to no dataset"
    parts, named = [], set()
    for options, datasets in groups.values():
        flags = [
            f"{o.flag} {o.metavar}" if o.flag in named and o.metavar and not o.flag_only else o.flag
            for o in options
        ]
        named.update(o.flag for o in options)
        if not parts:
            verb = "apply" if len(flags) > 1 else "applies"
            parts.append(f"{_and(flags)} {verb} to the {_and(datasets)} dataset{_s(datasets)}")
        else:
            parts.append(f"{_and(flags)} to {_and(datasets)}")
    head, rest = parts[0], parts[1:]
    return head + (f" (and {'; '.join(rest)})" if rest else "")


def _shown(value: Any) -> str:
    """A parsed option value as typed: a ``NAME=PATH`` pair (``options.source``) back to ``NAME=PATH``."""
    if isinstance(value, tuple):
        return "=".join("hub" if part is None else str(part) for part in value)
    return str(value)


def _and(items: Sequence[str]) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _s(items: Sequence[str]) -> str:
    return "s" if len(items) > 1 else ""
