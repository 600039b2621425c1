"""The ``unqover`` command line: a thin layer over the job layer (``unqover.probes``) and the reports.

The parser is assembled from the registry: each probe definition declares its own options (``probe``, ``measure``
and ``build-datasets``), and options that several probes share become one argument whose help says which probe
reads it how. Building the parser loads the definitions only, so ``--help`` and argument errors answer at once;
a command's work is imported when it runs.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from unqover import __version__
from unqover.errors import UnqoverError, require_models_extra
from unqover.jobs.reread import LEADERBOARD_METRICS, add_word_lists_argument, reading_with
from unqover.probes import options as parse

if TYPE_CHECKING:
    from unqover.probes.base import Option, ProbeDefinition, RunOptions

DEFAULT_DATASETS_ROOT = Path("datasets/unqover")


def _given(args: argparse.Namespace, options: Sequence[Option]) -> dict:
    """The values of probe-owned options as given on the command line (None where not given)."""
    return {option.dest: getattr(args, option.dest, None) for option in options}


def _build_datasets(args: argparse.Namespace) -> int:
    from unqover.format import fmt_count, fmt_seconds
    from unqover.jobs.build_datasets import build_custom, build_datasets

    given = _given(args, args.probe_options)
    if args.probe is not None:
        if args.names or any(value is not None for value in given.values()):
            raise UnqoverError(
                "--probe FILE builds that probe alone: leave out dataset names and the datasets' options"
            )
        built_datasets = [build_custom(args.probe, args.output, args.config, args.overwrite, not args.quiet)]
    else:
        built_datasets = build_datasets(
            args.names,
            args.output,
            configs=args.config,
            overwrite=args.overwrite,
            progress=not args.quiet,
            given=given,
        )
    for built in built_datasets:
        rows = ", ".join(f"{config} {fmt_count(n)}" for config, n in built.rows.items())
        print(f"{built.path}: {rows} rows in {fmt_seconds(built.seconds)}")
    return 0


def _measure(args: argparse.Namespace) -> int:
    from unqover.jobs.measuring import measure_predictions
    from unqover.probes.base import RunOptions

    run = RunOptions(dataset=args.dataset, config=args.config, resamples=args.resamples, seed=args.seed)
    with reading_with(args.word_lists):  # rows generated from word lists: found by their content
        probe, result, output = measure_predictions(
            args.predictions,
            run,
            output=args.output,
            bias=args.bias,
            probe_file=args.probe,
            given=_given(args, args.probe_options),
            split=args.split,
        )
    print(probe.results.summary(result, top=args.top))
    print(f"\nFull results: {output}")
    return 0


def _sample(args: argparse.Namespace) -> int:
    from unqover.format import fmt_count, fmt_percent
    from unqover.jobs.sample import write_sample

    written = write_sample(
        args.dataset,
        args.config,
        args.split,
        groups=args.groups,
        fraction=args.fraction,
        seed=args.seed,
        output=args.output,
    )
    print(
        f"{written.path}: {fmt_count(written.rows)} row ids of {fmt_count(written.groups)} of "
        f"{fmt_count(written.of)} groups ({fmt_percent(written.groups / written.of)}, seed {args.seed}). Score "
        f"them (id -> score_1, score_2), then `unqover measure PREDICTIONS {_written_by(written.probe)}--dataset "
        f"{args.dataset} --config {args.config}`."
    )
    return 0


def _written_by(probe: str | None) -> str:
    """The option of ``unqover measure`` that names the probe of a sample's rows (a bare file needs it)."""
    from unqover.probes.registry import PROBES

    return (
        f"--bias {probe} " if probe in PROBES else "--bias NAME " if probe is None else "--probe FILE.yaml "
    )


def _lm_eval_tasks(args: argparse.Namespace) -> int:
    from unqover.format import fmt_count
    from unqover.jobs.lm_eval_tasks import write_task_folders

    written_tasks = write_task_folders(
        args.bias,
        args.output,
        dataset=args.dataset,
        word_lists=args.word_lists,
        groups=args.groups,
        seed=args.seed,
    )
    for written in written_tasks:
        if written.note:  # said as `unqover probe` says it of --limit
            print(written.note, file=sys.stderr, flush=True)
        print(
            f"{written.folder}: {written.tasks['full']} ({fmt_count(written.documents)} documents) and "
            f"{written.tasks['sample']} ({fmt_count(written.sample_documents)} documents: {written.sample})"
        )
    print(
        f"Run: lm_eval --model hf --model_args pretrained=MODEL --include_path {args.output} --tasks TASK "
        "--log_samples --output_path OUT; then `unqover measure OUT/.../samples_TASK_*.jsonl` for the measures."
    )
    return 0


def _publish_results(args: argparse.Namespace) -> int:
    from unqover.jobs.publish_results import publish_results

    try:
        with reading_with(args.word_lists):  # runs generated from word lists: found by their content
            published = publish_results(
                args.runs,
                args.model_repo,
                output=args.output,
                dataset_id=args.dataset_id,
                source_url=args.source_url,
                token=args.token,
            )
    except (UnqoverError, OSError) as err:
        print(f"unqover: error: {err}", file=sys.stderr)
        return 2
    for note in published.skipped:
        print(note)
    for path in published.written:
        print(f"wrote {path}")
    if published.pr_url:
        print(
            f"opened a pull request on {args.model_repo} with {len(published.files)} file(s): {published.pr_url}"
        )
    return 0


def _probe(args: argparse.Namespace) -> int:
    from unqover.jobs.run import quiet_libraries, run_probe
    from unqover.probes.base import RunOptions
    from unqover.probes.registry import get_probe
    from unqover.report.markdown import precision_line

    require_models_extra()  # before the model, the rows and the run folder: one line naming the extra
    if args.quiet:
        quiet_libraries()
    probes = [get_probe(name) for name in args.bias] if args.bias else [get_probe(probe_file=args.probe)]
    probe = probes[0]
    run = RunOptions(
        dataset=args.dataset,
        config=args.config,
        output=args.output,
        batch_size=args.batch_size,
        device=args.device,
        dtype=args.dtype,
        shard=args.shard,
        limit=args.limit,
        quick=args.quick,
        seed=args.seed,
        resamples=args.resamples,
        progress=not args.quiet,
        revision=args.revision,
        token=args.token,
        allow_pickle=args.allow_pickle,
        adapter=args.adapter,
        model_args=parse.model_args(args.model_arg),
        gguf_file=args.gguf_file,
        started=args.started,
        settings=_given(args, args.probe_options),
        engine=args.engine,
        engine_options=_given(args, args.engines_own),
    )
    if args.shards is not None and args.ray is None:
        raise UnqoverError(
            "--shards splits a run into tasks on a Ray cluster: add --ray [ADDRESS] (on machines of your own, run "
            "--shard I/N on each)"
        )
    if args.plan_only:
        return _plan_only(args, probes, run)
    if args.shards is not None and args.models is None and len(args.model) == 1 and len(probes) == 1:
        return _probe_on_ray(args, probe, run)
    optional = getattr(args.bias, "optional", frozenset())  # chosen by --bias all alone
    if args.models is not None or len(args.model) > 1 or args.ray is not None:
        if optional:
            raise UnqoverError(
                f"--bias {parse.ALL_PROBES} probes one model: in a sweep, name the probes every model scores"
            )
        return _sweep(args, probes, run)
    if not args.model:
        raise UnqoverError("name a MODEL (a Hub id or a local folder), or several, or --models FILE")
    if args.leaderboard_metric is not None:
        raise UnqoverError("--leaderboard-metric ranks the models of a sweep: name several models")
    if len(probes) > 1:
        return _probe_several(args.model[0], probes, run, optional)
    finished = run_probe(args.model[0], probe, run)
    if finished is None:
        return 0
    print(probe.results.summary(finished.result, top=args.top))
    stopped = precision_line(finished.provenance)
    if stopped is not None:  # a --precision run: whether its target was met
        print(f"\n{stopped}")
    print(f"\nRun folder: {finished.folder} (predictions.parquet, results.json, report.md, report.html)")
    return 0


def _sweep(args: argparse.Namespace, probes: list[ProbeDefinition], run: RunOptions) -> int:
    from unqover.jobs.sweep import sweep, sweep_models, sweep_text

    models = sweep_models(args.model, args.models, run)
    if not models:
        raise UnqoverError("name a MODEL (a Hub id or a local folder), or several, or --models FILE")
    done = sweep(models, probes, run, args.leaderboard_metric, ray_address=args.ray, shards=args.shards)
    print(sweep_text(done))
    return 1 if done.failures or done.not_run else 0


def _probe_on_ray(args: argparse.Namespace, probe: ProbeDefinition, run: RunOptions) -> int:
    from unqover.jobs.shards_ray import run_sharded
    from unqover.report.markdown import precision_line

    finished = run_sharded(args.model[0], probe, run, args.ray, args.shards or None)
    print(probe.results.summary(finished.result, top=args.top))
    stopped = precision_line(finished.provenance)
    if stopped is not None:
        print(f"\n{stopped}")
    print(f"\nRun folder: {finished.folder} (predictions.parquet, results.json, report.md, report.html)")
    return 0


def _plan_only(args: argparse.Namespace, probes: list[ProbeDefinition], run: RunOptions) -> int:
    from unqover.jobs.plan_view import plan_text

    if args.models is not None or len(args.model) != 1 or len(probes) != 1:
        raise UnqoverError("--plan-only plans one run: name one MODEL and one probe")
    print(plan_text(args.model[0], probes[0], run))
    return 0


def _probe_several(
    model: str, probes: list[ProbeDefinition], run: RunOptions, optional: frozenset[str]
) -> int:
    from unqover.jobs.multi import run_probes

    several = run_probes(model, probes, run, optional)
    if several is None:
        return 0
    print(several.text)
    print(f"\nSummary: {several.folder / 'summary.md'} (and summary.html, summary.json)")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from unqover.jobs.compare import compare_files, print_and_write, write_comparison

    def make() -> tuple[str, Callable[[Path], Path]]:
        comparison = compare_files(
            args.run_a, args.run_b, name_a=args.name_a, name_b=args.name_b, top=args.top
        )
        return comparison.text, lambda path: write_comparison(path, comparison)

    return print_and_write(args.output, "Comparison", make, args.word_lists)


def _leaderboard(args: argparse.Namespace) -> int:
    from unqover.jobs.compare import leaderboard, print_and_write, write_leaderboard
    from unqover.report.leaderboard import leaderboard_text

    def make() -> tuple[str, Callable[[Path], Path]]:
        board = leaderboard(args.runs, metric=args.metric, confidence=args.confidence)
        return leaderboard_text(board), lambda path: write_leaderboard(path, board)

    return print_and_write(args.output, "Leaderboard", make, args.word_lists)


def _publish(args: argparse.Namespace) -> int:
    from unqover.jobs.publish import PublishRequest, publish_chosen

    request = PublishRequest(
        names=args.names,
        what=args.what,
        root=args.root,
        metrics=args.metrics,
        space=args.space,
        space_name=args.space_name,
        namespace=args.namespace,
        dry_run=args.dry_run,
        token=args.token,
        private=args.private,
        timeout=args.timeout,
    )
    publish_chosen(request)
    return 0


# ---------------------------------------------------------------------------------------------------------------
# the parser, assembled from the registry


def _owner_label(probe: ProbeDefinition, sharing: set[str], probes: dict[str, ProbeDefinition]) -> str:
    """A probe's name in an option's help, or its group's when every member of the group reads the option alike."""
    members = {name for name, other in probes.items() if probe.group and other.group == probe.group}
    return probe.group if members and members <= sharing else probe.name


def add_probe_options(parser: argparse.ArgumentParser, attribute: str) -> list[Option]:
    """Add every registered probe's options of one kind (``options``, ``measure_options`` or
    ``dataset_options``) to ``parser``, one argument per flag; returns the options added (for ``_given``)."""
    from unqover.probes.registry import PROBES

    by_flag: dict[str, list[tuple[ProbeDefinition, Option]]] = {}
    for probe in PROBES.values():
        for option in getattr(probe, attribute):
            by_flag.setdefault(option.flag, []).append((probe, option))
    added = []
    for owners in by_flag.values():
        first = owners[0][1]
        if any(
            (o.type, o.repeat, o.flag_only) != (first.type, first.repeat, first.flag_only) for _, o in owners
        ):
            raise TypeError(f"the probes declare {first.flag} with different types")  # a definition's bug
        helps: dict[str, set[str]] = {}
        for probe, option in owners:
            helps.setdefault(option.help, set()).add(probe.name)
        labels = {}
        for probe, option in owners:
            labels.setdefault(option.help, []).append(_owner_label(probe, helps[option.help], PROBES))
        text = (
            first.help
            if len(owners) == len(PROBES)
            else "; ".join(f"{', '.join(dict.fromkeys(who))}: {help}" for help, who in labels.items())
        )
        choices = None
        if first.choices is not None:
            choices = list(dict.fromkeys(c for _, option in owners for c in option.choices or ()))
        first.add_to(parser, help=text, choices=choices)
        added.append(first)
    return added


def _limit_help() -> str:
    from unqover.probes.registry import PROBES

    meanings: dict[str, list[str]] = {}
    for probe in PROBES.values():
        meanings.setdefault(probe.limit_meaning, []).append(probe.group or probe.name)
    parts = [f"{', '.join(dict.fromkeys(who))}: {meaning}" for meaning, who in meanings.items()]
    return "a quick run that estimates the full-dataset values: --limit N keeps " + "; ".join(parts)


def _quick_sizes() -> dict[str, str]:
    """Each probe's default quick-run size, as ``--quick`` runs it."""
    from unqover.probes.registry import PROBES

    sizes: dict[str, str] = {}
    for name, probe in PROBES.items():
        sizes[name] = f"{probe.quick_run.default:,} {probe.quick_run.unit}"
    return sizes


# the options that several commands take, each declared once (``parser``: a command, or a group of its options)


def _add_names(parser: argparse._ActionsContainer, help: str) -> None:
    """``NAME ...``: what a command builds or publishes (``help`` says which names; default: all)."""
    parser.add_argument("names", nargs="*", metavar="NAME", help=help)


def _add_output(parser: argparse._ActionsContainer, help: str, **keywords) -> None:
    """``--output``: what a command writes, checked as a path it may write (``help`` says what it is)."""
    parser.add_argument("--output", type=parse.output_path, help=help, **keywords)


def _add_dataset(parser: argparse._ActionsContainer, default: str) -> None:
    """``--dataset``: the rows' dataset (``default`` says which one the command takes when it is not given)."""
    parser.add_argument("--dataset", help=f"dataset folder or Hub id (default: {default})")


def _add_config(parser: argparse._ActionsContainer, about: str, required: bool = False) -> None:
    """``--config``: the dataset's config (``about``: its default, or an example where it is required)."""
    parser.add_argument("--config", required=required, help=f"dataset config ({about})")


def _add_split(
    parser: argparse._ActionsContainer, default: str | None, default_text: str = "%(default)s"
) -> None:
    """``--split``: the dataset's split."""
    parser.add_argument("--split", default=default, help=f"dataset split (default: {default_text})")


def _add_probe_file(parser: argparse._ActionsContainer, help: str) -> None:
    """``--probe``: a custom probe's YAML file (``help`` says what the command does with it)."""
    parser.add_argument("--probe", type=Path, metavar="FILE.yaml", help=help)


def _add_probe_list(
    parser: argparse._ActionsContainer, help: str, everything: bool = False, **keywords
) -> None:
    """``--bias``: one probe or several (a comma list of probes and groups), as the registry names them
    (``everything``: and ``all``, every probe the model can score)."""
    from unqover.probes.registry import groups, probe_names

    read = parse.probe_list(probe_names(), groups(), everything)
    parser.add_argument("--bias", type=read, help=help, **keywords)


def _add_seed(
    parser: argparse._ActionsContainer, seeds: str, default: int | None = 0, default_text: str = "%(default)s"
) -> None:
    """``--seed``: ``seeds`` says what it seeds in this command."""
    parser.add_argument(
        "--seed", type=parse.non_negative, default=default, help=f"{seeds} (default: {default_text})"
    )


def _add_resamples(parser: argparse._ActionsContainer) -> None:
    """``--resamples``: the bootstrap's resamples of the measures' intervals."""
    parser.add_argument(
        "--resamples",
        type=parse.non_negative,
        default=1000,
        help="bootstrap resamples, 0 for none (default: %(default)s)",
    )


def _add_top(parser: argparse._ActionsContainer) -> None:
    """``--top``: how many of the most biased pairs the summary prints."""
    parser.add_argument(
        "--top", type=parse.non_negative, default=10, help="most biased pairs to print (default: %(default)s)"
    )


def _add_token(parser: argparse._ActionsContainer, needed_for: str) -> None:
    """``--token``: a Hugging Face token (``needed_for`` says what the command needs it for)."""
    parser.add_argument(
        "--token", help=f"Hugging Face token {needed_for} (default: HF_TOKEN or `hf auth login`)"
    )


def _add_quiet(parser: argparse._ActionsContainer) -> None:
    """``--quiet``: no progress bar."""
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


# the commands, one function each adding its arguments


def _add_build_datasets(build: argparse.ArgumentParser) -> None:
    from unqover.probes.registry import PROBES, dataset_names

    default_datasets = [
        name for probe in PROBES.values() if probe.built_by_default for name in probe.datasets
    ]
    _add_names(
        build, f"datasets to build: {', '.join(dataset_names())} (default: {', '.join(default_datasets)})"
    )
    _add_output(build, "root folder (default: %(default)s)", default=DEFAULT_DATASETS_ROOT)
    build.add_argument(
        "--config", action="append", default=None, help="build only this config (repeatable; default: all)"
    )
    build.add_argument("--overwrite", action="store_true", help="replace data that is already built")
    _add_probe_file(
        build,
        "build a custom probe from its YAML file into OUTPUT/<its name> (configs qa and, when derivable, mlm)",
    )
    build.set_defaults(probe_options=add_probe_options(build, "dataset_options"))
    _add_quiet(build)


def _add_measure(measure: argparse.ArgumentParser) -> None:
    from unqover.probes.registry import probe_names

    measure.add_argument(
        "predictions",
        type=Path,
        metavar="PREDICTIONS",
        help="a predictions Parquet file, or lm-eval's logged samples (.jsonl) of an `unqover lm-eval-tasks` task",
    )
    written_by = measure.add_mutually_exclusive_group()
    written_by.add_argument(
        "--bias",
        choices=probe_names(),
        help="the probe of the dataset's rows: required when neither the file nor the dataset's rows record it "
        "(checked against them)",
    )
    _add_probe_file(written_by, "a custom probe's file")
    _add_dataset(measure, "the one recorded in the file")
    _add_config(measure, "default: recorded in the file")
    _add_split(measure, None, "recorded, else test")
    _add_resamples(measure)
    _add_seed(measure, "bootstrap and cross-fitting seed", None, "a sample's own seed, else 0")
    measure.set_defaults(probe_options=add_probe_options(measure, "measure_options"))
    _add_top(measure)
    _add_output(measure, "results JSON (default: PREDICTIONS with .bias.json)")
    add_word_lists_argument(measure)


def _add_sample(sample: argparse.ArgumentParser) -> None:
    sample.add_argument("dataset", metavar="DATASET", help="dataset folder or Hub id")
    _add_config(sample, "e.g. qa, mlm", required=True)
    _add_split(sample, "test")
    size = sample.add_mutually_exclusive_group(required=True)
    size.add_argument("--groups", type=parse.positive, help="number of groups (4 rows each)")
    size.add_argument("--fraction", type=parse.fraction_or_one, help="fraction of the groups")
    _add_seed(sample, "sampling seed")
    _add_output(sample, "Parquet file of row ids to write", required=True)


def _add_lm_eval_tasks(tasks: argparse.ArgumentParser) -> None:
    _add_probe_list(
        tasks,
        "the probe, or several (a comma list or a group): a folder each, OUTPUT/<probe>",
        required=True,
    )
    _add_dataset(tasks, "the probe's, as `unqover probe`")
    tasks.add_argument(
        "--word-lists",
        type=Path,
        metavar="PATH",
        help="the UnQover probes: generate the rows from these word lists (as `unqover probe --word-lists`; "
        "default: the folder UNQOVER_WORD_LISTS names, if set)",
    )
    tasks.add_argument(
        "--groups",
        type=parse.positive,
        metavar="N",
        help="the sample task's size, counted as `unqover probe --limit N` counts it for the probe (default: "
        "the probe's quick-run size)",
    )
    _add_seed(tasks, "the sample's seed")
    _add_output(tasks, "the task folder to write", required=True)


def _probe_description() -> str:
    """``unqover probe --help``'s description, naming the registered probes and the model families each scores."""
    from unqover.probes.registry import PROBES

    return (
        "Score every row of a probe dataset with a model, measure the bias with intervals and tests, and write "
        "predictions, results and a report into a resumable run folder. MODEL is a Hub id or a local folder. "
        "Probes and the models they score: "
        + "; ".join(f"{name} ({', '.join(p.families)})" for name, p in PROBES.items())
        + "."
    )


def _add_probe(probe: argparse.ArgumentParser) -> None:
    _add_sweep_arguments(probe)
    _add_probe_rows(probe)
    _add_scoring_options(probe)
    _add_model_loading(probe)
    probe.set_defaults(probe_options=add_probe_options(probe, "options"))
    _add_quiet(probe)


def _add_sweep_arguments(probe: argparse.ArgumentParser) -> None:
    """``unqover probe``'s models: one, or several (a sweep), and where a sweep runs and what it ranks by."""
    probe.add_argument(
        "model",
        metavar="MODEL",
        nargs="*",
        help="Hub model id or local folder; several (or --models) run a sweep: every model x probe into "
        "OUTPUT/<model>/<probe> (default OUTPUT: runs), then one leaderboard per probe and OUTPUT/index.html",
    )
    probe.add_argument(
        "--models",
        type=Path,
        metavar="FILE",
        help="a sweep's models, one a line: MODEL [revision=REV] [adapter=PATH]; blank lines and # comments "
        "ignored",
    )
    probe.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="run the sweep's model x probe runs (with --shards: their shards, or one run's) as tasks on an existing "
        "Ray cluster (default ADDRESS: RAY_ADDRESS, "
        "else the cluster `ray start --head` started on this machine), a GPU each where it has GPUs; the nodes must "
        "share the models' folders and --output; needs unqover[ray]",
    )
    probe.add_argument(
        "--shards",
        nargs="?",
        const=0,
        type=parse.positive,
        metavar="N",
        help="with --ray: split each run into N shard tasks (default N: one per GPU of the cluster, else per "
        "task's CPUs), each writing its scores into the one run folder as it goes; once every shard is in, one more "
        "task merges, measures and reports (a lost task's shard resumes; the same command resumes the run)",
    )
    probe.add_argument(
        "--plan-only",
        action="store_true",
        help="print the run's plan (rows, inputs, tokens with the token tree, a projected time where this host "
        "has a measured rate) without loading the model's weights, and stop",
    )
    probe.add_argument(
        "--leaderboard-metric",
        metavar="NAME",
        help="the headline number a sweep's leaderboards rank by (default: the probe's; UnQover: mu)",
    )


def _add_probe_rows(probe: argparse.ArgumentParser) -> None:
    """``unqover probe``'s probe (a registered one, several, or a custom probe's file), its rows and its run
    folder."""
    from unqover.probes.registry import groups, probe_names

    which = probe.add_mutually_exclusive_group(required=True)
    group_help = "; ".join(f"{group}: {','.join(members)}" for group, members in groups().items())
    _add_probe_list(
        which,
        f"the probe: {', '.join(probe_names())}; several, loading the model once: a comma list of probes "
        f"and groups ({group_help}; {parse.ALL_PROBES}: every probe the model can score, the others left out "
        "with a line), each into its own run folder (OUTPUT/NAME with --output), with one summary of them all",
        everything=True,
        metavar="NAME[,NAME...]",
    )
    _add_probe_file(
        which, "a custom UnQover-style probe: subjects, attributes and templates in a YAML file (see README)"
    )
    _add_dataset(probe, "a local build, the Hub, then generated")
    _add_config(probe, "default: the probe's, by model family")
    _add_output(probe, "run folder (default: runs/MODEL/PROBE-CONFIG)")


def _add_scoring_options(probe: argparse.ArgumentParser) -> None:
    """How ``unqover probe`` scores and measures: batches, device and precision, a shard or a quick run, the
    seed and the bootstrap, the summary's length."""
    probe.add_argument(
        "--batch-size",
        type=parse.positive,
        help="rows per forward pass (default: automatic, halved on out-of-memory)",
    )
    probe.add_argument("--device", choices=("auto", "cuda", "mps", "cpu"), default="auto")
    probe.add_argument(
        "--dtype",
        choices=("auto", "float32", "bfloat16", "float16"),
        default="auto",
        help="auto: fp32 on CPU, bf16/fp16 on GPU; bfloat16 on a CPU: a causal LM's matrix products in bf16, the rest "
        "in fp32 (faster only with bf16 matrix units, AMX or AVX-512 BF16: a short measurement warns where it is slower)",
    )
    probe.add_argument(
        "--shard", type=parse.shard, metavar="I/N", help="score shard I of N (0-based) into a shared --output"
    )
    quick = probe.add_mutually_exclusive_group()
    quick.add_argument("--limit", type=parse.positive, help=_limit_help())
    quick.add_argument(
        "--quick",
        action="store_true",
        help="each probe's own default quick run (--limit its default size: "
        + "; ".join(f"{name} {size}" for name, size in _quick_sizes().items())
        + "); for several probes whose --limit counts different things",
    )
    _add_seed(probe, "sampling and bootstrap seed")
    _add_resamples(probe)
    _add_top(probe)


def _add_model_loading(probe: argparse.ArgumentParser) -> None:
    """How ``unqover probe`` loads the model: its revision, a token, pickle weights, an adapter, keywords for
    from_pretrained and a GGUF file."""
    probe.add_argument("--revision", help="model revision (branch, tag or commit)")
    _add_token(probe, "for gated models")
    probe.add_argument(
        "--allow-pickle",
        action="store_true",
        help="also load .bin (pickle) weights; only for models you trust",
    )
    probe.add_argument(
        "--adapter",
        metavar="PATH_OR_ID",
        help="a PEFT adapter (e.g. LoRA; a folder or Hub id, ID@REVISION) merged into the model's weights after "
        "it loads; needs pip install 'unqover[peft]'",
    )
    probe.add_argument(
        "--model-arg",
        action="append",
        type=parse.model_arg,
        metavar="KEY=VALUE",
        help="a keyword for the model's from_pretrained, repeatable (VALUE read as JSON when it parses), e.g. "
        "attn_implementation=sdpa",
    )
    probe.add_argument(
        "--gguf-file",
        metavar="NAME.gguf",
        help="the GGUF checkpoint (llama.cpp, Ollama) inside MODEL, a folder or Hub repo, that transformers reads "
        "and dequantizes (causal LMs; needs the gguf package of the models extra); a .gguf file given as MODEL, or "
        "a folder holding one .gguf file, needs none",
    )
    _add_engines(probe)


def _add_engines(probe: argparse.ArgumentParser) -> None:
    """``--engine`` and every engine's own options (``unqover.scoring.engines``: each declares its own)."""
    from unqover.jobs.models import ENGINES, engine_options, engines_help

    probe.add_argument(
        "--engine",
        choices=["auto", *ENGINES],
        default="auto",
        help=f"what runs the model: auto (the default) picks the engine that serves MODEL; {engines_help()}",
    )
    probe.set_defaults(engines_own=[option.add_to(probe) or option for option in engine_options()])


def _add_publish_results(command: argparse.ArgumentParser) -> None:
    command.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run folder or results JSON")
    command.add_argument("--model-repo", required=True, metavar="OWNER/NAME", help="the model's Hub repo")
    _add_output(command, "write DIR/.eval_results/*.yaml; upload nothing", metavar="DIR")
    command.add_argument(
        "--dataset-id",
        metavar="OWNER/NAME",
        help="the Hub dataset the runs measured, where they record a local folder or generated rows",
    )
    command.add_argument(
        "--source-url", metavar="URL", help="where the results can be checked (default: the dataset)"
    )
    _add_token(command, "to open the pull request")
    add_word_lists_argument(command)


def _add_run(parser: argparse.ArgumentParser, dest: str, metavar: str, **keywords) -> None:
    """A run that ``unqover compare`` or ``unqover leaderboard`` reads: its run folder or its results file
    (``keywords``: argparse's others, such as ``nargs``)."""
    parser.add_argument(
        dest, type=Path, metavar=metavar, help="run folder (with results.json) or results JSON", **keywords
    )


def _add_compare(compare: argparse.ArgumentParser) -> None:
    _add_run(compare, "run_a", "RUN_A")
    _add_run(compare, "run_b", "RUN_B")
    compare.add_argument(
        "--top", type=parse.non_negative, default=10, help="rows per table (default: %(default)s)"
    )
    _add_output(
        compare,
        "also write the comparison: JSON when the name ends in .json (shifts with their intervals, p-values and "
        "pairing), else Markdown",
        metavar="FILE.json|FILE.md",
    )
    compare.add_argument("--name-a", help="label of RUN_A (default: its folder or file name)")
    compare.add_argument("--name-b", help="label of RUN_B (default: its folder or file name)")
    add_word_lists_argument(compare)


def _add_leaderboard(board: argparse.ArgumentParser) -> None:
    _add_run(board, "runs", "RUN", nargs="+")
    board.add_argument(
        "--metric", help=f"the headline number to rank by (default: the probe's; {LEADERBOARD_METRICS})"
    )
    board.add_argument(
        "--confidence", type=parse.real, default=0.95, help="simultaneous confidence (default: %(default)s)"
    )
    _add_output(
        board,
        "also write the leaderboard: JSON when the name ends in .json, a self-contained page with the figure when "
        ".html, else Markdown",
        metavar="FILE.json|FILE.md|FILE.html",
    )
    add_word_lists_argument(board)


def _add_publish(publish: argparse.ArgumentParser) -> None:
    from unqover.jobs import publish_choice as choice

    _add_names(
        publish,
        "datasets under --root, modules under --metrics, or the Space's name (default: all that --what selects)",
    )
    publish.add_argument(
        "--what",
        type=choice.what_to_publish,
        default=choice.PUBLISH_KINDS,
        metavar="{datasets,modules,space,all}[,...]",
        help="what to publish, comma-separated (default: all)",
    )
    for flag, default, what in (  # the local folders of what is published
        ("--root", DEFAULT_DATASETS_ROOT, "built datasets"),
        ("--metrics", choice.DEFAULT_METRICS_ROOT, "evaluate module folders"),
        ("--space", choice.DEFAULT_SPACE_FOLDER, "the Space's folder"),
    ):
        publish.add_argument(flag, type=Path, default=default, help=f"{what} (default: {default})")
    publish.add_argument(
        "--space-name",
        default=choice.DEFAULT_SPACE_NAME,
        help=f"the Space's repo name under --namespace (default: {choice.DEFAULT_SPACE_NAME})",
    )
    publish.add_argument(
        "--namespace",
        default=choice.DEFAULT_NAMESPACE,
        help=f"Hub user or org (default: {choice.DEFAULT_NAMESPACE})",
    )
    publish.add_argument(
        "--dry-run", action="store_true", help="validate and print what would be uploaded; upload nothing"
    )
    publish.add_argument(
        "--token", default=None, help="Hub token with write access (default: HF_TOKEN or `hf auth login`)"
    )
    publish.add_argument("--private", action="store_true", help="create new repos as private")
    publish.add_argument(
        "--timeout",
        type=float,
        default=choice.HUB_TIMEOUT,
        help=f"seconds per network read/write (default: {choice.HUB_TIMEOUT:g})",
    )


@dataclass(frozen=True)
class _Command:
    """One ``unqover`` command: its name and line in ``unqover --help``, the description its own --help opens
    with (a function where the registry words it), the function adding its arguments and the function running it,
    which builds its job's arguments from the parsed options one by one (``RunOptions(dtype=args.dtype, ...)``)."""

    name: str
    help: str
    description: str | Callable[[], str]
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


#: The commands, in the order ``unqover --help`` lists them.
_COMMANDS = (
    _Command(
        "build-datasets",
        "generate the probe datasets as Hugging Face dataset folders (Parquet + card)",
        "Generate the probe datasets into <output>/<name>/ (README.md card + data/<config>/*.parquet).",
        _add_build_datasets,
        _build_datasets,
    ),
    _Command(
        "measure",
        "measure bias from a predictions file and its dataset",
        "Join a predictions file to the dataset rows it scored, compute the probe's measures with intervals, print "
        "the headline numbers and write the full results as JSON.",
        _add_measure,
        _measure,
    ),
    _Command(
        "sample",
        "write the row ids of a quick run's sample of groups, to score on your own stack",
        "Write the ids of the rows that a quick run of this size scores (the same seeded, stratified selection "
        "`unqover probe --limit` uses). Score them elsewhere into a predictions file (id, score_1, score_2) and "
        "`unqover measure` it with --dataset and --config: it recognises the sample and estimates the "
        "full-dataset values with intervals.",
        _add_sample,
        _sample,
    ),
    _Command(
        "lm-eval-tasks",
        "write lm-evaluation-harness tasks of a probe (lm_eval --include_path DIR)",
        "Write a task folder for `lm_eval --include_path DIR`: unqover_<bias> scores every row, "
        "unqover_<bias>_sample the seeded sample of whole groups `unqover sample --groups N --seed S` selects "
        "(not lm-eval's --limit, which takes the first N rows). Prompts and tokenization are `unqover probe`'s "
        "for causal LMs (lm-eval's --system_instruction and --apply_chat_template are --system-prompt and "
        "--chat-template); lm-eval's table shows this project's μ, η, δ, ε with interval bounds (the emotion "
        "and person fill-ins: their tests' p-values and Cramér's V, from whole-sentence log-likelihoods). lm-eval "
        "runs the installed unqover package's code.",
        _add_lm_eval_tasks,
        _lm_eval_tasks,
    ),
    _Command(
        "probe", "probe a model for bias: score, measure, report", _probe_description, _add_probe, _probe
    ),
    _Command(
        "publish-results",
        "a run's headline numbers as the model's evaluation results on the Hub (a pull request)",
        "Write the headline numbers of each run as the Hub's evaluation results of the model "
        "(.eval_results/<task>_<metric>.yaml: dataset id, task id, value, date, source, notes) and open a pull "
        "request on the model repo; with --output DIR, write the same files under DIR instead (no network). "
        "Only runs of exactly the model --model-repo are published (not with an adapter, not of a local folder); "
        "numbers from part of the rows as the _sample task.",
        _add_publish_results,
        _publish_results,
    ),
    _Command(
        "compare",
        "how bias shifts between two runs (see `unqover compare --help`)",
        "Compare two UnQover runs measured on the same dataset, config and mode: shifts of μ, η, δ, ε with both "
        "intervals, and the subjects and subject–attribute pairs that changed most (B − A).",
        _add_compare,
        _compare,
    ),
    _Command(
        "leaderboard",
        "rank models' runs of one probe, honestly (see `unqover leaderboard --help`)",
        "Rank several models' runs of one probe: each value with an interval that holds for all models at once, its "
        "rank and rank interval, and the pairs whose difference is distinguishable from zero.",
        _add_leaderboard,
        _leaderboard,
    ),
    _Command(
        "publish",
        "push the datasets, the evaluate modules and the Space to the Hugging Face Hub (see `unqover publish "
        "--help`)",
        "Validate built dataset folders, the evaluate modules and the Space, and upload them to the Hugging Face "
        "Hub: datasets as <namespace>/<name>, each module as the Gradio Space <namespace>/<module> (so "
        "evaluate.load('<namespace>/<module>') finds it), the app as the Space <namespace>/<space name>. "
        "Everything is validated before anything is uploaded.",
        _add_publish,
        _publish,
    ),
)


def build_parser() -> argparse.ArgumentParser:
    """The ``unqover`` parser: a subparser a command, each a :class:`~unqover.probes.options.CommandParser` (one
    ``unqover: error:`` line for a bad argument), in the order ``unqover --help`` lists them."""
    parser = parse.CommandParser(prog="unqover", description="Measure stereotyping bias in NLP models.")
    parser.add_argument("--version", action="version", version=f"unqover {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in _COMMANDS:
        description = command.description() if callable(command.description) else command.description
        sub = commands.add_parser(command.name, help=command.help, description=description)
        command.add_arguments(sub)
        # command_parser: an unknown option is reported with its command's usage
        sub.set_defaults(run=command.run, command_parser=sub)
    return parser


def _unrecognized(parser: argparse.ArgumentParser, extra: Sequence[str]) -> str:
    """argparse's "unrecognized arguments" line for ``extra``, with the closest option of ``parser`` for a
    mistyped one (``--limt`` -> ``--limit``): Python 3.11's argparse suggests nothing."""
    import difflib

    flags = [flag for action in parser._actions for flag in action.option_strings if flag.startswith("--")]
    hints = {}
    for typed in (text.split("=", 1)[0] for text in extra if text.startswith("--")):
        close = difflib.get_close_matches(typed, flags, n=1, cutoff=0.6)
        if close:
            hints[typed] = close[0]
    line = f"unrecognized arguments: {' '.join(extra)}"
    if len(hints) == 1:
        return f"{line} (did you mean {next(iter(hints.values()))}?)"
    if hints:
        return f"{line} (did you mean {', '.join(f'{want} for {typed}' for typed, want in hints.items())}?)"
    return line


def _run(command, *argv) -> int:
    """Run a command, turning the errors users cause into one line and exit status 2."""
    try:
        return command(*argv)
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
        elif not getattr(err, "resumable", True):
            print(
                "unqover: interrupted before any scores were kept: there is nothing to resume",
                file=sys.stderr,
            )
        else:
            print(
                f"unqover: interrupted; the scores up to the last checkpoint (at most about a minute back) are "
                f"kept in {folder}: run the same command again to resume where it stopped",
                file=sys.stderr,
            )
        return 130


#: The one line of a command that ran out of memory (a MemoryError anywhere: numpy, pyarrow, Python).
OUT_OF_MEMORY = (
    "out of memory: this command needed more memory than this process may use (free memory, a container's limit "
    "or ulimit -v); ask for less (a smaller --limit, fewer rows or models) or give it more memory"
)


def main(argv: Sequence[str] | None = None) -> int:
    """The ``unqover`` command: its exit status (2 for a bad input, printed as one ``unqover: error:`` line; an
    out-of-memory error is one such line too, never a traceback)."""
    try:
        return _main(argv)
    except MemoryError:
        print(f"unqover: error: {OUT_OF_MEMORY}", file=sys.stderr)
        return 2


def _main(argv: Sequence[str] | None) -> int:
    started = time.monotonic()  # --max-time bounds the whole command from here
    parser = build_parser()
    args, extra = parser.parse_known_args(sys.argv[1:] if argv is None else list(argv))
    if extra:  # the command's usage and error, not the top-level parser's
        command = getattr(args, "command_parser", parser)
        command.error(_unrecognized(command, extra))
    args.started = started
    with _terminate_as_interrupt():
        return _run(args.run, args)


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM (``kill PID``, a scheduler's stop) as Ctrl-C: what is scored is kept, the same message is printed
    and the same command resumes. The previous handler is restored afterwards (the main thread only: elsewhere
    signals cannot be handled)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
