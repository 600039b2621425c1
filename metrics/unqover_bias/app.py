"""Gradio 6 app for the unqover_bias module: upload scored UnQover rows, get the measures and tables."""

from pathlib import Path

import evaluate
import gradio as gr
import pandas as pd

from unqover.errors import UnqoverError
from unqover.format import fmt_count
from unqover.jobs.uploads import read_upload
from unqover.report.markdown import headline as headlines
from unqover.report.markdown import most_biased, most_biased_heading, most_biased_note

MODULE = evaluate.load(str(Path(__file__).resolve().parent))
COLUMNS = ["subject_1", "subject_2", "template_id", "attribute", "polarity", "score_1", "score_2"]
OPTIONAL = ["subject_1_cluster", "subject_2_cluster", "attribute_type"]


def read_rows(path: str) -> pd.DataFrame:
    """A CSV, JSON Lines or Parquet file of rows with their two scores."""
    try:
        frame = read_upload(path)
    except UnqoverError as err:
        raise gr.Error(str(err)) from err
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise gr.Error(f"the file lacks the columns {missing}; it needs {COLUMNS} (optional: {OPTIONAL})")
    return frame


def measure(path: str | None, mode: str, n_resamples: float, seed: float):
    """Run the module on an uploaded file; returns the headline text and the two tables."""
    if not path:
        raise gr.Error("upload a file of scored rows first")
    frame = read_rows(path)
    keep = [c for c in [*COLUMNS[:5], *OPTIONAL] if c in frame.columns]
    references = (
        frame[keep].astype({"template_id": int}).where(frame[keep].notna(), None).to_dict(orient="records")
    )
    try:
        result = MODULE.compute(
            predictions=frame[["score_1", "score_2"]].to_numpy().tolist(),
            references=references,
            mode=mode,
            n_resamples=int(n_resamples),
            seed=int(seed),
        )
    except ValueError as err:
        raise gr.Error(str(err)) from err
    listed = most_biased(result, len(result.get("most_biased") or []))
    headline = "\n".join(
        [f"**{fmt_count(result['num_groups'])} groups** ({mode} mode)"]
        + [f"- {row['name']}: {row['text']}" for row in headlines(result)]
        + ["", f"**{most_biased_heading(result, len(listed))}.** {most_biased_note(result) or ''}"]
    )
    columns = ["subject", "attribute", "gamma", "gamma_low", "gamma_high", "eta", "count"]
    return headline, pd.DataFrame(listed, columns=columns), pd.DataFrame(result["subject_gamma"])


def build_app() -> gr.Blocks:
    with gr.Blocks(title="UnQover bias") as app:
        gr.Markdown(
            "# UnQover bias\nUpload scored UnQover rows (CSV, JSON Lines or Parquet) with the columns "
            f"`{'`, `'.join(COLUMNS)}` (optional `{'`, `'.join(OPTIONAL)}`). See the card for the formulas."
        )
        with gr.Row():
            upload = gr.File(
                label="scored rows", file_types=[".csv", ".jsonl", ".json", ".parquet"], type="filepath"
            )
            with gr.Column():
                mode = gr.Radio(["default", "paper"], value="default", label="mode")
                resamples = gr.Slider(0, 2000, value=200, step=50, label="bootstrap resamples")
                seed = gr.Number(value=0, precision=0, label="seed")
                run = gr.Button("Measure", variant="primary")
        headline = gr.Markdown()
        gamma = gr.Dataframe(label="most biased subject–attribute pairs γ(x, a)")
        subjects = gr.Dataframe(label="subjects ranked by γ(x)")
        run.click(measure, [upload, mode, resamples, seed], [headline, gamma, subjects], api_name="measure")
    return app


if __name__ == "__main__":
    build_app().queue(default_concurrency_limit=2).launch()
