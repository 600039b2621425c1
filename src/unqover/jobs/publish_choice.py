"""What ``unqover publish`` publishes unless told otherwise, and how its ``--what`` reads. Light to import: the
command line builds its parser with it; the publishing is :mod:`unqover.jobs.publish`'s."""

from __future__ import annotations

import argparse
from pathlib import Path

from unqover.env import HUB_TIMEOUT
from unqover.probes.options import did_you_mean

__all__ = [
    "DEFAULT_METRICS_ROOT",
    "DEFAULT_NAMESPACE",
    "DEFAULT_SPACE_FOLDER",
    "DEFAULT_SPACE_NAME",
    "HUB_TIMEOUT",
    "PUBLISH_KINDS",
    "what_to_publish",
]

PUBLISH_KINDS = ("datasets", "modules", "space")
"""What ``publish --what`` selects, in the order things are published (the Space links to the others)."""

DEFAULT_METRICS_ROOT = Path("metrics")
DEFAULT_SPACE_FOLDER = Path("space")
DEFAULT_SPACE_NAME = "unqover"
DEFAULT_NAMESPACE = "unqover"


def what_to_publish(value: str) -> tuple[str, ...]:
    """``--what``: a comma-separated choice of datasets, modules, space, or all; canonical order."""
    chosen = {part.strip() for part in value.split(",") if part.strip()}
    unknown = sorted(chosen - {*PUBLISH_KINDS, "all"})
    if unknown or not chosen:
        hint = did_you_mean(unknown[0], [*PUBLISH_KINDS, "all"]) if unknown else ""
        raise argparse.ArgumentTypeError(
            f"{value!r}: choose from {', '.join(PUBLISH_KINDS)} or all (comma-separated, e.g. modules,space){hint}"
        )
    return PUBLISH_KINDS if "all" in chosen else tuple(kind for kind in PUBLISH_KINDS if kind in chosen)
