"""Rows know what they are: the one check that a dataset holds the rows of the probe that is about to read them.

Every dataset ``unqover build-datasets`` writes records its probe, version and each config's fingerprint (the
card's ``unqover:`` entry and every Parquet file's schema metadata, :mod:`unqover.hub.folder`). Every entry point
that takes a dataset (``probe``, ``measure``, ``sample``, ``lm-eval-tasks``, the lm-eval hooks, the Space) calls
:func:`check_rows_of` before a model loads, so that a new probe or command inherits the check. A folder built by an
earlier version is recognised by its card's title (each definition's ``legacy_card_names``) or refused with the
command that builds it again.

The definitions import this module for its names only: the dataset readers load when a check runs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from unqover.errors import UnqoverError
from unqover.probes.base import REGISTERED, ProbeDefinition

if TYPE_CHECKING:
    import pyarrow as pa

#: what ends the card title (``pretty_name``) unqover.hub.custom_card gives every custom probe's dataset
CUSTOM_CARD_SUFFIX = "(custom UnQover probe)"
_CUSTOM_TITLE = re.compile(rf"(.+) {re.escape(CUSTOM_CARD_SUFFIX)}")


def custom_card_name(name: str) -> str:
    """The card title of the custom probe ``name``'s dataset."""
    return f"{name} {CUSTOM_CARD_SUFFIX}"


def rows_probe_of(source: str | Path, expected: ProbeDefinition | None = None) -> str | None:
    """The probe whose rows the dataset ``source`` holds: as it records it (a local folder's card or Parquet
    files, a Hub dataset's card), else as its card's title says for a folder of an earlier version (the titles
    of ``expected`` and of the registered probes) or its columns (where only one probe's rows have them); None
    where nothing says."""
    from unqover.hub.load import (
        card_header,
        check_parquet_files,
        hub_identity,
        recorded_identity,
        split_files,
    )

    folder = Path(source)
    if not folder.is_dir():
        found = hub_identity(str(source))
        return found["probe"] if found else None
    found = recorded_identity(folder)
    if found is not None:
        return found["probe"]
    candidates = [*([expected] if expected else []), *REGISTERED.values()]
    title = card_header(folder).get("pretty_name")
    for probe in candidates:
        if title in probe.legacy_card_names:
            return probe.builder.rows_probe
    custom = _CUSTOM_TITLE.fullmatch(title) if isinstance(title, str) else None
    if custom:
        return custom.group(1)
    # else the columns, where only one probe's rows have them
    columns = [check_parquet_files(files[:1])[0].names for files in split_files(folder).values() if files]
    owners = {
        probe.builder.rows_probe
        for probe in candidates
        for names in columns
        if probe.builder.recognises_columns(names)
    }
    return owners.pop() if len(owners) == 1 else None


def reader_of(found: str | None) -> ProbeDefinition | None:
    """The registered probe that reads the rows of the probe ``found`` (the first, where several do)."""
    return next((probe for probe in REGISTERED.values() if probe.builder.rows_probe == found), None)


def known_rows_probe(source: str | Path, expected: ProbeDefinition | None = None) -> str | None:
    """:func:`rows_probe_of`, refusing in one line a local folder that does not say whose rows it holds, with the
    command that builds it again (``expected``'s, else the folder's name as a dataset's)."""
    found = rows_probe_of(source, expected)
    folder = Path(source)
    if found is None and folder.is_dir():
        if expected is not None:
            command = expected.builder.rebuild_command(folder)
        else:
            reader = REGISTERED.get(folder.name)
            command = (
                reader.builder.rebuild_command(folder)
                if reader and reader.datasets
                else f"unqover build-datasets NAME --output {folder.parent} --overwrite"
            )
        raise UnqoverError(
            f"{source} does not record which probe's rows it holds (built by an earlier unqover?): build it "
            f"again with `{command}`"
        )
    return found


def check_rows_of(probe: ProbeDefinition, source: str | Path | None, fix: str | None = None) -> None:
    """Refuse, in one line, a dataset ``source`` (as the user gave it) that holds another probe's rows, or a local
    folder that does not say whose rows it holds (with the command that builds it again). ``fix`` says what to do
    instead (default: the ``--bias`` of its rows). None (the probe's own rows) and a Hub dataset whose card says
    nothing pass."""
    if source is None or str(source) == "":
        return
    found = known_rows_probe(source, probe)
    if found is not None and found != probe.builder.rows_probe:
        raise UnqoverError(
            f"{source} holds rows of the {found} probe, not {probe.name}: {fix or _fix(found, probe)}"
        )


def _fix(found: str, probe: ProbeDefinition) -> str:
    """What to pass instead: the ``--bias`` (or ``--probe FILE``) that reads these rows, or a dataset of the
    probe's own rows."""
    reader = reader_of(found)
    given = f"pass --bias {reader.name}" if reader else f"pass --probe with the {found} probe's YAML file"
    return f"{given}, or a dataset of {probe.name} rows"


def check_local_build(probe: ProbeDefinition | str, folder: Path) -> None:
    """A probe's own local build (``datasets/unqover/NAME``, read when no dataset is given: by ``unqover probe``
    and the Space) must hold its rows: else one line with the command that builds it again. ``probe``: the
    definition, or the registered name of the probe that builds the dataset."""
    definition = REGISTERED.get(probe) if isinstance(probe, str) else probe
    if definition is not None:
        check_rows_of(
            definition, folder, f"build it again with `{definition.builder.rebuild_command(folder)}`"
        )


def given_or_built(name: str, dataset: str | None, config: str, local: Path) -> tuple[pa.Table, str] | None:
    """The rows of ``config`` from ``--dataset`` (a folder or Hub id), else from the local build ``local`` (checked
    to hold the rows of ``name``, the probe that builds it), and their source as provenance names it; None when
    there is neither (the probe makes its rows itself)."""
    from unqover.hub.load import load_rows, source_name

    if dataset:
        return load_rows(dataset, config), source_name(dataset)
    if (local / "data" / config).is_dir():
        check_local_build(name, local)
        return load_rows(local, config), str(local.resolve())
    return None


def check_columns(rows: pa.Table, columns: Sequence[str], source: str, what: str) -> None:
    """Refuse rows that lack any of ``columns``: one line naming them and asking whether ``source`` is ``what``."""
    missing = [c for c in columns if c not in rows.column_names]
    if missing:
        raise UnqoverError(f"dataset {source} lacks the columns {missing}; is it {what}?")
