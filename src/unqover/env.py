"""Facts about the user's environment that several layers need."""

from __future__ import annotations

import os
import re

#: a Hub repository id, ``name`` or ``owner/name`` (models, datasets and Spaces alike)
HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}(/[A-Za-z0-9][A-Za-z0-9_.-]{0,95})?")
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


#: cgroup v2 and v1 files of a container's memory limit and use
_CGROUP_MEMORY = (
    ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
    ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"),
)


def available_memory() -> int | None:
    """Bytes of memory this process can still allocate (Linux: ``MemAvailable``, or less where a container's
    memory limit leaves less), or None if unknown."""
    free = None
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    free = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    if free is None:
        try:
            free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            return None
    for limit_file, usage_file in _CGROUP_MEMORY:
        try:
            with open(limit_file, encoding="ascii") as limit, open(usage_file, encoding="ascii") as usage:
                left = int(limit.read().strip()) - int(usage.read().strip())
        except (OSError, ValueError):  # no such cgroup, or "max": no limit
            continue
        return max(0, min(free, left))
    return free
