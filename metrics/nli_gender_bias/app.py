"""Gradio 6 app for the nli_gender_bias module: upload scored NLI instances, get S, ΔP, B and the breakdowns."""

from pathlib import Path

import evaluate
import gradio as gr
import pandas as pd

from unqover.errors import UnqoverError
from unqover.format import MISSING, POINTS_DIGITS, fmt, fmt_count, fmt_interval, fmt_p_clause
from unqover.jobs.uploads import read_upload

MODULE = evaluate.load(str(Path(__file__).resolve().parent))
COLUMNS = ["p_female", "p_male", "occupation_gender", "cluster"]
OPTIONAL = ["occupation", "template_id", "neutral_female", "neutral_male"]


def read_rows(path: str) -> pd.DataFrame:
    """A CSV, JSON Lines or Parquet file with one row per instance (premise × template)."""
    try:
        frame = read_upload(path, csv_dtype={"cluster": str, "occupation": str, "template_id": str})
    except UnqoverError as err:
        raise gr.Error(str(err)) from err
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise gr.Error(f"the file lacks the columns {missing}; it needs {COLUMNS} (optional: {OPTIONAL})")
    return frame


def measure(path: str | None, ties: str, margin: float, n_resamples: float, seed: float):
    """Run the module on an uploaded file; returns the headline text, the by-gender table and the occupation table."""
    if not path:
        raise gr.Error("upload a file of scored instances first")
    frame = read_rows(path)
    probabilities = ["p_female", "p_male"]
    if "neutral_female" in frame.columns and "neutral_male" in frame.columns:
        probabilities += ["neutral_female", "neutral_male"]
    keep = [c for c in ["occupation_gender", "cluster", "occupation", "template_id"] if c in frame.columns]
    references = frame[keep].astype(object).where(frame[keep].notna(), None).to_dict(orient="records")
    try:
        result = MODULE.compute(
            predictions=frame[probabilities].to_numpy(dtype=float).tolist(),
            references=references,
            ties=ties,
            margin=float(margin),
            n_resamples=int(n_resamples),
            seed=int(seed),
        )
    except (ValueError, UnqoverError) as err:
        raise gr.Error(str(err)) from err
    intervals = result.get("intervals", {})
    p_values = result.get("p_values", {})

    def line(label: str, name: str) -> str:
        text = fmt(result[name], POINTS_DIGITS)
        interval = fmt_interval(intervals.get(name), POINTS_DIGITS)
        if interval != MISSING:
            text += f" {interval}"
        if name in p_values:
            text += f" ({fmt_p_clause(p_values[name], 'sign-flip p')})"
        return f"- {label}: {text}"

    lines = [
        f"**{fmt_count(result['num_instances'])} instances, {fmt_count(result['num_clusters'])} clusters** "
        f"(percent; ties: {ties}, {result['ties']} exact ties)",
        line("S (same label, ↑)", "S"),
        line(f"S with margin {result['margin']:g}", "S_margin"),
        line("ΔP = mean |P_f − P_m| (↓)", "delta_P"),
        line("B = stereotypical hypothesis wins (↓, chance 50)", "B"),
        line("signed stereotype gap", "stereotype_gap"),
        line("signed gender gap P_f − P_m", "gender_gap"),
        line("α (overall gender preference, > 0 female)", "alpha"),
        line("β (stereotype effect)", "beta"),
    ]
    if result["neutral_rate"] is not None:
        lines.append(line("neutral rate", "neutral_rate"))
    by_gender = pd.DataFrame(
        [{"occupation_gender": gender, **values} for gender, values in result["by_gender"].items()]
    )
    return "\n".join(lines), by_gender, pd.DataFrame(result["by_occupation"])


def build_app() -> gr.Blocks:
    with gr.Blocks(title="NLI gender bias") as app:
        gr.Markdown(
            "# NLI gender bias\nUpload scored NLI instances (CSV, JSON Lines or Parquet), one row per premise × "
            f"template, with the columns `{'`, `'.join(COLUMNS)}` (optional `{'`, `'.join(OPTIONAL)}`). "
            "`p_female`/`p_male` are the binary entailment probabilities sigmoid(z_e − z_c). "
            "See the card for the formulas."
        )
        with gr.Row():
            upload = gr.File(
                label="scored instances", file_types=[".csv", ".jsonl", ".json", ".parquet"], type="filepath"
            )
            with gr.Column():
                ties = gr.Radio(["half", "exclude"], value="half", label="ties in B")
                margin = gr.Slider(0, 0.45, value=0.1, step=0.05, label="margin for S")
                resamples = gr.Slider(0, 2000, value=200, step=50, label="bootstrap resamples")
                seed = gr.Number(value=0, precision=0, label="seed")
                run = gr.Button("Measure", variant="primary")
        headline = gr.Markdown()
        by_gender = gr.Dataframe(label="by occupation gender (the paper's Table 6)")
        by_occupation = gr.Dataframe(label="by occupation")
        run.click(
            measure,
            [upload, ties, margin, resamples, seed],
            [headline, by_gender, by_occupation],
            api_name="measure",
        )
    return app


if __name__ == "__main__":
    build_app().queue(default_concurrency_limit=2).launch()
