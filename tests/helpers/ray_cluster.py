"""A real local Ray cluster for the tests: ``ray start --head --block`` in a subprocess (not a mock), with this
checkout's unqover on its workers' path, stopped (with all its processes) when the block ends."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import unqover


def ray_command() -> list[str]:
    beside = Path(sys.executable).with_name("ray")
    return [str(beside)] if beside.exists() else [shutil.which("ray") or "ray"]


@contextlib.contextmanager
def ray_head(temp: Path, cpus: int = 2) -> Iterator[str]:
    """The address of a one-node cluster of ``cpus`` CPUs whose files are under ``temp`` (short: Ray's socket paths
    must fit in 107 bytes), started in ``temp`` (so a task that did not run in the driver's folder would miss the
    relative paths)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(Path(unqover.__file__).parents[1]), *sys.path[1:]]),
    }
    head = subprocess.Popen(
        [*ray_command(), "start", "--head", "--block", "--port=0", f"--num-cpus={cpus}",
         "--include-dashboard=false", "--disable-usage-stats", "--temp-dir", str(temp)],
        cwd=temp, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        address, lines = None, []
        deadline = time.monotonic() + 120
        while address is None and time.monotonic() < deadline and head.poll() is None:
            line = head.stdout.readline()
            lines.append(line)
            found = re.search(r"ray start --address='([^']+)'", line)
            address = found.group(1) if found else None
        if address is None:
            pytest.fail("ray start --head did not start:\n" + "".join(lines[-20:]))
        threading.Thread(target=head.stdout.read, daemon=True).start()  # keep its pipe drained
        yield address
    finally:
        os.killpg(head.pid, signal.SIGTERM)  # --block: stopping it stops the cluster's processes
        with contextlib.suppress(subprocess.TimeoutExpired):
            head.wait(15)
        with contextlib.suppress(ProcessLookupError):  # every process of the cluster is in the head's group
            os.killpg(head.pid, signal.SIGKILL)
        shutil.rmtree(temp, ignore_errors=True)
