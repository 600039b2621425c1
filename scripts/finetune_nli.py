"""Debias an NLI model: gender-swap augmentation of MNLI/SNLI and fine-tuning (Sharma, Dey & Sinha 2021, §4).

    python scripts/finetune_nli.py MODEL --source mnli|snli [--train-file PATH] [--augment] [--output DIR]
        [--epochs 3] [--lr LR] [--batch-size 32] [--limit N] [--seed 0]

Without --train-file the corpus is downloaded from the Hub (nyu-mll/glue mnli, stanfordnlp/snli). --lr defaults
to the paper's: 1e-5 for RoBERTa, 2e-5 for BERT and BART. Afterwards re-run the probe on the saved model.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from unqover.errors import UnqoverError, require_models_extra


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="finetune_nli.py",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawTextHelpFormatter,
    )
    parser.add_argument(
        "model", metavar="MODEL", help="Hub id or local folder (NLI classifier or base checkpoint)"
    )
    parser.add_argument("--source", choices=["mnli", "snli"], required=True, help="training corpus")
    parser.add_argument(
        "--train-file", type=Path, help="local Parquet/JSONL/CSV with premise, hypothesis, label"
    )
    parser.add_argument("--split", default="train", help="Hub split (default: train)")
    parser.add_argument("--augment", action="store_true", help="add gender-swapped copies (paper §4)")
    parser.add_argument(
        "--all-pairs",
        action="store_true",
        help="with --augment: swap every gendered pair, not only occupation ones",
    )
    parser.add_argument(
        "--output", type=Path, help="output folder (default: finetuned-<model>-<source>[-aug])"
    )
    parser.add_argument("--epochs", type=float, default=3.0, help="default: 3")
    parser.add_argument("--lr", type=float, help="learning rate (default: 1e-5 RoBERTa, 2e-5 otherwise)")
    parser.add_argument("--batch-size", type=int, default=32, help="default: 32")
    parser.add_argument("--max-length", type=int, default=128, help="default: 128")
    parser.add_argument("--limit", type=int, help="use the first N training pairs")
    parser.add_argument("--seed", type=int, default=0, help="default: 0")
    parser.add_argument("--label-map", help="JSON for LABEL_k models, e.g. '{\"entailment\": 0, ...}'")
    parser.add_argument("--allow-pickle", action="store_true", help="allow loading .bin (pickled) weights")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:  # before the corpus is read: one line naming the extra
        require_models_extra("fine-tuning a model")
    except UnqoverError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    from unqover.generate.nli_occupations import PROBE_OCCUPATIONS
    from unqover.train.nli_debias import augment, finetune, load_nli_training_data

    try:
        label_map = json.loads(args.label_map) if args.label_map else None
    except json.JSONDecodeError as err:
        print(f"error: --label-map is not valid JSON: {err}", file=sys.stderr)
        return 2
    output = args.output or Path(
        f"finetuned-{Path(args.model).name}-{args.source}{'-aug' if args.augment else ''}"
    )
    try:
        rows = load_nli_training_data(args.source, args.train_file, split=args.split, limit=args.limit)
        where = args.train_file or f"the Hub ({args.split})"
        print(f"read {len(rows)} {args.source.upper()} pairs from {where}")
        if args.augment:
            rows, counts = augment(rows, None if args.all_pairs else PROBE_OCCUPATIONS)
            print(
                f"augmented: {counts['original']} original + {counts['added']} gender-swapped = {len(rows)} pairs"
            )
        metrics = finetune(
            args.model,
            rows,
            output_dir=output,
            learning_rate=args.lr,
            epochs=args.epochs,
            batch_size=args.batch_size,
            max_length=args.max_length,
            seed=args.seed,
            label_map=label_map,
            allow_pickle=args.allow_pickle,
        )
    except UnqoverError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(
        f"fine-tuned {args.model} for {metrics['epochs']:g} epoch(s) on {metrics['n_train']} pairs "
        f"(lr {metrics['learning_rate']:g}, batch {metrics['batch_size']}, seed {metrics['seed']}); "
        f"train loss {metrics.get('train_loss', float('nan')):.4f}"
    )
    print(f"label ids: {metrics['label_ids']}")
    print(f"saved model and tokenizer to {output}")
    print(f"re-run the probe:  unqover probe {output} --bias nli-gender")
    return 0


if __name__ == "__main__":
    sys.exit(main())
