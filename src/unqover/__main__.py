"""`python -m unqover ...`: the same command line as `unqover ...`."""

from unqover.cli import main

raise SystemExit(main())
