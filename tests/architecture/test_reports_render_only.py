"""The reports render only: from the measures they take types (the result records they read) and constants, never a
function, so that every number, share, total, ordering and ranking a report prints was computed in
``unqover.measure`` and reaches the report as data.

``lint-imports`` cannot tell a function from a type (its contract forbids ``unqover.measure`` to the reports but
for the modules named in ``ignore_imports``), so every import of a report module is read here with ``ast``
(function-level imports included) and each name it takes from ``unqover.measure`` is looked up.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REPORTS = sorted((ROOT / "src" / "unqover" / "report").glob("*.py"))


def measure_imports(source: str) -> list[tuple[str, str | None]]:
    """Every ``(module, name)`` a file takes from ``unqover.measure`` (name None: the module itself)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(a.name, None) for a in node.names if a.name.startswith("unqover.measure")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "unqover":
                found += [(f"unqover.{a.name}", None) for a in node.names if a.name == "measure"]
            elif node.module.startswith("unqover.measure"):
                found += [(node.module, a.name) for a in node.names]
    return found


def refused(module: str, name: str | None) -> str | None:
    """Why a report may not take ``name`` from ``module``; None when it is a type or a constant."""
    if name is None:
        return f"imports the module {module} (its functions would compute in the report)"
    if name == "*":
        return f"imports * from {module}"
    value = getattr(importlib.import_module(module), name)
    if inspect.ismodule(value):
        return f"imports the module {module}.{name}"
    if inspect.isclass(value):
        return None
    if callable(value):
        return f"imports the function {module}.{name}: compute it in unqover.measure and hand the report its result"
    return None


def test_there_are_reports_to_check():
    assert len(REPORTS) > 5


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.name)
def test_a_report_takes_only_types_and_constants_from_the_measures(path):
    problems = [
        why
        for module, name in measure_imports(path.read_text(encoding="utf-8"))
        if (why := refused(module, name))
    ]
    assert not problems, f"{path.name}: " + "; ".join(problems)


def test_the_check_sees_a_function_a_module_and_a_function_level_import():
    source = (
        "from unqover.measure.diagnostics import Finding, MOST, nli_findings\n"
        "import unqover.measure.stats\n"
        "def f():\n    from unqover import measure\n"
    )
    found = measure_imports(source)
    assert found == [
        ("unqover.measure.diagnostics", "Finding"),
        ("unqover.measure.diagnostics", "MOST"),
        ("unqover.measure.diagnostics", "nli_findings"),
        ("unqover.measure.stats", None),
        ("unqover.measure", None),
    ]
    assert [refused(m, n) is None for m, n in found] == [True, True, False, False, False]
