"""The achieved FLOP/s of unqover's token tree on a GPU, for the cost model of docs/large-models.md.

    python scripts/bench_gpu_cost.py --rows rows.parquet --tokenizer DIR [--shape 8b] [--batch-sizes 64 1024]

A model of the given shape (Llama 3 8B's layers, with the tokenizer's vocabulary) is initialised at random in bf16
on the GPU (random weights run as fast as trained ones: the same shapes, the same kernels) and scores the UnQover
rows of ``--rows`` (a Parquet file of a probe's rows, e.g. a religion sample) with unqover's causal scorer and
runner, once per batch size, after one warm-up batch. Each line: the batch size, the tokens run (the engine's own
count), the scoring seconds, tokens/s, and the model FLOP/s as the cost model counts them (2 x parameters per
token) with its share of an H100/H200's dense bf16 peak (989 TFLOP/s).
"""

from __future__ import annotations

import argparse
import tempfile
import time

PEAK = 989e12
SHAPES = {  # Llama 3 8B's layers; "tiny" checks the script on a CPU
    "8b": {"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
           "num_key_value_heads": 8},
    "tiny": {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
             "num_key_value_heads": 2},
}  # fmt: skip


def random_model(shape: str, vocab: int, device: str):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(**SHAPES[shape], vocab_size=vocab, max_position_embeddings=4096, rope_theta=500000.0)
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    with torch.device(device):
        model = LlamaForCausalLM._from_config(config, dtype=dtype, attn_implementation="sdpa")
    return model.eval()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", required=True)
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--shape", default="8b", choices=sorted(SHAPES))
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[64, 1024])
    args = parser.parse_args()
    import pyarrow.parquet as pq
    import torch
    from transformers import AutoTokenizer

    from unqover.scoring.causal import CausalScorer
    from unqover.scoring.models import LoadedModel
    from unqover.scoring.runner import run_shard
    from unqover.scoring.throughput import take

    device = "cuda" if torch.cuda.is_available() else "cpu"
    rows = pq.read_table(args.rows)
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    model = random_model(args.shape, len(tokenizer), device)
    parameters = sum(p.numel() for p in model.parameters())
    dtype = "bfloat16" if device == "cuda" else "float32"
    loaded = LoadedModel(model, tokenizer, "causal", f"random-{args.shape}", None, device, dtype)
    scorer = CausalScorer(loaded)
    print(f"{device}: {torch.cuda.get_device_name() if device == 'cuda' else 'CPU'}; {parameters / 1e9:.2f}e9 "
          f"parameters; {rows.num_rows:,} rows; token tree: {scorer.share_prefixes}", flush=True)  # fmt: skip
    scorer.score(rows.slice(0, 64))  # warm-up
    take(model)
    for size in args.batch_sizes:
        with tempfile.TemporaryDirectory() as folder:
            began = time.perf_counter()
            run_shard(rows, scorer, folder, batch_size=size, progress=False)
            if device == "cuda":
                torch.cuda.synchronize()
            wall = time.perf_counter() - began
        record = take(model)
        flops = 2 * parameters * record.tokens / record.seconds
        print(
            f"batch {size}: {record.tokens:,} tokens ({record.tokens / rows.num_rows:.1f} a row) in "
            f"{record.seconds:.2f} s of scoring ({wall:.2f} s with the runner): {record.tokens_per_second:,.0f} "
            f"tokens/s, {flops / 1e12:.0f} TFLOP/s = {flops / PEAK:.1%} of {PEAK / 1e12:.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
