"""Score `unqover sample` ids on an OpenAI-compatible server (vLLM, SGLang, TGI, ...) into a predictions file.

The route for models larger than one GPU without lm-eval: the server holds the model (tensor parallelism, prefix
caching), this script asks it for the log-probabilities of each row's two answers, and `unqover measure` turns
the predictions into the full-dataset estimates with intervals::

    unqover sample DATASET --config qa --groups 2000 --output ids.parquet
    python scripts/score_openai_compatible.py ids.parquet --dataset DATASET --config qa \\
        --base-url http://localhost:8000/v1 --model MODEL --tokenizer MODEL --output predictions.parquet
    unqover measure predictions.parquet --dataset DATASET --config qa

The prompts, answers and tokens are `unqover probe`'s (``unqover.scoring.causal``: ``prompt_text``, ``encode_pair``,
with ``--system-prompt`` and ``--chat-template``). Each request sends prompt + answer as token ids to
``/completions`` with ``echo``, ``logprobs`` and one generated token (as lm-eval's ``local-completions`` model
does), and S = exp(Σ of the answer tokens' log-probabilities). The server must accept token-id prompts and echo
their log-probabilities (vLLM and SGLang do; OpenAI's own API does not).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pyarrow as pa
from tqdm import tqdm

from unqover.errors import UnqoverError
from unqover.hub.load import load_rows, source_name
from unqover.predictions import read_predictions, write_predictions
from unqover.probes.unqover_rows import REQUIRED_COLUMNS, ROW_COLUMNS
from unqover.scoring.causal import answer_text, chat_renderer, encode_pair, prompt_text
from unqover.scoring.mlm import surfaces

SAMPLE_SCHEMA = pa.schema([("id", pa.string())])


def completion_log_probs(
    base_url: str, model: str, prompts: list[list[int]], key: str | None, timeout: float
):
    """The echoed log-probability of every prompt token (the first is None), one list per prompt."""
    body = {"model": model, "prompt": prompts, "max_tokens": 1, "echo": True, "logprobs": 1, "temperature": 0}
    request = urllib.request.Request(
        base_url.rstrip("/") + "/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            choices = json.loads(response.read())["choices"]
    except (urllib.error.URLError, TimeoutError, json.JSONDecodeError, KeyError) as err:
        raise UnqoverError(f"the server at {base_url} did not answer a completions request: {err}") from None
    choices = sorted(choices, key=lambda choice: choice.get("index", 0))
    if len(choices) != len(prompts):
        raise UnqoverError(f"the server answered {len(choices)} of {len(prompts)} prompts")
    return [choice["logprobs"]["token_logprobs"] for choice in choices]


def score_rows(rows: pa.Table, tokenizer, send, *, chat_template: str, system_prompt: str | None, batch: int):
    """S of both subjects of every row, from ``send(token id lists) -> echoed log-probabilities``."""
    render = chat_renderer(tokenizer, chat_template)
    contexts, questions = rows["context"].to_pylist(), rows["question"].to_pylist()
    prompts = [
        prompt_text(c, q, system_prompt=system_prompt, render=render)
        for c, q in zip(contexts, questions, strict=True)
    ]
    answers = [answer_text(s, chat=render is not None) for k in (1, 2) for s in surfaces(rows, k)]
    prompt_ids, answer_ids = encode_pair(tokenizer, prompts * 2, answers)
    log_s = np.zeros(len(answers))
    for start in tqdm(range(0, len(answers), batch), desc="scoring", unit="batch"):
        chunk = range(start, min(start + batch, len(answers)))
        echoed = send([prompt_ids[i] + answer_ids[i] for i in chunk])
        for i, token_log_probs in zip(chunk, echoed, strict=True):
            begin = len(prompt_ids[i])
            values = token_log_probs[begin : begin + len(answer_ids[i])]
            if len(values) != len(answer_ids[i]) or any(v is None for v in values):
                raise UnqoverError("the server's echoed log-probabilities do not cover the prompt's tokens")
            log_s[i] = sum(values)
    n = rows.num_rows
    return np.exp(log_s[:n]), np.exp(log_s[n:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ids", type=Path, help="the ids file of `unqover sample`")
    parser.add_argument("--dataset", required=True, help="the dataset folder or Hub id the ids are of")
    parser.add_argument("--config", default="qa", help="dataset config (default: %(default)s)")
    parser.add_argument("--base-url", required=True, help="the server's OpenAI-compatible base URL, …/v1")
    parser.add_argument("--model", required=True, help="the model name the server serves")
    parser.add_argument("--tokenizer", required=True, help="the model's tokenizer: Hub id or local folder")
    parser.add_argument("--chat-template", default="auto", help="auto, none or a template's text file")
    parser.add_argument("--system-prompt", help="a system message (plain prompts: a paragraph before)")
    parser.add_argument("--batch", type=int, default=64, help="prompts per request (default: %(default)s)")
    parser.add_argument(
        "--timeout", type=float, default=600.0, help="seconds per request (default: %(default)s)"
    )
    parser.add_argument("--output", type=Path, required=True, help="the predictions Parquet file to write")
    args = parser.parse_args(argv)
    try:
        from transformers import AutoTokenizer

        ids, about = read_predictions(args.ids, SAMPLE_SCHEMA)
        rows = load_rows(args.dataset, args.config, columns=sorted(set(REQUIRED_COLUMNS) | set(ROW_COLUMNS)))
        position = {row_id: i for i, row_id in enumerate(rows["id"].to_pylist())}
        missing = [i for i in ids["id"].to_pylist() if i not in position]
        if missing:
            raise UnqoverError(
                f"{len(missing):,} ids are not rows of {args.dataset} ({args.config}), e.g. {missing[0]}"
            )
        rows = rows.take([position[i] for i in ids["id"].to_pylist()])
        tokenizer = AutoTokenizer.from_pretrained(args.tokenizer, trust_remote_code=False)
        template = args.chat_template
        if template not in ("auto", "none"):
            template = Path(template).read_text(encoding="utf-8")
        key = os.environ.get("OPENAI_API_KEY")

        def send(prompts: list[list[int]]):
            return completion_log_probs(args.base_url, args.model, prompts, key, args.timeout)

        score_1, score_2 = score_rows(
            rows, tokenizer, send, chat_template=template, system_prompt=args.system_prompt, batch=args.batch
        )
        provenance = {
            **about,
            "dataset": {"source": source_name(args.dataset), "config": args.config, "split": "test"},
            "model": {"id": args.model, "family": "causal", "served_at": args.base_url},
            "prompt": {"chat_template": args.chat_template, "system_prompt": args.system_prompt},
        }
        table = pa.table({"id": rows["id"], "score_1": score_1, "score_2": score_2})
        write_predictions(args.output, table, provenance)
    except UnqoverError as err:
        print(f"score_openai_compatible: error: {err}", file=sys.stderr)
        return 2
    print(f"{args.output}: {rows.num_rows:,} rows scored; next: unqover measure {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
