"""Benchmark: how long the command line takes to answer ``--help`` and argument errors (target: < 0.5 s).

    python scripts/bench_cli_start.py [--repeat 10]

Runs each command in a fresh process (the installed ``unqover`` entry point, as a user types it) ``--repeat``
times and prints the median and the slowest wall time of each. A command that loads a heavy library before it
answers (scipy, pandas, torch, transformers) shows up here as seconds; ``tests/architecture/test_light_imports.py`` keeps
those imports out.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

COMMANDS = (
    ["--help"],
    ["probe", "--help"],
    ["measure", "--help"],
    ["build-datasets", "--help"],
    ["compare", "--help"],
    ["publish", "--help"],
    ["probe", "some/model", "--bias", "nope"],  # an unknown probe
    ["probe", "some/model", "--bias", "religion", "--limt", "200"],  # a typo'd option
    ["probe", "some/model", "--bias", "religion", "--limit", "0"],  # a bad value
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    entry = shutil.which("unqover") or os.path.join(os.path.dirname(sys.executable), "unqover")
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    )
    print("| command | median (s) | slowest (s) |\n|---|---|---|")
    worst = 0.0
    for argv in COMMANDS:
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            subprocess.run([entry, *argv], capture_output=True, check=False)
            times.append(time.perf_counter() - start)
        worst = max(worst, max(times))
        print(f"| `unqover {' '.join(argv)}` | {statistics.median(times):.3f} | {max(times):.3f} |")
    print(f"\nslowest of all: {worst:.3f} s (target < 0.5 s)")
    return 0 if worst < 0.5 else 1


if __name__ == "__main__":
    sys.exit(main())
