"""``python -m unqover``: the same command line as ``unqover``."""

import sys

from unqover.cli import main

sys.exit(main())
