"""Build the UnQover datasets: ``python scripts/build_datasets.py --word-lists PATH [NAME ...]``.

The same as ``unqover build-datasets``; see ``--help``.
"""

import sys

from unqover.cli import main

if __name__ == "__main__":
    sys.exit(main(["build-datasets", *sys.argv[1:]]))
