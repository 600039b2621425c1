"""Evaluate modules (``metrics/<name>/``) as Gradio Spaces: ``evaluate.load("<namespace>/<name>")`` finds them.

:func:`plan_module` checks a module folder (its single ``evaluate`` class, read from the syntax tree without
importing it; the Space front matter; ``requirements.txt``; ``app.py``) and returns a :class:`SpacePlan`.
"""

from __future__ import annotations

import ast
from pathlib import Path

from unqover.errors import UnqoverError
from unqover.hub.publish.common import CARD, validate_repo_id
from unqover.hub.publish.space_card import (
    SpacePlan,
    _check_requirements,
    _parse_python,
    _space_front_matter,
)

EVALUATE_BASES = ("Metric", "Measurement", "Comparison")
"""Base classes ``evaluate.load`` recognises as a module's class."""


def _evaluate_class(path: Path) -> str:
    """The one class in a module file that subclasses an evaluate module class, as ``Name(evaluate.Base)``.

    Read from the syntax tree, without importing the module (which would import the library and its
    dependencies): ``evaluate.load`` picks the module's class by its base, so there must be exactly one.
    """
    tree = _parse_python(path)
    module_names: set[str] = set()  # names bound to the evaluate package
    base_names: dict[str, str] = {}  # names bound to evaluate.Metric etc. -> the base
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            module_names.update(a.asname or a.name for a in node.names if a.name == "evaluate")
        elif isinstance(node, ast.ImportFrom) and node.module == "evaluate":
            base_names.update({a.asname or a.name: a.name for a in node.names if a.name in EVALUATE_BASES})
    found = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for base in node.bases:
            if (
                isinstance(base, ast.Attribute)
                and isinstance(base.value, ast.Name)
                and base.value.id in module_names
                and base.attr in EVALUATE_BASES
            ):
                found.append(f"{node.name}(evaluate.{base.attr})")
            elif isinstance(base, ast.Name) and base.id in base_names:
                found.append(f"{node.name}(evaluate.{base_names[base.id]})")
    if len(found) != 1:
        have = f"defines {len(found)} ({', '.join(found)})" if found else "defines none"
        raise UnqoverError(
            f"{path} must define exactly one class subclassing evaluate.Metric or evaluate.Measurement "
            f"(at module level) for evaluate.load to find; it {have}"
        )
    return found[0]


def plan_module(folder: Path, repo_id: str) -> SpacePlan:
    """Validate an evaluate module folder ``<name>/`` and return what would be uploaded as Space ``repo_id``.

    The folder needs ``<name>.py`` (exactly one evaluate module class), ``README.md`` (the card, with Space
    front matter), ``requirements.txt`` and ``app.py``; the repo's name must be the folder's name, because
    ``evaluate.load("<namespace>/<name>")`` downloads ``<name>.py`` from the Space.
    """
    folder = Path(folder)
    validate_repo_id(repo_id)
    name = folder.name
    if repo_id.split("/")[1] != name:
        raise UnqoverError(
            f"the Space of the evaluate module {name!r} must be named {name!r} (got {repo_id!r}): "
            f"evaluate.load('<namespace>/{name}') downloads {name}.py from it"
        )
    if not folder.is_dir():
        raise UnqoverError(f"no evaluate module folder at {folder}")
    missing = [f for f in (f"{name}.py", CARD, "requirements.txt", "app.py") if not (folder / f).is_file()]
    if missing:
        raise UnqoverError(
            f"evaluate module {folder} lacks {', '.join(missing)}; a module folder holds <name>.py, "
            "README.md, requirements.txt and app.py"
        )
    module_class = _evaluate_class(folder / f"{name}.py")
    meta = _space_front_matter(folder, module=True)
    _check_requirements(folder / "requirements.txt")
    _parse_python(folder / "app.py")
    details = [f'{module_class}; load with evaluate.load("{repo_id}")']
    return SpacePlan.from_folder(repo_id, folder, "evaluate module", meta, details)


def discover_modules(root: Path) -> list[Path]:
    """Evaluate module folders directly under ``root`` (every visible sub-folder; plan_module checks them)."""
    root = Path(root)
    if not root.is_dir():
        raise UnqoverError(
            f"no evaluate modules folder at {root}; run from the repository root or pass --metrics"
        )
    return [
        child for child in sorted(root.iterdir()) if child.is_dir() and not child.name.startswith((".", "_"))
    ]
