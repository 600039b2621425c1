"""Every repository path and `unqover.…` module the docs name exists.

The README, CONTRIBUTING.md (included in the site), every page of docs/ and the module cards name files of the repository, in code
spans (`src/unqover/scoring/runner.py`, `python scripts/bench_measure.py`), in fenced code blocks and as link
targets; a file that moved leaves such a name behind. A name counts as a repository path when it starts with one of
the repository's top-level entries (`src/`, `tests/`, `metrics/`, ..., `pyproject.toml`); a link target counts when
it is relative and resolves inside the repository. Placeholders (`metrics/<module>/`, `runs/*`) and files a command
builds (`datasets/unqover/<name>/data/`) are not names of files. A dotted name `unqover.a.b[.attr]` must be a module
of `src/unqover`, and an attribute after it must be defined there.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.architecture.test_docs_site import LINK

REPO_ROOT = Path(__file__).resolve().parents[2]
TOP_LEVEL = (".ci", "datasets", "docs", "metrics", "scripts", "space", "src", "tests")
TOP_FILES = ("README.md", "CONTRIBUTING.md", "pyproject.toml", "mkdocs.yml")
PATH = re.compile(
    r"(?<![\w./-])((?:"
    + "|".join(re.escape(d) for d in TOP_LEVEL)
    + r")/[\w./-]*|"
    + "|".join(re.escape(f) for f in TOP_FILES)
    + r")(?![\w<*{])"
)
# a Python file named from inside the package (`scoring/runner.py`): under src/unqover or the repository root
PACKAGE_FILE = re.compile(r"(?<![\w./-])([\w-]+/[\w./-]*\.py)\b")
DOTTED = re.compile(r"(?<![\w./-])(unqover(?:\.\w+)+)")
CODE = re.compile(r"```[^\n]*\n.*?```|`[^`\n]+`", re.S)
BUILT = ("datasets/unqover/",)  # only their README.md cards are committed; data/ is built


def doc_files() -> list[Path]:
    return [
        REPO_ROOT / "README.md",
        REPO_ROOT / "CONTRIBUTING.md",
        *sorted((REPO_ROOT / "docs").rglob("*.md")),
        *sorted((REPO_ROOT / "metrics").glob("*/README.md")),
    ]


def named_paths(text: str) -> set[str]:
    """The repository paths named in the code spans and code blocks of a Markdown text."""
    names = set()
    for code in CODE.findall(text):
        for name in PATH.findall(code):
            name = name.rstrip(".")
            if name.startswith(BUILT) and "/data" in name:
                continue
            names.add(name)
        for name in PACKAGE_FILE.findall(code):
            if not name.startswith(tuple(f"{top}/" for top in TOP_LEVEL)):
                names.add(name if (REPO_ROOT / name).exists() else f"src/unqover/{name}")
    return names


def linked_paths(page: Path, text: str) -> set[str]:
    """The relative link targets of a page that resolve inside the repository, relative to its root."""
    names = set()
    for target in LINK.findall(CODE.sub("", text)):
        target = target.split("#")[0]
        if not target or re.match(r"[a-z][a-z+]*:", target):
            continue
        path = (page.parent / target).resolve()
        if path.is_relative_to(REPO_ROOT):
            names.add(str(path.relative_to(REPO_ROOT)))
    return names


def module_exists(dotted: str) -> bool:
    """`unqover.a.b` is a module or package of src/unqover, or `unqover.a.b.name` a name defined in one."""
    parts = dotted.split(".")
    for end in range(len(parts), 1, -1):
        base = REPO_ROOT / "src" / Path(*parts[:end])
        source = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        if not source.is_file():
            continue
        rest = parts[end:]
        if not rest:
            return True
        if len(rest) > 1:
            return False
        # defined, assigned, or imported into the module (one line or inside an import's parentheses)
        pattern = (
            rf"^(?:async def|def|class) {rest[0]}\b|^{rest[0]}\s*[:=]|import .*\b{rest[0]}\b|^\s+{rest[0]},$"
        )
        return re.search(pattern, source.read_text(encoding="utf-8"), re.M) is not None
    return False


@pytest.mark.parametrize("page", doc_files(), ids=lambda page: str(page.relative_to(REPO_ROOT)))
def test_every_repository_path_the_docs_name_exists(page):
    text = page.read_text(encoding="utf-8")
    names = named_paths(text) | linked_paths(page, text)
    missing = sorted(name for name in names if not (REPO_ROOT / name).exists())
    assert not missing, f"{page.relative_to(REPO_ROOT)} names paths that do not exist: {missing}"


@pytest.mark.parametrize("page", doc_files(), ids=lambda page: str(page.relative_to(REPO_ROOT)))
def test_every_unqover_module_the_docs_name_exists(page):
    text = page.read_text(encoding="utf-8")
    names = {name.rstrip(".") for code in CODE.findall(text) for name in DOTTED.findall(code)}
    missing = sorted(name for name in names if not module_exists(name))
    assert not missing, f"{page.relative_to(REPO_ROOT)} names modules that do not exist: {missing}"


def test_the_path_finder_sees_the_forms_the_docs_use():
    text = (
        "See `probe/shared_prefix.py`, `scoring/runner.py`, run `python scripts/bench_measure.py --quick` or\n"
        "```\nunqover probe m --out runs/x\npytest tests/cli/test_cli_bad_inputs.py -k one\n```\n"
        "then [the card](../metrics/unqover_bias/README.md) and `metrics/<module>/`, `pyproject.toml`."
    )
    assert named_paths(text) == {
        "src/unqover/probe/shared_prefix.py",
        "src/unqover/scoring/runner.py",
        "scripts/bench_measure.py",
        "tests/cli/test_cli_bad_inputs.py",
        "pyproject.toml",
    }
    assert linked_paths(REPO_ROOT / "docs" / "x.md", text) == {"metrics/unqover_bias/README.md"}
    assert not module_exists("unqover.probe.shared_prefix")
    assert module_exists("unqover.scoring.shared_prefix")
    assert module_exists("unqover.measure.unqover.unqover_bias")
    assert not module_exists("unqover.measure.unqover.no_such_function")
