"""Word lists known by their content, so that a run can be read again on another machine or checkout.

A run of generated rows records one SHA-256 of the word-list files its rows came from (:func:`lists_sha256`: each
file's name and SHA-256), beside the folder's path. Reading the run again (``unqover compare``, ``leaderboard``,
``measure``, ``publish-results``, the Space), :func:`find_word_lists` looks for a folder with that content in
order: ``--word-lists`` (:func:`given_word_lists`), the folder ``UNQOVER_WORD_LISTS`` names, the recorded folder,
the cached upstream lists, the upstream download (not offline); a run that recorded only its folder tries that
folder first. A folder whose files differ is never used; where none holds the content, one line says which content
was wanted and the options that supply it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path

from unqover.env import WORD_LISTS_VARIABLE, word_lists_folder
from unqover.errors import NotAtHand, UnqoverError, first_line
from unqover.lexicon.upstream import (
    UPSTREAM_COMMIT,
    UPSTREAM_SHA256,
    WordListsUnavailable,
    download_upstream,
    sha256_file,
)

#: a run's ``dataset.generator`` record of its word lists' content: one SHA-256 (:func:`lists_sha256`)
CHECKSUMS_KEY = "word_lists_sha256"
#: the ``--word-lists`` a command that reads runs again was given (None: not given)
_GIVEN: ContextVar[Path | None] = ContextVar("unqover_given_word_lists", default=None)


class WordListsNotFound(NotAtHand):
    """No folder at hand holds the word lists a run was generated from: reading the run cannot go on."""


@contextlib.contextmanager
def given_word_lists(folder: str | os.PathLike | None) -> Iterator[None]:
    """While a command reads runs again: ``--word-lists FOLDER`` (None: not given) is the first place looked."""
    token = _GIVEN.set(None if folder is None else Path(folder))
    try:
        yield
    finally:
        _GIVEN.reset(token)


def content_sha256(digests: Iterable[tuple[str, str]]) -> str:
    """One SHA-256 over files' names and SHA-256s, in the order given."""
    combined = hashlib.sha256()
    for name, digest in digests:
        combined.update(f"{name}\0{digest}\n".encode())
    return combined.hexdigest()


def lists_sha256(root: Path, names: Sequence[str]) -> str | None:
    """The content of the word-list files ``names`` (paths under ``root``, e.g. ``nouns/subjects/religion``) as
    one SHA-256; None when ``root`` lacks one of them."""
    if not all((root / name).is_file() for name in names):
        return None
    return content_sha256((name, sha256_file(root / name)) for name in names)


def upstream_sha256(names: Sequence[str]) -> str | None:
    """What :func:`lists_sha256` gives for the pinned upstream files ``names`` (None: one is no upstream file)."""
    if not all(name in UPSTREAM_SHA256 for name in names):
        return None
    return content_sha256((name, UPSTREAM_SHA256[name]) for name in names)


def describe_lists(wanted: str, names: Sequence[str]) -> str:
    """The wanted content in a few words: its checksum, and the upstream lists' commit where they hold it."""
    upstream = upstream_sha256(names) == wanted
    where = (
        f"the upstream UnQover word lists at commit {UPSTREAM_COMMIT[:7]}" if upstream else ", ".join(names)
    )
    return f"{where} (sha256 {wanted[:16]})"


def _upstream_folder() -> tuple[Path | None, str | None]:
    """The verified upstream lists (cached, else downloaded), or None and why they are not at hand."""
    try:
        return download_upstream(), None
    except WordListsUnavailable as err:
        return None, err.reason[:1].lower() + err.reason[1:]
    except UnqoverError as err:  # a download that is not the pinned content
        return None, str(err).split(". ")[0]


def find_word_lists(
    wanted: str | None,
    names: Sequence[str],
    recorded: str | os.PathLike | None,
    *,
    what: str = "the run",
    fits: Callable[[Path], bool] | None = None,
) -> Path:
    """The folder holding the word lists a run was generated from.

    ``wanted``: the run's recorded checksum of the files ``names`` (None: a run that recorded only its folder,
    ``recorded``, which is then tried before ``UNQOVER_WORD_LISTS``); a folder is taken when it holds that content,
    or, without a checksum, when ``fits`` accepts it (default: any folder). ``--word-lists`` that does not hold the
    content is refused; the other places are passed over. Raises :class:`WordListsNotFound` in one line naming
    what was wanted and what to pass.
    """
    given, tried = _GIVEN.get(), []

    def holds(folder: Path, where: str) -> bool:
        if not folder.is_dir():
            tried.append(f"{where} {folder} is not a folder")
            return False
        if wanted:
            if lists_sha256(folder, names) == wanted:
                return True
            tried.append(f"{where} {folder} holds other lists")
            return False
        try:
            if fits is None or fits(folder):
                return True
            tried.append(f"{where} {folder} gives other rows")
        except UnqoverError as err:  # no word lists at all
            tried.append(f"{where} {folder}: {first_line(err)}")
        return False

    if given is not None:
        if holds(given, "--word-lists"):
            return given
        raise WordListsNotFound(f"{_not_found(wanted, names, recorded, what)}: {tried[-1]}")
    places = [(word_lists_folder(None), WORD_LISTS_VARIABLE)]
    if recorded is not None and not Path(recorded).is_dir():
        tried.append(f"the recorded folder {recorded} is not here")
    elif recorded is not None:  # a run without checksums: its own folder first, where it still is
        places.insert(0 if wanted is None else 1, (Path(recorded), "the recorded folder"))
    for folder, where in places:
        if folder is not None and holds(folder, where):
            return folder
    if wanted is None or upstream_sha256(names) == wanted:
        upstream, why = _upstream_folder()
        if upstream is not None:
            if holds(upstream, "the upstream lists"):
                return upstream
        else:
            tried.append(f"the upstream lists: {why}")
    raise WordListsNotFound(
        f"{_not_found(wanted, names, recorded, what)} ({'; '.join(tried)}): pass --word-lists PATH or set "
        f"{WORD_LISTS_VARIABLE} to a folder holding them"
    )


def _not_found(
    wanted: str | None, names: Sequence[str], recorded: str | os.PathLike | None, what: str
) -> str:
    if wanted:
        return f"the word lists of {what} are not found: it wants {describe_lists(wanted, names)}"
    return f"the word lists of {what} are not found: it records only the folder {recorded}"
