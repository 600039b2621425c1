"""``python -m unqover.hub.publish``: the ``publish`` command line."""

import sys

from unqover.hub.publish.cli import main

sys.exit(main())
