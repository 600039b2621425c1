"""The documentation: the README stays a front page whose links resolve, every page of docs/ is in the site's nav,
the commands the docs show exist with their options, and `mkdocs build --strict` passes (when mkdocs is installed)."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
DOCS = REPO_ROOT / "docs"
README = REPO_ROOT / "README.md"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def nav_pages(nav: list) -> list[str]:
    """The page paths a mkdocs nav names, in order (nested sections flattened)."""
    pages: list[str] = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        if isinstance(value, list):
            pages += nav_pages(value)
        elif not re.match(r"https?://", value):
            pages.append(value)
    return pages


def heading_anchors(markdown: str) -> set[str]:
    """GitHub's anchors for the headings of a Markdown text (code blocks skipped)."""
    anchors, code = set(), False
    for line in markdown.splitlines():
        if line.startswith("```"):
            code = not code
        elif not code and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


def doc_texts() -> dict[str, str]:
    """The README and every docs page, by path relative to the repository."""
    files = [README, *sorted(DOCS.rglob("*.md"))]
    return {str(f.relative_to(REPO_ROOT)): f.read_text(encoding="utf-8") for f in files}


def test_readme_is_a_front_page_of_at_most_300_lines():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines; move detail to a page in docs/"


def test_readme_relative_links_resolve():
    text = README.read_text(encoding="utf-8")
    links = LINK.findall(text)
    assert any(link.startswith("docs/") for link in links), "the README links to no page of the docs"
    for link in links:
        if re.match(r"[a-z]+:", link):
            continue
        target, _, anchor = link.partition("#")
        if target:
            assert (REPO_ROOT / target).exists(), f"README.md links to {target}, which does not exist"
        else:
            assert anchor in heading_anchors(text), f"README.md links to #{anchor}, which is no heading of it"


def test_every_docs_page_is_in_the_nav_and_every_nav_page_exists():
    config = yaml.safe_load((REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["theme"]["name"] == "material"
    nav = nav_pages(config["nav"])
    assert len(nav) == len(set(nav)), "a page is in the nav twice"
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert pages - set(nav) == set(), "pages missing from the nav in mkdocs.yml"
    assert set(nav) - pages == set(), "the nav names pages that docs/ lacks"
    assert "architecture.md" in nav and "index.md" in nav


def command_help(command: str) -> str:
    """`unqover COMMAND --help` as the user sees it (commands that own their parser answer it themselves)."""
    from unqover.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        main([command, "--help"])
    return out.getvalue()


def test_the_commands_the_docs_show_exist_with_their_options():
    """Every `unqover COMMAND --option` on a line of a code block of the README or the docs is a command whose
    --help lists the option: a renamed or removed option fails here, not in a reader's terminal."""
    from unqover.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    helps: dict[str, str] = {}
    checked = 0
    for name, text in doc_texts().items():
        for block in re.findall(r"(?ms)^```[^\n]*\n(.*?)^```", text):
            for line in block.splitlines():
                match = re.match(r"^\s*(?:\$ )?(?:\.venv/bin/)?unqover ([a-z][\w-]*)(.*)$", line)
                if not match:
                    continue
                command, rest = match.groups()
                assert command in commands, f"{name}: `unqover {command}` is no command: {line.strip()}"
                if command not in helps:
                    helps[command] = command_help(command)
                known = set(re.findall(r"--[a-z][a-z0-9-]*", helps[command]))
                for option in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", rest.split("  #")[0]):
                    assert option in known, (
                        f"{name}: `unqover {command}` has no option {option}: {line.strip()}"
                    )
                checked += 1
    assert checked > 30


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None,
    reason="mkdocs-material is not installed: pip install -e .[docs]",
)
def test_mkdocs_build_strict(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")]
    done = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "probes" / "unqover.html").is_file()


def test_the_docs_home_page_leads_with_the_readme_s_two_commands():
    """The home page opens with the README's two commands, verbatim (the README is their source), and links the
    Quickstart for quick and offline runs."""
    page = (DOCS / "index.md").read_text(encoding="utf-8")
    readme = README.read_text(encoding="utf-8")
    blocks = re.findall(r"^```\n(.*?)^```$", page, re.S | re.M)
    assert len(blocks) == 2 and page.index(blocks[0]) < page.index("## The pages")
    assert "unqover probe" in blocks[0] and "pytest" in blocks[1]
    for block in blocks:
        assert f"```\n{block}```" in readme, block
    assert "(quickstart.md#offline)" in page and "(quickstart.md#quick-runs)" in page
