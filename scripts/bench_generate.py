"""Benchmark: generate all four UnQover QA datasets into Parquet; report wall time and peak memory.

    python scripts/bench_generate.py --word-lists PATH [--repeat 3]

Runs ``unqover build-datasets --config qa`` in a fresh child process per repeat (so peak RSS is the build's
own) into a temporary folder, and prints rows, seconds and peak resident memory. Targets: <= 60 s, <= 2 GiB.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time

CHILD = """
import resource, sys
from unqover.cli import main
code = main(sys.argv[1:])
print("PEAK_RSS_KIB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
sys.exit(code)
"""


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--word-lists", required=True, help="the upstream word_lists/ folder")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(
        f"python {platform.python_version()}, {os.cpu_count()} CPUs, {platform.processor() or platform.machine()}"
    )
    for run in range(args.repeat):
        with tempfile.TemporaryDirectory() as out:
            argv = [
                "build-datasets",
                "--word-lists",
                args.word_lists,
                "--output",
                out,
                "--config",
                "qa",
                "--quiet",
            ]
            start = time.perf_counter()
            result = subprocess.run(
                [sys.executable, "-c", CHILD, *argv], capture_output=True, text=True, check=True
            )
            seconds = time.perf_counter() - start
            peak = next(
                int(line.split()[1]) for line in result.stdout.splitlines() if line.startswith("PEAK_RSS_KIB")
            )
            size = sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(out) for f in files)
        rows = [line for line in result.stdout.splitlines() if "rows in" in line]
        print(
            f"run {run + 1}: {seconds:.1f} s wall, peak RSS {peak / 1024:.0f} MiB, {size / 2**20:.0f} MiB Parquet"
        )
        for line in rows:
            print("   ", line.replace(out, "<tmp>"))
    print(
        f"(children's peak RSS over all runs: {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MiB)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
