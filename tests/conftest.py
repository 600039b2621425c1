"""Shared fixtures. Tests never touch the network: offline flags are set before any HF library is imported."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_EVALUATE_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["UNQOVER_OFFLINE"] = "1"
os.environ.setdefault("HF_HOME", tempfile.mkdtemp(prefix="unqover-test-hf-"))
os.environ.setdefault("UNQOVER_CACHE", tempfile.mkdtemp(prefix="unqover-test-cache-"))

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
UPSTREAM_WORD_LISTS = REPO_ROOT.parent / "shared" / "data" / "unqover_word_lists"


@pytest.fixture(scope="session", autouse=True)
def _transformers_logs_to_the_session_stderr() -> None:
    """transformers binds its log handler to ``sys.stderr`` when it first logs: bind it before any test runs, not
    inside a test whose ``capsys`` stream closes with it (a later warning would print a "Logging error" traceback
    into another test's captured output)."""
    try:
        from transformers.utils import logging as transformers_logging
    except ImportError:  # the light core's tests run without the models extra
        return
    transformers_logging.get_verbosity()


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


@pytest.fixture(scope="session")
def religion_tables(word_lists) -> dict[str, pa.Table]:
    """The religion rows of the ``qa`` and ``mlm`` configs, generated once per session (tables are immutable)."""
    from unqover.generate.unqover import make_plan

    return {
        config: pa.Table.from_batches(list(make_plan(word_lists, "religion", config).batches()))
        for config in ("qa", "mlm")
    }


@pytest.fixture(scope="session")
def built_datasets(tmp_path_factory, upstream_word_lists_path) -> Iterator[dict[str, Path]]:
    """Dataset folders built once per session by ``unqover build-datasets``: religion and ethnicity (``qa``), nli-gender
    (``synthetic``) and eec-emotion; and scores of a 60-group religion sample, ``bare.parquet`` (no provenance) and
    ``run.parquet`` (a run's predictions naming the religion probe). Read-only: a test that changes a folder or a
    file works on a copy (``shutil.copytree(built_datasets["religion"], tmp_path / "religion")``)."""
    from unqover.cli import main
    from unqover.predictions import write_predictions

    root = tmp_path_factory.mktemp("built-datasets")
    out = ["--output", str(root), "--quiet"]
    lists = ["--word-lists", str(upstream_word_lists_path), "--config", "qa"]
    assert main(["build-datasets", "religion", "ethnicity", *lists, *out]) == 0
    assert main(["build-datasets", "nli-gender", "--config", "synthetic", *out]) == 0
    assert main(["build-datasets", "eec-emotion", *out]) == 0
    ids = root / "ids.parquet"
    assert (
        main(["sample", str(root / "religion"), "--config", "qa", "--groups", "60", "--output", str(ids)])
        == 0
    )
    chosen = pq.read_table(ids)["id"]
    rng = np.random.default_rng(0)
    scores = pa.table({"id": chosen, "score_1": rng.random(len(chosen)), "score_2": rng.random(len(chosen))})
    pq.write_table(scores, root / "bare.parquet")
    about = {
        "probe": "religion",
        "dataset": {"source": str(root / "religion"), "config": "qa", "split": "test"},
    }
    write_predictions(root / "run.parquet", scores, about)
    before = _snapshot(root)
    yield {
        "root": root,
        "religion": root / "religion",
        "ethnicity": root / "ethnicity",
        "nli": root / "nli-gender",
        "eec": root / "eec-emotion",
    }
    changed = sorted(str(p.relative_to(root)) for p in before.keys() ^ _snapshot(root).keys())
    changed += sorted(
        str(p.relative_to(root)) for p, stat in _snapshot(root).items() if before.get(p, stat) != stat
    )
    if changed:
        pytest.fail(f"a test changed the session's built datasets (copy them first): {', '.join(changed)}")


def _snapshot(root: Path) -> dict[Path, tuple[int, int]]:
    """Every path under ``root`` with its size and modification time: what a read-only fixture must keep."""
    return {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test marked ``browser``, ``lm_eval`` or ``ray`` is slow too, so ``-m "not slow"`` leaves it out."""
    for item in items:
        if any(item.get_closest_marker(name) for name in ("browser", "lm_eval", "ray")):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def religion_qa_model(tmp_path_factory, religion_tables) -> Path:
    """A tiny BERT QA model (``tiny_models.bert_qa``, seed 0) that knows every word of the religion ``qa`` rows,
    built once per session. Read-only: a test that changes a model folder copies it first."""
    import tiny_models

    rows = religion_tables["qa"]
    texts = sorted(set(rows["context"].to_pylist()) | set(rows["question"].to_pylist()))
    return tiny_models.bert_qa(tmp_path_factory.mktemp("models") / "religion-qa", texts)


@pytest.fixture(scope="session")
def gguf_model(tmp_path_factory, religion_tables) -> Path:
    """A tiny chat Llama (ChatML template with a default system message) trained on the religion texts, written as
    a GGUF file by the ``gguf`` package (``tiny_models.gguf_causal_lm``); the same model as a transformers folder
    is ``<its folder>/hf``. Read-only: copy it to change it."""
    import tiny_models

    rows = religion_tables["qa"]
    texts = sorted(set(rows["context"].to_pylist()[:4000]) | set(rows["question"].to_pylist()[:4000]))
    texts.append("Answer with the name or group from the text.")
    return tiny_models.gguf_causal_lm(tmp_path_factory.mktemp("gguf"), texts)
