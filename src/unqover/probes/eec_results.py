"""What a finished run of the emotion fill-in probe means: its reports, the headline tests (p-values and Cramér's V),
leaderboards of full runs, and measuring sentence predictions again (the results part of
:class:`unqover.probes.eec.EECProbe`, ``probe.results``; the person probe's extends it)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from unqover.errors import UnqoverError
from unqover.probes.base import LeaderboardNumbers, Ranking, ReportWords, RunOptions
from unqover.probes.readings import ProbeResults

if TYPE_CHECKING:
    import pyarrow as pa


class EECResults(ProbeResults):
    """The emotion probe's results: each question's choices ranked from the sentence scores and measured with the
    run's scoring mode and length rule (its definition's ``load_questions``, ``select``, ``choice_rows`` and
    ``rank_and_measure``, which the person probe replaces)."""

    words = ReportWords("unqover.report.eec", "eec_markdown", "eec_html", "eec_summary")
    #: the name, in its report module, of the one-line meanings of its numbers by kind (``"<test>: <kind>"``)
    meanings = "EMOTION_MEANINGS"

    def headline(self, results: dict) -> dict:
        """Per test (race, gender): its p-value (permutation, else asymptotic) and Cramér's V with its interval."""
        from unqover.report.eec import emotion_headline

        return emotion_headline(results["result"])

    def headline_meanings(self, results: dict) -> dict[str, str]:
        """Each test's numbers in the words of its kind, the test named (race or gender)."""
        kinds = self.words(self.meanings)
        meanings = {}
        for key in self.headline(results):
            test, _, kind = key.partition(": ")
            if kind in kinds:
                meanings[key] = kinds[kind].format(test=test)
        return meanings

    def headline_names(self) -> list[str]:
        """Each test's p-value and Cramér's V (the tests are fixed: race, gender)."""
        from unqover.measure.emotion import TESTS

        return [f"{test}: {what}" for test in TESTS for what in ("p-value", "Cramér's V")]

    def headline_text(self, results: dict) -> dict[str, str]:
        """As the reports print them (:func:`unqover.report.eec.headline_words`)."""
        from unqover.report.eec import headline_words

        return headline_words(results["result"], self.headline(results))

    def leaderboard_numbers(self, ranking: Ranking) -> LeaderboardNumbers:
        """A test's Cramér's V of full runs: over every person of the set it is the model's exact value (interval
        [v, v]; pairs: exact differences, :func:`unqover.measure.leaderboard.exact_shift`). Quick runs are refused:
        V from a sample of persons overstates the full set's and no interval of it covers that
        (:mod:`unqover.measure.emotion`); a p-value is no size of bias."""
        from unqover.format import number
        from unqover.measure.leaderboard import exact_shift
        from unqover.results import split_results

        test, _, what = ranking.metric.partition(": ")
        if what != "Cramér's V":
            raise UnqoverError(
                f"--metric {ranking.metric!r}: a p-value says whether there is bias, not how much; rank by a test's "
                'Cramér\'s V ("gender: Cramér\'s V" or "race: Cramér\'s V")'
            )
        numbers = []
        for results, name in zip(ranking.runs, ranking.names, strict=True):
            result, provenance = split_results(results)
            if (provenance.get("selection") or result.get("selection") or {}).get("limit") is not None:
                raise UnqoverError(
                    f"{name} is a quick run: Cramér's V from a sample of persons overstates the full set's and has "
                    f"no interval that covers it, so the {self.probe.name} leaderboard ranks full runs (no --limit)"
                )
            found = (result.get("tests") or {}).get(test) or {}
            value = number(found.get("cramers_v"))
            if value is None:
                raise UnqoverError(f"{ranking.metric} of {name} has no value (the {test} test was not made)")
            persons = sum(int(n) for n in (found.get("num_persons") or {}).values())
            numbers.append({"value": value, "interval": [value, value], "groups": persons})
        shifts = {
            (i, j): exact_shift(numbers[i]["value"], numbers[j]["value"])
            for i in range(len(numbers))
            for j in range(i + 1, len(numbers))
        }
        return numbers, shifts

    def recorded_measure(self, result: Mapping) -> tuple[RunOptions, dict[str, Any]]:
        """The bootstrap's resamples, the seed, and the permutations of its tests (none: 0)."""
        run, _ = super().recorded_measure(result)
        permutation = result.get("permutation") if isinstance(result.get("permutation"), Mapping) else {}
        return run, {"permutations": permutation.get("n_permutations") or 0}

    def measure_file(self, predictions: Path, run: RunOptions, dataset: Mapping | None = None, **options):
        """Sentence predictions (id, question_id, choice, log_likelihood, tokens) against their questions, ranked
        and measured with the run's scoring mode and length rule (as its provenance records them)."""
        from unqover.predictions import LM_EVAL_SENTENCE_SCHEMA, read_predictions
        from unqover.probes.eec_rows import SENTENCE_SCORE_SCHEMA, without_token_counts

        options.pop("split", None)  # the probe's dataset has one split: the file's
        logged = None
        if predictions.suffix == ".jsonl":  # lm-eval's logged samples: no token counts
            table, provenance = read_predictions(predictions, LM_EVAL_SENTENCE_SCHEMA)
            table, logged = without_token_counts(table), predictions
        else:
            table, provenance = read_predictions(predictions, SENTENCE_SCORE_SCHEMA)
        if dataset is not None:
            provenance = {**provenance, "dataset": dict(dataset)}
        return self.measure_sentences(table, provenance, run, str(predictions), logged=logged, **options)

    def measure_sentences(
        self,
        table: pa.Table,
        provenance: dict,
        run: RunOptions,
        what: str,
        logged: Path | None = None,
        **options,
    ):
        """Sentence scores (id, question_id, choice, log_likelihood, tokens) against their questions, ranked and
        measured with the scoring mode and length rule their provenance records; ``logged``: lm-eval's samples
        file, whose documents must hold their questions' choice sentences."""
        import pyarrow.compute as pc

        probe = self.probe
        recorded = provenance.get("dataset", {})
        source = run.dataset or recorded.get("source")
        scoring = provenance.get("scoring") or {}
        settings = probe.check_settings(
            {k: options.get(k) for k in probe.settings}
            | {"scoring": scoring.get("mode"), "length_rule": scoring.get("length_rule")}
        )
        paper = probe.paper_mode((provenance.get("model") or {}).get("family"), settings)
        questions, _ = probe.load_questions(
            source if source and Path(str(source)).exists() else None,
            run.config or recorded.get("config"),
            paper,
        )
        selection = provenance.get("selection") or {}
        if selection.get("limit") is not None:
            questions, _ = probe.select(questions, selection["limit"], selection.get("seed", 0))
        if logged is not None:
            from unqover.predictions import check_logged_documents, logged_documents
            from unqover.probes.eec_rows import CHOICE_FIELDS, with_sentences

            expected = with_sentences(probe, questions)
            check_logged_documents(logged, logged_documents(logged), expected, CHOICE_FIELDS)
        sentences = probe.choice_rows(questions)
        position = pc.index_in(sentences["id"], value_set=table["id"])
        if position.null_count:
            from unqover.predictions import lm_eval_subset

            # the tests need every question: name lm-eval's --limit where it cut some out
            why = lm_eval_subset(provenance)
            hint = (
                f" ({why}): run the task without --limit (its _sample task is the quick run)" if why else ""
            )
            raise UnqoverError(f"{what} does not score every choice sentence of its questions{hint}")
        scores = table.take(position).rename_columns(["id", "question_id", "choice", "score_1", "score_2"])
        result, _ = probe.rank_and_measure(
            questions, sentences, scores, run, settings, selection or None, paper
        )
        return result, provenance
