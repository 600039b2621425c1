"""The commands that read runs back: ``unqover compare RUN_A RUN_B`` (did bias change? B − A) and ``unqover
leaderboard RUN...`` (several models' runs of one probe in one honest table), each run's numbers checked first.

Checking (:func:`verify_run`). Every surface that ranks, compares or publishes runs (``unqover leaderboard``, a
sweep's leaderboards, ``unqover compare``, ``unqover publish-results``, the Space's tabs) shows a run's headline
numbers only after :func:`verify_run` has measured its predictions again with the probe that wrote it, on the rows
its results record and with the options they record (:meth:`~unqover.probes.readings.ProbeResults.recorded_measure`):
a number edited by hand (a headline value or interval, and every other number the probe checks: an UnQover run's
mean score, γ tables, groups and sample, :meth:`~unqover.probes.readings.ProbeResults.checked_result`), or a results
file copied beside another run's predictions, is refused in one line naming both values. The measures are
deterministic (seeded), so an honest run gives its numbers again exactly. A run's identity (:func:`run_identity`)
is its model as its predictions record it (by the SHA-256 of its weights where recorded:
:func:`unqover.scoring.run_record.model_key`) and a fingerprint of its predictions' contents (their columns, not
their path or metadata): a copy of a run folder, a folder of links to one, or a run of the same model file under
another name, is the same run (:func:`check_distinct`).

Comparing (:func:`compare_runs`) finds the probe that wrote each run (the registry), refuses runs of different
probes and hands the two runs to that probe's :meth:`~unqover.probes.readings.ProbeResults.compare`: the UnQover
probes compare subjects and cells with intervals for the shifts, the others set their headline numbers side by
side. The command line (through :func:`compare_files`) and the Space call it; what a comparison says is the reports'
(:mod:`unqover.report.compare`).

Ranking (:func:`leaderboard`): each model's value with an interval that holds simultaneously over all K models
(Bonferroni: 1 − α/K each, recomputed from the run's predictions and rows by its probe), its rank (1 = least biased)
and rank interval, and the pairs whose difference is distinguishable from zero after Holm's correction over the
K(K − 1)/2 pairs (the shifts of ``unqover compare``: paired where the runs share a sample), listed with intervals at
α/#pairs. The statistics are :mod:`unqover.measure.leaderboard`'s; the words :mod:`unqover.report.leaderboard`'s.
"""

from __future__ import annotations

import hashlib
import math
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from unqover.errors import NotAtHand, UnqoverError
from unqover.format import fmt, fmt_interval, fmt_level
from unqover.jobs.reread import reading_with
from unqover.measure.leaderboard import METHOD, bonferroni_confidence, leaderboard_table
from unqover.probes.base import ComparedRuns, Comparison, ProbeDefinition, Ranking
from unqover.probes.registry import DEFAULT_PROBE, PROBES, get_probe, results_probe
from unqover.results import (
    RESULTS_FILE,
    check_comparable,
    check_numbers,
    load_results,
    model_of,
    predictions_of,
    run_settings,
    split_results,
)
from unqover.scoring.run_record import model_key

__all__ = [
    "Comparison",
    "NumbersDiffer",
    "RunIdentity",
    "check_distinct",
    "compare_files",
    "compare_runs",
    "leaderboard",
    "leaderboard_of_runs",
    "print_and_write",
    "run_identity",
    "verify_found",
    "verify_run",
    "write_comparison",
    "write_leaderboard",
]

#: two numbers agree when they differ by at most this, relative to the larger (the same seeded measure gives the
#: same numbers; JSON keeps every digit of a float)
TOLERANCE = 1e-9


class NumbersDiffer(UnqoverError):
    """A run's results record a number, or a model, that its predictions do not give."""


@dataclass(frozen=True)
class RunIdentity:
    """What a run is: the model its predictions record (None: none recorded) and its predictions' fingerprint."""

    model: str | None
    predictions: str


def predictions_fingerprint(path: Path) -> str:
    """BLAKE2b of a predictions file's contents: each column's name and values, in order (Parquet), or the
    file's bytes (lm-eval's logged samples); the provenance kept in the file's metadata is left out."""
    digest = hashlib.blake2b(digest_size=16)
    if path.suffix != ".parquet":
        digest.update(path.read_bytes())
        return digest.hexdigest()
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    for name in table.column_names:
        column = table[name].combine_chunks()
        digest.update(name.encode() + b"\0" + str(column.type).encode() + b"\0")
        numeric = pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
        if numeric and column.null_count == 0:
            digest.update(column.to_numpy(zero_copy_only=False).tobytes())
        else:
            digest.update("\n".join(map(str, column.to_pylist())).encode())
    return digest.hexdigest()


def run_identity(results: Mapping, predictions: Path) -> RunIdentity:
    """A run's identity: the model its predictions record (else its results'), by the SHA-256 of its weights where
    recorded (the same bytes under another file name are one model), and its predictions' fingerprint."""
    from unqover.predictions import read_provenance

    recorded = read_provenance(predictions), split_results(results)[1]
    model = next(filter(None, (model_key(p.get("model")) for p in recorded)), None)
    model = model or model_of(recorded[0]) or model_of(recorded[1])
    return RunIdentity(model, predictions_fingerprint(predictions))


def check_distinct(identities: Sequence[RunIdentity], names: Sequence[str]) -> None:
    """Refuse two runs that are one: the same model and the same predictions (a copied or linked run folder)."""
    for k, identity in enumerate(identities):
        if identity in identities[:k]:
            first = names[identities.index(identity)]
            raise UnqoverError(
                f"{names[k]} is the same run as {first} (the same model and predictions): give each run once"
            )


def _shown(found: float, recorded: float) -> tuple[str, str]:
    """Both numbers with as many digits as it takes to tell them apart."""
    for digits in (4, 6, 9, 12):
        texts = fmt(found, digits), fmt(recorded, digits)
        if texts[0] != texts[1]:
            return texts
    return repr(float(found)), repr(float(recorded))


def _differ(a: object, b: object) -> bool:
    """Whether two recorded numbers (or None) differ beyond :data:`TOLERANCE`."""
    if a is None or b is None:
        return (a is None) != (b is None)
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) != math.isnan(b)
    return abs(a - b) > TOLERANCE * max(1.0, abs(a), abs(b))


def _interval_differs(a: object, b: object) -> bool:
    pair_a = list(a) if isinstance(a, list | tuple) else [None, None]
    pair_b = list(b) if isinstance(b, list | tuple) else [None, None]
    return any(_differ(x, y) for x, y in zip(pair_a, pair_b, strict=True))


def check_headline(
    probe: ProbeDefinition, recorded: Mapping, measured: Mapping, name: str, level: object = None
) -> None:
    """Refuse, in one line naming both, the first headline value or interval of ``recorded`` (a run's results)
    that ``measured`` (its predictions measured again) does not give; ``level``: the confidence the results
    record, which the predictions were measured at again (an edited level changes every interval)."""
    found = probe.results.headline(measured)
    for key, (value, interval) in probe.results.headline(recorded).items():
        again, again_interval = found.get(key, (None, None))
        if _differ(again, value):
            if again is None or value is None:
                said = (
                    "no value" if again is None else fmt(again),
                    "no value" if value is None else fmt(value),
                )
            else:
                said = _shown(again, value)
            raise NumbersDiffer(
                f"the predictions of {name} give {key} {said[0]}, but its results say {said[1]}"
            )
        if _interval_differs(again_interval, interval):
            at = f" at the {fmt_level(level)} level its results record" if fmt_level(level) else ""
            raise NumbersDiffer(
                f"the predictions of {name} give the interval of {key} {fmt_interval(again_interval, 6)}{at}, but "
                f"its results say {fmt_interval(interval, 6)}"
            )


#: the fields that tell a record of a result's tables apart (a subject, a cluster, an attribute and its type)
_RECORD_KEYS = ("subject", "cluster", "attribute", "attribute_type")


def _record_label(record: object, index: int) -> str:
    """``[Sikh, evil]``: a table record by its subject (or cluster) and attribute, else by its place."""
    named = [
        str(record[k]) for k in _RECORD_KEYS if isinstance(record, Mapping) and record.get(k) is not None
    ]
    return f"[{', '.join(named)}]" if named else f"[{index}]"


def _first_difference(recorded: object, measured: object, label: str) -> tuple[str, object, object] | None:
    """The first place (a dotted label) where ``recorded`` and ``measured`` differ beyond :data:`TOLERANCE`, with
    both values there (None: the place is missing); None when they agree."""
    if isinstance(recorded, Mapping) and isinstance(measured, Mapping):
        for key in dict.fromkeys([*recorded, *measured]):
            where = f"{label}.{key}" if label else str(key)
            if key not in recorded or key not in measured:
                return where, recorded.get(key), measured.get(key)
            found = _first_difference(recorded[key], measured[key], where)
            if found:
                return found
        return None
    if isinstance(recorded, list | tuple) and isinstance(measured, list | tuple):
        if len(recorded) != len(measured):
            return f"{label} (its length)", len(recorded), len(measured)
        for k, (a, b) in enumerate(zip(recorded, measured, strict=True)):
            found = _first_difference(a, b, label + _record_label(a, k))
            if found:
                return found
        return None
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (recorded, measured))
    if _differ(recorded, measured) if numbers else recorded != measured:
        return label, recorded, measured
    return None


def check_result(probe: ProbeDefinition, recorded: Mapping, measured: Mapping, name: str) -> None:
    """Refuse, in one line naming the place and both values, the first number (or word) of a run's result beyond
    its headline (:meth:`~unqover.probes.readings.ProbeResults.checked_result`: a mean score, a γ(x), the groups
    measured, ...) that its predictions measured again do not give."""
    found = _first_difference(
        probe.results.checked_result(recorded), probe.results.checked_result(measured), ""
    )
    if found is None:
        return
    where, said, again = found

    def text(value: object) -> str:
        if value is None:
            return "no value"
        if isinstance(value, int | float) and not isinstance(value, bool):
            return fmt(value) if isinstance(value, float) else f"{value:,}"
        if isinstance(value, Mapping) and {"groups", "of"} <= value.keys():  # a quick run's sample
            return f"{text(value['groups'])} of {text(value['of'])} groups"
        return repr(value) if isinstance(value, str | bool) else "another value"

    if all(isinstance(v, float) for v in (said, again)):
        shown = _shown(again, said)
    else:
        shown = text(again), text(said)
    raise NumbersDiffer(f"the predictions of {name} give {where} {shown[0]}, but its results say {shown[1]}")


def check_scored_model(results: Mapping, predictions: Path, name: str) -> None:
    """Refuse results that name another model than the one their predictions record (where both record one)."""
    from unqover.predictions import read_provenance

    scored = model_of(read_provenance(predictions))
    claimed = model_of(split_results(results)[1])
    if scored and claimed and scored != claimed:
        raise NumbersDiffer(
            f"the results of {name} name the model {claimed}, but its predictions were scored by {scored}"
        )


def verify_run(
    probe: ProbeDefinition, results: Mapping, path: str | Path, name: str, *, results_rows: bool = True
) -> RunIdentity:
    """Check a run's recorded numbers against its predictions, and give its identity: its predictions (the file
    its results record, else its run folder's) measured again by ``probe`` with the options its results record
    must give every headline value and interval they record (and the rest of the probe's ``results.checked_result``), and
    be scored by the model they name. The rows are the dataset the results record (``results_rows``: the rows a leaderboard or a comparison reads, the Space's
    own), else the one the predictions record. Raises :class:`UnqoverError` naming both values where they
    differ, or saying why the run cannot be checked (no predictions, a probe that measures no predictions
    file)."""
    if not probe.results.measures_files:
        raise UnqoverError(
            f"{name}: the {probe.name} probe cannot measure its predictions again, so its numbers cannot be checked"
        )
    result, provenance = split_results(dict(results))
    predictions = predictions_of(path, provenance)
    check_scored_model(results, predictions, name)
    run, options = probe.results.recorded_measure(result)
    dataset = provenance.get("dataset") if isinstance(provenance.get("dataset"), Mapping) else None
    dataset = dataset if results_rows else None
    try:
        measured, _ = probe.results.measure_file(predictions, run, dataset=dataset, **options)
    except (ValueError, KeyError) as err:
        raise UnqoverError(f"cannot measure the predictions of {name} again: {err}") from err
    again = {"result": measured.to_dict(), "provenance": provenance}
    check_headline(
        probe, {"result": result, "provenance": provenance}, again, name, options.get("confidence")
    )
    check_result(probe, result, again["result"], name)
    return run_identity(results, predictions)


def verify_found(probe: ProbeDefinition, results: Mapping, path: str | Path, name: str) -> RunIdentity | None:
    """:func:`verify_run` where it can be made; None (nothing checked) where the run's predictions cannot be
    found or measured again (a results file alone; predictions of other rows than the ones read: ``unqover
    compare`` then sets the numbers side by side without intervals, as recorded). Numbers or a model the
    predictions contradict are refused (:class:`NumbersDiffer`)."""
    if not probe.results.measures_files:
        return None
    try:
        return verify_run(probe, results, path, name)
    except (NumbersDiffer, NotAtHand):
        raise
    except UnqoverError:
        return None


def compared_probe(results: dict, name: str = "the run") -> tuple[ProbeDefinition, bool]:
    """The probe that wrote a run, and whether it could be read. A run of a probe this installation cannot read
    (a custom probe whose YAML file is not where it was run) is compared as an UnQover run, without reading its
    predictions; its results must hold μ. A run that names no probe this installation knows, and is no custom
    probe's run (its dataset records the probe file), is refused, as are numbers that are not numbers."""
    provenance = results.get("provenance") or {}
    named = list(dict.fromkeys(n for n in (results.get("probe"), provenance.get("probe")) if n is not None))
    if len(named) > 1:
        raise UnqoverError(f"{name} names two probes, {named[0]!r} and {named[1]!r}; which one wrote it?")
    generator = (provenance.get("dataset") or {}).get("generator") if isinstance(provenance, dict) else None
    custom = isinstance(generator, dict) and bool(generator.get("probe_file"))
    if named and named[0] not in PROBES and not custom:
        raise UnqoverError(
            f"{name} was written by the probe {named[0]!r}, which is neither a built-in probe "
            f"({', '.join(PROBES)}) nor a custom probe (its dataset would record the probe file)"
        )
    try:
        probe, known = results_probe(results), True
    except UnqoverError:
        probe, known = get_probe(DEFAULT_PROBE), False
    check_numbers(probe.results.headline(results), name)
    return probe, known


def _verified(probe: ProbeDefinition, known: bool, results: dict, path: Path, name: str) -> None:
    """Refuse a run whose numbers its predictions do not give again, or cannot be checked against them (its
    predictions missing, its probe unreadable here): one line saying why."""
    try:
        if not known:
            results_probe(results)  # says why its probe cannot be read here
        verify_run(probe, results, path, name)
    except NumbersDiffer:
        raise
    except UnqoverError as err:
        raise UnqoverError(
            f"cannot check the numbers of {name} against its predictions ({err}); `unqover compare` shows only "
            "numbers that a run's predictions give again"
        ) from err


def compare_runs(
    a: dict,
    b: dict,
    name_a: str,
    name_b: str,
    paths: tuple[Path, Path] | None = None,
    top: int = 10,
    no_shifts: str | None = None,
    strict: bool = False,
) -> Comparison:
    """Compare two runs (results dicts as :func:`unqover.results.load_results` reads them), B − A.

    ``paths`` are the run folders or results files the runs were read from: with them, a probe may read the runs'
    predictions (the UnQover probes' shift intervals); without them, ``no_shifts`` says why the shifts have no
    intervals (the Space's reason for not reading a run's files); ``top`` is the rows per table. ``strict`` (the
    command line, as ``unqover leaderboard``): every number shown is one the runs' predictions give again, and a run
    whose predictions cannot be read or measured again is refused; else (the Space) such a run is compared as its
    results record it. Raises :class:`UnqoverError` when the runs were written by different probes or are not
    comparable, and :class:`~unqover.jobs.compare.NumbersDiffer` when a run's results record numbers that its
    predictions do not give.
    """
    (probe_a, known_a), (probe_b, known_b) = compared_probe(a, name_a), compared_probe(b, name_b)
    if (
        type(probe_a.results).compare is not type(probe_b.results).compare
    ):  # probes that compare alike compare each other's runs
        raise UnqoverError(f"{name_a} and {name_b} were written by different probes")
    runs = ((probe_a, known_a, a, name_a), (probe_b, known_b, b, name_b))
    given = paths
    if not (known_a and known_b):
        paths = None
    if paths is not None and not strict:  # a run that cannot be checked is compared as its results record it
        for (probe, _, run, name), path in zip(runs, paths, strict=True):
            verify_found(probe, run, path, name)
    # the comparison first refuses runs that are not comparable (other probes' results, datasets, modes)
    comparison = probe_a.results.compare(ComparedRuns(a, b, (name_a, name_b), paths, top, no_shifts))
    if given is not None and strict:  # nothing of it is shown unless the predictions give every number again
        for (probe, known, run, name), path in zip(runs, given, strict=True):
            _verified(probe, known, run, path, name)
    return comparison


# ---------------------------------------------------------------------------------------------------------------
# command line


def run_name(path: str | os.PathLike) -> str:
    """A run's default label: its run folder's name, else its results file's name without ``.json``/``.bias``."""
    path = Path(path)
    if path.name == RESULTS_FILE or path.is_dir():
        folder = path.parent if path.name == RESULTS_FILE else path
        return folder.resolve().name or str(folder)
    name = path.name
    for suffix in (".json", ".bias"):
        name = name.removesuffix(suffix)
    return name or str(path)


def compare_files(
    run_a: Path, run_b: Path, *, name_a: str | None = None, name_b: str | None = None, top: int = 10
) -> Comparison:
    """``unqover compare``: the runs at ``run_a`` and ``run_b`` (run folders or results files) read, checked and
    compared B − A by :func:`compare_runs`, each named ``name_a``/``name_b`` (default: :func:`run_name`), ``top``
    rows a table."""
    a, b = load_results(run_a), load_results(run_b)
    name_a, name_b = name_a or run_name(run_a), name_b or run_name(run_b)
    return compare_runs(a, b, name_a, name_b, (run_a, run_b), top=top, strict=True)


def write_comparison(path: Path, comparison: Comparison) -> Path:
    """Write ``comparison`` to ``path``: JSON when its name ends in .json, else Markdown; returns the path."""
    from unqover.files import write_json_atomic, write_text_atomic

    if path.suffix.lower() == ".json":
        return write_json_atomic(path, comparison.data)
    return write_text_atomic(path, comparison.markdown)


def print_and_write(
    output: Path | None,
    what: str,
    make: Callable[[], tuple[str, Callable[[Path], Path]]],
    word_lists: Path | None = None,
) -> int:
    """The command line of ``unqover compare`` and ``unqover leaderboard``: ``make()`` gives the text to print and
    the writer of ``output`` (called when one is given, with its path; it returns the path written), the runs'
    rows generated from ``word_lists`` (``--word-lists``) where they hold the recorded content. ``output`` is
    checked before anything is read (a folder in the way is named, not a temporary file); an error is one
    ``unqover: error:`` line and exit status 2."""
    from unqover.files import check_writable

    try:
        if output:
            check_writable(output, folder=False)
        with reading_with(word_lists):
            text, write = make()
        print(text)
        if output:
            print(f"\n{what} written to {write(output)}")
    except (UnqoverError, OSError) as err:
        print(f"unqover: error: {err}", file=sys.stderr)
        return 2
    return 0


def _run_key(path: Path) -> Path:
    """The run folder a path names (a folder's results.json is that folder), to find one run given twice."""
    path = path.resolve()
    return path.parent if path.name == RESULTS_FILE else path


def _names(paths: Sequence[Path], runs: Sequence[dict]) -> list[str]:
    """Each run's model as its provenance records it, else its folder's or file's name, with the settings in which
    the runs differ (dtype, system prompt, quick run, ...: :func:`unqover.results.run_settings`); names still
    repeated get the folder's name beside them so that every row is told apart."""
    names = [
        ", ".join(filter(None, (model_of(split_results(run)[1]) or run_name(path), settings)))
        for path, run, settings in zip(paths, runs, run_settings(runs), strict=True)
    ]
    return [
        f"{name} ({run_name(path)})" if names.count(name) > 1 else name
        for name, path in zip(names, paths, strict=True)
    ]


def leaderboard(paths: Sequence[Path], metric: str | None = None, confidence: float = 0.95) -> dict:
    """The leaderboard of the runs at ``paths`` (run folders or results files of one probe), as plain data:
    ``probe``, ``metric``, ``confidence``, ``models`` (least biased first), ``distinguishable`` and ``method``.
    Raises :class:`UnqoverError` for fewer than two runs, a run given twice, runs of different probes, datasets or
    configs, an unknown metric, or runs whose intervals cannot be recomputed at the simultaneous level."""
    if not 0 < confidence < 1:
        raise UnqoverError(f"--confidence must lie strictly between 0 and 1, got {confidence}")
    paths = [Path(p) for p in paths]
    if len(paths) < 2:
        raise UnqoverError(
            "a leaderboard ranks at least 2 runs; give two or more run folders or results files"
        )
    keys = [_run_key(p) for p in paths]
    for k, key in enumerate(keys):
        if key in keys[:k]:
            raise UnqoverError(f"{paths[k]} is given twice (as {paths[keys.index(key)]}); give each run once")
    return leaderboard_of_runs([load_results(p) for p in paths], paths, metric, confidence)


def leaderboard_of_runs(
    runs: Sequence[dict],
    paths: Sequence[Path],
    metric: str | None = None,
    confidence: float = 0.95,
    names: Sequence[str] | None = None,
) -> dict:
    """:func:`leaderboard` of results already read (``runs``, from ``paths``): for a caller that reads them its own
    way (the Space, which reads predictions and rows only where it allows). ``names``: each run's name in the
    table (default: the model each records, else its file's name)."""
    if not 0 < confidence < 1:
        raise UnqoverError(f"--confidence must lie strictly between 0 and 1, got {confidence}")
    if len(runs) < 2:
        raise UnqoverError(
            "a leaderboard ranks at least 2 runs; give two or more run folders or results files"
        )
    paths = [Path(p) for p in paths]
    provenances = [split_results(r)[1] for r in runs]
    names = list(names) if names is not None else _names(paths, runs)
    probes = [compared_probe(r, str(p))[0] for r, p in zip(runs, paths, strict=True)]
    written = [
        p.get("probe") or r.get("probe") or probe.name
        for p, r, probe in zip(provenances, runs, probes, strict=True)
    ]
    for k in range(1, len(runs)):
        if written[k] != written[0]:
            raise UnqoverError(
                f"the runs were written by different probes: {paths[0]} by {written[0]}, {paths[k]} by {written[k]}; "
                "a leaderboard ranks runs of one probe"
            )
        check_comparable(
            split_results(runs[0])[0],
            provenances[0],
            split_results(runs[k])[0],
            provenances[k],
            (str(paths[0]), str(paths[k])),
        )
    probe = probes[0]
    known = list(probe.results.headline(runs[0]))
    metric = metric or probe.leaderboard_metric or known[0]
    if metric not in known:
        raise UnqoverError(
            f"--metric {metric!r} is not a headline number of the {probe.name} probe; choose one of {', '.join(known)}"
        )
    check_distinct(
        [verify_run(probe, r, p, str(p)) for r, p, probe in zip(runs, paths, probes, strict=True)],
        [str(p) for p in paths],
    )
    k = len(runs)
    pairs = k * (k - 1) // 2
    each, pair_level = bonferroni_confidence(confidence, k), bonferroni_confidence(confidence, pairs)
    try:
        numbers, shifts = probe.results.leaderboard_numbers(
            Ranking(runs, paths, names, metric, each, pair_level)
        )
    except ValueError as err:  # scores that do not fit the dataset's groups
        raise UnqoverError(f"cannot rank the runs: {err}") from err
    board = leaderboard_table(probe.name, metric, confidence, paths, names, numbers, shifts)
    return {**board, "method": probe.leaderboard_method or METHOD}


def write_leaderboard(path: Path, board: dict) -> Path:
    """Write the leaderboard ``board`` to ``path``: JSON when its name ends in .json, a self-contained page with
    the figure when .html, else Markdown; returns the path."""
    from unqover.files import write_json_atomic, write_text_atomic
    from unqover.report.leaderboard import leaderboard_html, leaderboard_markdown

    suffix = path.suffix.lower()
    if suffix == ".json":
        return write_json_atomic(path, board)
    if suffix in (".html", ".htm"):
        return write_text_atomic(path, leaderboard_html(board))
    return write_text_atomic(path, leaderboard_markdown(board))
