"""Facts about the user's environment that several layers need."""

from __future__ import annotations

import contextlib
import math
import os
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from unqover.errors import UnqoverError

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


#: seconds to wait for the Hub's host to accept a connection before calling it unreachable
HUB_CONNECT_TIMEOUT = 3.0
#: seconds to wait for any single network read or write of an upload to the Hub (connecting waits at most 10 s)
HUB_TIMEOUT = 60.0
#: the proxy variables that route requests elsewhere: the Hub's host is then not tried directly
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
#: seconds an answer of :func:`hub_unreachable` is kept (a long-running Space sees the network come back)
HUB_CHECK_SECONDS = 60.0
_reached: dict[tuple[str, int], tuple[float, str | None]] = {}


def hub_unreachable() -> str | None:
    """Why the Hugging Face Hub cannot be reached (``"offline mode"``, or the connection's failure: refused, no
    such host, timed out), or None when it can. One short connection to ``HF_ENDPOINT``'s host (its answer kept for
    a minute), without the libraries' retries (30-50 s of them); behind a proxy nothing is tried (None)."""
    if offline():
        return "offline mode"
    if any(os.environ.get(name) for name in PROXY_VARIABLES):
        return None
    endpoint = urlsplit(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    if not endpoint.hostname:
        return None
    where = (endpoint.hostname, endpoint.port or (80 if endpoint.scheme == "http" else 443))
    checked, why = _reached.get(where, (-math.inf, None))
    if time.monotonic() - checked > HUB_CHECK_SECONDS:
        try:
            socket.create_connection(where, timeout=HUB_CONNECT_TIMEOUT).close()
            why = None
        except socket.gaierror:
            why = f"no address for {where[0]}"
        except TimeoutError:
            why = f"{where[0]} did not answer in {HUB_CONNECT_TIMEOUT:g} s"
        except OSError as err:
            why = (err.strerror or str(err)).lower()
        _reached[where] = (time.monotonic(), why)
    return why


@contextlib.contextmanager
def quiet_hub_logs() -> Iterator[None]:
    """While a Hub attempt runs: no retry warnings or tracebacks logged by huggingface_hub, datasets or
    transformers (the attempt's failure is reported as one line by the caller)."""
    import logging

    names = ("huggingface_hub", "datasets", "transformers", "filelock", "fsspec", "urllib3")
    loggers = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


#: the folder of word lists that stands in for ``--word-lists`` when it is not given
WORD_LISTS_VARIABLE = "UNQOVER_WORD_LISTS"


def word_lists_folder(given: str | os.PathLike | None = None) -> Path | None:
    """The word lists to use: ``given`` (``--word-lists``), else the folder ``UNQOVER_WORD_LISTS`` names, else
    None (the caller's default). The one place that decides, for the CLI and the Space alike; a variable that
    names no folder is refused naming the variable."""
    if given is not None:
        return Path(given)
    value = (os.environ.get(WORD_LISTS_VARIABLE) or "").strip()
    if not value:
        return None
    folder = Path(value).expanduser()
    if not folder.is_dir():
        raise UnqoverError(
            f"{WORD_LISTS_VARIABLE}={value} is not a folder: set it to a word_lists/ folder (with nouns/, "
            f"slots/, ...) or unset it"
        )
    return folder


#: cgroup v2 and v1 files of a container's memory limit and use
_CGROUP_MEMORY = (
    ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
    ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"),
)


def _address_space_left() -> int | None:
    """Bytes of address space this process may still map under its limit (``ulimit -v``, RLIMIT_AS), or None
    without a limit (or where it cannot be read)."""
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError):
        return None
    if limit == resource.RLIM_INFINITY or limit < 0:
        return None
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            used = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    return max(0, limit - used)


def available_memory() -> int | None:
    """Bytes of memory this process can still allocate (Linux: ``MemAvailable``, or less where a container's
    memory limit or this process's address-space limit, ``ulimit -v``, leaves less), or None if unknown."""
    return _least(_physical_memory(), _address_space_left())


def _least(*values: int | None) -> int | None:
    """The smallest of the known values (None: none known)."""
    known = [v for v in values if v is not None]
    return min(known) if known else None


def _physical_memory() -> int | None:
    """``MemAvailable`` (or the free pages), or less where a container's memory limit leaves less."""
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
