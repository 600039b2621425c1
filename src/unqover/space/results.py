"""Offline results in the Space: run folders (with ``results.json``) from the Space's results folder or a Hub
dataset repo.

The Space is a public server, so its results box reads only:

* folders inside its **results folder** (``UNQOVER_SPACE_RESULTS_ROOT``; default: its own cache of live-probe runs):
  a path outside it is refused before the disk is looked at, ``..`` is refused, symbolic links are resolved before
  the check, and a link inside the folder that leads out of it is neither followed nor read;
* **Hub dataset repos** (``owner/name``) of the owners the operator allows (``UNQOVER_SPACE_RESULTS_REPOS``;
  default: the project's ``unqover`` namespace and the Space's own owner): their ``results.json`` files only,
  downloaded to the Hub cache.

A results file names other files (its predictions, its dataset): the Space opens none of them where they say. A
comparison reads a run's predictions only inside the results folder (its run folder's ``predictions.parquet``, or
a path the results file records relative to the results folder; absolute paths, ``..`` and links that lead out
are refused, :func:`run_predictions`), and the dataset rows are the Space's own (:func:`own_rows`), never a folder
a results file names.

Every walk is bounded (:data:`MAX_DEPTH` folder levels, :data:`MAX_ENTRIES` files and folders looked at,
:data:`MAX_RUNS` runs, :data:`MAX_RESULTS_BYTES` per file); the runs found within the bounds are shown, with a note
that says which bound was hit. Messages name the location as it was typed or a run by its name, and
:func:`hide_paths` takes any path of the server out of what is shown.
"""

from __future__ import annotations

import json
import os
import re
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath

import pandas as pd

from unqover.errors import UnqoverError, first_line
from unqover.format import fmt_count, fmt_size, plural
from unqover.probes.base import ProbeDefinition
from unqover.probes.registry import PROBES, results_probe
from unqover.probes.unqover import INTERVAL_ESTIMATE
from unqover.results import split_results
from unqover.space import inputs, live
from unqover.space.live import RESULTS
from unqover.space.local import local_ids, recorded_local, shown_model, shown_record

__all__ = [
    "INTERVAL_ESTIMATE",
    "Location",
    "Runs",
    "allowed_repo",
    "check_recorded",
    "columns",
    "comparison",
    "find_runs",
    "hide_paths",
    "leaderboard_metrics",
    "leaderboard_probes",
    "offered_probe",
    "offered_probe_name",
    "open_results",
    "own_rows",
    "rank_runs",
    "rankable_runs",
    "results_folder",
    "run_predictions",
    "runs_table",
    "shown_ids",
    "shown_model",
    "shown_results",
    "source_as_text",
]

PREDICTIONS = "predictions.parquet"
#: the Hub owners whose dataset repos the results box reads when the operator names none: the project's namespace
DEFAULT_REPO_OWNERS = ("unqover",)
#: the columns every run fills in: the probe before its headline numbers, the long names after them
SHARED_COLUMNS = ["probe"]
TRAILING_COLUMNS = ["model", "run", "dataset"]
#: run folders are looked for at most this many folder levels below the folder loaded
MAX_DEPTH = 6
#: files and folders looked at in one walk
MAX_ENTRIES = 20_000
#: runs listed from one folder or repo
MAX_RUNS = 500
#: a results.json larger than this is skipped (a full run's is a few MB)
MAX_RESULTS_BYTES = 50_000_000
#: a Hub dataset repo id: owner/name
DATASET_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}")

OUTSIDE = (
    "the Space reads results only from its own results folder and from Hub dataset repos: type a folder inside "
    "its results folder (as the runs table names them) or a Hub dataset repo id (owner/name)"
)
PARENT = "a results folder cannot go up with '..': type a folder inside the Space's results folder (no '..')"
NO_HUB = "this Space reads no results from the Hub: type a folder inside its results folder"
#: how the Space finds a run's predictions (the end of every refusal of a predictions file)
READS = (
    "the Space reads a run's predictions only inside its results folder (the run folder's predictions.parquet, or "
    "a path relative to the results folder)"
)


def columns() -> list[str]:
    """The results table's columns: the probe, each probe's own (its headline numbers first; registry order, each
    column once), then the model, run and dataset names, which are long and would push the numbers off-screen."""
    own = (column for probe in PROBES.values() for column in probe.table_columns)
    return list(dict.fromkeys([*SHARED_COLUMNS, *own, *TRAILING_COLUMNS]))


# ---------------------------------------------------------------------------------------------------------------
# where results are read


@dataclass(frozen=True)
class Location:
    """A folder to walk for runs, the folder its files must lie in (links resolved), its name for messages, and
    the folder that paths recorded in its results files are relative to (the results folder; a Hub repo's
    snapshot)."""

    folder: Path
    boundary: Path
    name: str
    notes: tuple[str, ...] = ()
    base: Path | None = None


def allowed_repo(repo: str, repos: Sequence[str]) -> bool:
    """Whether the results box may download the Hub dataset repo ``repo``: ``repos`` lists repo ids
    (``owner/name``) and owners (``owner`` or ``owner/*``: all their repos); Hub ids ignore case."""
    wanted = repo.lower()
    owner = wanted.split("/")[0]
    return any(entry.strip().lower() in (wanted, owner, f"{owner}/*") for entry in repos)


def _hub_refusal(repos: Sequence[str]) -> str:
    """The message for a Hub dataset repo the Space does not read."""
    if not repos:
        return NO_HUB
    return (
        f"the Space reads results only from the Hub dataset repos of {', '.join(repos)}: type one of those "
        "(owner/name) or a folder inside its results folder"
    )


def results_folder(
    location: str,
    root: str | os.PathLike,
    token: str | None = None,
    repos: Sequence[str] = DEFAULT_REPO_OWNERS,
) -> Location:
    """Where the results box points: a folder inside ``root`` (relative to it, or an absolute path that resolves
    into it; empty: ``root`` itself), else the id of a Hub dataset repo that ``repos`` allows
    (:func:`allowed_repo`; its results files downloaded). Anything else is refused before it is looked at on disk
    or on the Hub."""
    text = inputs.text(location, "results folder", inputs.MAX_LOCATION_CHARS)
    root = Path(root).resolve()
    if ".." in re.split(r"[\\/]+", text):
        raise UnqoverError(PARENT)
    if text.startswith("~"):
        raise UnqoverError(OUTSIDE)
    typed = Path(text) if text else Path()
    try:
        folder = (typed if typed.is_absolute() else root / typed).resolve()
    except (OSError, RuntimeError) as err:  # a loop of links
        raise UnqoverError(OUTSIDE) from err
    if not folder.is_relative_to(root):
        raise UnqoverError(OUTSIDE)
    name = text or "the Space's results folder"
    if folder.is_dir():
        return Location(folder, root, name, base=root)
    if not typed.is_absolute() and DATASET_ID.fullmatch(text) and ".." not in text:
        if not allowed_repo(text, repos):
            raise UnqoverError(_hub_refusal(repos))
        return _hub_location(text, token)
    if not text:
        raise UnqoverError(
            "the Space has no runs yet: probe a model in the Live probe tab, or type a Hub dataset repo id "
            "(owner/name)"
        )
    raise UnqoverError(
        f"no folder {text!r} in the Space's results folder, and no Hub dataset repo id (owner/name)"
    )


def _hub_location(repo: str, token: str | None) -> Location:
    """The results files of a Hub dataset repo (at most :data:`MAX_RUNS`, :data:`MAX_DEPTH` folders deep),
    downloaded to the Hub cache."""
    from huggingface_hub import HfApi, snapshot_download

    try:
        files = HfApi(token=token).list_repo_files(repo, repo_type="dataset")
        wanted = [f for f in files if PurePosixPath(f).name == RESULTS]
        kept = [f for f in wanted if f.count("/") <= MAX_DEPTH][:MAX_RUNS]
        folder = Path(
            snapshot_download(repo, repo_type="dataset", allow_patterns=kept or [RESULTS], token=token)
        )
    except Exception as err:  # offline, not found, gated: all end here with the Hub's reason
        raise UnqoverError(f"cannot download the dataset repo {repo!r}: {first_line(err)}") from err
    notes = ()
    if len(kept) < len(wanted):
        notes = (
            f"the repo holds {plural(len(wanted), 'results file')}; {fmt_count(len(kept))} of them (at most "
            f"{plural(MAX_DEPTH, 'folder')} deep) are read",
        )
    # the snapshot's files link into the repo's cache folder (snapshots/<commit>/… -> blobs/…)
    return Location(folder, folder.parents[1], repo, notes, base=folder)


# ---------------------------------------------------------------------------------------------------------------
# the bounded walk


class Runs(dict):
    """Runs by name (their folder relative to the folder loaded), with notes on what the walk left out and the
    folder each run was read from (:attr:`folders`)."""

    notes: list[str]
    folders: dict[str, Path]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.notes = []
        self.folders = {}


@dataclass
class _Walk:
    files: list[Path] = field(default_factory=list)
    seen: int = 0
    too_deep: bool = False
    stopped: str | None = None  # the bound that stopped the walk


def _results_files(folder: Path, boundary: Path) -> _Walk:
    """The results files under ``folder``, breadth first (shallow runs first), within the bounds. Links to
    folders are not followed; a linked file is read only when it resolves into ``boundary``."""
    walk = _Walk()
    pending = deque([(folder, 0)])
    while pending and not walk.stopped:
        current, depth = pending.popleft()
        try:
            with os.scandir(current) as entries:
                children = []
                for entry in entries:
                    walk.seen += 1
                    if walk.seen > MAX_ENTRIES:
                        walk.stopped = f"{fmt_count(MAX_ENTRIES)} files and folders looked at"
                        break
                    children.append(entry)
        except OSError:
            continue
        for entry in sorted(children, key=lambda e: e.name):
            try:
                if entry.name == RESULTS and entry.is_file():
                    path = Path(entry.path)
                    if not entry.is_symlink() or path.resolve().is_relative_to(boundary):
                        walk.files.append(path)
                elif entry.is_dir(follow_symlinks=False):
                    if depth < MAX_DEPTH:
                        pending.append((Path(entry.path), depth + 1))
                    else:
                        walk.too_deep = True
            except OSError:
                continue
            if len(walk.files) > MAX_RUNS:
                walk.stopped = f"at most {plural(MAX_RUNS, 'run')}"
                break
    return walk


def find_runs(
    folder: str | os.PathLike, *, boundary: str | os.PathLike | None = None, name: str | None = None
) -> Runs:
    """Every readable ``results.json`` under ``folder`` (within the walk's bounds), keyed by its run folder
    relative to ``folder``; :attr:`Runs.notes` says which bound was hit. ``boundary``: the folder a linked file
    must resolve into (default: ``folder``); ``name``: the folder in messages."""
    folder = Path(folder)
    boundary = Path(boundary if boundary is not None else folder).resolve()
    walk = _results_files(folder, boundary)
    runs, large = Runs(), 0
    for path in sorted(walk.files)[:MAX_RUNS]:
        try:
            if path.stat().st_size > MAX_RESULTS_BYTES:
                large += 1
                continue
            data = json.loads(path.read_text(encoding="utf-8"))
            result, provenance = split_results(data)
        except Exception:  # unreadable, not JSON, not a results dict: not a run
            continue
        key = str(path.parent.relative_to(folder)) if path.parent != folder else folder.name
        runs[key] = {"provenance": provenance, "result": result}
        runs.folders[key] = path.parent
        if isinstance(data.get("probe"), str):
            runs[key]["probe"] = data["probe"]
    where = name or folder.name
    if walk.stopped:
        runs.notes.append(
            f"the search for runs stopped at its bound ({walk.stopped}): the runs found so far are listed; type "
            "a folder inside this one to see the others"
        )
    if walk.too_deep:
        runs.notes.append(
            f"folders more than {plural(MAX_DEPTH, 'level')} below {where} were not searched: type a deeper folder"
        )
    if large:
        runs.notes.append(
            f"{plural(large, 'results file')} over {fmt_size(MAX_RESULTS_BYTES)}B skipped (too large to show here)"
        )
    if not runs:
        raise UnqoverError(
            f"no {RESULTS} in {where}: type a folder of run folders written by `unqover probe` (or by the Live "
            "probe tab), or a Hub dataset repo id (owner/name)"
            + (f" ({'; '.join(runs.notes)})" if runs.notes else "")
        )
    return runs


def open_results(
    location: str,
    root: str | os.PathLike,
    token: str | None = None,
    repos: Sequence[str] = DEFAULT_REPO_OWNERS,
) -> tuple[Runs, Location]:
    """The runs the results box points to (see :func:`results_folder`) and where they were read."""
    where = results_folder(location, root, token, repos)
    runs = find_runs(where.folder, boundary=where.boundary, name=where.name)
    runs.notes[:0] = where.notes
    return runs, where


# ---------------------------------------------------------------------------------------------------------------
# what is shown


def offered_probe(results: Mapping, run: str | None = None) -> ProbeDefinition:
    """The Space's probe that wrote ``results``. A run of a probe the Space does not offer (a custom probe's
    YAML file, an unknown name) is refused in web terms, and no file it names is read."""
    provenance = results.get("provenance") if isinstance(results.get("provenance"), Mapping) else {}
    name = results.get("probe") or provenance.get("probe")
    dataset = provenance.get("dataset") if isinstance(provenance.get("dataset"), Mapping) else {}
    generator = dataset.get("generator") if isinstance(dataset.get("generator"), Mapping) else {}
    if generator.get("probe_file") or (name is not None and name not in PROBES):
        what = f"the run {run!r}" if run else "this run"
        label = f" {str(name)[:80]!r}" if isinstance(name, str) else ""
        raise UnqoverError(
            f"{what} was written by the probe{label}, which this Space does not offer (it is a custom probe): the "
            f"Space shows runs of its own probes ({', '.join(PROBES)}). The report.md and report.html in the run's "
            "folder show this run"
        )
    return results_probe(results)


def runs_table(runs: Mapping[str, Mapping], text: bool = False) -> pd.DataFrame:
    """One row per run: model, probe, dataset and the columns its probe fills in (its definition's
    ``results.table_row``; blank where a probe has none, or where the Space does not offer the run's probe). For the
    UnQover probes: how many groups and the headline numbers, where μ low and μ high bound the interval's own
    estimate (a quick run's μ; a full run's bias-corrected μ). ``text``: the numbers as the Results tab shows
    them, printed as the reports print them (the definition's ``results.table_text``)."""
    rows, header = [], columns()
    for name, results in runs.items():
        provenance = results.get("provenance") or {}
        dataset = provenance.get("dataset") if isinstance(provenance.get("dataset"), Mapping) else {}
        try:
            probe = offered_probe(results)
            own = probe.results.table_text(results) if text else probe.results.table_row(results)
            # files of early versions name no probe: they show their probe's group, when it has one
            shown = probe.name if results.get("probe") or probe.group is None else probe.group
        except Exception:
            own, shown = {}, str(results.get("probe") or provenance.get("probe") or "")[:80] or None
        rows.append(
            {
                **dict.fromkeys(header),
                "run": name,
                "model": shown_record(provenance.get("model")),
                "probe": shown,
                "dataset": " / ".join(str(dataset[k]) for k in ("source", "config") if dataset.get(k)),
                **{column: value for column, value in own.items() if column in header},
            }
        )
    return pd.DataFrame(rows, columns=header)


# ---------------------------------------------------------------------------------------------------------------
# the files a results file names


def _absolute(text: str) -> bool:
    """Whether a recorded path is absolute on any system (``/x``, ``\\x``, ``C:x``, ``~``)."""
    return (
        PurePosixPath(text).is_absolute() or bool(PureWindowsPath(text).drive) or text.startswith(("\\", "~"))
    )


def shown_results(results: Mapping) -> Mapping:
    """``results`` whose recorded model (and its adapter) is named as :func:`unqover.space.local.shown_record`
    names it, with no ``path``: for the pages that render it (the View tab's heading, the live probe's report)."""
    provenance = results.get("provenance")
    model = provenance.get("model") if isinstance(provenance, Mapping) else None
    if isinstance(model, str):
        return {**results, "provenance": {**provenance, "model": shown_model(model)}}
    if not isinstance(model, Mapping):
        return results
    shown = {k: v for k, v in model.items() if k != "path"}
    for key in ("id", "name"):
        if key in shown:
            shown[key] = shown_record(model)
    if isinstance(shown.get("adapter"), Mapping):
        adapter = {k: v for k, v in shown["adapter"].items() if k != "path"}
        adapter["id"] = shown_record(shown["adapter"])
        shown["adapter"] = adapter
    elif isinstance(shown.get("adapter"), str):
        shown["adapter"] = shown_model(shown["adapter"])
    return {**results, "provenance": {**provenance, "model": shown}}


def shown_ids(runs: Mapping[str, Mapping], where: Location | None = None) -> dict[str, str]:
    """The local models the runs record (ids and paths) with their names on the page
    (:func:`unqover.space.local.local_ids`), for :func:`unqover.space.local.hide_models`. With ``where`` (the
    :class:`Location` they were read from), also the models their predictions record, where they can be read
    (a refusal names both when they differ)."""
    from unqover.jobs.models import scored_model

    records = []
    for name, data in runs.items():
        provenance = data.get("provenance") if isinstance(data, Mapping) else None
        if isinstance(provenance, Mapping):
            records.append(provenance.get("model"))
        if where is not None and isinstance(runs, Runs):
            try:
                records.append(scored_model(run_predictions(runs, name, where)))
            except Exception:  # no predictions here, or unreadable: nothing they record to hide
                continue
    return local_ids(records)


def run_predictions(runs: Runs, name: str, where: Location) -> Path:
    """The predictions file of the run ``name``, resolved (links too) inside ``where.boundary``: the path its
    results file records, taken relative to the results folder (``where.base``), else its run folder's
    ``predictions.parquet``. An absolute path, ``..`` or a path that leads outside is refused whether or not a
    file is there; the messages name the run, never a path."""
    provenance = runs[name].get("provenance")
    recorded = provenance.get("predictions") if isinstance(provenance, Mapping) else None
    what = f"the run {name!r}"
    if recorded not in (None, ""):
        if not isinstance(recorded, str) or "\x00" in recorded:
            raise UnqoverError(f"{what} names its predictions file with something that is no path; {READS}")
        if _absolute(recorded):
            raise UnqoverError(f"{what} names its predictions file by an absolute path; {READS}")
        if ".." in re.split(r"[\\/]+", recorded):
            raise UnqoverError(f"{what} names its predictions file with '..'; {READS}")
        path = (where.base or where.boundary) / recorded
    else:
        path = runs.folders[name] / PREDICTIONS
    try:
        resolved = path.resolve()
        inside = resolved.is_relative_to(where.boundary)
        found = inside and resolved.is_file()
    except (OSError, RuntimeError, ValueError):  # a loop of links, a name too long
        inside = found = False
    if not inside:
        raise UnqoverError(f"{what} names a predictions file that leads outside the results folder; {READS}")
    if not found:
        raise UnqoverError(f"the predictions of the run {name!r} are missing; {READS}")
    return resolved


def own_rows(results: Mapping, predictions: Path, word_lists: str | os.PathLike | None) -> dict:
    """``results`` with its predictions file (found by :func:`run_predictions`) and the Space's own dataset rows
    of its probe: generated from the Space's ``word_lists``, else the probe's own dataset (as the live probe
    reads them). No folder the results file names is opened; rows that are not the run's fail to match its ids,
    and its shifts then get no intervals."""
    provenance = dict(results.get("provenance") or {})
    recorded = provenance.get("dataset") if isinstance(provenance.get("dataset"), Mapping) else {}
    generator = {"bias": offered_probe(results).name}
    if word_lists is not None:
        generator["word_lists"] = str(Path(word_lists).resolve())
    provenance["predictions"] = str(predictions)
    provenance["dataset"] = {**recorded, "generator": generator}
    return {**results, "provenance": provenance}


def check_recorded(runs: Runs, name: str, where: Location, word_lists: str | os.PathLike | None) -> None:
    """Refuse to show the run ``name`` when its predictions (read inside the results folder, over the Space's own
    rows) give other numbers, or another model, than its results record (:func:`unqover.jobs.compare.verify_found`);
    a run whose predictions cannot be read or measured here (a Hub repo's results file) is shown as recorded."""
    from unqover.jobs.compare import verify_found

    try:
        predictions = run_predictions(runs, name, where)
    except UnqoverError:
        return
    probe = offered_probe(runs[name], name)
    verify_found(
        probe, own_rows(source_as_text(runs[name]), predictions, word_lists), runs.folders[name], name
    )


def source_as_text(results: Mapping) -> Mapping:
    """``results`` whose dataset source, where it is a path (absolute, ``~`` or ``.``), is text that names no
    file (``folder /normalized/path``): the comparison's check that two runs measured the same dataset then
    compares the texts, and no path a results file names is looked at on disk (it would tell whether a file is
    there, or where a link leads)."""
    provenance = results.get("provenance")
    dataset = provenance.get("dataset") if isinstance(provenance, Mapping) else None
    source = dataset.get("source") if isinstance(dataset, Mapping) else None
    if not isinstance(source, str) or not (_absolute(source) or source.startswith(".")):
        return results
    text = "folder " + os.path.normpath(source)
    return {**results, "provenance": {**provenance, "dataset": {**dataset, "source": text}}}


#: a path of the server in a message: a ``/`` (or ``~/``) that starts a word, after a space, a quote, a bracket or
#: ``=`` (not one inside a URL, an id, a fraction or a formula)
_SERVER_PATH = re.compile(r"(?<![^\s'\"`(\[=])(?:~/|/)(?=[\w.@+~-])[^\s'\"`()<>\[\]|,;*]+")
ON_THE_SERVER = "a path on the server"


def hide_paths(text: str, folders: Mapping[str | os.PathLike, str] | None = None) -> str:
    """``text`` with no path of the server: a path inside one of ``folders`` (folder -> how the page names it) as
    its part below the folder (a run's name in the results folder), the folder itself by its name, any other
    absolute path as :data:`ON_THE_SERVER`."""
    named: dict[str, str] = {}
    for folder, label in (folders or {}).items():
        for form in {str(Path(folder)), str(Path(folder).resolve())}:
            if form != os.sep:  # a folder "/" would name every path
                named[form] = named[form.replace("_", "\\_")] = label  # also as Markdown escapes it
    for form in sorted(named, key=len, reverse=True):
        # the folder itself, or a path below it (not a longer name that starts alike: /srv2 is not in /srv)
        pattern = re.compile(re.escape(form) + r"(/|\\|(?![\w.@+~-]))")
        text = pattern.sub(lambda m, label=named[form]: "" if m.group(1) else label, text)
    return _SERVER_PATH.sub(ON_THE_SERVER, text)


def comparison(
    runs: Mapping[str, Mapping],
    name_a: str,
    name_b: str,
    folder: Location | str | os.PathLike | None = None,
    word_lists: str | os.PathLike | None = None,
) -> str:
    """Markdown comparison of two runs of one probe on the same dataset (B − A), via
    :func:`unqover.jobs.compare.compare_runs`. With the ``folder`` the runs were found in (the
    :class:`Location` of :func:`open_results`, or a results folder), the shifts get intervals from the runs'
    predictions inside it (:func:`run_predictions`) over the Space's own rows (:func:`own_rows`, from
    ``word_lists``); else the comparison says why they have none."""
    where = folder
    if where is not None and not isinstance(where, Location):
        inside = Path(where).resolve()
        where = Location(Path(where), inside, inside.name, base=inside)
    if name_a not in runs or name_b not in runs:
        raise UnqoverError("choose two loaded runs to compare")
    a, b = runs[name_a], runs[name_b]
    offered_probe(a, name_a)
    offered_probe(b, name_b)
    a, b = source_as_text(a), source_as_text(b)
    from unqover.jobs.compare import compare_runs

    paths, why = None, None
    if where is not None and isinstance(runs, Runs):
        try:
            found = [run_predictions(runs, name, where) for name in (name_a, name_b)]
        except UnqoverError as err:
            why = str(err)
        else:
            a, b = (own_rows(run, path, word_lists) for run, path in zip((a, b), found, strict=True))
            paths = (runs.folders[name_a], runs.folders[name_b])
    compared = compare_runs(a, b, name_a, name_b, paths=paths, no_shifts=why)
    folders = {} if where is None else {where.boundary: "the results folder"}
    if word_lists is not None:
        folders[word_lists] = "the Space's word lists"
    return hide_paths(live.web_text(compared.markdown), folders)


# ---------------------------------------------------------------------------------------------------------------
# the leaderboard


def leaderboard_probes() -> list[str]:
    """The probes whose runs ``unqover leaderboard`` ranks (their definition names a ``leaderboard_metric``)."""
    return [name for name, probe in PROBES.items() if probe.leaderboard_metric]


def leaderboard_metrics(probe: str) -> list[str]:
    """The headline names a leaderboard of ``probe`` may rank by, its ``leaderboard_metric`` first."""
    definition = PROBES[inputs.choice(probe, "probe", leaderboard_probes())]
    try:
        names = list(definition.results.headline({"result": {}, "provenance": {}}))
    except Exception:  # a headline that needs a real result: its default metric only
        names = []
    return list(dict.fromkeys([definition.leaderboard_metric, *names]))


def offered_probe_name(results: Mapping) -> str | None:
    """The name of the Space's probe that wrote ``results``, or None (:func:`offered_probe` refuses it)."""
    try:
        return offered_probe(results).name
    except Exception:
        return None


def rankable_runs(
    runs: Mapping[str, Mapping], probe: str, where: Location | None = None, notes: list[str] | None = None
) -> list[str]:
    """The names of the runs of ``probe`` among ``runs`` that its leaderboard ranks (full runs, and quick runs
    where the probe ranks samples): what a leaderboard ranks when no runs are chosen. With ``where`` (the
    :class:`Location` they were read from, and ``runs`` a :class:`Runs`), also each run once, by what it holds
    (a copy of a run, or a folder of links to one, is the run it copies: :func:`unqover.jobs.compare.run_identity`),
    only runs whose predictions can be read, and only the largest group of runs a leaderboard can rank together
    (one dataset, config, split and mode); what is left out, and why, is added to ``notes``."""
    definition = PROBES[probe]

    def ranked(results: Mapping) -> bool:
        full = definition.results.quick_run_line(results.get("result") or {}) is None
        return full or definition.leaderboard_ranks_samples

    names = [
        name for name, results in runs.items() if offered_probe_name(results) == probe and ranked(results)
    ]
    if where is None or not isinstance(runs, Runs):
        return names
    return _distinct_comparable(runs, names, where, notes if notes is not None else [])


def _distinct_comparable(runs: Runs, names: Sequence[str], where: Location, notes: list[str]) -> list[str]:
    """``names`` less the runs whose predictions cannot be read, those that are an earlier run again, and those
    a leaderboard cannot rank beside the largest group of comparable runs (another dataset, config, split or
    mode: :func:`unqover.results.check_comparable`); each left out with its reason in ``notes``."""
    from unqover.jobs.compare import run_identity

    seen: dict = {}
    groups: list[list[str]] = []
    for name in names:
        try:
            identity = run_identity(runs[name], run_predictions(runs, name, where))
        except UnqoverError as err:
            notes.append(f"{name} is left out: {err}")
            continue
        if identity in seen:
            notes.append(
                f"{name} is left out: it is the same run as {seen[identity]} (the same model and predictions)"
            )
            continue
        seen[identity] = name
        for group in groups:
            try:
                _comparable(runs, group[0], name)
            except UnqoverError:
                continue
            group.append(name)
            break
        else:
            groups.append([name])
    if not groups:
        return []
    kept = max(groups, key=len)
    for group in groups:
        if group is not kept:
            notes += [f"{name} is left out: {_reason(runs, kept[0], name)}" for name in group]
    return kept


def _comparable(runs: Runs, first: str, other: str) -> None:
    """Raise when a leaderboard would refuse to rank the run ``other`` beside the run ``first``."""
    from unqover.results import check_comparable

    (ra, pa), (rb, pb) = (split_results(source_as_text(runs[n])) for n in (first, other))
    check_comparable(ra, pa, rb, pb, (first, other))


def _reason(runs: Runs, first: str, other: str) -> str:
    """Why the run ``other`` cannot be ranked beside the run ``first``."""
    try:
        _comparable(runs, first, other)
    except UnqoverError as err:
        return str(err)
    return f"it is not comparable with {first}"


def _board_names(runs: Mapping[str, Mapping], names: Sequence[str]) -> list[str]:
    """Each run's name in the table: the model it records, or its run's name where the model is a path (no path
    of the server is shown, :func:`unqover.space.local.recorded_local`); repeated names get the run's name beside
    them, as the CLI does."""
    from unqover.results import model_of

    shown = []
    for name in names:
        provenance = runs[name].get("provenance") or {}
        model = model_of(provenance)
        shown.append(name if not model or recorded_local(provenance.get("model")) else model)
    return [
        f"{label} ({name})" if shown.count(label) > 1 and label != name else label
        for label, name in zip(shown, names, strict=True)
    ]


def rank_runs(
    runs: Runs,
    names: Sequence[str],
    where: Location,
    probe: str,
    metric: str | None = None,
    word_lists: str | os.PathLike | None = None,
) -> dict:
    """The leaderboard of the runs ``names`` (default: :func:`rankable_runs` of ``probe``, each run once, those of
    one config; ``left_out`` then says which runs it left out and why) as ``unqover leaderboard``
    computes it over their run folders (:func:`unqover.jobs.compare.leaderboard_of_runs`), with the predictions
    read only inside the results folder (:func:`run_predictions`) and the Space's own dataset rows
    (:func:`own_rows`). Each model's ``run`` is its run's name, never a path."""
    from unqover.jobs.compare import leaderboard_of_runs

    probe = inputs.choice(probe, "probe", leaderboard_probes())
    metric = inputs.choice(metric, "metric", leaderboard_metrics(probe)) if metric else None
    notes: list[str] = []
    names = list(dict.fromkeys(names or rankable_runs(runs, probe, where, notes)))
    if len(names) < 2:
        raise UnqoverError(
            f"a leaderboard ranks at least 2 runs of {probe}: choose two or more runs, or load a folder with two "
            "or more runs of it"
        )
    for name in names:
        if name not in runs:
            raise UnqoverError("list the runs and choose the runs to rank")
        if offered_probe(runs[name], name).name != probe:
            raise UnqoverError(f"the run {name!r} is not a run of {probe}: choose runs of one probe")
    chosen = [own_rows(source_as_text(runs[n]), run_predictions(runs, n, where), word_lists) for n in names]
    paths = [runs.folders[n] for n in names]
    board = leaderboard_of_runs(chosen, paths, metric or None, names=_board_names(runs, names))
    by_path = {str(path): name for path, name in zip(paths, names, strict=True)}
    board["models"] = [{**model, "run": by_path[model["run"]]} for model in board["models"]]
    if notes:
        board["left_out"] = notes
    return board
