"""The option of every command that reads runs again (``compare``, ``leaderboard``, ``measure``,
``publish-results``): where the word lists of runs generated from word lists are (found by their content,
:mod:`unqover.lexicon.identity`). Light to import: the command line builds its parsers with it."""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["add_word_lists_argument", "reading_with"]


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
