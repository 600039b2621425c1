"""What a finished run means for its probe: the results part of a definition.

A definition (:class:`unqover.probes.base.ProbeDefinition`) holds its part as ``probe.results``, a
:class:`ProbeResults` bound to it: how a run's results render (reports, summary, the Space's table), which headline
numbers every surface shows and checks, how two runs compare and several rank, and how a predictions file is
measured again (``unqover measure``, the check of every run a surface reads back). The base behaviour is here;
each probe's own is a subclass beside its definition (the UnQover probes': :mod:`unqover.probes.unqover_results`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from unqover.errors import UnqoverError
from unqover.probes.base import (
    ComparedRuns,
    Comparison,
    LeaderboardNumbers,
    ProbeDefinition,
    Ranking,
    ReportWords,
    RunOptions,
    table_text,
)


class ProbeResults:
    """A definition's results part: what reading a finished run's results and predictions means for its probe
    (``probe.results``). It reads the definition's data (``name``, ``measure_options``, ...) through
    :attr:`probe`; a probe's own behaviour is a subclass."""

    #: the report module whose functions :meth:`reports`, :meth:`quick_run_line` and :meth:`summary` call (None:
    #: the part writes those methods itself)
    words: ReportWords | None = None

    def __init__(self, probe: ProbeDefinition) -> None:
        self.probe = probe  # the definition this part belongs to

    def reports(self, results: dict) -> dict[str, str]:
        """File name -> text of the reports written beside results.json."""
        if self.words is None:
            raise NotImplementedError
        return {
            "report.md": self.words(self.words.markdown)(results),
            "report.html": self.words(self.words.html)(results),
        }

    def quick_run_line(self, result: dict) -> str | None:
        """What a quick run's numbers come from, in words (None for a full run)."""
        return None if self.words is None else self.words("quick_run_line")(result)

    def highlights(self, results: dict) -> list[dict]:
        """The rows worth a table beside the report (e.g. the most biased occupations), as records."""
        return []

    def summary(self, result, top: int = 10) -> str:
        """The text printed at the end of a run or by ``unqover measure`` (``result``: the measure's result)."""
        if self.words is None:
            raise NotImplementedError
        return self.words(self.words.summary)(result.to_dict())

    def headline(self, results: dict) -> dict[str, tuple[float | None, list | None]]:
        """The numbers ``unqover compare`` sets side by side: name -> (value, interval)."""
        raise NotImplementedError

    def checked_result(self, result: Mapping) -> Mapping:
        """The part of a run's ``result``, beyond :meth:`headline`, that measuring its predictions again must give
        exactly (:func:`unqover.jobs.compare.verify_run`): every number a comparison or a leaderboard prints of it.
        Default: nothing more than the headline."""
        return {}

    def headline_names(self) -> list[str]:
        """The names of :meth:`headline`'s numbers known before any run (a sweep checks its
        ``--leaderboard-metric`` against them before the first model loads); empty where they depend on the
        results. The default: the names a results file without numbers has."""
        try:
            return list(self.headline({"result": {}, "provenance": {}}))
        except (KeyError, TypeError, ValueError, NotImplementedError):
            return []

    def headline_text(self, results: dict) -> dict[str, str]:
        """Each number of :meth:`headline` in the words every surface shows it with (the terminal, the reports, the
        summary of several probes, the Space, published notes): the value beside its interval
        (``0.2280 [0.2010, 0.2550]``), or words saying which value the interval is for, or why a value is declined.
        The default prints the value beside its interval."""
        from unqover.format import fmt_estimate

        return {
            name: fmt_estimate(value, interval) for name, (value, interval) in self.headline(results).items()
        }

    def headline_meanings(self, results: dict) -> dict[str, str]:
        """What each of :meth:`headline`'s numbers means, in one line (a model card's bias section); the default:
        no words (a probe's part says them)."""
        return {}

    def compare(self, runs: ComparedRuns) -> Comparison:
        """``unqover compare``: two runs of this probe (:class:`ComparedRuns`).

        The default sets :meth:`headline` of both runs side by side with the shifts of the values, without
        intervals; runs of different dataset configs are refused, different row selections get a warning.
        """
        from unqover.measure.run_shifts import shift_of
        from unqover.report.compare import compare_headlines
        from unqover.results import dataset_of, split_results

        a, b, (name_a, name_b) = runs.a, runs.b, runs.names
        (_, prov_a), (_, prov_b) = split_results(a), split_results(b)
        if prov_a.get("probe") != prov_b.get("probe"):
            raise UnqoverError(f"{name_a} ran {prov_a.get('probe')} and {name_b} ran {prov_b.get('probe')}")
        config = [dataset_of(p)["config"] for p in (prov_a, prov_b)]
        if None not in config and config[0] != config[1]:
            raise UnqoverError(f"the runs measured different dataset configs: {config[0]!r}, {config[1]!r}")
        head_a, head_b = self.headline(a), self.headline(b)
        warnings = (
            [] if prov_a.get("selection") == prov_b.get("selection") else ["the runs kept different rows"]
        )
        words = (self.headline_text(a), self.headline_text(b))
        shifts = {
            key: shift_of(head_a.get(key, (None,))[0], head_b.get(key, (None,))[0])
            for key in dict.fromkeys([*head_a, *head_b])
        }
        text = compare_headlines(head_a, head_b, shifts, (name_a, name_b), warnings, words)
        data = {
            "probe": prov_a.get("probe"),
            "names": [name_a, name_b],
            "shifts": {
                key: {"value": value, "interval": None, "p_value": None, "paired": None}
                for key, value in shifts.items()
            },
            "warnings": warnings,
        }
        return Comparison(data, text, text + "\n")

    def leaderboard_numbers(self, ranking: Ranking) -> LeaderboardNumbers:
        """``unqover leaderboard``: each run's ``ranking.metric`` (``value``, ``interval`` at the confidence
        ``ranking.each``, ``groups``) and, for every pair i < j, the shift run j − run i (``value``, ``interval`` at
        the confidence ``ranking.pairs``, ``p_value``, ``method``). The default refuses: a run's recorded intervals are at its own level,
        and a probe that cannot recompute them at another must not have them read as simultaneous."""
        raise UnqoverError(
            f"`unqover leaderboard` cannot recompute the {self.probe.name} probe's intervals at a simultaneous level (its "
            "runs record their own 95% intervals only); compare two of its runs with `unqover compare`"
        )

    def check_measure_options(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """``unqover measure``'s options for this probe (the definition's ``measure_options``): defaults filled in,
        another probe's refused."""
        own = {option.dest: option.default for option in self.probe.measure_options}
        unknown = sorted(k for k, v in given.items() if v is not None and k not in own)
        if unknown:
            names = ", ".join("--" + k.replace("_", "-") for k in unknown)
            raise UnqoverError(f"{names} do(es) not apply to {self.probe.name} predictions")
        return {k: (given[k] if given.get(k) is not None else default) for k, default in own.items()}

    def measure_file(
        self, predictions: Path, run: RunOptions, dataset: Mapping | None = None, **options
    ) -> tuple[Any, dict]:
        """``unqover measure``: the result of a predictions file against its dataset, and its provenance
        (``run.dataset``/``run.config`` and a ``split`` option override what the file records; ``dataset``, a dataset record as provenance writes it, replaces the
        file's own: a run's results' record, as the Space rewrites it to its own rows; the other ``options`` go to
        the measure)."""
        raise UnqoverError(f"`unqover measure` does not read {self.probe.name} predictions")

    @property
    def measures_files(self) -> bool:
        """Whether this probe measures a predictions file (:meth:`measure_file`), so that a run's recorded numbers
        can be measured again from its predictions (:mod:`unqover.jobs.compare`)."""
        return type(self).measure_file is not ProbeResults.measure_file

    def recorded_measure(self, result: Mapping) -> tuple[RunOptions, dict[str, Any]]:
        """The run options (seed, resamples) and :meth:`measure_file` options that measured ``result``, as it
        records them: measuring its predictions again with them gives its numbers again. Default: the seed and
        resamples of its ``bootstrap`` (else its ``permutation``'s seed), and each of the definition's
        ``measure_options`` as the result records it under its own name, else its default."""
        boot = result.get("bootstrap") if isinstance(result.get("bootstrap"), Mapping) else {}
        permutation = result.get("permutation") if isinstance(result.get("permutation"), Mapping) else {}
        seed = boot.get("seed", permutation.get("seed"))
        resamples = boot.get("n_resamples", 0)
        options = {o.dest: result.get(o.dest, o.default) for o in self.probe.measure_options}
        return RunOptions(seed=_whole(seed, 0), resamples=_whole(resamples, 0), progress=False), options

    def table_row(self, results: Mapping) -> dict[str, Any]:
        """The Space's results table: this run's values of the definition's ``table_columns`` (numbers or text)."""
        return {}

    def table_text(self, results: Mapping) -> dict[str, str]:
        """:meth:`table_row` as the Space's results table shows it: each number printed as the reports print it
        (:data:`unqover.format.DIGITS` decimals, a missing value as "—"), text as it is. A probe whose
        numbers have another unit (the NLI probe's percentage points) prints them with its reports' digits."""
        from unqover.format import DIGITS

        return table_text(self.table_row(results), DIGITS)


def _whole(value: object, default: int) -> int:
    """``value`` when it is a whole number >= 0 (not a bool), else ``default``."""
    fits = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return value if fits else default
