"""``unqover publish``: choose what to publish, check all of it, print the plans, upload.

The hub layer (:mod:`unqover.hub.publish`) finds and checks the folders and uploads a plan; this job says what the
command does with them, in order: choose the folders (``--what``, names), plan every one (nothing is uploaded
unless every plan is sound), print each plan, then upload (or stop after printing, with ``--dry-run``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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
from unqover.jobs.publish_choice import PUBLISH_KINDS


@dataclass(frozen=True)
class PublishRequest:
    """What ``unqover publish`` was asked for: the ``names`` to publish (none: all that ``what`` selects), the
    kinds (``--what``), the local folders (``--root``, ``--metrics``, ``--space``), the Hub names (``--space-name``,
    ``--namespace``), and how to upload (``--dry-run``, ``--token``, ``--private``, ``--timeout``)."""

    names: Sequence[str]
    what: Sequence[str]
    root: Path
    metrics: Path
    space: Path
    space_name: str
    namespace: str
    dry_run: bool
    token: str | None
    private: bool
    timeout: float


def _check_name(flag: str, value: str, what: str) -> None:
    if not is_repo_name(value):
        raise UnqoverError(
            f"invalid {flag} {value!r}: {what} uses letters, digits, '-', '_' or '.', does not start or end "
            "with '-' or '.', and has no '--' or '..'"
        )


def _select(request: PublishRequest) -> tuple[list[tuple[str, Path]], list[str]]:
    """The (kind, folder) pairs to publish, in publishing order, and the problems found choosing them."""
    chosen: list[tuple[str, Path]] = []
    problems: list[str] = []
    if not request.names:
        finders = {
            "datasets": lambda: discover_datasets(request.root),
            "modules": lambda: discover_modules(request.metrics),
            "space": lambda: [request.space],
        }
        for kind in request.what:
            try:
                folders = finders[kind]()
            except UnqoverError as exc:
                problems.append(str(exc))
                continue
            if not folders:
                where = f"dataset folders with a card under {request.root}; {common.BUILD_HINT}"
                problems.append(
                    f"no {where}" if kind == "datasets" else f"no evaluate modules under {request.metrics}"
                )
            chosen += [(kind, folder) for folder in folders]
        return chosen, problems

    for name in request.names:
        matches = []
        if "datasets" in request.what and (request.root / name / common.CARD).is_file():
            matches.append(("datasets", request.root / name))
        if (
            "modules" in request.what
            and not name.startswith((".", "_"))
            and (request.metrics / name).is_dir()
        ):
            matches.append(("modules", request.metrics / name))
        if "space" in request.what and name == request.space_name:
            matches.append(("space", request.space))
        if matches:
            chosen += [m for m in matches if m not in chosen]
            continue
        available = []
        if "datasets" in request.what:
            built = [p.name for p in discover_datasets(request.root)] if request.root.is_dir() else []
            available.append(
                f"datasets built under {request.root}: {', '.join(built) or f'none; {common.BUILD_HINT}'}"
            )
        if "modules" in request.what:
            modules = [p.name for p in discover_modules(request.metrics)] if request.metrics.is_dir() else []
            available.append(f"evaluate modules under {request.metrics}: {', '.join(modules) or 'none'}")
        if "space" in request.what:
            available.append(f"the Space: {request.space_name}")
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


def publish_chosen(request: PublishRequest) -> None:
    """Check everything ``request`` chooses, print each plan, then upload them one by one (with ``dry_run``: print
    what would be uploaded instead). Raises :class:`UnqoverError` before anything is uploaded when a name, a
    folder or a plan is wrong (every problem found, one a line)."""
    _check_name("--namespace", request.namespace, "a Hub user or organisation name")
    _check_name("--space-name", request.space_name, "a Space name")
    if request.timeout <= 0:
        raise UnqoverError("--timeout must be positive")
    chosen, problems = _select(request)
    planners = {
        "datasets": lambda folder: plan_upload(folder, f"{request.namespace}/{folder.name}"),
        "modules": lambda folder: plan_module(folder, f"{request.namespace}/{folder.name}"),
        "space": lambda folder: plan_space(folder, f"{request.namespace}/{request.space_name}"),
    }
    plans: list[UploadPlan | SpacePlan] = []
    for kind, folder in chosen:
        try:
            plans.append(planners[kind](folder))
        except UnqoverError as exc:
            label = f"Space {request.space_name}" if kind == "space" else folder.name
            problems.append(f"{label}: {exc}")
    if problems:
        raise UnqoverError("nothing was uploaded; fix these first:\n  " + "\n  ".join(problems))

    for plan in plans:
        print("\n".join(describe(plan)), flush=True)
    if request.dry_run:
        total = sum(p.total_bytes for p in plans)
        datasets = sum(isinstance(p, UploadPlan) for p in plans)
        spaces = len(plans) - datasets
        print(
            f"dry run: {datasets} dataset(s) and {spaces} Space(s), {fmt_size(total)} bytes validated; "
            "nothing uploaded"
        )
        return
    for plan in plans:
        url = publish(plan, token=request.token, private=request.private, timeout=request.timeout)
        print(f"published {plan.repo_id}: {url}", flush=True)
