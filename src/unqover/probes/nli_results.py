"""What a finished run of the NLI gender-occupation probe means: its reports and highlights, the headline S, ΔP
and B in percentage points, leaderboards from the runs' per-premise sums, and measuring a predictions file again
(the results part of :class:`unqover.probes.nli.NLIProbe`, ``probe.results``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from unqover.errors import UnqoverError
from unqover.probes.base import LeaderboardNumbers, Ranking, ReportWords, RunOptions, table_text
from unqover.probes.readings import ProbeResults


class NLIResults(ProbeResults):
    """The NLI probe's results: its report module's words, S / ΔP / B with premise-cluster intervals."""

    words = ReportWords("unqover.report.nli", "nli_markdown", "nli_html", "nli_summary")

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

    def headline_meanings(self, results: dict) -> dict[str, str]:
        """The reports' labels of S, ΔP and B (``unqover.report.nli.NLI_HEADLINE_LABELS``), in percentage points."""
        from unqover.report.nli import NLI_HEADLINE_LABELS

        labels = dict(NLI_HEADLINE_LABELS)
        return {
            name: labels[name].partition(": ")[2] + ", in percentage points"
            for name in self.headline(results)
        }

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
        rows, _ = load_nli_rows(
            self.probe.name, source if source and Path(str(source)).exists() else None, config
        )
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

    def measure_file(self, predictions: Path, run: RunOptions, dataset: Mapping | None = None, **options):
        """NLI predictions (id, score_1, score_2) against their dataset rows; no neutral rate (not in the file).

        The predictions must score every row of the dataset config, or every row of the ``--limit`` selection their
        provenance records (a quick run's estimate of the full dataset); anything else is refused, since a part of
        the rows chosen some other way (say, the first half, without the male occupations) is no sample the
        measures can estimate from."""
        from unqover.predictions import read_predictions

        options.pop("split", None)  # the probe's dataset has one split: the file's

        scores, provenance = read_predictions(predictions)
        return self.measure_scores(scores, provenance, run, f"{predictions}", dataset), provenance

    def measure_scores(
        self, scores, provenance: Mapping, run: RunOptions, where: str, dataset: Mapping | None = None
    ):
        """The measures of NLI scores (id, score_1, score_2) against the rows of the dataset their provenance
        records (or ``dataset``), every row or the quick run's selection (:meth:`measure_file`)."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        from unqover.probes.nli_rows import check_coverage, load_nli_rows, measure_nli, stratum_population

        recorded = dict(dataset) if dataset is not None else provenance.get("dataset", {})
        config = run.config or recorded.get("config") or "synthetic"
        source = run.dataset or recorded.get("source")
        rows, _ = load_nli_rows(
            self.probe.name, source if source and Path(str(source)).exists() else None, config
        )
        quick = (provenance.get("selection") or {}).get("limit") is not None
        population = stratum_population(rows) if quick else None
        position = pc.index_in(scores["id"], value_set=rows["id"]).to_numpy(zero_copy_only=False)
        if pc.is_null(pc.index_in(scores["id"], value_set=rows["id"])).to_numpy(zero_copy_only=False).any():
            raise UnqoverError(f"{where}: some prediction ids are not in the {config!r} NLI rows")
        check_coverage(rows, scores, provenance.get("selection"), where, config)
        rows = rows.take(pa.array(position.astype(np.int64)))
        return measure_nli(rows, scores, None, run, provenance.get("selection"), population)

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
