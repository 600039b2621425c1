"""Publish the datasets, evaluate modules and Space to the Hugging Face Hub: ``python scripts/publish.py --dry-run``.

A thin wrapper over :func:`unqover.hub.publish.main` (uses the installed ``unqover``); see ``--help``.
"""

import sys

from unqover.hub.publish import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
