"""Beecher's published person-task answers, measured: his statistic (as his bias_results.csv has it) beside the
valid test of the same answers, for each of his 14 models.

    python scripts/beecher_person_answers.py [--repo PATH] [--permutations 10000] [--seed 0]

``--repo``: a clone of ``sbeecher0575/nlpbias`` (default ``$BEECHER_REPO``, else
``/work/.mirror/sbeecher0575+nlpbias/repo``); its ``answers/<model>_person.csv`` are read at ``HEAD`` with ``git
show`` (his repository states no licence: nothing of it is copied). Prints a Markdown table: per model, his
statistic per category against his cut-off χ²(3) = 7.815, and the top-1 group × emotion test per category (its
questions, the permutation p within template and form, Cramér's V). The answers are his models' top 3, so the
valid test reads their first answer.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import subprocess
import sys
from pathlib import Path

from unqover.format import MISSING, fmt, fmt_count, fmt_p
from unqover.generate.eec_person import person_questions
from unqover.measure.emotion_person import person_task

MODELS = (
    "glove.6B.50d", "glove.6B.100d", "glove.6B.200d", "glove.6B.300d", "glove.840B.300d",
    "text_acad", "text_all", "text_blog", "text_fic", "text_mag", "text_news", "text_spok", "text_tvm", "text_web",
)  # fmt: skip
DEFAULT_REPO = os.environ.get("BEECHER_REPO", "/work/.mirror/sbeecher0575+nlpbias/repo")


def his_answers(repo: Path, model: str) -> list[tuple[str, list[str]]]:
    """(question, top-3 answers) rows of his answers file (his lines end \\r\\r\\n: blank rows are dropped)."""
    text = subprocess.run(
        ["git", "-C", str(repo), "show", f"HEAD:answers/{model}_person.csv"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = [row for row in csv.reader(io.StringIO(text)) if row][1:]
    return [(row[0], row[1:]) for row in rows]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=Path(DEFAULT_REPO))
    parser.add_argument("--permutations", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not args.repo.is_dir():
        print(f"no clone of Beecher's repository at {args.repo}; pass --repo PATH", file=sys.stderr)
        return 2
    questions = person_questions(mode="paper")
    print(
        "| model | his gender statistic | his race statistic | gender: questions, permutation p, V "
        "| race: questions, permutation p, V |"
    )
    print("|---|---:|---:|---|---|")
    for model in MODELS:
        rows = his_answers(args.repo, model)
        if [q for q, _ in rows] != questions["question"].to_pylist():
            print(f"{model}: his questions are not the 164 paper-mode questions", file=sys.stderr)
            return 1
        result = person_task(
            [a for _, a in rows], questions, n_permutations=args.permutations, seed=args.seed
        ).to_dict()
        his = result["beecher"]["statistics"]
        cells = []
        for name in ("gender", "race"):
            test = result["tests"][name]
            cells.append(
                f"{MISSING} (not tested)"
                if test is None
                else f"{fmt_count(test['num_questions'])}, p = {fmt_p(test['p_value'])}, V = {fmt(test['cramers_v'])}"
            )
        print(f"| {model} | {fmt(his['gender'], 5)} | {fmt(his['race'], 5)} | {cells[0]} | {cells[1]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
