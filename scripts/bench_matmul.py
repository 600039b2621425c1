"""Throughput of the matrix products that dominate a DistilBERT/BERT-base forward, fp32 vs bf16, on this CPU.

Why it exists: it bounds what bf16 can gain for extractive QA, where (unlike masked LMs) every token goes through
every layer in any approach. Shapes are those of a batch of 64 inputs of 24 tokens (1,536 token rows) through the
attention (768 x 768) and feed-forward (768 x 3072, 3072 x 768) projections.

    python scripts/bench_matmul.py [--threads 2]
"""

from __future__ import annotations

import argparse
import time

import torch


def gflops(function, flop: float, seconds: float = 2.0) -> float:
    function()
    start, calls = time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        function()
        calls += 1
    return flop * calls / (time.perf_counter() - start) / 1e9


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=1536, help="token rows per product (batch x length)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} threads, {args.tokens} token rows")
    total = {torch.float32: 0.0, torch.bfloat16: 0.0}
    with torch.inference_mode():
        for d_in, d_out, count in ((768, 768, 4), (768, 3072, 1), (3072, 768, 1)):
            rates = {}
            for dtype in (torch.float32, torch.bfloat16):
                layer = torch.nn.Linear(d_in, d_out).to(dtype)
                x = torch.randn(args.tokens, d_in, dtype=dtype)
                flop = 2.0 * args.tokens * d_in * d_out
                rates[dtype] = gflops(lambda layer=layer, x=x: layer(x), flop)
                total[dtype] += count * flop / rates[dtype]
            print(
                f"linear {d_in} -> {d_out}: fp32 {rates[torch.float32]:.0f} GFLOP/s, "
                f"bf16 {rates[torch.bfloat16]:.0f} GFLOP/s ({rates[torch.bfloat16] / rates[torch.float32]:.2f}x)"
            )
    ratio = total[torch.float32] / total[torch.bfloat16]
    print(f"one layer's projections (4 x 768->768, 768->3072, 3072->768): bf16 {ratio:.2f}x fp32")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
