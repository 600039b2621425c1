"""The ``unqover`` command line: a thin layer over the library."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from unqover import __version__
from unqover.errors import UnqoverError

DEFAULT_DATASETS_ROOT = Path("datasets/unqover")


def _build_datasets(args: argparse.Namespace) -> int:
    from unqover.files import check_writable
    from unqover.hub.build import EEC_DATASETS, NLI_DATASETS, build_dataset, check_configs, check_names
    from unqover.hub.eec_dataset import build_eec_dataset
    from unqover.hub.nli_dataset import build_nli_dataset
    from unqover.lexicon import resolve_word_lists

    check_writable(args.output, folder=True)
    if args.probe is not None:
        from unqover.hub.build import build_custom_dataset
        from unqover.probes.registry import get_probe

        if args.names or args.source or args.labels != "paper":
            raise UnqoverError(
                "--probe FILE builds that probe alone: leave out dataset names, --source and --labels"
            )
        custom = get_probe(probe_file=args.probe)
        built = build_custom_dataset(
            custom.definition,
            args.output,
            configs=args.config,
            overwrite=args.overwrite,
            progress=not args.quiet,
        )
        rows = ", ".join(f"{config} {n:,}" for config, n in built.rows.items())
        print(f"{built.path}: {rows} rows in {built.seconds:.1f} s")
        return 0
    names = check_names(args.names)
    for name in names:
        check_configs(name, args.config)
    sources = dict(args.source or [])
    eec_csv = sources.pop("eec", None)
    if "eec" in dict(args.source or []) and (eec_csv is None or not any(n in EEC_DATASETS for n in names)):
        raise UnqoverError(
            "--source eec=PATH needs the eec-emotion dataset and a local EEC CSV (there is no hub copy)"
        )
    if (sources or args.labels != "paper") and not any(n in NLI_DATASETS for n in names):
        raise UnqoverError(
            "--source and --labels apply to the nli-gender dataset (and --source eec=PATH to eec-emotion)"
        )
    # the NLI and EEC datasets are made from the project's own data or the user's files: no UnQover word lists
    own = (*NLI_DATASETS, *EEC_DATASETS)
    word_lists = None if all(n in own for n in names) else resolve_word_lists(args.word_lists)
    for name in names:
        options = {"configs": args.config, "overwrite": args.overwrite, "progress": not args.quiet}
        if name in NLI_DATASETS:
            built = build_nli_dataset(args.output, sources=sources, labels=args.labels, **options)
        elif name in EEC_DATASETS:
            built = build_eec_dataset(args.output, csv=eec_csv, **options)
        else:
            built = build_dataset(word_lists, name, args.output, **options)
        rows = ", ".join(f"{config} {n:,}" for config, n in built.rows.items())
        print(f"{built.path}: {rows} rows in {built.seconds:.1f} s")
    return 0


def _source(text: str) -> tuple[str, str | None]:
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(
            f"expected NAME=PATH or NAME=hub (e.g. mnli=data/mnli.parquet), got {text!r}"
        )
    return name, None if path == "hub" else path


def _measure(args: argparse.Namespace) -> int:
    from unqover.files import check_writable, write_json_atomic
    from unqover.predictions import read_provenance
    from unqover.probes.base import RunOptions
    from unqover.probes.registry import get_probe, is_unqover, probe_of

    output = args.output or args.predictions.with_name(args.predictions.stem + ".bias.json")
    check_writable(output, folder=False)
    if args.probe is not None:
        probe = get_probe(probe_file=args.probe)
    else:
        probe = probe_of(read_provenance(args.predictions), default=args.bias or "gender")
    run = RunOptions(dataset=args.dataset, config=args.config, resamples=args.resamples, seed=args.seed)
    options = {"split": args.split} if args.split else {}
    if is_unqover(probe):  # the UnQover measures' own options
        options |= {"mode": args.mode, "drop_incomplete": args.drop_incomplete, "confidence": args.confidence}
    result, provenance = probe.measure_file(args.predictions, run, **options)
    provenance = {**provenance, "predictions": str(args.predictions.resolve())}  # `unqover compare` reads it
    print(probe.summary(result, top=args.top))
    write_json_atomic(output, {"probe": probe.name, "provenance": provenance, "result": result.to_dict()})
    print(f"\nFull results: {output}")
    return 0


def _sample(args: argparse.Namespace) -> int:
    from unqover.files import check_writable
    from unqover.hub.load import load_rows, source_name
    from unqover.predictions import SAMPLE_IDS_SCHEMA, write_predictions
    from unqover.probe.sampling import DESIGN, describe_selection, select_groups
    from unqover.probes.unqover import ROW_COLUMNS

    check_writable(args.output, folder=False)
    rows = load_rows(args.dataset, args.config, args.split, columns=ROW_COLUMNS)
    kept = select_groups(rows, limit=args.groups, sample=args.fraction, seed=args.seed)
    counts, total = describe_selection(kept), describe_selection(rows)
    about = {
        "selection": {"design": DESIGN, "seed": args.seed, "groups": counts["groups"], "of": total["groups"]},
        "dataset": {"source": source_name(args.dataset), "config": args.config, "split": args.split},
    }
    write_predictions(args.output, kept.select(["id"]), about, schema=SAMPLE_IDS_SCHEMA)
    print(
        f"{args.output}: {counts['rows']:,} row ids of {counts['groups']:,} of {total['groups']:,} groups "
        f"({counts['groups'] / total['groups']:.2%}, seed {args.seed}). Score them (id -> score_1, score_2), then "
        f"`unqover measure PREDICTIONS --dataset {args.dataset} --config {args.config}`."
    )
    return 0


#: Options that belong to some probes only: the probe's definition accepts or refuses them.
PROBE_SETTINGS = (
    "sample",
    "precision",
    "max_rows",
    "max_seconds",
    "scoring",
    "mode",
    "word_lists",
    "label_map",
    "length_rule",
    "permutations",
)


def _probe(args: argparse.Namespace) -> int:
    from unqover.probes.base import RunOptions
    from unqover.probes.job import run_probe
    from unqover.probes.precision import parse_duration
    from unqover.probes.registry import get_probe
    from unqover.report.markdown import precision_line

    args.max_seconds = None if args.max_time is None else parse_duration(args.max_time)
    if args.quiet:
        quiet_libraries()
    probe = get_probe(args.bias, probe_file=args.probe)
    run = RunOptions(
        dataset=args.dataset,
        config=args.config,
        output=args.output,
        batch_size=args.batch_size,
        device=args.device,
        dtype=args.dtype,
        shard=args.shard,
        limit=args.limit,
        seed=args.seed,
        resamples=args.resamples,
        progress=not args.quiet,
        revision=args.revision,
        token=args.token,
        allow_pickle=args.allow_pickle,
        started=getattr(args, "started", None),
        settings={name: getattr(args, name) for name in PROBE_SETTINGS},
    )
    finished = run_probe(args.model, probe, run)
    if finished is None:
        return 0
    print(probe.summary(finished.result, top=args.top))
    stopped = precision_line(finished.provenance)
    if stopped is not None:  # a --precision run: whether its target was met
        print(f"\n{stopped}")
    print(f"\nRun folder: {finished.folder} (predictions.parquet, results.json, report.md, report.html)")
    return 0


def quiet_libraries() -> None:
    """--quiet: no progress bars from the libraries either (transformers' weight loading, Hub downloads)."""
    import os

    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    os.environ["HF_DATASETS_DISABLE_PROGRESS_BARS"] = "1"
    from transformers.utils import logging

    logging.disable_progress_bar()


def _whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def _real(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if value != value:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}")
    return value


def _positive(text: str) -> int:
    value = _whole(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text}")
    return value


def _width(text: str) -> float:
    value = _real(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"an interval width in (0, 1), got {text}")
    return value


def _shard(text: str) -> tuple[int, int]:
    from unqover.probe.runner import shard_spec

    try:
        return shard_spec(text)
    except UnqoverError as err:
        raise argparse.ArgumentTypeError(str(err)) from err


def _fraction(text: str) -> float:
    value = _real(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text}")
    return value


def _label_map(text: str) -> dict[str, int]:
    import json

    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"not JSON: {err}") from err
    if not isinstance(value, dict) or not all(isinstance(v, int) for v in value.values()):
        raise argparse.ArgumentTypeError(
            'expected a JSON object of label ids, e.g. {"entailment": 0, "contradiction": 2}'
        )
    return value


def _fraction_or_one(text: str) -> float:
    value = _real(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {text}")
    return value


def _non_negative(text: str) -> int:
    value = _whole(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    from unqover.probes.registry import UNQOVER_PROBES, probe_names

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
        help=f"datasets to build: {', '.join(UNQOVER_PROBES)}, nli-gender, eec-emotion (default: the four UnQover ones)",
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
    build.add_argument(
        "--probe",
        type=Path,
        metavar="FILE.yaml",
        help="build a custom probe from its YAML file into OUTPUT/<its name> (configs qa and, when derivable, mlm)",
    )
    build.add_argument(
        "--source",
        type=_source,
        action="append",
        metavar="NAME=PATH",
        help="nli-gender: premises from an NLI corpus (mnli, snli, anli, qnli) in a local file, or NAME=hub (repeatable); "
        "eec-emotion: eec=PATH reads the sentences from your copy of the EEC CSV",
    )
    build.add_argument(
        "--labels",
        choices=("paper", "data"),
        default="paper",
        help="nli-gender: occupation labels, the paper's (default) or data-driven from the BLS shares",
    )
    build.add_argument("--quiet", action="store_true", help="no progress bar")
    build.set_defaults(run=_build_datasets)

    measure = commands.add_parser(
        "measure",
        help="measure bias from a predictions file (id, score_1, score_2) and its dataset",
        description="Join a predictions file to the dataset rows it scored, compute the UnQover measures with "
        "bootstrap intervals, print the headline numbers and write the full results as JSON.",
    )
    measure.add_argument("predictions", type=Path, metavar="PREDICTIONS", help="a predictions Parquet file")
    written_by = measure.add_mutually_exclusive_group()
    written_by.add_argument(
        "--bias", choices=probe_names(), help="the probe, when the file does not record it (default: gender)"
    )
    written_by.add_argument("--probe", type=Path, metavar="FILE.yaml", help="a custom probe's file")
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
    measure.add_argument(
        "--seed", type=_non_negative, default=0, help="bootstrap seed (default: %(default)s)"
    )
    measure.add_argument(
        "--drop-incomplete", action="store_true", help="measure complete groups only, reporting the rest"
    )
    measure.add_argument(
        "--top", type=_non_negative, default=10, help="most biased pairs to print (default: %(default)s)"
    )
    measure.add_argument("--output", type=Path, help="results JSON (default: PREDICTIONS with .bias.json)")
    measure.set_defaults(run=_measure)

    sample = commands.add_parser(
        "sample",
        help="write the row ids of a quick run's sample of groups, to score on your own stack",
        description="Write the ids of the rows that a quick run of this size scores (the same seeded, stratified "
        "selection `unqover probe --limit` uses). Score them elsewhere into a predictions file (id, score_1, "
        "score_2) and `unqover measure` it with --dataset and --config: it recognises the sample and estimates "
        "the full-dataset values with intervals.",
    )
    sample.add_argument("dataset", metavar="DATASET", help="dataset folder or Hub id")
    sample.add_argument("--config", required=True, help="dataset config (e.g. qa, mlm)")
    sample.add_argument("--split", default="test", help="dataset split (default: %(default)s)")
    size = sample.add_mutually_exclusive_group(required=True)
    size.add_argument("--groups", type=_positive, help="number of groups (4 rows each)")
    size.add_argument("--fraction", type=_fraction_or_one, help="fraction of the groups")
    sample.add_argument("--seed", type=_non_negative, default=0, help="sampling seed (default: %(default)s)")
    sample.add_argument("--output", type=Path, required=True, help="Parquet file of row ids to write")
    sample.set_defaults(run=_sample)

    probe = commands.add_parser(
        "probe",
        help="probe a model for bias (UnQover, NLI gender-occupation, EEC emotion): score, measure, report",
        description="Score every row of a probe dataset with a model (UnQover: extractive QA, masked LM or causal "
        "LM, from its config; nli-gender: NLI classifiers; eec-emotion: masked and causal LMs), measure the bias "
        "with intervals and tests, and write predictions, results and a report into a resumable run folder. MODEL "
        "is a Hub id or a local folder.",
    )
    probe.add_argument("model", metavar="MODEL", help="Hub model id or local folder")
    which = probe.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--bias",
        choices=probe_names(),
        help="the probe: an UnQover bias class, nli-gender (NLI models) or eec-emotion (masked and causal LMs)",
    )
    which.add_argument(
        "--probe",
        type=Path,
        metavar="FILE.yaml",
        help="a custom UnQover-style probe: subjects, attributes and templates in a YAML file (see README)",
    )
    probe.add_argument(
        "--dataset",
        help="dataset folder or Hub id (default: datasets/unqover/BIAS if built, the Hub, then the upstream word lists)",
    )
    probe.add_argument(
        "--word-lists", type=Path, metavar="PATH", help="build the rows in memory from these word lists"
    )
    probe.add_argument(
        "--config", help="dataset config (default: qa for QA and causal LMs, mlm for masked LMs)"
    )
    probe.add_argument("--output", type=Path, help="run folder (default: runs/MODEL/BIAS-CONFIG)")
    probe.add_argument(
        "--scoring",
        choices=("default", "paper"),
        help="UnQover: paper reproduces the original's scoring quirks",
    )
    probe.add_argument(
        "--mode", choices=("default", "paper"), help="UnQover: the measure mode (see `unqover measure`)"
    )
    probe.add_argument(
        "--batch-size",
        type=_positive,
        help="rows per forward pass (default: automatic, halved on out-of-memory)",
    )
    probe.add_argument("--device", choices=("auto", "cuda", "mps", "cpu"), default="auto")
    probe.add_argument(
        "--dtype",
        choices=("auto", "float32", "bfloat16", "float16"),
        default="auto",
        help="auto: fp32 on CPU, bf16/fp16 on GPU",
    )
    probe.add_argument(
        "--shard", type=_shard, metavar="I/N", help="score shard I of N (0-based) into a shared --output"
    )
    probe.add_argument(
        "--limit",
        type=_positive,
        help="keep a seeded random sample of N groups (4 rows each), stratified over template x attribute; "
        "the results estimate the full-dataset values. nli-gender: N rows per occupation; eec-emotion: N persons "
        "per gender x race cell",
    )
    probe.add_argument(
        "--sample", type=_fraction_or_one, help="keep this fraction of the groups (the same seeded design)"
    )
    probe.add_argument(
        "--precision",
        type=_width,
        metavar="WIDTH",
        help="score the seeded sample in growing rounds until every headline interval (δ, ε, μ, η) is at most "
        "WIDTH wide; resumable",
    )
    probe.add_argument("--max-rows", type=_positive, help="with --precision: score at most this many rows")
    probe.add_argument(
        "--max-time",
        metavar="DURATION",
        help="with --precision: bound the whole command's wall time (loading, scoring, measuring), starting no "
        "round that would end past it; a unit is required: 90s, 30m, 1.5h",
    )
    probe.add_argument(
        "--seed", type=_non_negative, default=0, help="sampling and bootstrap seed (default: %(default)s)"
    )
    probe.add_argument(
        "--resamples", type=_non_negative, default=1000, help="bootstrap resamples (default: %(default)s)"
    )
    probe.add_argument(
        "--top", type=_non_negative, default=10, help="most biased pairs to print (default: %(default)s)"
    )
    probe.add_argument("--revision", help="model revision (branch, tag or commit)")
    probe.add_argument("--token", help="Hugging Face token for gated models (default: HF_TOKEN / login)")
    probe.add_argument(
        "--allow-pickle",
        action="store_true",
        help="also load .bin (pickle) weights; only for models you trust",
    )
    probe.add_argument(
        "--label-map",
        type=_label_map,
        help='NLI models whose config names labels LABEL_k: JSON such as \'{"entailment": 0, "neutral": 1, "contradiction": 2}\'',
    )
    probe.add_argument(
        "--length-rule",
        choices=("mean", "sum"),
        help="eec-emotion: rank sentences by log-probability per token (mean, the default) or in total",
    )
    probe.add_argument(
        "--permutations",
        type=_non_negative,
        help="eec-emotion: person-level permutations per test (default: 2000)",
    )
    probe.add_argument("--quiet", action="store_true", help="no progress bar")
    probe.set_defaults(run=_probe)

    # `publish` and `compare` own their arguments; they are listed here for --help only.
    commands.add_parser("compare", help="how bias shifts between two runs (see `unqover compare --help`)")
    # `publish` owns its arguments (unqover.hub.publish.main); it is listed here for --help only.
    commands.add_parser(
        "publish",
        help="push the datasets, the evaluate modules and the Space to the Hugging Face Hub "
        "(see `unqover publish --help`)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    started = time.monotonic()  # --max-time bounds the whole command from here
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["publish"]:
        from unqover.hub.publish import main as publish_main

        return publish_main(argv[1:])
    if argv[:1] == ["compare"]:
        from unqover.probes.registry import compared_scores, headline_of
        from unqover.report.compare import main as compare_main

        return compare_main(argv[1:], headline_of=headline_of, scores_of=compared_scores)
    args = build_parser().parse_args(argv)
    args.started = started
    try:
        return args.run(args)
    except UnqoverError as err:
        print(f"unqover: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # a full disk, a folder gone mid-run, a network failure: one line, not a traceback
        where = f"{err.filename}: " if err.filename else ""
        print(f"unqover: error: {where}{err.strerror or err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as err:
        folder = getattr(err, "folder", None)
        if folder is None:
            print("unqover: interrupted", file=sys.stderr)
        else:
            print(
                f"unqover: interrupted; the scores up to the last checkpoint (at most about a minute back) are "
                f"kept in {folder}: run the same command again to resume where it stopped",
                file=sys.stderr,
            )
        return 130


if __name__ == "__main__":
    sys.exit(main())
