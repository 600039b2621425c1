"""``unqover compare RUN_A RUN_B``: did bias change between two runs of one probe? (B − A.)

:func:`compare_runs` finds the probe that wrote each run (the registry), refuses runs of different probes and hands
the two runs to that probe's :meth:`~unqover.probes.base.ProbeDefinition.compare`: the UnQover probes compare
subjects and cells with intervals for the shifts, the others set their headline numbers side by side. The command
line (:func:`main`) and the Space call it; what a comparison says is the reports' (``unqover.report.compare*``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from unqover.errors import UnqoverError
from unqover.jobs.reread import add_word_lists_argument, reading_with
from unqover.jobs.verify import NumbersDiffer, verify_found, verify_run
from unqover.probes.base import ComparedRuns, Comparison, ProbeDefinition
from unqover.probes.options import CommandParser, non_negative, output_path
from unqover.probes.registry import DEFAULT_PROBE, PROBES, get_probe, results_probe
from unqover.results import RESULTS_FILE, check_numbers, load_results

__all__ = ["Comparison", "compare_main", "compare_parser", "compare_runs"]


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
    check_numbers(probe.headline(results), name)
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
    comparable, and :class:`~unqover.jobs.verify.NumbersDiffer` when a run's results record numbers that its
    predictions do not give.
    """
    (probe_a, known_a), (probe_b, known_b) = compared_probe(a, name_a), compared_probe(b, name_b)
    if (
        type(probe_a).compare is not type(probe_b).compare
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
    comparison = probe_a.compare(ComparedRuns(a, b, (name_a, name_b), paths, top, no_shifts))
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


def add_run_argument(parser: argparse.ArgumentParser, dest: str, metavar: str, **keywords) -> None:
    """A run that ``unqover compare`` or ``unqover leaderboard`` reads: its run folder or its results file
    (``keywords``: argparse's others, such as ``nargs``)."""
    parser.add_argument(
        dest, type=Path, metavar=metavar, help="run folder (with results.json) or results JSON", **keywords
    )


def compare_parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="unqover compare",
        description="Compare two UnQover runs measured on the same dataset, config and mode: shifts of μ, η, δ, ε "
        "with both intervals, and the subjects and subject–attribute pairs that changed most (B − A).",
    )
    add_run_argument(parser, "run_a", "RUN_A")
    add_run_argument(parser, "run_b", "RUN_B")
    parser.add_argument("--top", type=non_negative, default=10, help="rows per table (default: %(default)s)")
    parser.add_argument(
        "--output",
        type=output_path,
        metavar="FILE.json|FILE.md",
        help="also write the comparison: JSON when the name ends in .json (shifts with their intervals, p-values "
        "and pairing), else Markdown",
    )
    parser.add_argument("--name-a", help="label of RUN_A (default: its folder or file name)")
    parser.add_argument("--name-b", help="label of RUN_B (default: its folder or file name)")
    add_word_lists_argument(parser)
    return parser


def _write(path: Path, comparison: Comparison) -> Path:
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


def compare_main(argv: Sequence[str] | None = None) -> int:
    """``unqover compare RUN_A RUN_B [--top K] [--output FILE.json|FILE.md]``; returns the exit status (2 on errors)."""
    args = compare_parser().parse_args(list(sys.argv[1:] if argv is None else argv))

    def make() -> tuple[str, Callable[[Path], Path]]:
        a, b = load_results(args.run_a), load_results(args.run_b)
        name_a = args.name_a or run_name(args.run_a)
        name_b = args.name_b or run_name(args.run_b)
        comparison = compare_runs(a, b, name_a, name_b, (args.run_a, args.run_b), top=args.top, strict=True)
        return comparison.text, lambda path: _write(path, comparison)

    return print_and_write(args.output, "Comparison", make, args.word_lists)


if __name__ == "__main__":
    sys.exit(compare_main())
