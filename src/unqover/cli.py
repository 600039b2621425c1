"""The ``unqover`` command line: a thin layer over the library."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from unqover import __version__
from unqover.errors import UnqoverError
from unqover.generate.unqover import BIAS_CLASSES

DEFAULT_DATASETS_ROOT = Path("datasets/unqover")


def _build_datasets(args: argparse.Namespace) -> int:
    from unqover.hub.build import build_dataset, check_configs, check_names
    from unqover.lexicon import resolve_word_lists

    names = check_names(args.names)
    for name in names:
        check_configs(name, args.config)
    word_lists = resolve_word_lists(args.word_lists)
    for name in names:
        built = build_dataset(
            word_lists,
            name,
            args.output,
            configs=args.config,
            overwrite=args.overwrite,
            progress=not args.quiet,
        )
        rows = ", ".join(f"{config} {n:,}" for config, n in built.rows.items())
        print(f"{built.path}: {rows} rows in {built.seconds:.1f} s")
    return 0


def _measure(args: argparse.Namespace) -> int:
    import json

    from unqover.pipeline import measure_predictions
    from unqover.report.text import summary

    result, provenance = measure_predictions(
        args.predictions,
        dataset=args.dataset,
        config=args.config,
        split=args.split,
        mode=args.mode,
        drop_incomplete=args.drop_incomplete,
        n_resamples=args.resamples,
        confidence=args.confidence,
        seed=args.seed,
    )
    print(summary(result, top=args.top))
    output = args.output or args.predictions.with_name(args.predictions.stem + ".bias.json")
    tmp = output.with_name(f".{output.name}.tmp")
    tmp.write_text(
        json.dumps({"provenance": provenance, "result": result.to_dict()}, indent=1, allow_nan=False)
    )
    tmp.replace(output)
    print(f"\nFull results: {output}")
    return 0


def _fraction(text: str) -> float:
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text}")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="unqover", description="Measure stereotyping bias in NLP models.")
    parser.add_argument("--version", action="version", version=f"unqover {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    build = commands.add_parser(
        "build-datasets",
        help="generate the UnQover datasets as Hugging Face dataset folders (Parquet + card)",
        description="Generate the UnQover probe datasets from the upstream word lists into "
        "<output>/<name>/ (README.md card + data/<config>/*.parquet).",
    )
    build.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help=f"datasets to build (default: all of {', '.join(BIAS_CLASSES)})",
    )
    build.add_argument(
        "--word-lists",
        type=Path,
        default=None,
        metavar="PATH",
        help="a local word_lists/ folder (default: download the pinned upstream lists once and cache them)",
    )
    build.add_argument(
        "--output", type=Path, default=DEFAULT_DATASETS_ROOT, help="root folder (default: %(default)s)"
    )
    build.add_argument(
        "--config",
        action="append",
        default=None,
        help="build only this config (repeatable; default: all of qa, qa-newsqa, mlm, mlm-bert, mlm-roberta)",
    )
    build.add_argument("--overwrite", action="store_true", help="replace data that is already built")
    build.add_argument("--quiet", action="store_true", help="no progress bar")
    build.set_defaults(run=_build_datasets)

    measure = commands.add_parser(
        "measure",
        help="measure bias from a predictions file (id, score_1, score_2) and its dataset",
        description="Join a predictions file to the dataset rows it scored, compute the UnQover measures with "
        "bootstrap intervals, print the headline numbers and write the full results as JSON.",
    )
    measure.add_argument("predictions", type=Path, metavar="PREDICTIONS", help="a predictions Parquet file")
    measure.add_argument("--dataset", help="dataset folder or Hub id (default: the one recorded in the file)")
    measure.add_argument("--config", help="dataset config (default: recorded in the file)")
    measure.add_argument("--split", help="dataset split (default: recorded, else test)")
    measure.add_argument(
        "--mode", choices=("default", "paper"), default="default", help="paper: reproduce analysis.py"
    )
    measure.add_argument(
        "--resamples",
        type=_non_negative,
        default=1000,
        help="bootstrap resamples, 0 for none (default: %(default)s)",
    )
    measure.add_argument(
        "--confidence", type=_fraction, default=0.95, help="interval level (default: %(default)s)"
    )
    measure.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: %(default)s)")
    measure.add_argument(
        "--drop-incomplete", action="store_true", help="measure complete groups only, reporting the rest"
    )
    measure.add_argument(
        "--top", type=_non_negative, default=10, help="most biased pairs to print (default: %(default)s)"
    )
    measure.add_argument("--output", type=Path, help="results JSON (default: PREDICTIONS with .bias.json)")
    measure.set_defaults(run=_measure)

    # `publish` owns its arguments (unqover.hub.publish.main); it is listed here for --help only.
    commands.add_parser(
        "publish", help="push built datasets to the Hugging Face Hub (see `unqover publish --help`)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["publish"]:
        from unqover.hub.publish import main as publish_main

        return publish_main(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except UnqoverError as err:
        print(f"unqover: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("unqover: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
