"""``unqover leaderboard RUN...``: several models' runs of one probe in one honest table.

Each model's value with an interval that holds simultaneously over all K models (Bonferroni: 1 − α/K each,
recomputed from the run's predictions and rows by its probe), its rank (1 = least biased) and rank interval, and
the pairs whose difference is distinguishable from zero after Holm's correction over the K(K − 1)/2 pairs (the
shifts of ``unqover compare``: paired where the runs share a sample), listed with intervals at α/#pairs. The
statistics are :mod:`unqover.measure.leaderboard`'s; the words :mod:`unqover.report.leaderboard`'s.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from unqover.errors import UnqoverError
from unqover.jobs.compare import add_run_argument, compared_probe, print_and_write, run_name
from unqover.jobs.reread import add_word_lists_argument
from unqover.jobs.verify import check_distinct, verify_run
from unqover.measure.leaderboard import METHOD, bonferroni_confidence, leaderboard_table
from unqover.probes.base import Ranking
from unqover.probes.options import CommandParser, output_path, real
from unqover.results import (
    RESULTS_FILE,
    check_comparable,
    load_results,
    model_of,
    run_settings,
    split_results,
)

__all__ = ["leaderboard", "leaderboard_main", "leaderboard_of_runs", "leaderboard_parser"]


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
    known = list(probe.headline(runs[0]))
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
        numbers, shifts = probe.leaderboard_numbers(Ranking(runs, paths, names, metric, each, pair_level))
    except ValueError as err:  # scores that do not fit the dataset's groups
        raise UnqoverError(f"cannot rank the runs: {err}") from err
    board = leaderboard_table(probe.name, metric, confidence, paths, names, numbers, shifts)
    return {**board, "method": probe.leaderboard_method or METHOD}


# ---------------------------------------------------------------------------------------------------------------
# command line


def leaderboard_parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="unqover leaderboard",
        description="Rank several models' runs of one probe: each value with an interval that holds for all models "
        "at once, its rank and rank interval, and the pairs whose difference is distinguishable from zero.",
    )
    add_run_argument(parser, "runs", "RUN", nargs="+")
    parser.add_argument(
        "--metric",
        help="the headline number to rank by (default: the probe's; UnQover: mu, also eta, positional_error, "
        'attributive_error; NLI: delta_P, also B; emotion: "gender: Cramér\'s V", also "race: Cramér\'s V")',
    )
    parser.add_argument(
        "--confidence", type=real, default=0.95, help="simultaneous confidence (default: %(default)s)"
    )
    parser.add_argument(
        "--output",
        type=output_path,
        metavar="FILE.json|FILE.md|FILE.html",
        help="also write the leaderboard: JSON when the name ends in .json, a self-contained page with the figure "
        "when .html, else Markdown",
    )
    add_word_lists_argument(parser)
    return parser


def leaderboard_main(argv: Sequence[str] | None = None) -> int:
    """``unqover leaderboard RUN... [--metric NAME] [--confidence C] [--output FILE.json|FILE.md|FILE.html]``; returns the
    exit status (2 on errors)."""
    from unqover.report.leaderboard import leaderboard_html, leaderboard_markdown, leaderboard_text

    args = leaderboard_parser().parse_args(list(sys.argv[1:] if argv is None else argv))

    def make() -> tuple[str, Callable[[Path], Path]]:
        board = leaderboard(args.runs, args.metric, args.confidence)

        def write(path: Path) -> Path:
            from unqover.files import write_json_atomic, write_text_atomic

            suffix = path.suffix.lower()
            if suffix == ".json":
                return write_json_atomic(path, board)
            if suffix in (".html", ".htm"):
                return write_text_atomic(path, leaderboard_html(board))
            return write_text_atomic(path, leaderboard_markdown(board))

        return leaderboard_text(board), write

    return print_and_write(args.output, "Leaderboard", make, args.word_lists)


if __name__ == "__main__":
    sys.exit(leaderboard_main())
