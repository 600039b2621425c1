"""``python -m unqover ...``: the same command line as ``unqover ...``."""

import sys

from unqover.cli import main

if __name__ == "__main__":
    sys.exit(main())
