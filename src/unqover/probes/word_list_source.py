"""Which word lists an UnQover run's generated rows came from, recorded by content and found again by it.

A run records, in its dataset's ``generator``, the folder and one SHA-256 of the word-list files its config
reads (``word_lists_sha256``: each file's name and SHA-256); reading the run again generates its rows from a folder holding that content
(:func:`unqover.lexicon.identity.find_word_lists`), wherever the run folder now lies. A run that recorded only
the folder is read from the first folder whose rows it fits (its full rows' fingerprint; a sample's ids are
checked where the scores are joined), the recorded folder included where it exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pyarrow as pa

from unqover.generate.ids import dataset_fingerprint
from unqover.generate.unqover import make_plan, probe_config
from unqover.lexicon import WordLists
from unqover.lexicon.identity import CHECKSUMS_KEY, find_word_lists, lists_sha256

__all__ = ["CHECKSUMS_KEY", "lists_checksum", "plan_files", "recorded_generated_rows"]


def plan_files(bias: str, config: str) -> list[str]:
    """The word-list files (paths under ``word_lists/``) the rows of ``bias``/``config`` are generated from."""
    spec = probe_config(bias, config)
    files = [f"nouns/subjects/{name}" for name in spec.subjects]
    files += [f"activities/{spec.attributes}", f"slots/{spec.templates}"]
    return files + ([f"fillers/{spec.filler}"] if spec.filler else [])


def lists_checksum(root: Path, bias: str, config: str) -> str | None:
    """What a run records of its word lists' content: one SHA-256 of the files its rows came from."""
    return lists_sha256(root, plan_files(bias, config))


def generate(lists: WordLists, bias: str, config: str) -> pa.Table:
    """The rows of ``bias``/``config`` generated in memory from ``lists``."""
    return pa.Table.from_batches(list(make_plan(lists, bias, config).batches()))


def recorded_generated_rows(bias: str, recorded: Mapping, config: str, what: object = "the run") -> pa.Table:
    """The rows a run's ``dataset`` record says were generated from word lists, generated again from a folder
    holding the same content (``--word-lists``, ``UNQOVER_WORD_LISTS``, the recorded folder, the upstream
    lists), or one line saying which content was wanted."""
    generator = recorded.get("generator") or {}
    folder = generator.get("word_lists") or str(recorded.get("source") or "").removeprefix("generated from ")
    wanted = generator.get(CHECKSUMS_KEY)
    made: dict[Path, pa.Table] = {}

    def fits(candidate: Path) -> bool:
        """A run without checksums: its full rows' fingerprint (a sample's ids are checked when joined)."""
        made[candidate] = generate(WordLists(candidate), bias, config)
        full = recorded.get("rows") == made[candidate].num_rows and recorded.get("fingerprint")
        return not full or dataset_fingerprint(made[candidate]["id"]) == recorded["fingerprint"]

    names = plan_files(bias, config)
    where = find_word_lists(wanted or None, names, folder or None, what=str(what), fits=fits)
    return made[where] if where in made else generate(WordLists(where), bias, config)
