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
