"""One name, one thing: a public top-level name of ``src/unqover`` is defined in one module only.

A name counts wherever the module's top level binds it: ``def``, ``class``, ``A = ...``, each name of
``A, (B, *C) = ...`` and ``[A, B] = ...``, annotations, loop and ``with`` targets, ``(A := ...)``, and the same in
the blocks of a top-level ``if``, ``try``, ``with`` or loop.

The few names allowed in several modules are deliberate per-probe counterparts: each report module of a probe
(``report/eec.py``, ``report/eec_person.py``, ``report/nli.py``) has its ``quick_run_line``, ``note_text``,
``shown_warnings`` (and ``table_intervals_line`` where it has table intervals), and each probe definition module
its ``NAME``. A new duplicate fails here: give it a name that says its job, or define it once and import it.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "src" / "unqover"
#: the per-probe counterparts, at most 5 names
ALLOWED = {"quick_run_line", "note_text", "shown_warnings", "table_intervals_line", "NAME"}


def bound_names(target: ast.expr) -> Iterator[str]:
    """The names an assignment target binds: ``A``, each name of ``A, (B, *C)`` and ``[A, B]``; an attribute or
    a subscript (``x.a = ...``, ``d[k] = ...``) binds none."""
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from bound_names(element)
    elif isinstance(target, ast.Starred):
        yield from bound_names(target.value)


def _statement_names(node: ast.stmt) -> Iterator[str]:
    """The names one top-level statement defines, in the blocks of ``if``, ``try``, ``with`` and loops too (a
    module's top level runs them); imports are not definitions."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield node.name
        return
    if isinstance(node, ast.Assign):
        for target in node.targets:
            yield from bound_names(target)
    elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.For | ast.AsyncFor):
        yield from bound_names(node.target)
    elif isinstance(node, ast.With | ast.AsyncWith):
        for item in node.items:
            if item.optional_vars is not None:
                yield from bound_names(item.optional_vars)
    elif type(node).__name__ == "TypeAlias":  # ``type X = ...`` (Python 3.12)
        yield from bound_names(node.name)
    yield from _walrus_names(node)
    for field in ("body", "orelse", "finalbody"):
        for child in getattr(node, field, ()):
            yield from _statement_names(child)
    for handler in getattr(node, "handlers", ()):
        for child in handler.body:
            yield from _statement_names(child)


def _walrus_names(node: ast.AST) -> Iterator[str]:
    """The names ``(X := ...)`` binds in one statement's own expressions: not in its nested blocks (read as
    statements of their own), nor in a function, class or lambda (their names are not the module's)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.NamedExpr):
            yield child.target.id
        if not isinstance(child, ast.stmt | ast.Lambda | ast.ExceptHandler):
            yield from _walrus_names(child)


def top_level_names(tree: ast.Module) -> set[str]:
    """Functions, classes and every name bound at a module's top level (imports are not definitions)."""
    names = {name for node in tree.body for name in _statement_names(node)}
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


def test_the_walk_reads_every_form_that_binds_a_name():
    source = (
        "A, (B, *C) = 1, (2, 3)\n"
        "[D, E] = 4, 5\n"
        "F = G = 6\n"
        "H: int\n"
        "obj.attr = 7\n"
        "table[0] = 8\n"
        "if True:\n    I = 9\nelse:\n    from x import z\n"
        "try:\n    J = 10\nexcept ImportError:\n    K = 11\nfinally:\n    L = 12\n"
        "for M, N in []:\n    O = 13\n"
        "with open(p) as (P, Q):\n    pass\n"
        "(R := 14)\n"
        "def f():\n    inner = 15\n"
        "S = [lambda: (t := 16)]\n"
        "_private, U = 17, 18\n"
    )
    expected = set("ABCDEFGHIJKLMNOPQRSU") | {"f"}
    assert top_level_names(ast.parse(source)) == expected
