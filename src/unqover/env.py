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


def available_memory() -> int | None:
    """Bytes of memory this machine can give a new allocation now (Linux: ``MemAvailable``), or None if unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
