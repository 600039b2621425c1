"""Offline results in the Space: run folders (with ``results.json``) from a local folder or a Hub dataset repo.

The local folder is the tested twin of the Hub repo: a repo is downloaded with ``snapshot_download`` (results
files only) and then read the same way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from unqover.errors import UnqoverError, first_line
from unqover.probes.registry import PROBES, results_probe
from unqover.probes.unqover import INTERVAL_ESTIMATE
from unqover.report.markdown import split_results

__all__ = ["INTERVAL_ESTIMATE", "columns", "comparison", "find_runs", "results_folder", "runs_table"]

RESULTS = "results.json"
#: the columns every run fills in
SHARED_COLUMNS = ["run", "model", "probe", "dataset"]


def columns() -> list[str]:
    """The results table's columns: the shared ones, then each probe's own (registry order, each column once)."""
    own = (column for probe in PROBES.values() for column in probe.table_columns)
    return list(dict.fromkeys([*SHARED_COLUMNS, *own]))


def results_folder(location: str, token: str | None = None) -> Path:
    """A local folder as is; otherwise a Hub dataset repo id, downloaded (results files only)."""
    location = (location or "").strip()
    if not location:
        raise UnqoverError("type a folder of run folders or a Hub dataset repo id (owner/name)")
    local = Path(location).expanduser()
    if local.is_dir():
        return local
    if location.startswith((".", "/", "~")) or location.count("/") != 1:
        raise UnqoverError(f"results folder not found: {location}")
    from huggingface_hub import snapshot_download

    try:
        return Path(
            snapshot_download(
                location, repo_type="dataset", allow_patterns=[f"**/{RESULTS}", RESULTS], token=token
            )
        )
    except Exception as err:  # offline, not found, gated: all end here with the Hub's reason
        raise UnqoverError(f"cannot download the dataset repo {location!r}: {first_line(err)}") from err


def find_runs(folder: Path) -> dict[str, dict]:
    """Every readable ``results.json`` under ``folder``, keyed by its run folder relative to ``folder``."""
    runs: dict[str, dict] = {}
    for path in sorted(Path(folder).rglob(RESULTS)):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            result, provenance = split_results(data)
        except (OSError, ValueError, UnqoverError):
            continue
        name = str(path.parent.relative_to(folder)) if path.parent != Path(folder) else Path(folder).name
        runs[name] = {"provenance": provenance, "result": result}
    if not runs:
        raise UnqoverError(f"no {RESULTS} under {folder}: point to run folders written by `unqover probe`")
    return runs


def runs_table(runs: Mapping[str, Mapping]) -> pd.DataFrame:
    """One row per run: model, probe, dataset and the columns its probe fills in (its definition's
    ``table_row``; blank where a probe has none). For the UnQover probes: how many groups and the headline
    numbers, where μ low and μ high bound the interval's own estimate (a quick run's μ; a full run's
    bias-corrected μ)."""
    rows, header = [], columns()
    for name, results in runs.items():
        provenance = results.get("provenance") or {}
        dataset = provenance.get("dataset") or {}
        probe = results_probe(results)
        own = probe.table_row(results)
        rows.append(
            {
                **dict.fromkeys(header),
                "run": name,
                "model": (provenance.get("model") or {}).get("id"),
                # files of early versions name no probe: they show their probe's group, when it has one
                "probe": probe.name if results.get("probe") or probe.group is None else probe.group,
                "dataset": " / ".join(str(dataset[k]) for k in ("source", "config") if dataset.get(k)),
                **{column: value for column, value in own.items() if column in header},
            }
        )
    return pd.DataFrame(rows, columns=header)


def comparison(runs: Mapping[str, Mapping], name_a: str, name_b: str, folder: Path | None = None) -> str:
    """Markdown comparison of two runs of one probe on the same dataset (B − A), via
    :func:`unqover.probes.compare.compare_runs`; with the results ``folder`` the runs were found in, the shifts get
    intervals from the runs' predictions."""
    if name_a not in runs or name_b not in runs:
        raise UnqoverError("choose two loaded runs to compare")
    a, b = runs[name_a], runs[name_b]
    from unqover.probes.compare import compare_runs

    paths = None
    if folder is not None:
        paths = tuple(
            Path(folder) / name if name != Path(folder).name else Path(folder) for name in (name_a, name_b)
        )
    return compare_runs(a, b, name_a, name_b, paths=paths).markdown
