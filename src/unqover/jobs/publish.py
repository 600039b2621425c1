"""``unqover publish``: choose what to publish, check all of it, print the plans, upload.

The hub layer (:mod:`unqover.hub.publish`) finds and checks the folders and uploads a plan; this job says what the
command does with them, in order: choose the folders (``--what``, names), plan every one (nothing is uploaded
unless every plan is sound), print each plan, then upload (or stop after printing, with ``--dry-run``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from unqover.errors import UnqoverError
from unqover.format import fmt_size
from unqover.hub.publish import common
from unqover.hub.publish.common import PlannedFile, is_repo_name
from unqover.hub.publish.datasets import UploadPlan, discover_datasets, plan_upload
from unqover.hub.publish.modules import discover_modules, plan_module
from unqover.hub.publish.space import plan_space
from unqover.hub.publish.space_card import SpacePlan
from unqover.hub.publish.upload import publish
from unqover.probes.options import CommandParser, did_you_mean

PUBLISH_KINDS = ("datasets", "modules", "space")
"""What ``publish --what`` selects, in the order things are published (the Space links to the others)."""


def _what(value: str) -> tuple[str, ...]:
    """``--what``: a comma-separated choice of datasets, modules, space, or all; canonical order."""
    chosen = {part.strip() for part in value.split(",") if part.strip()}
    unknown = sorted(chosen - {*PUBLISH_KINDS, "all"})
    if unknown or not chosen:
        hint = did_you_mean(unknown[0], [*PUBLISH_KINDS, "all"]) if unknown else ""
        raise argparse.ArgumentTypeError(
            f"{value!r}: choose from {', '.join(PUBLISH_KINDS)} or all (comma-separated, e.g. modules,space){hint}"
        )
    return PUBLISH_KINDS if "all" in chosen else tuple(kind for kind in PUBLISH_KINDS if kind in chosen)


def _parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="unqover publish",
        description="Validate built dataset folders, the evaluate modules and the Space, and upload them to the "
        "Hugging Face Hub: datasets as <namespace>/<name>, each module as the Gradio Space <namespace>/<module> "
        "(so evaluate.load('<namespace>/<module>') finds it), the app as the Space <namespace>/<space name>. "
        "Everything is validated before anything is uploaded.",
    )
    parser.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="datasets under --root, modules under --metrics, or the Space's name (default: all that --what selects)",
    )
    parser.add_argument(
        "--what",
        type=_what,
        default=PUBLISH_KINDS,
        metavar="{datasets,modules,space,all}[,...]",
        help="what to publish, comma-separated (default: all)",
    )
    for flag, default, what in (  # the local folders of what is published
        ("--root", common.DEFAULT_ROOT, "built datasets"),
        ("--metrics", common.DEFAULT_METRICS_ROOT, "evaluate module folders"),
        ("--space", common.DEFAULT_SPACE_FOLDER, "the Space's folder"),
    ):
        parser.add_argument(flag, type=Path, default=default, help=f"{what} (default: {default})")
    parser.add_argument(
        "--space-name",
        default=common.DEFAULT_SPACE_NAME,
        help=f"the Space's repo name under --namespace (default: {common.DEFAULT_SPACE_NAME})",
    )
    parser.add_argument(
        "--namespace",
        default=common.DEFAULT_NAMESPACE,
        help=f"Hub user or org (default: {common.DEFAULT_NAMESPACE})",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="validate and print what would be uploaded; upload nothing"
    )
    parser.add_argument(
        "--token", default=None, help="Hub token with write access (default: HF_TOKEN or `hf auth login`)"
    )
    parser.add_argument("--private", action="store_true", help="create new repos as private")
    parser.add_argument(
        "--timeout",
        type=float,
        default=common.DEFAULT_TIMEOUT,
        help=f"seconds per network read/write (default: {common.DEFAULT_TIMEOUT:g})",
    )
    return parser


def _check_name(flag: str, value: str, what: str) -> None:
    if not is_repo_name(value):
        raise UnqoverError(
            f"invalid {flag} {value!r}: {what} uses letters, digits, '-', '_' or '.', does not start or end "
            "with '-' or '.', and has no '--' or '..'"
        )


def _select(args: argparse.Namespace) -> tuple[list[tuple[str, Path]], list[str]]:
    """The (kind, folder) pairs to publish, in publishing order, and the problems found choosing them."""
    chosen: list[tuple[str, Path]] = []
    problems: list[str] = []
    if not args.names:
        finders = {
            "datasets": lambda: discover_datasets(args.root),
            "modules": lambda: discover_modules(args.metrics),
            "space": lambda: [args.space],
        }
        for kind in args.what:
            try:
                folders = finders[kind]()
            except UnqoverError as exc:
                problems.append(str(exc))
                continue
            if not folders:
                where = f"dataset folders with a card under {args.root}; {common.BUILD_HINT}"
                problems.append(
                    f"no {where}" if kind == "datasets" else f"no evaluate modules under {args.metrics}"
                )
            chosen += [(kind, folder) for folder in folders]
        return chosen, problems

    for name in args.names:
        matches = []
        if "datasets" in args.what and (args.root / name / common.CARD).is_file():
            matches.append(("datasets", args.root / name))
        if "modules" in args.what and not name.startswith((".", "_")) and (args.metrics / name).is_dir():
            matches.append(("modules", args.metrics / name))
        if "space" in args.what and name == args.space_name:
            matches.append(("space", args.space))
        if matches:
            chosen += [m for m in matches if m not in chosen]
            continue
        available = []
        if "datasets" in args.what:
            built = [p.name for p in discover_datasets(args.root)] if args.root.is_dir() else []
            available.append(
                f"datasets built under {args.root}: {', '.join(built) or f'none; {common.BUILD_HINT}'}"
            )
        if "modules" in args.what:
            modules = [p.name for p in discover_modules(args.metrics)] if args.metrics.is_dir() else []
            available.append(f"evaluate modules under {args.metrics}: {', '.join(modules) or 'none'}")
        if "space" in args.what:
            available.append(f"the Space: {args.space_name}")
        raise UnqoverError(f"nothing named {name!r} to publish ({'; '.join(available)})")
    chosen.sort(key=lambda pair: PUBLISH_KINDS.index(pair[0]))
    return chosen, problems


def describe(plan: UploadPlan | SpacePlan) -> list[str]:
    """A plan as the lines ``publish`` prints: the repo, what it holds (a dataset's configs and rows, a Space's
    Gradio version and details), every file with its size, and the files left out."""
    if isinstance(plan, UploadPlan):
        lines = [f"dataset {plan.repo_id}  (from {plan.folder})", f"  configs ({len(plan.configs)}):"]
        for config in plan.configs:
            splits = ", ".join(f"{split}: {rows:,} rows" for split, rows in config.rows.items())
            default = " (default)" if config.default else ""
            lines.append(f"    {config.name}{default}  {splits}  in {len(config.files)} file(s)")
    else:
        lines = [f"{plan.kind} {plan.repo_id}  (Gradio Space, from {plan.folder})"]
        lines.append(f"  gradio {plan.sdk_version}: {plan.short_description}")
        lines.extend(f"  {line}" for line in plan.details)
    return lines + _file_lines(plan.files, plan.ignored, plan.ignored_reason)


def _file_lines(files: Sequence[PlannedFile], ignored: Sequence[str], why: str) -> list[str]:
    """The 'files to upload' and 'not uploaded' blocks of a plan's description."""
    total = sum(f.size for f in files)
    lines = [f"  files to upload ({len(files)}, {fmt_size(total)} bytes):"]
    width = max(len(f.path_in_repo) for f in files)
    for f in files:
        lines.append(f"    {f.path_in_repo:<{width}}  {f.size:>14,} bytes  ({fmt_size(f.size)})")
    if ignored:
        lines.append(f"  not uploaded ({len(ignored)}, {why}):")
        lines.extend(f"    {path}" for path in ignored)
    return lines


def publish_main(argv: Sequence[str] | None = None) -> int:
    """``publish [NAME ...] [--what W] [--namespace N] [--space-name S] [--dry-run] ...``; returns the exit code.

    0 on success; 2 with the message on stderr on any UnqoverError (argparse also exits 2 on bad flags).
    """
    try:
        args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # --help (0) or a bad flag (2, argparse already printed why)
        return exc.code if isinstance(exc.code, int) else 2
    try:
        _check_name("--namespace", args.namespace, "a Hub user or organisation name")
        _check_name("--space-name", args.space_name, "a Space name")
        if args.timeout <= 0:
            raise UnqoverError("--timeout must be positive")
        chosen, problems = _select(args)
        planners = {
            "datasets": lambda folder: plan_upload(folder, f"{args.namespace}/{folder.name}"),
            "modules": lambda folder: plan_module(folder, f"{args.namespace}/{folder.name}"),
            "space": lambda folder: plan_space(folder, f"{args.namespace}/{args.space_name}"),
        }
        plans: list[UploadPlan | SpacePlan] = []
        for kind, folder in chosen:
            try:
                plans.append(planners[kind](folder))
            except UnqoverError as exc:
                label = f"Space {args.space_name}" if kind == "space" else folder.name
                problems.append(f"{label}: {exc}")
        if problems:
            raise UnqoverError("nothing was uploaded; fix these first:\n  " + "\n  ".join(problems))

        for plan in plans:
            print("\n".join(describe(plan)), flush=True)
        if args.dry_run:
            total = sum(p.total_bytes for p in plans)
            datasets = sum(isinstance(p, UploadPlan) for p in plans)
            spaces = len(plans) - datasets
            print(
                f"dry run: {datasets} dataset(s) and {spaces} Space(s), {fmt_size(total)} bytes validated; "
                "nothing uploaded"
            )
            return 0
        for plan in plans:
            url = publish(plan, token=args.token, private=args.private, timeout=args.timeout)
            print(f"published {plan.repo_id}: {url}", flush=True)
    except UnqoverError as exc:
        print(f"unqover: error: {exc}", file=sys.stderr)
        return 2
    return 0
