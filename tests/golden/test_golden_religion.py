"""The files a religion run, ``unqover leaderboard`` and ``unqover compare`` write stay byte-identical: the expected
bytes in ``tests/golden/religion/`` were written by the code before a restructuring, and any change to a number, a
word or a field's place shows here.

The runs are made small and fixed: a copy of the word lists cut to 4 religions, 8 attributes and 3 templates
(288 groups), two tiny BERT QA models (``tiny_models.bert_qa``, seeds 0 and 1) loaded as any run loads them, a
quick run of each (100 groups, seed 7) and a full run of the first. Three inputs are fixed before the files are
compared, each because it is the machine's, not the code's:

* the scores: a float32 forward pass's last bits depend on the CPU's kernels and thread count, and a report's
  4-digit numbers would flip on another machine, so each model's scores are fixed multiples of 1/4096 drawn from a
  hash of the row id and of the model's folder (:func:`fixed_scores`; exact in float64, the same everywhere);

* the work folder: the runs record the absolute paths of the model and of the word lists, and pytest's temporary
  folder differs from run to run; its path (and its Markdown-escaped form) is replaced by ``<work>`` in every file
  (column widths do not depend on it: the tables print run and model names, which are relative);
* the library versions: ``unqover.jobs.run.library_versions`` is replaced by a fixed dict, so that a new numpy or
  torch release does not change the recorded provenance (it can still change the numbers: torch draws the tiny
  models' weights from its seeded generator).

Regenerate the expected files (only from code whose numbers are known right) with
``UNQOVER_WRITE_GOLDEN=1 pytest tests/golden``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from unqover.cli import main

pytestmark = pytest.mark.slow

EXPECTED = Path(__file__).parent / "religion"
WORK = "<work>"
VERSIONS = {
    "unqover": "0.1.0",
    "python": "3.11.7",
    "torch": "2.13.0+cpu",
    "transformers": "5.24.0",
    "datasets": "5.2.0",
    "numpy": "2.4.6",
    "pyarrow": "26.0.1",
}
#: the run files kept: results and reports of the first model's quick run and of its full run
RUN_FILES = ("results.json", "report.md", "report.html")


def small_word_lists(source: Path, target: Path) -> Path:
    """A copy of the word lists with 4 religions, the first 8 attributes of each of the four attribute blocks
    (positive and negated, plural and single) and the first 3 templates (man and woman forms)."""
    shutil.copytree(source, target)

    def cut(relative: str, keep) -> None:
        path = target / relative
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        path.write_text("".join(keep(lines)), encoding="utf-8")

    cut("nouns/subjects/religion", lambda lines: lines[:4])
    cut(
        "activities/biased_religion",
        lambda lines: (
            lines[:4] + [line for start in (4, 55, 106, 157) for line in [*lines[start : start + 8], "\n"]]
        ),
    )
    for templates in ("slots/religion_noact", "slots/religion_noact_lm"):
        cut(templates, lambda lines: lines[:9])
    return target


def fixed_scores(self, rows) -> np.ndarray:
    """The QA scorer's (n, 2) scores, in place of the model's: multiples of 1/4096 from a hash of the row's id and
    of the model's folder (two models, two sets of scores), in (0, 0.5] each."""
    folder = Path(self.loaded.path).name
    digests = [hashlib.sha256(f"{folder}/{row_id}".encode()).digest() for row_id in rows["id"].to_pylist()]
    steps = np.array([[int.from_bytes(d[:2]) % 2048 + 1, int.from_bytes(d[2:4]) % 2048 + 1] for d in digests])
    return steps / 4096.0


def run_everything(work: Path, word_lists: Path, capsys) -> dict[str, str]:
    """Build the models, make the runs, rank and compare them in ``work``; the files to compare, by name."""
    import torch

    import tiny_models
    from unqover.generate.unqover import make_plan
    from unqover.lexicon import WordLists

    lists = small_word_lists(word_lists, work / "lists")
    plan = make_plan(WordLists(lists), "religion", "qa")
    rows = [row for batch in plan.batches() for row in batch.to_pylist()]
    texts = sorted({row["context"] for row in rows} | {row["question"] for row in rows})
    for seed in (0, 1):
        tiny_models.bert_qa(work / f"model-{seed}", texts, seed=seed)
    probe = ["--bias", "religion", "--word-lists", "lists", "--quiet"]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the runs record their thread count
    try:
        for model, folder, selection in (
            ("model-0", "quick-0", ["--limit", "100", "--seed", "7"]),
            ("model-1", "quick-1", ["--limit", "100", "--seed", "7"]),
            ("model-0", "full-0", []),
        ):
            assert main(["probe", model, *probe, *selection, "--output", folder]) == 0
    finally:
        torch.set_num_threads(threads)
    capsys.readouterr()
    printed = {}
    runs = ["quick-0", "quick-1", "full-0"]
    for output in ("leaderboard.json", "leaderboard.md", "leaderboard.html"):
        assert main(["leaderboard", *runs, "--metric", "positional_error", "--output", output]) == 0
        printed["leaderboard.txt"] = capsys.readouterr().out
    for pair, stem in ((("quick-0", "quick-1"), "compare-quick"), (("full-0", "quick-1"), "compare-full")):
        for suffix in (".json", ".md"):
            assert main(["compare", *pair, "--output", stem + suffix]) == 0
            printed[stem + ".txt"] = capsys.readouterr().out
    files = printed | {
        path.name: path.read_text(encoding="utf-8")
        for path in work.iterdir()
        if path.is_file() and path.name.startswith(("leaderboard.", "compare-"))
    }
    for run, name in (("quick-0", "religion-quick"), ("full-0", "religion-full")):
        files |= {f"{name}/{file}": (work / run / file).read_text(encoding="utf-8") for file in RUN_FILES}
    escaped = str(work).replace("_", "\\_")  # as the Markdown reports print it
    return {name: text.replace(str(work), WORK).replace(escaped, WORK) for name, text in files.items()}


def test_runs_leaderboard_and_compare_files_are_unchanged(
    tmp_path, monkeypatch, capsys, upstream_word_lists_path
):
    monkeypatch.setattr("unqover.jobs.run.library_versions", lambda: dict(VERSIONS))
    monkeypatch.setattr("unqover.scoring.qa.QAScorer.score", fixed_scores)
    monkeypatch.chdir(tmp_path)
    files = run_everything(tmp_path, upstream_word_lists_path, capsys)
    assert len(files) == 16
    if os.environ.get("UNQOVER_WRITE_GOLDEN"):
        shutil.rmtree(EXPECTED, ignore_errors=True)
        for name, text in files.items():
            (EXPECTED / name).parent.mkdir(parents=True, exist_ok=True)
            (EXPECTED / name).write_text(text, encoding="utf-8")
    expected = sorted(str(p.relative_to(EXPECTED)) for p in EXPECTED.rglob("*") if p.is_file())
    assert expected == sorted(files)
    for name, text in files.items():
        assert text == (EXPECTED / name).read_text(encoding="utf-8"), f"{name} changed"
