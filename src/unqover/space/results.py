"""Offline results in the Space: run folders (with ``results.json``) from a local folder or a Hub dataset repo.

The local folder is the tested twin of the Hub repo: a repo is downloaded with ``snapshot_download`` (results
files only) and then read the same way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from unqover.errors import UnqoverError
from unqover.probe.models import first_line
from unqover.probes.registry import is_unqover
from unqover.report.format import fmt_count, fmt_percent, number
from unqover.report.markdown import headline, sample_of, split_results
from unqover.space.render import probe_of_results

RESULTS = "results.json"
INTERVAL_ESTIMATE = (
    "μ: the interval's estimate"  # a full run's interval is for its bias-corrected μ, not for μ
)
COLUMNS = [
    "run",
    "model",
    "probe",
    "dataset",
    "groups",
    "μ",
    INTERVAL_ESTIMATE,
    "μ low",
    "μ high",
    "η",
    "δ",
    "ε",
    "S",
    "ΔP",
    "B (NLI)",
]


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


def _groups(result: Mapping) -> str | None:
    """``3,000 of 38,500 groups (7.8%)`` for a quick run, ``all 38,500 groups`` for a full run."""
    sample = sample_of(result)
    if sample is not None:
        return f"{fmt_count(sample['groups'])} of {fmt_count(sample['of'])} groups ({fmt_percent(sample.get('fraction'))})"
    total = number(result.get("num_groups"))
    return None if total is None else f"all {fmt_count(total)} groups"


def runs_table(runs: Mapping[str, Mapping]) -> pd.DataFrame:
    """One row per run: model, probe, dataset, how many groups and the headline numbers (blank where a probe has
    none). μ low and μ high bound the interval's own estimate (a quick run's μ; a full run's bias-corrected μ)."""
    rows = []
    for name, results in runs.items():
        result, provenance = results["result"], results.get("provenance") or {}
        dataset = provenance.get("dataset") or {}
        probe = probe_of_results(results)
        unqover = is_unqover(probe)
        mu = {}
        if unqover:
            mu = next(row for row in headline(result) if row["key"] == "mu")
        interval = mu.get("interval") or [None, None]
        rows.append(
            {
                "run": name,
                "model": (provenance.get("model") or {}).get("id"),
                "probe": probe.name if not unqover or results.get("probe") else "unqover",
                "dataset": " / ".join(str(dataset[k]) for k in ("source", "config") if dataset.get(k)),
                "groups": _groups(result) if unqover else None,
                "μ": number(result.get("mu")),
                INTERVAL_ESTIMATE: number(mu.get("estimate")),
                "μ low": number(interval[0]),
                "μ high": number(interval[1]),
                "η": number(result.get("eta")),
                "δ": number(result.get("positional_error")),
                "ε": number(result.get("attributive_error")),
                "S": number(result.get("S")),
                "ΔP": number(result.get("delta_P")),
                "B (NLI)": number(result.get("B")),
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def comparison(runs: Mapping[str, Mapping], name_a: str, name_b: str, folder: Path | None = None) -> str:
    """Markdown comparison of two UnQover runs of the same dataset (B − A), via :mod:`unqover.report.compare`;
    with the results ``folder`` the runs were found in, the shifts get intervals from the runs' predictions."""
    from unqover.probes.registry import compared_scores
    from unqover.report.compare import compare_markdown, compare_results, shifts_between

    if name_a not in runs or name_b not in runs:
        raise UnqoverError("choose two loaded runs to compare")
    if not is_unqover(probe_of_results(runs[name_a])) or not is_unqover(probe_of_results(runs[name_b])):
        raise UnqoverError(
            "comparisons are for two UnQover runs (μ, η, γ); NLI and emotion runs are shown alone"
        )
    a, b = runs[name_a], runs[name_b]
    comparison_ = compare_results(a, b, name_a, name_b)  # refuses runs that are not comparable
    if folder is None:
        return compare_markdown(comparison_)
    paths = tuple(
        Path(folder) / name if name != Path(folder).name else Path(folder) for name in (name_a, name_b)
    )
    shifts, why = shifts_between(paths, a, b, tuple(comparison_["names"]), compared_scores)
    if shifts is None and why is None:
        return compare_markdown(comparison_)
    return compare_markdown(compare_results(a, b, name_a, name_b, shifts=shifts, no_shifts=why))
