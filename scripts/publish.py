"""Publish the datasets, evaluate modules and Space to the Hugging Face Hub: ``python scripts/publish.py --dry-run``.

The same as ``unqover publish`` (uses the installed ``unqover``); see ``--help``.
"""

import sys

from unqover.cli import main

if __name__ == "__main__":
    sys.exit(main(["publish", *sys.argv[1:]]))
