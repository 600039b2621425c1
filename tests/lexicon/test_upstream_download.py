"""Download, checksum and cache of the pinned upstream word lists, against a loopback server."""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from unqover.errors import UnqoverError
from unqover.lexicon import upstream
from unqover.lexicon.upstream import UPSTREAM_SHA256, download_upstream, matches_upstream, resolve_word_lists


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    requests: ClassVar[list[str]] = []

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        type(self).requests.append(self.path)
        super().do_GET()


@pytest.fixture
def served(tmp_path, upstream_word_lists_path) -> Iterator[tuple[str, Path]]:
    """A copy of the upstream lists served on 127.0.0.1; yields (base URL, served folder)."""
    root = tmp_path / "served"
    shutil.copytree(upstream_word_lists_path, root)
    for path in root.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    _QuietHandler.requests = []
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def online(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("UNQOVER_OFFLINE", raising=False)


def test_reference_copy_matches_the_pinned_checksums(upstream_word_lists_path):
    assert matches_upstream(upstream_word_lists_path)
    assert len(UPSTREAM_SHA256) == 34
    assert upstream.UPSTREAM_URL.endswith(f"/allenai/unqover/{upstream.UPSTREAM_COMMIT}/word_lists")


def test_download_verifies_and_caches(online, served, tmp_path):
    base_url, _ = served
    cache = tmp_path / "cache"
    folder = download_upstream(cache, base_url=base_url)
    assert folder == cache / "word_lists" / upstream.UPSTREAM_COMMIT
    assert matches_upstream(folder)
    assert len(_QuietHandler.requests) == len(UPSTREAM_SHA256)
    # a verified cache is reused without a single request, even offline
    again = download_upstream(cache, base_url="http://127.0.0.1:9/unreachable")
    assert again == folder and len(_QuietHandler.requests) == len(UPSTREAM_SHA256)
    assert len(resolve_word_lists(None, cache_dir=cache).subjects("female")) == 70


def test_checksum_mismatch_is_refused_and_leaves_no_cache(online, served, tmp_path):
    base_url, root = served
    (root / "slots/gender_noact").write_text("tampered\tx\ty\n")
    cache = tmp_path / "cache"
    with pytest.raises(UnqoverError, match=r"Checksum mismatch for .*slots/gender_noact.*--word-lists PATH"):
        download_upstream(cache, base_url=base_url)
    assert not (cache / "word_lists" / upstream.UPSTREAM_COMMIT).exists()
    assert list((cache / "word_lists").iterdir()) == []  # the staging folder is gone too


def test_unreachable_server_gives_one_clear_error(online, tmp_path):
    with pytest.raises(UnqoverError, match=r"Could not download the UnQover word lists .*--word-lists PATH"):
        download_upstream(tmp_path / "cache", base_url="http://127.0.0.1:9", timeout=2)


def test_offline_without_folder_says_how_to_pass_one(tmp_path):
    with pytest.raises(
        UnqoverError,
        match=r"downloads are disabled \(offline mode\)\. Pass a local copy with --word-lists PATH",
    ):
        resolve_word_lists(None, cache_dir=tmp_path / "empty-cache")


def test_local_folder_is_used_as_given(upstream_word_lists_path):
    assert resolve_word_lists(upstream_word_lists_path).root == upstream_word_lists_path
