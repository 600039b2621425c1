"""Gradio 6 app for the eec_emotion_bias module: upload ranked answers per question, get the race and gender tests."""

import re
from pathlib import Path

import evaluate
import gradio as gr
import pandas as pd

from unqover.errors import UnqoverError
from unqover.probes.uploads import read_upload
from unqover.report.eec import BEECHER_DIGITS
from unqover.report.format import MISSING, fmt, fmt_count, fmt_interval, fmt_p_clause

MODULE = evaluate.load(str(Path(__file__).resolve().parent))
COLUMNS = ["gender", "race", "person", "form"]
ANSWER_COLUMN = re.compile(r"^answer(\d+)$")


def read_rows(path: str) -> pd.DataFrame:
    """A CSV, JSON Lines or Parquet file with one row per question."""
    try:
        frame = read_upload(path, csv_dtype=str)
    except UnqoverError as err:
        raise gr.Error(str(err)) from err
    if "person" not in frame.columns and "person_slot" in frame.columns:
        frame = frame.rename(columns={"person_slot": "person"})
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise gr.Error(
            f"the file lacks the columns {missing}; it needs {COLUMNS} and the ranked answers as `answers` (a list, "
            "or words joined by '|') or as `answer1`, `answer2`, ... (optional: `tie`)"
        )
    return frame


def ranked_answers(frame: pd.DataFrame) -> list[list[str]]:
    """Each question's answers, best first, from an `answers` column or from `answer1`, `answer2`, ..."""
    if "answers" in frame.columns:
        return [
            [w.strip() for w in value.split("|")] if isinstance(value, str) else [str(w) for w in value]
            for value in frame["answers"]
        ]
    numbered = sorted(
        (int(match.group(1)), column) for column in frame.columns if (match := ANSWER_COLUMN.match(column))
    )
    if not numbered:
        raise gr.Error("the file has no answers: give an `answers` column or `answer1`, `answer2`, ...")
    columns = [column for _, column in numbered]
    return [
        [str(w) for w in row if isinstance(w, str) and w] for row in frame[columns].itertuples(index=False)
    ]


def _tie(value) -> bool:
    return str(value).strip().lower() in ("true", "1", "yes")


def measure(path: str | None, n_permutations: float, n_bootstrap: float, seed: float):
    """Run the module on an uploaded file; returns the headline text, the tests table and the per-person table."""
    if not path:
        raise gr.Error("upload a file of ranked answers first")
    frame = read_rows(path)
    references = []
    for row in frame.to_dict(orient="records"):
        race = row["race"]
        reference = {
            "gender": row["gender"],
            "race": None if race is None or race != race or race == "" else race,
            "person": row["person"],
            "form": row["form"],
        }
        if "tie" in frame.columns:
            reference["tie"] = _tie(row["tie"])
        references.append(reference)
    try:
        result = MODULE.compute(
            predictions=ranked_answers(frame),
            references=references,
            n_permutations=int(n_permutations),
            n_bootstrap=int(n_bootstrap),
            seed=int(seed),
        )
    except (ValueError, UnqoverError) as err:
        raise gr.Error(str(err)) from err
    rows = []
    lines = [
        f"**{fmt_count(result['num_questions'])} questions, {fmt_count(result['num_persons'])} persons**"
    ]
    for name, test in result["tests"].items():
        if test is None:
            lines.append(f"- {name}: not run (one of its groups has no questions)")
            continue
        beecher, top1 = test["beecher"], test["top1"]
        interval = fmt_interval(test["cramers_v_interval"])
        lines.append(
            f"- {name}: top-1 χ² = {fmt(top1['statistic'])} (df {top1['df']}), {fmt_p_clause(test['p_value'])} "
            f"({test['p_value_method']}); Cramér's V = {fmt(test['cramers_v'])}"
            + (f" {interval}" if interval != MISSING else "")
            + f"; Beecher χ² = {fmt(beecher['statistic'], BEECHER_DIGITS)} (legacy, not a valid test)"
        )
        rows.append(
            {
                "test": name,
                "top-1 χ²": top1["statistic"],
                "df": top1["df"],
                "asymptotic p": top1["p_value"],
                "permutation p": top1["permutation_p_value"],
                "Holm p": result["adjusted"]["holm"].get(name),
                "BH p": result["adjusted"]["bh"].get(name),
                "Cramér's V": test["cramers_v"],
                "Beecher χ² (legacy)": beecher["statistic"],
                "exceeds 7.815": beecher["exceeds_cutoff"],
                "Beecher permutation p": beecher["permutation_p_value"],
            }
        )
    return "\n".join(lines), pd.DataFrame(rows), pd.DataFrame(result["persons"])


def build_app() -> gr.Blocks:
    with gr.Blocks(title="EEC emotion bias") as app:
        gr.Markdown(
            "# EEC emotion bias\nUpload ranked answers (CSV, JSON Lines or Parquet), one row per emotion-blank "
            f"question, with the columns `{'`, `'.join(COLUMNS)}` (race empty for noun phrases) and the answers, "
            "best first, as `answer1`, `answer2`, ... or an `answers` list; optional `tie`. "
            "See the card for the formulas."
        )
        with gr.Row():
            upload = gr.File(
                label="ranked answers", file_types=[".csv", ".jsonl", ".json", ".parquet"], type="filepath"
            )
            with gr.Column():
                permutations = gr.Slider(0, 10000, value=2000, step=100, label="person-level permutations")
                resamples = gr.Slider(0, 2000, value=200, step=50, label="bootstrap resamples (Cramér's V)")
                seed = gr.Number(value=0, precision=0, label="seed")
                run = gr.Button("Measure", variant="primary")
        headline = gr.Markdown()
        tests = gr.Dataframe(label="tests: race (African-American vs European names) and gender")
        persons = gr.Dataframe(label="per-person top-1 counts and weighted scores")
        run.click(
            measure, [upload, permutations, resamples, seed], [headline, tests, persons], api_name="measure"
        )
    return app


if __name__ == "__main__":
    build_app().queue(default_concurrency_limit=2).launch()
