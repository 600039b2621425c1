"""What a local model folder is: a SHA-256 of its weight files, and the Hub repo a Hub-cache snapshot belongs to.

A run on a local folder records the folder and this hash, so that its results say which weights they measured
(a folder's name says nothing: its files can be replaced). The hash covers the files ``from_pretrained`` loads:
the ``*.safetensors`` files, else the pickled ones (``*.bin``, ``*.pt``, ``*.pth``), each hashed once per
(size, modification time) in this process, streaming. A folder in the Hub cache
(``…/models--OWNER--NAME/snapshots/COMMIT``) links each file to a blob named by its SHA-256, so nothing is read.
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

SAFE = (".safetensors",)
PICKLED = (".bin", ".pt", ".pth")
#: a file the Hub stores with LFS is a blob named by its SHA-256
SHA256 = re.compile(r"[0-9a-f]{64}")
#: a snapshot folder of the Hub cache: ``models--OWNER--NAME/snapshots/COMMIT``
SNAPSHOT = re.compile(
    r"models--(?P<owner>[^/\\]+?)--(?P<name>[^/\\]+)[/\\]snapshots[/\\](?P<commit>[0-9a-f]{40})[/\\]?$"
)


def weight_files(folder: Path) -> list[Path]:
    """The weight files of a model folder that ``from_pretrained`` loads: safetensors, else pickled weights."""
    files = sorted(p for p in folder.iterdir() if p.is_file())
    safe = [p for p in files if p.name.endswith(SAFE)]
    return safe or [p for p in files if p.name.endswith(PICKLED)]


@functools.lru_cache(maxsize=64)
def _file_sha256(path: Path, stamp: tuple[int, int]) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    """A file's SHA-256: its Hub-cache blob's name when it links to one, else its bytes (cached per size and
    modification time)."""
    target = path.resolve()
    if path.is_symlink() and target.parent.name == "blobs" and SHA256.fullmatch(target.name):
        return target.name
    stat = target.stat()
    return _file_sha256(target, (stat.st_size, stat.st_mtime_ns))


def weights_sha256(folder: str | Path | None) -> str | None:
    """SHA-256 over the weight files of a model folder (each file's name and SHA-256, in name order); None for
    no folder or one without weight files."""
    if folder is None or not Path(folder).is_dir():
        return None
    files = weight_files(Path(folder))
    if not files:
        return None
    digest = hashlib.sha256()
    for path in files:
        digest.update(f"{path.name}\0{file_sha256(path)}\n".encode())
    return digest.hexdigest()


def hub_snapshot(folder: str | Path) -> tuple[str, str] | None:
    """(``OWNER/NAME``, commit) of a folder that is a snapshot in the Hub cache, else None."""
    found = SNAPSHOT.search(str(folder))
    if found is None:
        return None
    return f"{found['owner']}/{found['name']}", found["commit"]
