"""The NLI gender-occupation probe (Sharma, Dey & Sinha 2021): does an NLI model think a premise about an
occupation entails "This text speaks of a female profession" more than the male counterpart?

Rows: ``--dataset``, else a local build in ``datasets/unqover/nli-gender``, else the project's synthetic premises
made in memory. Each row holds a premise and both hypotheses; ``score_1``/``score_2`` are P_e = sigmoid(z_e − z_c)
for the female and male hypotheses, and with a neutral label its 3-way neutral probabilities are scored too
(``neutral/`` in the run folder). ``--limit N`` keeps N rows per occupation, drawn at random (seeded) within
occupation × template strata with source premises whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from unqover.errors import UnqoverError
from unqover.options import Option
from unqover.probes import options as parse
from unqover.probes.base import (
    LeaderboardNumbers,
    Loaded,
    Measured,
    ProbeDefinition,
    QuickRunSize,
    Ranking,
    ReportWords,
    RunOptions,
    table_text,
)
from unqover.scoring.requests import CLASSES

NAME = "nli-gender"
#: ``--source eec=PATH`` belongs to the emotion probe's dataset
SOURCE_EEC = "eec"


class NLIProbe(ProbeDefinition):
    """The NLI gender-occupation probe: NLI classifiers, S / ΔP / B with premise-cluster intervals."""

    name = NAME
    legacy_card_names = ("NLI gender-occupation probes",)  # the title unqover.hub.nli_card gives the card
    words = ReportWords("unqover.report.nli", "nli_markdown", "nli_html", "nli_summary")

    def recognises_columns(self, names: Sequence[str]) -> bool:
        from unqover.probes.nli_rows import NLI_COLUMNS

        return set(NLI_COLUMNS) <= set(names)

    title = "NLI gender-occupation"
    families = ("nli",)
    wants = (CLASSES,)
    lm_eval_unfit = (
        "an NLI classifier's entailment probabilities are no language-model request type (lm-eval asks a model "
        "for log-likelihoods, rolling log-likelihoods or generated text)"
    )
    limit_meaning = "N rows per occupation, drawn at random within occupation x template strata"
    quick_run = QuickRunSize("rows per occupation", 10, 100, 80)
    evaluate_module = "nli_gender_bias"
    options = (
        Option(
            "--label-map",
            'NLI models whose config names labels LABEL_k: JSON such as \'{"entailment": 0, "neutral": 1, '
            '"contradiction": 2}\'',
            type=parse.label_map,
        ),
    )
    datasets = (NAME,)
    dataset_options = (
        Option(
            "--source",
            "premises from an NLI corpus (mnli, snli, anli, qnli) in a local file, or NAME=hub (repeatable)",
            type=parse.source,
            metavar="NAME=PATH",
            repeat=True,
        ),
        Option(
            "--labels",
            "occupation labels, the paper's (default) or data-driven from the BLS shares",
            choices=("paper", "data"),
            default="paper",
        ),
    )
    table_columns = ("S", "ΔP", "B (NLI)")
    leaderboard_metric = "delta_P"
    leaderboard_method = (
        "the value of each model on the full dataset, from its predictions: a full run's is exact ([value, value]); "
        "a quick run's interval is the probe's bootstrap over source premises at level 1 - alpha/K (Bonferroni over "
        "the K models; percentile with 30 or more premises, a t interval from the bootstrap standard error with "
        "10 to 29, none below 10); rank intervals from them; pairs: the difference resampled jointly over the "
        "premises where the runs share their sample (paired), each run on its own otherwise, a full run's exact "
        "value subtracted, two full runs exactly; p-values Holm-adjusted over the K(K-1)/2 pairs, intervals at "
        "level 1 - alpha/#pairs"
    )

    def engine_load(self, engine, request, run: RunOptions, settings: dict) -> dict:
        """The ``--label-map`` the classifier's labels are read with."""
        return {"label_map": settings["label_map"]}

    def check_source(self, run: RunOptions, settings: dict) -> None:
        from unqover.probes.nli_rows import check_nli_source

        check_nli_source(self.name, run.dataset, run.config or "synthetic")

    def load(self, run: RunOptions, settings: dict, model) -> Loaded:
        from unqover.probes.nli_rows import (
            describe_nli_selection,
            limit_per_occupation,
            load_nli_rows,
            stratum_population,
        )

        config = run.config or "synthetic"
        rows, dataset = load_nli_rows(self.name, run.dataset, config)
        selection, context = None, {"identity": {"labels": model.label_ids}}
        if run.limit is not None:
            kept = limit_per_occupation(rows, run.limit, run.seed)
            selection = describe_nli_selection(rows, kept, run.limit, run.seed)
            context["population"] = stratum_population(rows)
            rows = kept
        return Loaded(rows, dataset, None, selection, context)

    def scorers(self, model, settings: dict, loaded: Loaded | None = None) -> dict:
        from unqover.probes.nli_rows import NLIRowScorer
        from unqover.scoring.engines import scorer_for

        scorer = scorer_for(model, self.wants)
        extra = {"neutral": NLIRowScorer(scorer, "neutral")} if "neutral" in model.label_ids else {}
        return {"": NLIRowScorer(scorer), **extra}

    def measure_run(self, loaded, scores, extra, run, settings) -> Measured:
        from unqover.probes.nli_rows import measure_nli

        population = loaded.context.get("population")
        return Measured(
            measure_nli(loaded.rows, scores, extra.get("neutral"), run, loaded.selection, population)
        )

    def highlights(self, results: dict) -> list[dict]:
        """The ten occupations with the largest gender gap."""
        from unqover.format import fmt_count
        from unqover.report.nli import largest_gap_rows, occupation_cell

        return [
            {
                "occupation": r.get("occupation"),
                "label": r.get("occupation_gender"),
                "gender gap P_f − P_m": occupation_cell(r, "gender_gap"),  # a quick run's: with its interval
                "ΔP": occupation_cell(r, "delta_P"),
                "B": occupation_cell(r, "B"),
                "n": fmt_count(r.get("count")),
            }
            for r in largest_gap_rows(results["result"])
        ]

    def headline(self, results: dict) -> dict:
        from unqover.report.nli import NLI_CARD_NAMES

        result = results["result"]
        intervals = result.get("intervals") or {}
        return {name: (result.get(name), intervals.get(name)) for name in NLI_CARD_NAMES}

    def headline_text(self, results: dict) -> dict[str, str]:
        """In percentage points, as the reports print them (:func:`unqover.report.nli.value_text`)."""
        from unqover.report.nli import value_text

        return {name: value_text(results["result"], name) for name in self.headline(results)}

    def leaderboard_numbers(self, ranking: Ranking) -> LeaderboardNumbers:
        """ΔP or B (lower: less biased) of each run from its predictions, ranked by
        :func:`unqover.measure.nli_ranking.nli_leaderboard`: a full run's value exact, a quick run's premise
        bootstrap at the simultaneous level, pairs paired over the same premises. S rises as bias falls: refused."""
        from unqover.measure.nli_ranking import nli_leaderboard

        if ranking.metric not in ("delta_P", "B"):
            raise UnqoverError(
                f"--metric {ranking.metric}: a leaderboard ranks the least biased first by a number that falls with bias; "
                "S rises as bias falls: rank by delta_P or B"
            )
        sums = [
            self._cluster_sums(run, Path(path), name)
            for run, path, name in zip(ranking.runs, ranking.paths, ranking.names, strict=True)
        ]
        result = ranking.runs[0].get("result") or {}
        resamples = int((result.get("bootstrap") or {}).get("n_resamples") or 1000)
        try:
            return nli_leaderboard(
                sums,
                ranking.names,
                ranking.metric,
                result.get("ties_mode") or "half",
                each=ranking.each,
                pairs=ranking.pairs,
                resamples=resamples,
            )
        except ValueError as err:  # a declined value or interval
            raise UnqoverError(f"{err}: rank quick runs of more premises (--limit), or full runs") from err

    def _cluster_sums(self, results: dict, path: Path, name: str):
        """A run's per-premise sums from its predictions and its dataset rows (``unqover.measure.nli_ranking``);
        the leaderboard has checked that they give the run's recorded numbers (``unqover.jobs.compare``)."""

        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        from unqover.measure.nli_instances import (
            cluster_sums,
            instance_values,
            validate_nli_columns,
        )
        from unqover.measure.nli_ranking import NliRunSums
        from unqover.predictions import read_predictions
        from unqover.probes.nli_rows import load_nli_rows
        from unqover.results import predictions_of, split_results

        result, provenance = split_results(results)
        scores, recorded = read_predictions(predictions_of(path, provenance))
        dataset = provenance.get("dataset") or recorded.get("dataset") or {}
        source, config = dataset.get("source"), dataset.get("config") or "synthetic"
        rows, _ = load_nli_rows(self.name, source if source and Path(str(source)).exists() else None, config)
        position = pc.index_in(scores["id"], value_set=rows["id"])
        if position.null_count:
            raise UnqoverError(f"{name}: some prediction ids are not in the {config!r} NLI rows")
        rows = rows.take(position.cast(pa.int64()))
        columns = validate_nli_columns(
            scores["score_1"].to_numpy(),
            scores["score_2"].to_numpy(),
            rows["occupation_gender"].to_pylist(),
            rows["cluster"].to_pylist(),
        )
        sums = cluster_sums(columns, instance_values(columns, float(result.get("margin", 0.1))))
        selection = provenance.get("selection") or result.get("selection") or {}
        seed = int((result.get("bootstrap") or {}).get("seed") or 0)
        labels = np.asarray(columns.cluster_labels).astype(str)
        return NliRunSums(sums, labels, exact=selection.get("limit") is None, seed=seed)

    def measure_file(
        self,
        predictions: Path,
        run: RunOptions,
        split: str | None = None,
        dataset: Mapping | None = None,
        **options,
    ):
        """NLI predictions (id, score_1, score_2) against their dataset rows; no neutral rate (not in the file).

        The predictions must score every row of the dataset config, or every row of the ``--limit`` selection their
        provenance records (a quick run's estimate of the full dataset); anything else is refused, since a part of
        the rows chosen some other way (say, the first half, without the male occupations) is no sample the
        measures can estimate from."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        from unqover.predictions import read_predictions
        from unqover.probes.nli_rows import check_coverage, load_nli_rows, measure_nli, stratum_population

        scores, provenance = read_predictions(predictions)
        recorded = dict(dataset) if dataset is not None else provenance.get("dataset", {})
        config = run.config or recorded.get("config") or "synthetic"
        source = run.dataset or recorded.get("source")
        rows, _ = load_nli_rows(self.name, source if source and Path(str(source)).exists() else None, config)
        quick = (provenance.get("selection") or {}).get("limit") is not None
        population = stratum_population(rows) if quick else None
        position = pc.index_in(scores["id"], value_set=rows["id"]).to_numpy(zero_copy_only=False)
        if pc.is_null(pc.index_in(scores["id"], value_set=rows["id"])).to_numpy(zero_copy_only=False).any():
            raise UnqoverError(f"{predictions}: some prediction ids are not in the {config!r} NLI rows")
        check_coverage(rows, scores, provenance.get("selection"), f"{predictions}", config)
        rows = rows.take(pa.array(position.astype(np.int64)))
        return measure_nli(rows, scores, None, run, provenance.get("selection"), population), provenance

    def check_dataset_configs(self, name: str, configs: Sequence[str] | None) -> list[str]:
        from unqover.hub.nli_configs import check_nli_configs

        return check_nli_configs(configs, name)

    def check_dataset_settings(self, name: str, settings: dict[str, Any]) -> dict[str, Any]:
        """Keep the ``--source`` entries of the natural-text configs (``eec=PATH`` is the emotion dataset's);
        an unknown source name is refused."""
        from unqover.hub.nli_sources import SOURCES

        own = [(key, path) for key, path in settings.get("source") or [] if key != SOURCE_EEC]
        unknown = [key for key, _ in own if key not in SOURCES]
        if unknown:
            raise UnqoverError(
                f"--source {unknown[0]}=...: unknown source; choose from {', '.join(SOURCES)} (NAME=PATH or NAME=hub)"
            )
        return {**settings, "source": own}

    def build_dataset(self, name: str, output: Path, settings: dict[str, Any]):
        from unqover.hub.nli_dataset import build_nli_dataset

        sources = dict(settings.get("source") or [])
        return build_nli_dataset(
            output,
            name=name,
            probe=self.name,
            sources=sources,
            labels=settings.get("labels") or "paper",
            configs=settings["configs"],
            overwrite=settings["overwrite"],
            progress=settings["progress"],
        )

    def table_row(self, results: Mapping) -> dict[str, Any]:
        from unqover.format import number

        result = results["result"]
        return {
            "S": number(result.get("S")),
            "ΔP": number(result.get("delta_P")),
            "B (NLI)": number(result.get("B")),
        }

    def table_text(self, results: Mapping) -> dict[str, str]:
        from unqover.format import POINTS_DIGITS

        return table_text(
            self.table_row(results), POINTS_DIGITS
        )  # percentage points, as the NLI report prints them


#: the NLI probe's definition (the registry loads it by name)
NLI_PROBE = NLIProbe()
