"""The option of every command that reads runs again (``compare``, ``leaderboard``, ``measure``,
``publish-results``): where the word lists of runs generated from word lists are (found by their content,
:mod:`unqover.lexicon.identity`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from unqover.lexicon.identity import given_word_lists

__all__ = ["add_word_lists_argument", "given_word_lists"]


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
