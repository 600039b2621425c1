"""Surfaces (the command line, the Space, the evaluate modules' apps) reach the package through the job layer and
the reports only (with the number formats and the results file the reports read, ``unqover.format`` and
``unqover.results``), and name no probe: what they offer comes from the registry (``unqover.probes.registry``).

``lint-imports`` checks ``unqover.cli`` and ``unqover.space`` on the real import graph; the apps live outside the
package, so every surface's imports are also read here with ``ast`` (function-level imports included).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from unqover.probes.registry import PROBES, dataset_names

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = (
    "unqover.jobs",
    "unqover.probes",
    "unqover.report",
    "unqover.format",
    "unqover.results",
    "unqover.errors",
)
APPS = sorted(ROOT.glob("metrics/*/app.py"))
SPACE = sorted((ROOT / "src" / "unqover" / "space").glob("*.py"))
CLI = ROOT / "src" / "unqover" / "cli.py"
SURFACES = [CLI, *SPACE, *APPS]


def unqover_imports(source: str) -> list[str]:
    """Every ``unqover`` module a file imports, function-level imports included."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return [name for name in names if name == "unqover" or name.startswith("unqover.")]


def allowed(name: str, own: str = "unqover.space") -> bool:
    """The job layer, the reports (their number formats and results file), the errors, the package's own version (``unqover``) and the Space's modules."""
    return name == "unqover" or any(name == p or name.startswith(p + ".") for p in (*ALLOWED, own))


def code_strings(source: str) -> set[str]:
    """Every string constant of the code (f-string parts included), docstrings left out."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    }


def named(strings: set[str], names: set[str]) -> set[str]:
    """The names that a string is, or holds as a word or a path part (``datasets/unqover/NAME``)."""
    found = set()
    for text in strings:
        words = set(re.split(r"[\s/`'\"(),:;=]+", text)) | {text}
        found |= words & names
    return found


def test_there_are_surfaces_to_check():
    assert len(APPS) == 3 and len(SPACE) >= 6 and CLI.is_file()


@pytest.mark.parametrize("path", SURFACES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_surface_imports_only_the_job_layer_the_reports_and_the_errors(path):
    imports = unqover_imports(path.read_text(encoding="utf-8"))
    assert [name for name in imports if not allowed(name)] == []


@pytest.mark.parametrize("path", [CLI, *SPACE], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_surface_names_no_probe_and_no_dataset(path):
    """The command line and the Space offer every probe; each module app serves one measure, whose input columns
    (``gender``) may share a word with a probe's name."""
    names = {*PROBES, *dataset_names()}
    assert named(code_strings(path.read_text(encoding="utf-8")), names) == set()


def test_the_import_check_sees_a_function_level_import_of_another_layer():
    bad = "def f():\n    from unqover.scoring.models import load_model\n    import unqover.lexicon\n"
    assert [n for n in unqover_imports(bad) if not allowed(n)] == [
        "unqover.scoring.models",
        "unqover.lexicon",
    ]


def test_the_name_check_sees_a_name_in_a_constant_an_f_string_and_a_path_not_in_a_docstring():
    first = next(iter(PROBES))
    bad = f'"""Prose may say {first}."""\nA = "{first}"\nB = f"{{x}} datasets/unqover/{first}"\n'
    assert code_strings(bad) == {first, " datasets/unqover/" + first}
    assert named(code_strings(bad), {*PROBES, *dataset_names()}) == {first}
