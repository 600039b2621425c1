"""The command line answers at once: the registry, the definitions and the parser load no heavy library.

Timing lives in ``scripts/bench_cli_start.py``; here, what would make it slow: a module-level import of scipy,
pandas, torch, transformers (or numpy, pyarrow, datasets) on the way to ``--help`` or an argument error.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("scipy", "pandas", "torch", "transformers", "datasets", "numpy", "pyarrow", "gradio", "yaml")


def _loaded_after(code: str) -> list[str]:
    """The heavy top-level packages a fresh interpreter holds after running ``code``."""
    probe = f"import sys\n{code}\nimport json\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    loaded = set(json.loads(out.strip().splitlines()[-1]))
    return sorted(loaded & set(HEAVY))


@pytest.mark.slow
def test_the_registry_imports_no_heavy_library():
    assert _loaded_after("import unqover.probes.registry") == []


@pytest.mark.slow
def test_building_the_parser_imports_no_heavy_library():
    assert _loaded_after("from unqover.cli import build_parser\nbuild_parser()") == []


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["probe", "--help"],
        ["measure", "--help"],
        ["build-datasets", "--help"],
        ["probe", "m", "--bias", "nope"],
        ["probe", "m", "--bias", "religion", "--limit", "0"],
    ],
)
def test_help_and_argument_errors_import_no_heavy_library(argv):
    code = f"from unqover.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass"
    assert _loaded_after(code) == []
