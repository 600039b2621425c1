"""What a finished run of an UnQover probe means: its reports, headline, comparisons, leaderboards and measuring
a predictions file again (the results part of :class:`unqover.probes.unqover.UnqoverProbe`, ``probe.results``).

Predictions are read against the dataset rows their results record (:meth:`UnqoverResults.recorded_rows`: a
built or Hub dataset, rows generated from word lists found by their content, or a custom probe's file): a quick
run's give estimates of the full-dataset values, and two quick runs' shifts get intervals from both runs'
predictions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from unqover.errors import UnqoverError
from unqover.probes import base
from unqover.probes.readings import ProbeResults

if TYPE_CHECKING:
    import pyarrow as pa

#: a full run's interval is for its bias-corrected μ, not for μ: the Space's results table says which
INTERVAL_ESTIMATE = "μ: the interval's estimate"


class UnqoverResults(ProbeResults):
    """The UnQover probes' results: the reports of :mod:`unqover.report`, the headline μ, η, δ, ε, comparisons
    and leaderboards recomputed from the runs' predictions and dataset rows."""

    def heatmap_layout(self, results: dict, most: int) -> dict:
        """The subject heat map's rows and columns (``most`` subjects at most), which the measure orders."""
        from unqover.measure.layout import subject_heatmap
        from unqover.results import split_results

        return subject_heatmap(split_results(results)[0], most)

    def reports(self, results: dict) -> dict[str, str]:
        from unqover.report.html import MAX_HEATMAP_ROWS, html_report
        from unqover.report.markdown import markdown_report

        heatmap = self.heatmap_layout(results, MAX_HEATMAP_ROWS)
        return {"report.md": markdown_report(results), "report.html": html_report(results, heatmap=heatmap)}

    def quick_run_line(self, result: dict) -> str | None:
        from unqover.report.markdown import sample_line

        return sample_line(result)

    def summary(self, result, top: int = 10) -> str:
        from unqover.report.text import summary

        return summary(result, top=top)

    def headline(self, results: dict) -> dict:
        result = results["result"]
        intervals = result.get("intervals") or {}
        names = ("mu", "eta", "positional_error", "attributive_error")
        return {name: (result.get(name), intervals.get(name)) for name in names}

    def headline_meanings(self, results: dict) -> dict[str, str]:
        """:data:`unqover.report.markdown.HEADLINE_MEANINGS`."""
        from unqover.report.markdown import HEADLINE_MEANINGS

        return {name: HEADLINE_MEANINGS[name] for name in self.headline(results)}

    def checked_result(self, result: Mapping) -> Mapping:
        """All of the result but what its predictions do not give: the run's warnings (its scorer's, beside the
        measure's) and the quick run's options as given (``limit``, ``sample``: its provenance's selection)."""
        checked = {k: v for k, v in result.items() if k != "warnings"}
        if isinstance(checked.get("sample"), Mapping):
            checked["sample"] = {k: v for k, v in checked["sample"].items() if k not in ("limit", "sample")}
        return checked

    def headline_text(self, results: dict) -> dict[str, str]:
        """As the reports print them (:func:`unqover.report.markdown.fmt_headline`): a quick run's estimate beside
        its interval; a full run's value over all groups, then the interval beside its own (bias-corrected)
        estimate; a declined value with the reason."""
        from unqover.report.markdown import headline
        from unqover.results import split_results

        result, _ = split_results(results)
        texts = {row["key"]: row["text"] for row in headline(result)}
        return {name: texts[name] for name in self.headline(results)}

    def compare(self, runs: base.ComparedRuns) -> base.Comparison:
        """Two UnQover runs in full: the headline with both runs' intervals, the subjects and the subject–attribute
        and cluster cells that moved (the numbers :func:`unqover.measure.run_shifts.comparison_numbers`, the words
        :func:`unqover.report.compare.compare_results`, which refuses runs of different datasets, configs, splits or
        modes). With ``runs.paths``, a quick run's shifts get intervals and
        p-values from both runs' predictions (:func:`unqover.measure.run_shifts.shifts_between`)."""
        from unqover.measure.run_shifts import comparison_numbers, shifts_between
        from unqover.report.compare import compare_markdown, compare_results, compare_text
        from unqover.results import split_results

        def scores_of(results: Mapping, predictions: Sequence[Path]) -> tuple[pa.Table, list]:
            dataset = (results.get("provenance") or {}).get("dataset") or {}
            return self.compared_scores(dict(dataset), [Path(p) for p in predictions])

        a, b, (name_a, name_b), top = runs.a, runs.b, runs.names, runs.top
        results = (split_results(a)[0], split_results(b)[0])

        def compared(shifts: Mapping | None, why: str | None) -> dict:
            numbers = comparison_numbers(*results, shifts=shifts, top=top)
            return compare_results(a, b, name_a, name_b, numbers=numbers, no_shifts=why)

        comparison = compared(None, runs.no_shifts)  # refuses runs that are not comparable
        if runs.paths is not None:
            shifts, why = shifts_between(runs.paths, a, b, tuple(comparison["names"]), scores_of, top=top)
            if shifts is not None or why is not None:
                comparison = compared(shifts, why)
        return base.Comparison(comparison, compare_text(comparison), compare_markdown(comparison))

    def recorded_rows(
        self,
        recorded: dict,
        run: base.RunOptions,
        split: str | None = None,
        what: object = "the file",
        all_columns: bool = False,
    ) -> tuple[pa.Table, str | None, str | None, str]:
        """The dataset rows a provenance's ``dataset`` records (``run.dataset`` and ``run.config`` override it):
        rows (``ROW_COLUMNS`` when loaded from a dataset, unless ``all_columns``), source, config and split."""
        from unqover.hub.load import load_rows
        from unqover.probes.unqover_rows import ROW_COLUMNS

        config = run.config or recorded.get("config")
        split = split or recorded.get("split") or "test"
        source = run.dataset or recorded.get("source")
        generator = recorded.get("generator") or {}
        generated = generator.get("word_lists") or (
            not generator and str(source or "").startswith("generated from ")
        )
        if run.dataset is None and generated:  # from word lists found by their content (or recorded folder)
            from unqover.probes.word_list_source import recorded_generated_rows

            rows = recorded_generated_rows(self.probe.name, recorded, config, what)
        elif run.dataset is None and generator:  # a custom probe: its rows come from the file given now
            rows, about = self.probe.rows(base.RunOptions(), dict(self.probe.settings), config)
            source = about["source"]
        else:
            if not source or not config:
                raise UnqoverError(f"{what} does not record its dataset; pass --dataset and --config")
            rows = load_rows(source, config, split, columns=None if all_columns else ROW_COLUMNS)
        return rows, source, config, split

    def leaderboard_numbers(self, ranking: base.Ranking) -> base.LeaderboardNumbers:
        """Quick runs' estimates recomputed from their predictions and the dataset rows at the simultaneous level,
        full runs' exact values, and the pairwise shifts (two quick runs as ``unqover compare`` computes them)
        (:func:`unqover.measure.leaderboard.leaderboard_analysis`)."""
        from unqover.measure.leaderboard import leaderboard_analysis
        from unqover.results import predictions_of, split_results

        runs = ranking.runs
        predictions = [
            predictions_of(p, split_results(r)[1]) for p, r in zip(ranking.paths, runs, strict=True)
        ]
        dataset = (runs[0].get("provenance") or {}).get("dataset") or {}
        rows, scored = self.compared_scores(dict(dataset), predictions)
        return leaderboard_analysis(
            rows, scored, runs, ranking.names, ranking.metric, each=ranking.each, pairs=ranking.pairs
        )

    def compared_scores(self, dataset: dict, predictions: list[Path]) -> tuple[pa.Table, list]:
        """For ``unqover compare``: the dataset rows a provenance's ``dataset`` records, loaded once, and for each
        predictions file its score_1, score_2 and scored-row mask over those rows (matched by ``id``)."""
        from unqover.probes.unqover_rows import scores_over

        rows, source, config, split = self.recorded_rows(dataset, base.RunOptions(), what=predictions[0])
        return rows, scores_over(rows, predictions, f"{source} ({config}/{split})")

    def recorded_measure(self, result: Mapping) -> tuple[base.RunOptions, dict[str, Any]]:
        """The bootstrap's seed and resamples (a quick run's design-based intervals take none: the default), the
        mode, the confidence, and whether incomplete groups were dropped (some were)."""
        run, _ = super().recorded_measure(result)
        boot = result.get("bootstrap") if isinstance(result.get("bootstrap"), Mapping) else {}
        if result.get("sample") is not None:
            run = replace(run, resamples=base.RunOptions.resamples)
        options = {
            "mode": result.get("mode") or "default",
            "confidence": boot.get("confidence") or 0.95,
            "drop_incomplete": bool(result.get("dropped_groups")),
        }
        return run, options

    def measure_file(
        self, predictions: Path, run: base.RunOptions, dataset: Mapping | None = None, **options
    ) -> tuple[Any, dict]:
        """Join a predictions file to its dataset rows by ``id`` and measure. Predictions that cover part of the
        dataset (a quick run, or `unqover sample` ids scored elsewhere) give estimates of the full-dataset values.
        ``dataset``: the dataset record to measure against instead of the file's."""
        from unqover.hub.load import source_name
        from unqover.predictions import (
            UNQOVER_ROW_FIELDS,
            check_logged_documents,
            logged_documents,
            read_predictions,
        )
        from unqover.probes.result_identity import subset_selection
        from unqover.probes.unqover_rows import measure_joined_scores

        scores, provenance = read_predictions(predictions)
        if scores.num_rows == 0:
            raise UnqoverError(f"the predictions file {predictions} has no rows: there is nothing to measure")
        recorded = dict(dataset) if dataset is not None else provenance.get("dataset", {})
        # lm-eval's logged samples: their documents are checked against the rows of their ids
        logged = predictions.suffix == ".jsonl"
        rows, source, config, split = self.recorded_rows(
            recorded, run, options.pop("split", None), predictions, all_columns=logged
        )
        if logged:
            check_logged_documents(predictions, logged_documents(predictions), rows, UNQOVER_ROW_FIELDS)
        where = f"{source} ({config}/{split})"
        result = measure_joined_scores(
            rows, scores, provenance, where, resamples=run.resamples, seed=run.seed, **options
        )
        dataset = {**recorded, "source": source_name(source), "config": config, "split": split}
        if run.dataset is None and (recorded.get("generator") or {}).get("probe_file"):
            dataset["generator"] = {**recorded["generator"], "probe_file": source}  # the file measured with
        provenance = {**provenance, "dataset": dataset}
        sample = getattr(result, "sample", None) or {}
        if sample.get("kind") == "subset":  # not the selection recorded (kept as "drawn_from"): part of it
            drawn = provenance.get("selection")
            provenance["selection"] = subset_selection(sample["why"], {"drawn_from": drawn})
        return result, provenance

    def table_row(self, results: Mapping) -> dict[str, Any]:
        from unqover.format import fmt_count, fmt_percent, number
        from unqover.report.markdown import headline
        from unqover.results import sample_of

        result = results["result"]
        mu = next(row for row in headline(result) if row["key"] == "mu")
        interval = mu.get("interval") or [None, None]
        sample = sample_of(result)
        if sample is not None:
            groups = f"{fmt_count(sample['groups'])} of {fmt_count(sample['of'])} groups ({fmt_percent(sample.get('fraction'))})"
        else:
            total = number(result.get("num_groups"))
            groups = None if total is None else f"all {fmt_count(total)} groups"
        return {
            "groups": groups,
            "μ": number(result.get("mu")),
            INTERVAL_ESTIMATE: number(mu.get("estimate")),
            "μ low": number(interval[0]),
            "μ high": number(interval[1]),
            "η": number(result.get("eta")),
            "δ": number(result.get("positional_error")),
            "ε": number(result.get("attributive_error")),
        }
