"""Gradio 6 app for the eec_emotion_bias module: upload ranked answers per question, get the race and gender tests
(the emotion task; a second tab: the person task, the module's "person" config)."""

import re
from pathlib import Path

import evaluate
import gradio as gr
import pandas as pd

from unqover.errors import UnqoverError
from unqover.format import MISSING, fmt, fmt_count, fmt_interval, fmt_p_clause
from unqover.jobs.uploads import read_upload
from unqover.report.eec import BEECHER_DIGITS

MODULE = evaluate.load(str(Path(__file__).resolve().parent))
PERSON_MODULE = evaluate.load(str(Path(__file__).resolve().parent), "person")
COLUMNS = ["gender", "race", "person", "form"]
PERSON_COLUMNS = ["choices", "choice_genders", "choice_races", "emotion", "template", "form"]
LISTS = ("choices", "choice_genders", "choice_races")
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


def _listed(value) -> list[str]:
    """A list cell: a list (JSON Lines, Parquet) or words joined by '|' (CSV); an empty entry is no race."""
    if isinstance(value, str):
        return [w.strip() for w in value.split("|")]
    return ["" if w is None else str(w) for w in value]


def _label(value) -> str | None:
    """A cell that may be empty (no race, no emotion): None when it is."""
    return None if value is None or value != value or str(value).strip() == "" else str(value)


def measure_person(path: str | None, n_permutations: float, seed: float):
    """The person task on an uploaded file; returns the headline text, the tests table and Beecher's counts."""
    if not path:
        raise gr.Error("upload a file of ranked persons first")
    try:
        frame = read_upload(path, csv_dtype=str)
    except UnqoverError as err:
        raise gr.Error(str(err)) from err
    missing = [c for c in PERSON_COLUMNS if c not in frame.columns]
    if missing:
        raise gr.Error(
            f"the file lacks the columns {missing}; it needs {PERSON_COLUMNS} (lists as lists, or words joined by "
            "'|') and the ranked persons as `answers` or `answer1`, `answer2`, ... (optional: `tie`)"
        )
    references = []
    for row in frame.to_dict(orient="records"):
        reference = {key: _listed(row[key]) for key in LISTS}
        reference["choice_races"] = [_label(r) for r in reference["choice_races"]]
        reference |= {"emotion": _label(row["emotion"]), "template": row["template"], "form": row["form"]}
        if "tie" in frame.columns:
            reference["tie"] = _tie(row["tie"])
        references.append(reference)
    try:
        result = PERSON_MODULE.compute(
            predictions=ranked_answers(frame),
            references=references,
            n_permutations=int(n_permutations),
            seed=int(seed),
        )
    except (ValueError, UnqoverError) as err:
        raise gr.Error(str(err)) from err
    beecher = result["beecher"]
    lines = [f"**{fmt_count(result['num_questions'])} questions**"]
    rows = []
    for name, test in result["tests"].items():
        his = fmt(beecher["statistics"].get(name), BEECHER_DIGITS)
        if test is None:
            lines.append(
                f"- {name}: not tested (fewer than two groups or emotions); Beecher's statistic = {his}"
            )
            continue
        lines.append(
            f"- {name}: top-1 χ² = {fmt(test['statistic'])} (df {test['df']}, {fmt_count(test['num_questions'])} "
            f"questions), {fmt_p_clause(test['p_value'])} ({test['p_value_method']}); Cramér's V = "
            f"{fmt(test['cramers_v'])}; Beecher's statistic = {his} (legacy, not a valid test)"
        )
        rows.append(
            {
                "test": name,
                "questions": test["num_questions"],
                "top-1 χ²": test["statistic"],
                "df": test["df"],
                "asymptotic p": test["asymptotic_p_value"],
                "permutation p": test["permutation_p_value"],
                "Holm p": result["adjusted"]["holm"].get(name),
                "BH p": result["adjusted"]["bh"].get(name),
                "Cramér's V": test["cramers_v"],
                "Beecher's statistic (legacy)": beecher["statistics"].get(name),
                "exceeds 7.815": beecher["exceeds_cutoff"].get(name),
            }
        )
    counts = [
        {"category": category, "group": group, **row}
        for category, groups in beecher["counts"].items()
        for group, row in groups.items()
    ]
    return "\n".join(lines), pd.DataFrame(rows), pd.DataFrame(counts)


def build_app() -> gr.Blocks:
    with gr.Blocks(title="EEC emotion bias") as app:
        gr.Markdown("# EEC emotion bias\nSee the card for the formulas.")
        with gr.Tab("Emotion task"):
            _emotion_tab()
        with gr.Tab("Person task"):
            _person_tab()
    return app


def _person_tab() -> None:
    gr.Markdown(
        "Upload ranked persons (CSV, JSON Lines or Parquet), one row per person-blank question (the rows of the "
        f"`person_questions` dataset config), with the columns `{'`, `'.join(PERSON_COLUMNS)}` (lists as lists, or "
        "words joined by '|'; race and emotion empty where there is none) and the persons, best first, as "
        "`answer1`, `answer2`, ... or an `answers` list; optional `tie`."
    )
    with gr.Row():
        upload = gr.File(
            label="ranked persons", file_types=[".csv", ".jsonl", ".json", ".parquet"], type="filepath"
        )
        with gr.Column():
            permutations = gr.Slider(
                0, 10000, value=2000, step=100, label="permutations within template and form"
            )
            seed = gr.Number(value=0, precision=0, label="seed")
            run = gr.Button("Measure", variant="primary")
    headline = gr.Markdown()
    tests = gr.Dataframe(label="tests: group of the top-1 person x question emotion (gender, race)")
    counts = gr.Dataframe(label="Beecher's weighted points per group and emotion")
    run.click(
        measure_person, [upload, permutations, seed], [headline, tests, counts], api_name="measure_person"
    )


def _emotion_tab() -> None:
    gr.Markdown(
        "Upload ranked answers (CSV, JSON Lines or Parquet), one row per emotion-blank "
        f"question, with the columns `{'`, `'.join(COLUMNS)}` (race empty for noun phrases) and the answers, "
        "best first, as `answer1`, `answer2`, ... or an `answers` list; optional `tie`."
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


if __name__ == "__main__":
    build_app().queue(default_concurrency_limit=2).launch()
