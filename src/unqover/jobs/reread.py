"""The option of every command that reads runs again (``compare``, ``leaderboard``, ``measure``,
``publish-results``): where the word lists of runs generated from word lists are (found by their content,
:mod:`unqover.lexicon.identity`); and the headline numbers ``unqover leaderboard --metric`` names, in the probes'
words (the command line names no probe). Light to import: the command line builds its parsers with it."""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["LEADERBOARD_METRICS", "add_word_lists_argument", "reading_with"]

#: the headline numbers ``unqover leaderboard`` ranks runs by, each probe's default first
LEADERBOARD_METRICS = (
    "UnQover: mu, also eta, positional_error, attributive_error; NLI: delta_P, also B; emotion: "
    '"gender: Cramér\'s V", also "race: Cramér\'s V"'
)


def add_word_lists_argument(parser: argparse.ArgumentParser) -> None:
    """``--word-lists PATH``: the folder holding the word lists the runs' rows were generated from."""
    parser.add_argument(
        "--word-lists",
        type=Path,
        metavar="PATH",
        help="runs generated from word lists: a word_lists/ folder holding the files they record (checked by "
        "SHA-256; default: the folder UNQOVER_WORD_LISTS names, the recorded folder, the cached or downloaded "
        "upstream lists)",
    )


@contextlib.contextmanager
def reading_with(word_lists: str | os.PathLike | None) -> Iterator[None]:
    """While runs are read again: ``--word-lists`` (None: not given) is the first place their word lists are
    looked for (:func:`unqover.lexicon.identity.given_word_lists`)."""
    from unqover.lexicon.identity import given_word_lists

    with given_word_lists(word_lists):
        yield
