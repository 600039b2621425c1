"""Shared fixtures. Tests never touch the network: offline flags are set before any HF library is imported."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_EVALUATE_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["UNQOVER_OFFLINE"] = "1"
os.environ.setdefault("HF_HOME", tempfile.mkdtemp(prefix="unqover-test-hf-"))
os.environ.setdefault("UNQOVER_CACHE", tempfile.mkdtemp(prefix="unqover-test-cache-"))

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
UPSTREAM_WORD_LISTS = REPO_ROOT.parent / "shared" / "data" / "unqover_word_lists"


@pytest.fixture(scope="session")
def upstream_word_lists_path() -> Path:
    """The upstream word lists (read-only reference data beside the repository, never committed)."""
    if not UPSTREAM_WORD_LISTS.is_dir():
        pytest.fail(f"reference word lists not found at {UPSTREAM_WORD_LISTS}")
    return UPSTREAM_WORD_LISTS


@pytest.fixture(scope="session")
def word_lists(upstream_word_lists_path):
    from unqover.lexicon import WordLists

    return WordLists(upstream_word_lists_path)
