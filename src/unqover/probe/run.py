"""The main job: probe a model on an UnQover dataset, measure and report, in one resumable run folder.

Run folder (``--output``, default ``runs/<model>/<bias>-<config>``)::

    run.json              what this run is (model, dataset and its fingerprint, scoring, selection)
    shards/<i>-of-<n>/    finished chunks of scores (resume starts from these)
    predictions.parquet   id, score_1, score_2 + provenance (the DESIGN data contract)
    results.json          the measures (as `unqover measure` writes them)
    report.md, report.html

Several machines split one run with ``--shard i/n`` into a shared folder; under ``accelerate launch`` every
process takes its shard automatically and the main process merges, measures and reports.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from unqover import __version__
from unqover.errors import UnqoverError
from unqover.files import write_json_atomic
from unqover.generate.ids import match_ids, parse_hex_ids
from unqover.generate.unqover import BIAS_CLASSES
from unqover.measure.unqover import UnqoverBias, unqover_bias
from unqover.predictions import write_predictions

REQUIRED_COLUMNS = (
    "id",
    "subject_1",
    "subject_2",
    "template_id",
    "attribute",
    "polarity",
    "context",
    "question",
    "subject_1_span",
    "subject_2_span",
)
FAMILY_CONFIG = {"qa": "qa", "mlm": "mlm", "causal": "qa"}
NLI_BIAS = "nli-gender"
EEC_BIAS = "eec-emotion"


@dataclass
class ProbeOptions:
    """Everything a probe run needs besides the model id; defaults are the CLI's."""

    bias: str
    dataset: str | None = None  # a dataset folder or Hub id (default: local build, Hub, then word lists)
    word_lists: Path | None = None  # build the rows in memory from these lists
    config: str | None = None  # dataset config (default: by model family)
    output: Path | None = None
    scoring: str = "default"  # "paper": the original's scoring quirks
    mode: str = "default"  # measure mode
    batch_size: int | None = None
    device: str = "auto"
    dtype: str = "auto"
    shard: tuple[int, int] | None = None
    limit: int | None = None
    sample: float | None = None
    precision: float | None = None  # score in rounds until every headline interval is at most this wide
    max_rows: int | None = None  # precision rounds: stop before scoring more rows than this
    max_seconds: float | None = None  # precision rounds: start no round after this much scoring time
    seed: int = 0
    resamples: int = 1000
    progress: bool = True
    revision: str | None = None
    token: str | None = None
    allow_pickle: bool = False
    chunk_rows: int = 8192
    label_map: dict[str, int] | None = None  # NLI models whose config names labels LABEL_k
    permutations: int = 2000  # emotion probe: person-level permutations per test
    length_rule: str = "mean"  # emotion probe: rank by log-probability per token ("mean") or in total


@dataclass
class ProbeRun:
    """A finished run: where it is and what it measured."""

    folder: Path
    result: UnqoverBias
    provenance: dict


def dataset_fingerprint(ids: pa.ChunkedArray | pa.Array) -> str:
    """BLAKE2b of the row ids in order: the same rows give the same fingerprint on every machine."""
    digest = hashlib.blake2b(digest_size=16)
    keys = parse_hex_ids(ids)
    if keys is not None:
        digest.update(keys.astype("<u8").tobytes())
    else:
        for value in ids.to_pylist():
            digest.update(value.encode() + b"\n")
    return digest.hexdigest()


def library_versions() -> dict:
    import datasets
    import numpy
    import torch
    import transformers

    return {
        "unqover": __version__,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "datasets": datasets.__version__,
        "numpy": numpy.__version__,
        "pyarrow": pa.__version__,
        "python": platform.python_version(),
    }


def load_probe_rows(options: ProbeOptions, config: str) -> tuple[pa.Table, dict]:
    """The rows to score and where they came from: --dataset, --word-lists, a local build, the Hub, then upstream."""
    from unqover.hub.load import load_rows

    if options.dataset:
        return load_rows(options.dataset, config), {
            "source": str(options.dataset),
            "config": config,
            "split": "test",
        }
    if options.word_lists is not None:
        return _generated(options.word_lists, options.bias, config)
    local = Path("datasets/unqover") / options.bias
    if (local / "data" / config).is_dir():
        return load_rows(local, config), {"source": str(local), "config": config, "split": "test"}
    failures = []
    try:
        hub_id = f"unqover/{options.bias}"
        return load_rows(hub_id, config), {"source": hub_id, "config": config, "split": "test"}
    except UnqoverError as err:
        failures.append(str(err))
    try:
        return _generated(None, options.bias, config)
    except UnqoverError as err:
        failures.append(str(err))
    raise UnqoverError(
        "no dataset to probe: "
        + " / ".join(failures)
        + ". Pass --dataset FOLDER (built with `unqover build-datasets`) "
        "or --word-lists PATH"
    )


def _generated(word_lists: Path | None, bias: str, config: str) -> tuple[pa.Table, dict]:
    from unqover.generate.unqover import make_plan
    from unqover.lexicon import resolve_word_lists

    lists = resolve_word_lists(word_lists)
    plan = make_plan(lists, bias, config)
    rows = pa.Table.from_batches(list(plan.batches()))
    return rows, {"source": f"generated from {lists.root}", "bias": bias, "config": config, "split": "test"}


def check_columns(rows: pa.Table, source: str) -> None:
    missing = [c for c in REQUIRED_COLUMNS if c not in rows.column_names]
    if missing:
        raise UnqoverError(f"dataset {source} lacks the columns {missing}; is it an UnqOver dataset?")


def default_output(model_id: str, bias: str, config: str, scoring: str) -> Path:
    name = re.sub(
        r"[^A-Za-z0-9._-]+",
        "_",
        Path(model_id).name if Path(model_id).is_dir() else model_id.replace("/", "__"),
    )
    return Path("runs") / name / (f"{bias}-{config}" + ("-paper" if scoring == "paper" else ""))


def _claim(folder: Path, identity: dict) -> None:
    """Record what this run is, or refuse a folder that holds a different run."""
    manifest = folder / "run.json"
    if manifest.is_file():
        existing = json.loads(manifest.read_text())
        if existing != identity:
            differing = sorted(k for k in set(existing) | set(identity) if existing.get(k) != identity.get(k))
            raise UnqoverError(
                f"{folder} holds another run (it differs in {', '.join(differing)}); choose another --output or "
                "remove that folder"
            )
        return
    if folder.exists() and any(folder.iterdir()):
        raise UnqoverError(f"{folder} exists and is not an unqover run folder; choose another --output")
    folder.mkdir(parents=True, exist_ok=True)
    write_json_atomic(manifest, identity)


def _distributed():
    """The accelerate state when launched with several processes, else None."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return None
    import torch
    from accelerate import PartialState

    # without a GPU, accelerate would quietly run each process alone; cpu=True makes them one gloo group
    return PartialState(cpu=not torch.cuda.is_available())


def distributed_device(options: ProbeOptions):
    """The accelerate state (or None) and the device to load the model on."""
    state = _distributed()
    if state is None:
        return None, options.device
    if options.shard is not None:
        raise UnqoverError("--shard is chosen by accelerate under `accelerate launch`; leave it out")
    return state, "cpu" if state.device.type == "cpu" else state.device.type


def to_process_device(loaded, state) -> None:
    """Under ``accelerate launch`` on GPUs, move the model to this process's own GPU (loading put it on cuda:0)."""
    if state is not None and state.device.type == "cuda":
        loaded.model.to(state.device)
        loaded.device = str(state.device)


def load_for_process(model_id: str, options: ProbeOptions, loader=None, **extra):
    """The accelerate state (or None) and the model, loaded with the run's options on this process's device.

    ``loader`` is :func:`unqover.probe.models.load_model` by default (``load_nli_model`` for NLI); ``extra`` goes
    to it as well.
    """
    if loader is None:
        from unqover.probe.models import load_model as loader
    state, device = distributed_device(options)
    loaded = loader(
        model_id,
        revision=options.revision,
        device=device,
        dtype=options.dtype,
        token=options.token,
        allow_pickle=options.allow_pickle,
        **extra,
    )
    to_process_device(loaded, state)
    return state, loaded


def refuse_unqover_options(options: ProbeOptions, limit_meaning: str) -> None:
    """``--sample``, ``--scoring paper`` and ``--mode paper`` belong to the UnQover probes only."""
    if options.sample is not None:
        raise UnqoverError(f"--sample applies to the UnQover probes; use --limit N ({limit_meaning})")
    if options.scoring != "default" or options.mode != "default":
        raise UnqoverError("--scoring and --mode paper apply to the UnQover probes")


def make_scorer(loaded, scoring: str):
    from unqover.probe.causal import CausalScorer
    from unqover.probe.mlm import MLMScorer
    from unqover.probe.qa import QAScorer

    if loaded.family == "qa":
        return QAScorer(loaded, mode=scoring)
    if loaded.family == "mlm":
        return MLMScorer(loaded, mode=scoring)
    if scoring == "paper":
        raise UnqoverError(
            "the original code scored no causal LMs: --scoring paper applies to QA and masked LMs"
        )
    return CausalScorer(loaded)


def claim_and_score(
    rows: pa.Table,
    scorer,
    folder: Path,
    identity: dict,
    options: ProbeOptions,
    state,
    extra_scorers: dict | None = None,
) -> tuple[pa.Table | None, tuple[int, int], dict[str, pa.Table]]:
    """Claim the run folder, score this process's shard and merge all shards.

    Returns (None, shard, {}) on a process or shard that only scored its part. ``extra_scorers`` (name -> scorer)
    are run the same way into ``folder/<name>`` (e.g. NLI neutral probabilities) and merged alongside.
    """
    from unqover.probe.runner import merge_shards, run_shard

    if state is None or state.is_main_process:
        _claim(folder, identity)
    if state is not None:
        state.wait_for_everyone()
        _claim(folder, identity)
    shard = (state.process_index, state.num_processes) if state is not None else (options.shard or (0, 1))
    passes = {"": scorer, **(extra_scorers or {})}
    for name, each in passes.items():
        run_shard(
            rows,
            each,
            folder / name if name else folder,
            batch_size=options.batch_size,
            shard=shard,
            chunk_rows=options.chunk_rows,
            progress=options.progress and (state is None or state.is_main_process),
        )
    if state is not None:
        state.wait_for_everyone()
        if not state.is_main_process:
            return None, shard, {}
    try:
        merged = {name: merge_shards(rows, folder / name if name else folder, shard[1]) for name in passes}
    except UnqoverError as err:
        if shard[1] > 1 and state is None:
            print(
                f"shard {shard[0]}/{shard[1]} is done; {err}. Run any shard's command again once all are done."
            )
            return None, shard, {}
        raise
    return merged.pop(""), shard, merged


def probe(model_id: str, options: ProbeOptions) -> ProbeRun | None:
    """Score, measure and report; returns None on processes that only scored a shard."""
    from unqover.probe.sampling import DESIGN, check_seed, select_groups

    if options.bias == NLI_BIAS:
        from unqover.probe.nli_run import probe_nli

        return probe_nli(model_id, options)
    if options.bias == EEC_BIAS:
        from unqover.probe.eec_run import probe_eec

        return probe_eec(model_id, options)
    if options.bias not in BIAS_CLASSES:
        raise UnqoverError(f"unknown bias class {options.bias!r}; choose from {', '.join(BIAS_CLASSES)}")
    if options.scoring not in ("default", "paper"):
        raise UnqoverError(f"--scoring must be default or paper, got {options.scoring!r}")
    check_seed(options.seed)
    if options.precision is not None:
        from unqover.probe.precision import check_precision_options

        check_precision_options(options)
    state, loaded = load_for_process(model_id, options)
    config = options.config or FAMILY_CONFIG[loaded.family]
    if options.config is None and loaded.family == "mlm" and options.scoring == "paper":
        # the original scored masked LMs on its single-token subject lists
        config = "mlm-roberta" if "roberta" in model_id.lower() else "mlm-bert"
    rows, dataset = load_probe_rows(options, config)
    check_columns(rows, dataset["source"])
    scorer = make_scorer(loaded, options.scoring)
    coverage = None
    if loaded.family == "mlm":
        # the population a quick run estimates is the covered dataset: drop split subjects before sampling
        rows, cover = scorer.single_token_coverage(rows)
        coverage = cover.as_dict()
    population = rows
    folder = options.output or default_output(model_id, options.bias, config, options.scoring)
    selection = {"limit": options.limit, "sample": options.sample, "seed": options.seed}
    if options.precision is not None:
        from unqover.probe.precision import probe_to_precision

        selection = {"precision": options.precision, "seed": options.seed, "design": DESIGN}
        identity = _identity(model_id, loaded, population, dataset, options, selection, coverage)
        return probe_to_precision(folder, population, scorer, identity, loaded, options)
    if options.limit is not None or options.sample is not None:
        rows = select_groups(rows, limit=options.limit, sample=options.sample, seed=options.seed)
        selection["design"] = DESIGN
    identity = _identity(model_id, loaded, rows, dataset, options, selection, coverage)
    scores, shard, _ = claim_and_score(rows, scorer, folder, identity, options, state)
    if scores is None:
        return None
    return finish(folder, rows, scores, identity, loaded, options, shard, population=population)


def _identity(model_id, loaded, rows, dataset, options, selection, coverage) -> dict:
    """What a run is (run.json): a folder holding another run is refused."""
    return {
        "model": {"id": model_id, "revision": loaded.revision, "family": loaded.family},
        "dataset": {**dataset, "rows": rows.num_rows, "fingerprint": dataset_fingerprint(rows["id"])},
        "scoring": options.scoring,
        "dtype": loaded.dtype,
        "selection": selection,
        "coverage": coverage,
    }


def measure_rows(
    rows: pa.Table,
    scores: pa.Table,
    options: ProbeOptions,
    population: pa.Table | None,
    selection: dict | None,
) -> UnqoverBias:
    """The UnQover measures of scored rows (``scores`` matched to them by id, in any order); a quick run's
    (``rows`` part of ``population``) as estimates of the full-dataset values."""
    target = rows if population is None else population
    position = match_ids(target["id"], scores["id"])
    observed = position >= 0
    score_1, score_2 = np.zeros(target.num_rows), np.zeros(target.num_rows)
    score_1[observed] = scores["score_1"].to_numpy()[position[observed]]
    score_2[observed] = scores["score_2"].to_numpy()[position[observed]]
    if observed.all():
        return unqover_bias(
            target, score_1, score_2, mode=options.mode, n_resamples=options.resamples, seed=options.seed
        )
    info = {
        k: v for k, v in (selection or {}).items() if k in ("seed", "design", "limit", "sample", "precision")
    }
    return unqover_bias(
        target,
        score_1,
        score_2,
        mode=options.mode,
        seed=options.seed,
        observed=observed,
        sample_info={**info, "matches_design": True},
    )


def finish(
    folder: Path,
    rows: pa.Table,
    scores: pa.Table,
    identity: dict,
    loaded,
    options: ProbeOptions,
    shard: tuple[int, int] = (0, 1),
    population: pa.Table | None = None,
) -> ProbeRun:
    """Write predictions, measure, and write results and the report.

    With ``population`` (the whole dataset) and ``rows`` a quick run's part of it, the results estimate the
    full-dataset values.
    """
    from unqover.probe.runner import recorded_batch_size
    from unqover.report.html import write_report

    provenance = {
        **identity,
        "model": {**identity["model"], **loaded.provenance()},
        "batch_size": recorded_batch_size(folder, shard),
        "versions": library_versions(),
    }
    write_predictions(folder / "predictions.parquet", scores, provenance)
    result = measure_rows(rows, scores, options, population, identity.get("selection"))
    results = {"provenance": provenance, "result": result.to_dict()}
    write_json_atomic(folder / "results.json", results)
    write_report(folder, results)
    return ProbeRun(folder, result, provenance)
