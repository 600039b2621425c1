"""The UnQover probes: the four bias classes of Li et al. (2020) and custom probes from a YAML file.

Rows: ``--dataset`` (a folder or Hub id), else generated from ``--word-lists``, else a local build in
``datasets/unqover/<name>``, else the Hub dataset ``unqover/<name>``, else the pinned upstream word lists (custom
probes: generated from their file). Models: extractive QA, masked LMs (single-token subjects only; the others are
dropped with their groups before any sampling) and causal LMs. A quick run (``--limit N``, ``--sample F``,
``--precision W``) scores a seeded sample of whole groups (``unqover.probe.sampling``) and reports estimates of
the full-dataset values (``unqover.measure.sampled``).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from unqover.errors import UnqoverError
from unqover.generate.ids import match_ids
from unqover.generate.unqover import MASK_PLACEHOLDER
from unqover.hub.load import load_rows, source_name
from unqover.measure.unqover import UnqoverBias, unqover_bias
from unqover.predictions import read_predictions
from unqover.probe.sampling import DESIGN, budget, check_design, find_groups, select_groups, selected_groups
from unqover.probes import precision
from unqover.probes.base import (
    Loaded,
    Measured,
    ProbeDefinition,
    QuickRunSize,
    RunOptions,
    load_for_run,
    selection_suffix,
)
from unqover.report.diagnostics import unqover_warnings
from unqover.report.html import html_report
from unqover.report.markdown import markdown_report, sample_line
from unqover.report.text import summary

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
#: The columns the measure reads (``unqover measure`` loads only these).
ROW_COLUMNS = (
    "id",
    "subject_1",
    "subject_2",
    "subject_1_cluster",
    "subject_2_cluster",
    "template_id",
    "attribute",
    "attribute_type",
    "polarity",
)
FAMILY_CONFIG = {"qa": "qa", "mlm": "mlm", "causal": "qa"}
SCORINGS = ("default", "paper")
MODES = ("default", "paper")


def make_scorer(model, scoring: str):
    """The scorer of a model family (``scoring`` "paper": the original code's quirks)."""
    from unqover.probe.causal import CausalScorer
    from unqover.probe.mlm import MLMScorer
    from unqover.probe.qa import QAScorer

    if model.family == "qa":
        return QAScorer(model, mode=scoring)
    if model.family == "mlm":
        return MLMScorer(model, mode=scoring)
    if scoring == "paper":
        raise UnqoverError(
            "the original code scored no causal LMs: --scoring paper applies to QA and masked LMs"
        )
    return CausalScorer(model)


def check_columns(rows: pa.Table, source: str) -> None:
    missing = [c for c in REQUIRED_COLUMNS if c not in rows.column_names]
    if missing:
        raise UnqoverError(f"dataset {source} lacks the columns {missing}; is it an UnqOver dataset?")


FAMILY_NAMES = {"qa": "an extractive QA model", "mlm": "a masked LM", "causal": "a causal LM"}


def check_rows_fit_family(rows: pa.Table, family: str, config: str) -> None:
    """Refuse rows the model family cannot score meaningfully: masked-LM rows (questions with the mask
    placeholder) for QA and causal LMs, question rows (no placeholder) for masked LMs."""
    if rows.num_rows == 0:
        return
    masked = int(pc.sum(pc.match_substring(rows["question"], MASK_PLACEHOLDER)).as_py() or 0)
    if family == "mlm" and masked < rows.num_rows:
        raise UnqoverError(
            f"a masked LM scores masked-LM rows, but {rows.num_rows - masked:,} of the {rows.num_rows:,} "
            f"{config!r} rows have no {MASK_PLACEHOLDER} in their question: use --config mlm (or leave "
            "--config out)"
        )
    if family != "mlm" and masked:
        raise UnqoverError(
            f"{FAMILY_NAMES.get(family, family)} answers questions, but the {config!r} rows are for masked LMs "
            f"({masked:,} questions hold {MASK_PLACEHOLDER}): use --config qa (or leave --config out)"
        )


def scores_by_row(rows: pa.Table, scores: pa.Table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """score_1, score_2 for every row of ``rows`` (zeros where unscored) and which rows were scored."""
    position = match_ids(rows["id"], scores["id"])
    observed = position >= 0
    score_1, score_2 = np.zeros(rows.num_rows), np.zeros(rows.num_rows)
    score_1[observed] = scores["score_1"].to_numpy()[position[observed]]
    score_2[observed] = scores["score_2"].to_numpy()[position[observed]]
    return score_1, score_2, observed


def measure_scores(
    rows: pa.Table,
    scores: pa.Table,
    *,
    mode: str = "default",
    resamples: int = 1000,
    seed: int = 0,
    sample_info: dict | None = None,
    **options,
) -> UnqoverBias:
    """The UnQover measures of ``scores`` (matched to ``rows`` by id, in any order). When they cover part of
    ``rows`` (the whole dataset), the result estimates the full-dataset values."""
    score_1, score_2, observed = scores_by_row(rows, scores)
    if observed.all():
        return unqover_bias(rows, score_1, score_2, mode=mode, n_resamples=resamples, seed=seed, **options)
    return unqover_bias(
        rows, score_1, score_2, mode=mode, seed=seed, observed=observed, sample_info=sample_info, **options
    )


def add_warnings(result: UnqoverBias, scores: pa.Table, coverage: dict | None) -> UnqoverBias:
    """``result`` with the warnings of a degenerate run first (``unqover.report.diagnostics``): answer scores ≈0,
    constant or tied in most questions, subjects a masked LM's tokenizer left out (run.json's ``coverage``)."""
    found = unqover_warnings(scores["score_1"].to_numpy(), scores["score_2"].to_numpy(), coverage)
    result.warnings = [*found, *result.warnings]
    return result


def describe_sample(rows: pa.Table, observed: np.ndarray, selection: dict) -> dict:
    """How the scored rows were drawn: this project's design with a known seed (checked exactly), or a subset
    whose strata at least hold their proportional shares (the design's property for any seed)."""
    groups = find_groups(rows)
    kept = np.zeros(groups.num_groups, dtype=bool)
    kept[groups.row_group[observed]] = True
    seed = selection.get("seed")
    if (
        isinstance(seed, int)
        and not isinstance(seed, bool)
        and seed >= 0
        and selection.get("design") == DESIGN
    ):
        exact = selected_groups(groups, budget(groups.num_groups, int(kept.sum())), seed)
        if np.array_equal(exact, kept):
            return {"design": DESIGN, "seed": seed, "matches_design": True}
    check = check_design(groups, kept)
    info = {"design": DESIGN if check.matches else "unknown", "seed": None, "matches_design": check.matches}
    if not check.matches:
        info["warning"] = (
            "the scored groups are not spread over the (template, attribute) strata as a random sample of this "
            f"size would be ({check.worst_stratum}); the intervals assume an equal-probability random sample "
            "(`unqover sample` writes one)"
        )
    return info


class UnqoverProbe(ProbeDefinition):
    """One UnQover bias class: rows from the word lists (or a built dataset), the UnQover measures."""

    families = ("qa", "mlm", "causal")
    limit_meaning = "N groups (4 rows each), a seeded sample stratified over template x attribute"
    settings: ClassVar[dict] = {
        "sample": None,
        "precision": None,
        "max_rows": None,
        "max_seconds": None,
        "scoring": "default",
        "mode": "default",
        "word_lists": None,
    }

    def __init__(self, name: str, title: str, space_default: int = 2000) -> None:
        self.name, self.title = name, title
        # μ and η need about 5 sampled values per γ(x, a) cell (unqover.measure.sampled): the default groups
        self.quick_run = QuickRunSize("groups", space_default, 2000, 4, "4 inputs each")

    def check_settings(self, given) -> dict:
        settings = super().check_settings(given)
        if settings["scoring"] not in SCORINGS:
            raise UnqoverError(f"--scoring must be one of {', '.join(SCORINGS)}, got {settings['scoring']!r}")
        if settings["mode"] not in MODES:
            raise UnqoverError(f"--mode must be one of {', '.join(MODES)}, got {settings['mode']!r}")
        if settings["precision"] is None:
            bounds = (("--max-rows", "max_rows"), ("--max-time", "max_seconds"))
            given = [option for option, key in bounds if settings[key] is not None]
            if given:
                raise UnqoverError(
                    f"{' and '.join(given)} only {'bound' if len(given) > 1 else 'bounds'} the rounds of a "
                    "--precision run: add --precision WIDTH (or use --limit N for a fixed number of groups)"
                )
        return settings

    def load_model(self, model_id: str, run: RunOptions, settings: dict):
        from unqover.probe.models import load_model

        if settings["precision"] is not None:
            precision.check_options(run, settings)
        elif settings["sample"] is not None and run.limit is not None:
            raise UnqoverError("pass either --limit (a number of groups) or --sample (a fraction), not both")
        return load_for_run(load_model, model_id, run)

    def config_for(self, model, run: RunOptions, settings: dict) -> str:
        if run.config:
            return run.config
        if model.family == "mlm" and settings["scoring"] == "paper":
            # the original scored masked LMs on its single-token subject lists
            return "mlm-roberta" if "roberta" in model.model_id.lower() else "mlm-bert"
        return FAMILY_CONFIG[model.family]

    def rows(self, run: RunOptions, settings: dict, config: str) -> tuple[pa.Table, dict]:
        """The whole dataset and where it came from."""
        if run.dataset:
            return load_rows(run.dataset, config), {
                "source": source_name(run.dataset),
                "config": config,
                "split": "test",
            }
        if settings["word_lists"] is not None:
            return self._generated(settings["word_lists"], config)
        local = Path("datasets/unqover") / self.name
        if (local / "data" / config).is_dir():
            return load_rows(local, config), {
                "source": str(local.resolve()),
                "config": config,
                "split": "test",
            }
        failures = []
        try:
            hub_id = f"unqover/{self.name}"
            return load_rows(hub_id, config), {"source": hub_id, "config": config, "split": "test"}
        except UnqoverError as err:
            failures.append(str(err))
        try:
            return self._generated(None, config)
        except UnqoverError as err:
            failures.append(str(err))
        raise UnqoverError(
            "no dataset to probe: "
            + " / ".join(failures)
            + ". Pass --dataset FOLDER (built with `unqover build-datasets`) or --word-lists PATH"
        )

    def _generated(self, word_lists: Path | None, config: str) -> tuple[pa.Table, dict]:
        from unqover.generate.unqover import make_plan
        from unqover.lexicon import resolve_word_lists

        lists = resolve_word_lists(word_lists)
        rows = pa.Table.from_batches(list(make_plan(lists, self.name, config).batches()))
        root = str(Path(lists.root).resolve())
        return rows, {
            "source": f"generated from {root}",
            "generator": {"bias": self.name, "word_lists": root},
            "bias": self.name,
            "config": config,
            "split": "test",
        }

    def load(self, run: RunOptions, settings: dict, model) -> Loaded:
        config = self.config_for(model, run, settings)
        rows, dataset = self.rows(run, settings, config)
        check_columns(rows, dataset["source"])
        check_rows_fit_family(rows, model.family, config)
        identity = {"coverage": None}
        if model.family == "mlm":
            # the population a quick run estimates is the covered dataset: drop split subjects before sampling
            rows, cover = make_scorer(model, settings["scoring"]).single_token_coverage(rows)
            identity["coverage"] = cover.as_dict()
        population = rows
        selection = {"limit": run.limit, "sample": settings["sample"], "seed": run.seed}
        if settings["precision"] is not None:
            selection = {"precision": settings["precision"], "seed": run.seed, "design": DESIGN}
        elif run.limit is not None or settings["sample"] is not None:
            rows = select_groups(rows, limit=run.limit, sample=settings["sample"], seed=run.seed)
            selection["design"] = DESIGN
        return Loaded(rows, dataset, population, selection, {"identity": identity, "config": config})

    def scorers(self, model, settings: dict) -> dict:
        return {"": make_scorer(model, settings["scoring"])}

    def scoring(self, model, settings: dict) -> str:
        return settings["scoring"]

    def output_name(self, loaded: Loaded, settings: dict) -> str:
        paper = "-paper" if settings["scoring"] == "paper" else ""
        return f"{self.name}-{loaded.context['config']}{paper}" + selection_suffix(loaded.selection)

    def score(self, loaded, model, folder, identity, run, settings, placement, claim_and_score):
        if settings["precision"] is None:
            return super().score(loaded, model, folder, identity, run, settings, placement, claim_and_score)
        if placement.distributed:
            raise UnqoverError("--precision runs its rounds in one process: run it without accelerate launch")
        scorer = self.scorers(model, settings)[""]

        def measure(scores: pa.Table) -> UnqoverBias:
            return self._measure(loaded, scores, run, settings)

        kept, scores, stopped = precision.score_in_rounds(
            loaded.population, scorer, folder, identity, run, settings["precision"], settings, measure
        )
        selection = {**loaded.selection, **stopped}
        return Loaded(kept, loaded.dataset, loaded.population, selection, loaded.context), scores, {}

    def _measure(self, loaded: Loaded, scores: pa.Table, run: RunOptions, settings: dict) -> UnqoverBias:
        info = {
            k: v for k, v in (loaded.selection or {}).items() if k in ("seed", "design", "limit", "sample")
        }
        return measure_scores(
            loaded.population if loaded.population is not None else loaded.rows,
            scores,
            mode=settings["mode"],
            resamples=run.resamples,
            seed=run.seed,
            sample_info={**info, "matches_design": True},
        )

    def measure(self, loaded, scores, extra, run, settings) -> Measured:
        coverage = loaded.context.get("identity", {}).get("coverage")
        return Measured(add_warnings(self._measure(loaded, scores, run, settings), scores, coverage))

    def reports(self, results: dict) -> dict[str, str]:
        return {"report.md": markdown_report(results), "report.html": html_report(results)}

    def quick_run_line(self, result: dict) -> str | None:
        return sample_line(result)

    def summary(self, result, top: int = 10) -> str:
        return summary(result, top=top)

    def headline(self, results: dict) -> dict:
        result = results["result"]
        intervals = result.get("intervals") or {}
        names = ("mu", "eta", "positional_error", "attributive_error")
        return {name: (result.get(name), intervals.get(name)) for name in names}

    def recorded_rows(
        self, recorded: dict, run: RunOptions, split: str | None = None, what: object = "the file"
    ) -> tuple[pa.Table, str | None, str | None, str]:
        """The dataset rows a provenance's ``dataset`` records (``run.dataset`` and ``run.config`` override it):
        rows (``ROW_COLUMNS`` when loaded from a dataset), source, config and split."""
        config = run.config or recorded.get("config")
        split = split or recorded.get("split") or "test"
        source = run.dataset or recorded.get("source")
        generator = recorded.get("generator") or {}
        if run.dataset is None and generator.get("word_lists"):
            rows, _ = self._generated(Path(generator["word_lists"]), config)
        elif run.dataset is None and generator:
            rows, _ = self.rows(RunOptions(), dict(self.settings), config)
        elif run.dataset is None and str(source or "").startswith("generated from "):
            rows, _ = self._generated(Path(str(source).removeprefix("generated from ")), config)
        else:
            if not source or not config:
                raise UnqoverError(f"{what} does not record its dataset; pass --dataset and --config")
            rows = load_rows(source, config, split, columns=ROW_COLUMNS)
        return rows, source, config, split

    def compared_scores(
        self, dataset: dict, predictions: list[Path]
    ) -> tuple[pa.Table, list[tuple[np.ndarray, np.ndarray, np.ndarray]]]:
        """For ``unqover compare``: the dataset rows a provenance's ``dataset`` records, loaded once, and for each
        predictions file its score_1, score_2 and scored-row mask over those rows (matched by ``id``)."""
        rows, source, config, split = self.recorded_rows(dataset, RunOptions(), what="the run")
        scored = []
        for path in predictions:
            scores, _ = read_predictions(path)
            score_1, score_2, observed = scores_by_row(rows, scores)
            if observed.sum() < scores.num_rows:
                raise UnqoverError(
                    f"{scores.num_rows - int(observed.sum()):,} ids of {path} are not in {source} ({config}/{split})"
                )
            scored.append((score_1, score_2, observed))
        return rows, scored

    def measure_file(self, predictions: Path, run: RunOptions, **options) -> tuple[UnqoverBias, dict]:
        """Join a predictions file to its dataset rows by ``id`` and measure. Predictions that cover part of the
        dataset (a quick run, or `unqover sample` ids scored elsewhere) give estimates of the full-dataset values."""
        scores, provenance = read_predictions(predictions)
        recorded = provenance.get("dataset", {})
        rows, source, config, split = self.recorded_rows(
            recorded, run, options.pop("split", None), predictions
        )
        position = match_ids(scores["id"], rows["id"])
        if (position < 0).any():
            unknown = np.flatnonzero(position < 0)
            raise UnqoverError(
                f"{len(unknown)} prediction ids are not in {source} ({config}/{split}), e.g. "
                f"{scores['id'][int(unknown[0])].as_py()!r}: were they made on another dataset?"
            )
        sample_info = None
        if scores.num_rows < rows.num_rows:
            observed = np.zeros(rows.num_rows, dtype=bool)
            observed[position] = True
            sample_info = describe_sample(rows, observed, provenance.get("selection") or {})
        result = measure_scores(
            rows, scores, resamples=run.resamples, seed=run.seed, sample_info=sample_info, **options
        )
        add_warnings(result, scores, provenance.get("coverage"))
        provenance = {
            **provenance,
            "dataset": {**recorded, "source": source_name(source), "config": config, "split": split},
        }
        return result, provenance


class CustomProbe(UnqoverProbe):
    """A user's UnQover-style probe from a YAML file: its rows are generated from the file."""

    def __init__(self, path: Path) -> None:
        from unqover.lexicon.custom import read_probe_file

        self.path = Path(path)
        self.definition = read_probe_file(self.path)
        super().__init__(self.definition.name, f"custom probe {self.definition.name} ({self.path.name})")

    def rows(self, run: RunOptions, settings: dict, config: str) -> tuple[pa.Table, dict]:
        if run.dataset:
            return super().rows(run, settings, config)
        from unqover.generate.custom import custom_rows

        rows = custom_rows(self.definition, config)
        source = str(self.path.resolve())
        return rows, {
            "source": source,
            "generator": {"probe_file": source},
            "config": config,
            "split": "test",
        }
