"""The cost model of a large run (docs/large-models.md): hours of H100 time for a run of T tokens.

    python scripts/cost_model.py --tokens 164799441 [--fraction 0.317] [--gpus 1 8 64]

seconds = tokens x FLOP per token / (GPUs x achieved FLOP/s), with FLOP per token = 2 x parameters (a forward pass:
one multiply-add per weight and token; attention over the token tree's rows of about 256 tokens adds under 1% at
these model sizes) and achieved FLOP/s = ``--fraction`` x an H100's dense bf16 peak (989 TFLOP/s, SXM); the default fraction is the
share ``scripts/bench_gpu_cost.py`` measured on one H200 at batches of 1024 (docs/large-models.md). The tokens
come from ``unqover probe MODEL --bias B --plan-only`` (the token tree's tokens, counted with the model's tokenizer).
"""

from __future__ import annotations

import argparse

H100_BF16_DENSE = 989e12  # FLOP/s, H100 SXM, dense (no sparsity)
MODELS = {"8B": 8.0e9, "70B": 70.6e9}  # parameters (Llama 3 8B and 70B)


def hours(tokens: float, parameters: float, gpus: int, fraction: float) -> float:
    return tokens * 2 * parameters / (gpus * fraction * H100_BF16_DENSE) / 3600


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tokens", type=float, required=True, help="the run's tokens (its plan's)")
    parser.add_argument(
        "--fraction",
        type=float,
        default=0.317,
        help="achieved share of the bf16 peak (default: measured, H200)",
    )
    parser.add_argument("--gpus", type=int, nargs="+", default=[1, 8, 64])
    args = parser.parse_args()
    print(f"{args.tokens:,.0f} tokens, {args.fraction:.0%} of {H100_BF16_DENSE / 1e12:.0f} TFLOP/s per H100")
    print("| model | FLOP | " + " | ".join(f"{g} H100" for g in args.gpus) + " |")
    print("|---|---:|" + "---:|" * len(args.gpus))
    for name, parameters in MODELS.items():
        flop = args.tokens * 2 * parameters
        cells = []
        for g in args.gpus:
            h = hours(args.tokens, parameters, g, args.fraction)
            cells.append(f"{h:.1f} h" if h >= 1 else f"{h * 60:.1f} min")
        print(f"| {name} | {flop:.2e} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
