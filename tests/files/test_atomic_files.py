"""unqover.files.atomic_path, the one atomic writer: normal permissions, no leftovers, the old file kept on failure."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from unqover.files import atomic_path, write_json_atomic, write_text_atomic
from unqover.predictions import read_predictions, write_predictions
from unqover.scoring import shard_files


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


SCORES = pa.table({"id": ["a", "b"], "score_1": [0.1, 0.2], "score_2": [0.3, 0.4]})


def write_with_every_writer(folder: Path) -> list[Path]:
    """One file through each writer that goes through atomic_path."""
    written = [
        write_text_atomic(folder / "report.md", "# report\n"),
        write_json_atomic(folder / "results.json", {"a": 1}),
        write_predictions(folder / "predictions.parquet", SCORES, {"model": "m"}),
    ]
    shard_files._atomic_write(folder / "state.json", lambda tmp: Path(tmp).write_text("{}", encoding="utf-8"))
    shard_files._atomic_write(folder / "chunk.parquet", lambda tmp: pq.write_table(SCORES, tmp))
    return [*written, folder / "state.json", folder / "chunk.parquet"]


def test_files_get_normal_permissions(tmp_path: Path, umask_022: None) -> None:
    for path in write_with_every_writer(tmp_path):
        assert mode(path) == 0o644, path.name  # never mkstemp's 0600
    assert leftovers(tmp_path) == []


def test_permissions_follow_the_umask(tmp_path: Path) -> None:
    previous = os.umask(0o027)
    try:
        with atomic_path(tmp_path / "x.txt") as tmp:
            tmp.write_text("x")
    finally:
        os.umask(previous)
    assert mode(tmp_path / "x.txt") == 0o640


def test_replacing_a_file_gives_normal_permissions(tmp_path: Path, umask_022: None) -> None:
    path = tmp_path / "x.txt"
    path.write_text("old")
    path.chmod(0o600)
    write_text_atomic(path, "new")
    assert path.read_text() == "new" and mode(path) == 0o644


def test_temporary_file_is_hidden_beside_the_target(tmp_path: Path) -> None:
    with atomic_path(tmp_path / "out.parquet") as tmp:
        assert tmp.parent == tmp_path
        assert tmp.name.startswith(".out.parquet.") and tmp.name.endswith(".tmp")
        assert tmp.exists() and not (tmp_path / "out.parquet").exists()  # nothing under the final name yet
        tmp.write_text("x")
    assert (tmp_path / "out.parquet").read_text() == "x"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_failed_write_keeps_the_old_file_and_leaves_nothing(
    tmp_path: Path, error: type[BaseException]
) -> None:
    path = tmp_path / "results.json"
    path.write_text('{"old": true}')
    with pytest.raises(error), atomic_path(path) as tmp:
        tmp.write_text('{"new"')  # half written
        raise error
    assert json.loads(path.read_text()) == {"old": True}
    assert leftovers(tmp_path) == []


def test_failed_write_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(ValueError), atomic_path(tmp_path / "new.txt") as tmp:
        tmp.write_text("partial")
        raise ValueError("the writer failed")
    assert list(tmp_path.iterdir()) == []


def test_writers_fail_cleanly(tmp_path: Path) -> None:
    write_predictions(tmp_path / "p.parquet", SCORES, {"run": 1})
    bad = pa.table({"id": ["a"], "score_1": ["not a number"], "score_2": [0.0]})
    with pytest.raises(pa.ArrowInvalid):
        write_predictions(tmp_path / "p.parquet", bad, {"run": 2})
    _, provenance = read_predictions(tmp_path / "p.parquet")
    assert provenance == {"run": 1}

    def fail(tmp: str) -> None:
        Path(tmp).write_text("partial")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        shard_files._atomic_write(tmp_path / "p.parquet", fail)
    assert read_predictions(tmp_path / "p.parquet")[1] == {"run": 1}
    assert leftovers(tmp_path) == []


def test_write_text_atomic_makes_the_folder(tmp_path: Path) -> None:
    path = write_text_atomic(tmp_path / "a" / "b" / "report.md", "text")
    assert path.read_text(encoding="utf-8") == "text"
