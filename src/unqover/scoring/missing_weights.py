"""Refuse a checkpoint that lacks weights of the model it describes.

transformers fills a weight the checkpoint lacks with random numbers and only logs it ("MISSING ... newly
initialized"): a GGUF file without ``llama.block_count`` loads as a 32-layer Llama whose layers past those the file
holds are random, a folder whose config asks for more layers than its weights hold likewise, and a base checkpoint
loaded with a task head gets a random head. Scores of such a model are not the checkpoint's, so every loader asks
``from_pretrained`` for its loading info and refuses a missing weight. Weights tied to others (an LM head tied to
the embeddings) are not missing: transformers ties them and drops them from the list. Training a new head on a base
checkpoint (``unqover.train``) is the one load that expects weights the checkpoint lacks
(``ModelSource.weights(fresh_head=True)``).
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator

from unqover.errors import UnqoverError

#: how many of the missing weights a refusal names
SHOWN = 3


def natural(name: str) -> list:
    """Sort key: ``layers.2`` before ``layers.10``."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def check_complete(model_id: str, model, loading_info: dict) -> None:
    """Refuse in one line a model some of whose weights the checkpoint lacks (``loading_info["missing_keys"]``
    from ``from_pretrained(..., output_loading_info=True)``), naming the first few and how many."""
    missing = sorted(loading_info.get("missing_keys") or (), key=natural)
    if not missing:
        return
    total = len(model.state_dict())
    shown = ", ".join(missing[:SHOWN]) + (
        f" and {len(missing) - SHOWN:,} more" if len(missing) > SHOWN else ""
    )
    raise UnqoverError(
        f"cannot load the weights of {model_id!r}: the checkpoint lacks {len(missing):,} of the model's {total:,} "
        f"weights ({shown}), which transformers would fill with random numbers, so the scores would not be the "
        "model's; the checkpoint is incomplete, or its config (a GGUF file's metadata) describes a larger model "
        "than its weights"
    )


class _MissingReport(logging.Filter):
    """Drops transformers' load report where it lists missing weights: unqover refuses those in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not ("LOAD REPORT" in message and "MISSING" in message)


@contextlib.contextmanager
def missing_refused() -> Iterator[None]:
    """While a model loads for unqover: no load report of missing weights (a table of them before the refusal
    that names them); a report of anything else (unexpected weights) is logged as ever."""
    logger = logging.getLogger("transformers.modeling_utils")
    quiet = _MissingReport()
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)
