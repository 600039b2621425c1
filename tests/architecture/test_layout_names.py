"""One name, one thing: a public top-level name of ``src/unqover`` is defined in one module only.

The few names allowed in several modules are deliberate per-probe counterparts: each report module of a probe
(``report/eec.py``, ``report/eec_person.py``, ``report/nli.py``) has its ``quick_run_line``, ``note_text``,
``shown_warnings`` (and ``table_intervals_line`` where it has table intervals), and each probe definition module
its ``NAME``. A new duplicate fails here: give it a name that says its job, or define it once and import it.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "src" / "unqover"
#: the per-probe counterparts, at most 5 names
ALLOWED = {"quick_run_line", "note_text", "shown_warnings", "table_intervals_line", "NAME"}


def top_level_names(tree: ast.Module) -> set[str]:
    """Functions, classes and assigned names at a module's top level (imports are not definitions)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {name for name in names if not name.startswith("_")}


def defining_modules() -> dict[str, list[str]]:
    """Each public top-level name of the package -> the modules (paths under src/unqover) that define it."""
    modules: dict[str, list[str]] = defaultdict(list)
    for path in sorted(SOURCE.rglob("*.py")):
        for name in top_level_names(ast.parse(path.read_text(encoding="utf-8"))):
            modules[name].append(path.relative_to(SOURCE).as_posix())
    return modules


def test_the_allow_list_is_short():
    assert len(ALLOWED) <= 5


def test_public_names_are_defined_once_but_for_the_per_probe_counterparts():
    repeated = {name: paths for name, paths in defining_modules().items() if len(paths) > 1}
    unexpected = {name: paths for name, paths in repeated.items() if name not in ALLOWED}
    assert not unexpected, f"public names defined in several modules: {unexpected}"


def test_the_counterparts_are_the_report_and_definition_modules_of_the_probes():
    modules = defining_modules()
    for name in ALLOWED - {"NAME"}:
        assert all(path.startswith("report/") for path in modules[name]), (name, modules[name])
    assert all(path.startswith("probes/") for path in modules["NAME"]), modules["NAME"]


def test_the_walk_sees_definitions_and_skips_imports():
    tree = ast.parse("import os\nfrom x import y\nA = 1\nB: int = 2\n_c = 3\ndef f(): pass\nclass K: pass\n")
    assert top_level_names(tree) == {"A", "B", "f", "K"}
