"""Benchmark: the UnQover measures on a predictions table the size of the full gender dataset.

    python scripts/bench_measure.py --word-lists PATH          # builds gender/qa in a temp folder first
    python scripts/bench_measure.py --dataset datasets/unqover/gender

Random scores stand in for a model. Each step runs in a fresh child process so peak RSS is its own:
(1) the library call ``unqover_bias`` without intervals, (2) with 1,000 bootstrap resamples, (3) ``unqover measure``
end to end (read files, join by id, measure, write JSON). Targets for (1): <= 10 s and <= 3 GiB.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LIBRARY = """
import resource, sys, time
import numpy as np
from unqover.hub.load import load_rows
from unqover.measure.unqover import unqover_bias
from unqover.probes.unqover_rows import ROW_COLUMNS
rows = load_rows(sys.argv[1], "qa", columns=ROW_COLUMNS)
rng = np.random.default_rng(0)
s1, s2 = rng.random(rows.num_rows), rng.random(rows.num_rows)
loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
result = unqover_bias(rows, s1, s2, n_resamples=int(sys.argv[2]))
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(f"{rows.num_rows:,} rows, {result.num_groups:,} groups: {seconds:.1f} s, peak RSS {peak / 2**20:.2f} GiB "
      f"(rows loaded: {loaded / 2**20:.2f} GiB); mu {result.mu:.4f}")
"""

PREDICTIONS = """
import sys
import numpy as np
import pyarrow as pa
from unqover.hub.load import load_rows
from unqover.predictions import write_predictions
ids = load_rows(sys.argv[1], "qa", columns=["id"])["id"]
rng = np.random.default_rng(0)
table = pa.table({"id": ids, "score_1": rng.random(len(ids)), "score_2": rng.random(len(ids))})
write_predictions(sys.argv[2], table, {"model": {"id": "random"}, "dataset": {"source": sys.argv[1], "config": "qa", "split": "test"}})
"""


def child(code: str, *args: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--dataset", type=Path, help="a built gender dataset folder")
    source.add_argument("--word-lists", type=Path, help="word lists to build gender/qa from")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        dataset = args.dataset
        if dataset is None:
            subprocess.run(
                [sys.executable, "-m", "unqover.cli", "build-datasets", "--word-lists", str(args.word_lists),
                 "--output", tmp, "--config", "qa", "--quiet", "gender"],
                check=True, capture_output=True,
            )  # fmt: skip
            dataset = Path(tmp) / "gender"
        print("library, no intervals:    ", child(LIBRARY, str(dataset), "0"))
        print("library, 1000 resamples:  ", child(LIBRARY, str(dataset), "1000"))
        predictions = Path(tmp) / "predictions.parquet"
        child(PREDICTIONS, str(dataset), str(predictions))
        start = time.perf_counter()
        result = subprocess.run(
            ["/usr/bin/time", "-f", "%M", sys.executable, "-m", "unqover.cli", "measure", str(predictions), "--resamples", "0", "--top", "0"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        peak_kib = int(result.stderr.strip().splitlines()[-1])
        print(
            f"unqover measure, end to end: {time.perf_counter() - start:.1f} s, peak RSS {peak_kib / 2**20:.2f} GiB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
