"""Facts about the user's environment that several layers need."""

from __future__ import annotations

import os

OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "UNQOVER_OFFLINE")


def offline() -> bool:
    """True when the user turned the network off (any of ``OFFLINE_VARIABLES``, or huggingface_hub's own flag)."""
    if any(
        (os.environ.get(name) or "").strip().upper() in {"1", "ON", "YES", "TRUE"}
        for name in OFFLINE_VARIABLES
    ):
        return True
    try:
        from huggingface_hub import constants

        return bool(constants.is_offline_mode())
    except (ImportError, AttributeError):
        return False
