"""Benchmark: do quick runs' intervals cover the full-dataset values? A simulation on the real UnQover rows.

    python scripts/bench_quick_runs.py                                   # gender and religion, 20 seeds
    python scripts/bench_quick_runs.py --datasets religion --seeds 5
    python scripts/bench_quick_runs.py --budgets gender=0.5%,1.5% --budgets religion=500,0.2 --output quick.md

A synthetic model plants bias in the scores of every row of a dataset (probabilities: the sigmoid of a logit), so
the full-set values of the headline numbers δ (positional_error), ε (attributive_error), μ and η are known. Then,
for each budget and seed, the groups of a quick run are drawn with the library's design
(``unqover.scoring.sampling.selected_groups``) and measured as a quick run would be (``measure_paired`` with ``observed``,
the same call ``unqover_bias(rows, ..., observed=row_mask)`` makes after pairing; the two are checked to agree
once per dataset). For each headline number the table gives ``coverage / mean width (declined)``: the fraction of
the seeds whose 95% interval holds the full-set value, the interval's mean width, and how many seeds declined it.

Scenarios (logit of subject k's score in a row: ``affinity(k, attribute) * polarity factor + first-mention bonus
+ polarity-free preference + noise``; cell effects and row noise are Student-t(3), i.e. heavy-tailed):

* none       -- no bias: noise only.
* weak       -- weak subject x attribute affinities (half of the cells are zero).
* strong     -- strong affinities.
* sparse     -- a few cells (5%) with very strong affinities, the rest zero (μ's maximum picks them out).
* positional -- the first-mentioned subject is favoured, by an amount that varies by template; weak affinities.
* negation   -- the negated question does not flip the association (it keeps 70% of it, with the same sign), and
                subjects have a preference that ignores the question; moderate affinities.

For gender (μ and η per cluster) the affinity is the subject's gender cluster x occupation plus a small
per-name deviation; for religion (μ and η per subject) it is subject x attribute.

Targets (issue 12): coverage >= 90% for δ, ε, μ and η at about 1.5% of the gender groups, nothing declined at 20%
of the religion groups, mean interval width <= 0.25 at the larger budget.

The tables and compares (issue 20): for every table (γ(x, a), η(x, a), γ(x), γ(cluster, a)) the coverage of the cell
intervals by the cell's sampled count, the share of cells with an interval and the listed "most biased" pairs that
cover (targets: >= 93% in every count bin, >= 90% of the listed pairs); and, for the scenarios in
``COMPARE_SCENARIOS``, paired compares of model A against B (A's effects x ``DEBIASED``, the same noise), first both
on the larger budget's sample, then A on the smaller budget nested in B's (target: >= 90% coverage, narrower than
the two runs' own intervals combined).

The cell intervals against today's (issue 32): for every table, per bin of sampled counts, the coverage and the
median width of the cell intervals (``unqover.measure.bounded``'s default: t with the finite-population correction
where Cochran's rule admits it, betting elsewhere) against those of the betting intervals in every cell (the
construction before issue 32, ``method="betting"``), on the same samples (targets: 93–97.5% in the bins of ≥ 10
values, ≥ 93% in every bin, median widths no larger than the betting ones). ``--compare-scenarios ''`` skips the
compares to save time.
"""

from __future__ import annotations

import argparse
import functools
import shlex
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from unqover.generate.unqover import make_plan
from unqover.lexicon import resolve_word_lists
from unqover.measure.pairing import PairedScores
from unqover.measure.sampled import HEADLINE
from unqover.measure.unqover import UnqoverBias, measure_paired, pair_dataset_rows, unqover_bias
from unqover.probes.unqover_rows import ROW_COLUMNS
from unqover.scoring.sampling import budget, find_groups, selected_groups

SYMBOL = {"positional_error": "δ", "attributive_error": "ε", "mu": "μ", "eta": "η"}
DEFAULT_BUDGETS = {"gender": ["0.5%", "1.5%"], "religion": ["5%", "20%"]}
TARGET_COVERAGE, TARGET_WIDTH = 0.90, 0.25


@dataclass(frozen=True)
class Scenario:
    """A synthetic model: scales of its effects on the logit of each subject's score."""

    name: str
    affinity: float = 0.0  # scale of the (unit, attribute) cell effects, Student-t(3)
    zero_cells: float = 0.0  # fraction of cells with no effect
    subject: float = 0.0  # per-subject deviation inside a cluster (gender), Student-t(3)
    first: tuple[float, float] = (0.0, 0.0)  # first-mention bonus: mean and sd over templates
    negated: float = -1.0  # factor on the affinity in negated questions (-1: the question flips it)
    preference: float = 0.0  # polarity-free subject preference, Student-t(3)
    noise: float = 1.0  # row noise, Student-t(3)


SCENARIOS = [
    Scenario("none"),
    Scenario("weak", affinity=0.2, zero_cells=0.5, subject=0.05),
    Scenario("strong", affinity=1.2, subject=0.2),
    Scenario("sparse", affinity=2.5, zero_cells=0.95, subject=0.1),
    Scenario("positional", affinity=0.2, zero_cells=0.5, subject=0.05, first=(1.5, 0.6)),
    Scenario("negation", affinity=0.6, subject=0.1, negated=0.7, preference=0.5),
]


@dataclass
class Codes:
    """Integer codes of the rows' columns that the synthetic model reads."""

    s1: np.ndarray
    s2: np.ndarray
    subject_cluster: np.ndarray  # per subject code: its cluster code (0 when there are no clusters)
    num_clusters: int
    attribute: np.ndarray
    num_attributes: int
    template: np.ndarray
    num_templates: int
    negated: np.ndarray


def _codes(*columns: pa.ChunkedArray) -> tuple[list[np.ndarray], pa.Array]:
    vocabulary = pc.unique(pa.chunked_array([chunk for column in columns for chunk in column.chunks]))
    return [
        pc.index_in(column, value_set=vocabulary).to_numpy(zero_copy_only=False).astype(np.int64)
        for column in columns
    ], vocabulary


def row_codes(rows: pa.Table) -> Codes:
    (s1, s2), subjects = _codes(rows["subject_1"], rows["subject_2"])
    (attribute,), attributes = _codes(rows["attribute"])
    (template,), templates = _codes(rows["template_id"])
    subject_cluster = np.zeros(len(subjects), dtype=np.int64)
    clusters = pc.unique(
        pa.chunked_array(rows["subject_1_cluster"].chunks + rows["subject_2_cluster"].chunks).drop_null()
    )
    if len(clusters):
        (c1, c2), clusters = _codes(rows["subject_1_cluster"], rows["subject_2_cluster"])
        subject_cluster[s1] = np.where(c1 < 0, 0, c1)
        subject_cluster[s2] = np.where(c2 < 0, 0, c2)
    negated = pc.equal(rows["polarity"], "negated").to_numpy(zero_copy_only=False)
    return Codes(
        s1,
        s2,
        subject_cluster,
        max(len(clusters), 1),
        attribute,
        len(attributes),
        template,
        len(templates),
        negated,
    )


def plant(scenario: Scenario, codes: Codes, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Scores for subject_1 and subject_2 of every row (probabilities)."""
    rng = np.random.default_rng(seed)
    subjects = len(codes.subject_cluster)
    clustered = codes.num_clusters > 1  # bias by cluster x attribute, names deviating a little
    units = codes.num_clusters if clustered else subjects
    cell = scenario.affinity * rng.standard_t(3, (units, codes.num_attributes))
    cell *= rng.random(cell.shape) >= scenario.zero_cells
    if clustered:
        affinity = cell[codes.subject_cluster] + scenario.subject * rng.standard_t(
            3, (subjects, codes.num_attributes)
        )
    else:
        affinity = cell
    preference = scenario.preference * rng.standard_t(3, subjects)
    first = rng.normal(*scenario.first, codes.num_templates)
    factor = np.where(codes.negated, scenario.negated, 1.0)
    rows = len(codes.s1)
    logit_1 = (
        affinity[codes.s1, codes.attribute] * factor
        + first[codes.template]
        + preference[codes.s1]
        + scenario.noise * rng.standard_t(3, rows)
    )
    logit_2 = (
        affinity[codes.s2, codes.attribute] * factor
        + preference[codes.s2]
        + scenario.noise * rng.standard_t(3, rows)
    )
    return 1 / (1 + np.exp(-logit_1)), 1 / (1 + np.exp(-logit_2))


def pair(rows: pa.Table, score_1: np.ndarray, score_2: np.ndarray) -> PairedScores:
    """The pairing ``unqover_bias`` does (default mode)."""
    return pair_dataset_rows(rows, score_1, score_2)


def headline(result: UnqoverBias) -> dict[str, tuple[float, list[float] | None, dict | None]]:
    return {
        name: (getattr(result, name), result.intervals.get(name), result.declined.get(name))
        for name in HEADLINE
    }


def same(a: UnqoverBias, b: UnqoverBias) -> bool:
    """The same headline values, intervals and declines (NaN equal to NaN)."""
    return repr(headline(a)) == repr(headline(b))


def parse_budget(text: str) -> tuple[str, int | None, float | None]:
    """'1.5%' or '0.015' (fractions of the groups) or '500' (a number of groups)."""
    text = text.strip()
    if text.endswith("%"):
        return text, None, float(text[:-1]) / 100
    if "." in text or "e" in text.lower():
        return text, None, float(text)
    return text, int(text), None


@dataclass
class Tally:
    covered: int = 0
    measured: int = 0
    declined: int = 0
    outside: int = 0  # point estimate outside its own interval
    widths: list[float] | None = None
    needed: int | None = None

    def add(self, truth: float, value: float, interval: list[float] | None, declined: dict | None) -> None:
        if self.widths is None:
            self.widths = []
        if interval is None:
            self.declined += 1
            if declined is not None:
                self.needed = declined.get("groups_needed")
            return
        self.measured += 1
        self.covered += int(interval[0] <= truth <= interval[1])
        self.outside += int(not interval[0] <= value <= interval[1])
        self.widths.append(interval[1] - interval[0])

    @property
    def coverage(self) -> float:
        return self.covered / self.measured if self.measured else float("nan")

    @property
    def width(self) -> float:
        return float(np.mean(self.widths)) if self.widths else float("nan")

    def cell(self) -> str:
        if not self.measured:
            return f"— ({self.declined})"
        return f"{self.coverage:.2f} / {self.width:.3f} ({self.declined})"


TABLES = {  # table -> (its key columns, the value whose interval is checked)
    "γ(x, a)": ("gamma", ["subject", "attribute", "attribute_type"], "gamma"),
    "η(x, a)": ("gamma", ["subject", "attribute", "attribute_type"], "eta"),
    "γ(x)": ("subject_gamma", ["subject"], "gamma"),
    "γ(cluster, a)": ("cluster_gamma", ["cluster", "attribute"], "gamma"),
}
COUNT_BINS = [(1, 1), (2, 2), (3, 3), (4, 5), (6, 9), (10, 19), (20, 10**9)]
TARGET_CELLS, TARGET_LISTED = 0.93, 0.90


def count_bin(count: int) -> str:
    for low, high in COUNT_BINS:
        if low <= count <= high:
            return str(low) if low == high else (f"{low}–{high}" if high < 10**9 else f"≥{low}")
    return "0"


@dataclass
class CellTally:
    """Cell intervals of one table: per bin of sampled counts, how many cells have an interval and cover."""

    cells: int = 0  # cells with a full-dataset value
    with_interval: int = 0
    covered: dict[str, int] = field(default_factory=dict)
    measured: dict[str, int] = field(default_factory=dict)
    widths: list[float] = field(default_factory=list)

    def add(self, full: pd.DataFrame, quick: pd.DataFrame, keys: list[str], value: str) -> None:
        keys = [k for k in keys if k in full and k in quick]
        joined = full[[*keys, value]].merge(quick, on=keys, how="left", suffixes=("_full", ""))
        self.cells += len(joined)
        low, high = joined[f"{value}_low"].to_numpy(float), joined[f"{value}_high"].to_numpy(float)
        has = np.isfinite(low) & np.isfinite(high)
        self.with_interval += int(has.sum())
        truth = joined[f"{value}_full"].to_numpy(float)
        covers = (low <= truth) & (truth <= high)
        for count, hit, width in zip(
            joined["count"].to_numpy()[has], covers[has], (high - low)[has], strict=True
        ):
            key = count_bin(int(count))
            self.measured[key] = self.measured.get(key, 0) + 1
            self.covered[key] = self.covered.get(key, 0) + int(hit)
            self.widths.append(float(width))

    def coverage(self, key: str | None = None) -> float:
        measured = sum(self.measured.values()) if key is None else self.measured.get(key, 0)
        covered = sum(self.covered.values()) if key is None else self.covered.get(key, 0)
        return covered / measured if measured else float("nan")

    def worst(self) -> tuple[str, float]:
        return min(
            ((k, self.coverage(k)) for k in self.measured), key=lambda kv: kv[1], default=("—", float("nan"))
        )


@dataclass
class ListTally:
    """The "most biased" list of one budget and scenario over seeds: pairs listed per run, runs listing any,
    listed intervals covering the full-dataset γ(x, a), the same for the pairs a report shows (its first 10),
    and how many of the 10 strongest full-dataset cells were listed."""

    runs: int = 0
    runs_listing: int = 0
    listed: int = 0
    covered: int = 0
    shown: int = 0
    shown_covered: int = 0
    strongest: int = 0  # of the 10 largest |γ| of the full dataset, listed (summed over runs)
    levels: list[float] = field(default_factory=list)

    def add(self, result: UnqoverBias, full_gamma: pd.Series) -> None:
        self.runs += 1
        entries = result.most_biased
        self.runs_listing += bool(entries)
        strongest = set(full_gamma.abs().sort_values(ascending=False).index[:10])
        for rank, entry in enumerate(entries):
            key = (entry["subject"], entry["attribute"])
            low, high = entry["interval"]
            hit = int(low <= full_gamma.loc[key] <= high)
            self.listed += 1
            self.covered += hit
            self.shown += rank < 10
            self.shown_covered += hit if rank < 10 else 0
            self.strongest += key in strongest
        if result.most_biased_rule.get("level") is not None and entries:
            self.levels.append(float(result.most_biased_rule["level"]))

    def row(self) -> list[str]:
        per_run = self.listed / self.runs if self.runs else float("nan")
        return [
            f"{per_run:.1f}",
            f"{self.runs_listing}/{self.runs}",
            f"{self.covered}/{self.listed}" + (f" ({self.covered / self.listed:.3f})" if self.listed else ""),
            f"{self.shown_covered}/{self.shown}",
            f"{self.strongest / self.runs:.1f}" if self.runs else "—",
            f"{np.median(self.levels):.5f}" if self.levels else "—",
        ]


def list_markdown(results: dict[str, dict], seeds: int, flags: list[str]) -> list[str]:
    """The listed pairs per run and their coverage, as Markdown (targets: listed intervals cover >= 90%; with no
    bias at most 5% of the runs list a pair)."""
    lines = [
        "",
        f'The "most biased" list over {seeds} seeds (false-coverage-rate control at q = 5%): pairs listed per run, '
        "runs that list any pair, listed intervals that cover the full-dataset γ(x, a), the same for the first "
        "10 (what the reports show), the 10 strongest full-dataset cells listed per run, and the median level of "
        "the listed intervals (1 − R·q/m).",
        "",
        "| dataset | budget (groups) | scenario | listed per run | runs listing | covered / listed | first 10 "
        "covered | strongest 10 listed | level |",
        "|" + "---|" * 9,
    ]
    for dataset, out in results.items():
        for (_label, n, scenario), tally in out.get("lists", {}).items():
            lines.append(f"| {dataset} | {n:,} | {scenario} | " + " | ".join(tally.row()) + " |")
            where = f"{dataset} {scenario} at {n:,} groups: the list"
            if tally.listed and tally.covered / tally.listed < TARGET_LISTED:
                flags.append(f"{where} covers {tally.covered}/{tally.listed}")
            if scenario == "none" and tally.runs_listing > 0.05 * tally.runs:
                flags.append(
                    f"{where} lists a pair in {tally.runs_listing} of {tally.runs} runs with no bias"
                )
    return lines


COMPARE_SCENARIOS = ("none", "strong", "sparse")
DEBIASED = 0.5  # model B: model A with its cell effects scaled by this (the same noise: a fine-tuned A)
TARGET_SHIFT = 0.90


@dataclass
class ShiftTally:
    """Paired shift intervals of one headline number: coverage over seeds, mean width, and the mean width of the
    unpaired combination of the two runs' own intervals, [low_B − high_A, high_B − low_A]."""

    covered: int = 0
    measured: int = 0
    widths: list[float] = field(default_factory=list)
    combined: list[float] = field(default_factory=list)
    significant: int = 0  # p < 0.05

    def wider(self) -> int:
        """Seeds whose shift interval is wider than the two runs' own intervals together."""
        return int(
            sum(w > c + 1e-12 for w, c in zip(self.widths, self.combined, strict=True) if np.isfinite(c))
        )

    def cell(self) -> str:
        if not self.measured:
            return "—"
        return (
            f"{self.covered / self.measured:.2f} / {np.mean(self.widths):.3f} vs {np.nanmean(self.combined):.3f} "
            f"(p<.05: {self.significant}; wider: {self.wider()}/{self.measured})"
        )


def run_compares(scenario, rows, codes, index, paired_a, full_a, plans, masks, group_of, seeds) -> dict:
    """Model A (the scenario) against model B (its cell effects scaled by ``DEBIASED``, the same noise), A at the
    larger budget and B too (the same sample), then A at the smaller budget (nested samples): paired shifts."""
    weaker = replace(scenario, affinity=scenario.affinity * DEBIASED, subject=scenario.subject * DEBIASED)
    score_1, score_2 = plant(weaker, codes, seed=1000 + index)
    paired_b = pair(rows, score_1, score_2)  # the same rows: the same groups in the same order
    full_b = measure_paired(paired_b, n_resamples=0)
    (_, small), (_, large) = plans[0], plans[-1]
    return {
        (n_a, n_b): compare_budgets(
            paired_a, paired_b, full_a, full_b, (n_a, n_b), masks, group_of, seeds, scenario
        )
        for n_a, n_b in ((large, large), (small, large))
    }


def compare_budgets(paired_a, paired_b, full_a, full_b, budgets, masks, group_of, seeds, scenario) -> dict:
    """Shift intervals over seeds for A at ``budgets[0]`` groups and B at ``budgets[1]`` (the same seed)."""
    from unqover.measure.shifts import cell_shifts, headline_shifts

    small, large = budgets
    truth = {name: getattr(full_b, name) - getattr(full_a, name) for name in HEADLINE}
    gamma_a = full_a.gamma.set_index(["subject", "attribute"])["gamma"]
    gamma_b = full_b.gamma.set_index(["subject", "attribute"])["gamma"]
    cell_truth = (gamma_b - gamma_a).to_dict()
    tallies = {name: ShiftTally() for name in HEADLINE}
    listed = [0, 0]
    for seed in range(seeds):
        obs_a, obs_b = masks[(small, seed)][group_of], masks[(large, seed)][group_of]
        shifts = headline_shifts(paired_a, paired_b, obs_a, obs_b, seeds=(seed, seed))
        run_a = measure_paired(paired_a, n_resamples=0, observed=obs_a, seed=seed)
        run_b = measure_paired(paired_b, n_resamples=0, observed=obs_b, seed=seed)
        for name in HEADLINE:
            shift, tally = shifts[name], tallies[name]
            if shift.interval is None:
                continue
            tally.measured += 1
            tally.covered += int(shift.interval[0] <= truth[name] <= shift.interval[1])
            tally.widths.append(shift.interval[1] - shift.interval[0])
            tally.significant += int(shift.p_value is not None and shift.p_value < 0.05)
            ia, ib = run_a.intervals.get(name), run_b.intervals.get(name)
            tally.combined.append((ia[1] - ia[0]) + (ib[1] - ib[0]) if ia and ib else np.nan)
        cells = cell_shifts(paired_a, paired_b, obs_a, obs_b, seed=seed)
        for k in cells.listed()[:10]:
            key = (paired_a.subjects[cells.subject[k]], paired_a.attributes[cells.attribute[k]])
            listed[0] += 1
            listed[1] += int(cells.low[k] <= cell_truth[key] <= cells.high[k])
    log(
        f"  compare {scenario.name} vs debiased, {small:,} vs {large:,} groups: "
        + "  ".join(f"{SYMBOL[k]} {t.cell()}" for k, t in tallies.items())
        + f"  cells listed {listed[1]}/{listed[0]}"
    )
    return {"budgets": budgets, "truth": truth, "tallies": tallies, "listed": listed}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_dataset(
    lists,
    dataset: str,
    budgets: list[str],
    seeds: int,
    scenarios: list[Scenario],
    compare_scenarios: tuple[str, ...] = COMPARE_SCENARIOS,
    compare_seeds: int | None = None,
) -> dict:
    compare_seeds = seeds if compare_seeds is None else compare_seeds
    timings: dict[str, float] = {}
    start = time.perf_counter()
    rows = pa.Table.from_batches(list(make_plan(lists, dataset, "qa").batches())).select(list(ROW_COLUMNS))
    timings["build rows"] = time.perf_counter() - start
    start = time.perf_counter()
    groups = find_groups(rows)
    codes = row_codes(rows)
    timings["groups and codes"] = time.perf_counter() - start
    log(
        f"{dataset}: {rows.num_rows:,} rows, {groups.num_groups:,} groups ({timings['build rows']:.1f} s to build)"
    )

    plans = []
    for label in budgets:
        label, limit, sample = parse_budget(label)
        plans.append((label, budget(groups.num_groups, limit, sample)))
    start = time.perf_counter()
    masks = {
        (n, seed): selected_groups(groups, n, seed)
        for _, n in plans
        for seed in range(max(seeds, compare_seeds))
    }
    timings["select (per seed and budget)"] = (time.perf_counter() - start) / max(len(masks), 1)

    out = {"rows": rows.num_rows, "groups": groups.num_groups, "budgets": plans, "results": {}, "truth": {}}
    pair_time, sampled_time, sampled_calls = 0.0, 0.0, 0
    for index, scenario in enumerate(scenarios):
        start = time.perf_counter()
        score_1, score_2 = plant(scenario, codes, seed=1000 + index)
        paired = pair(rows, score_1, score_2)
        pair_time += time.perf_counter() - start
        start = time.perf_counter()
        full = measure_paired(paired, n_resamples=0)
        timings.setdefault("full-set measure", time.perf_counter() - start)
        truth = {name: value for name, (value, _, _) in headline(full).items()}
        out["truth"][scenario.name] = (truth, full.mu_unit)
        group_of = groups.row_group[paired.rows[:, 0]]  # paired group -> design group
        if index == 0:
            # once: the full-set value, and a quick run, as a user gets them from unqover_bias on the rows
            if not same(unqover_bias(rows, score_1, score_2, n_resamples=0), full):
                raise SystemExit(f"unqover_bias and measure disagree on the full set of {dataset}")
            n = plans[0][1]
            keep = masks[(n, 0)]
            start = time.perf_counter()
            by_rows = unqover_bias(
                rows, score_1, score_2, observed=keep[groups.row_group], n_resamples=0, seed=0
            )
            timings["sampled unqover_bias (rows, with pairing)"] = time.perf_counter() - start
            by_groups = measure_paired(paired, n_resamples=0, observed=keep[group_of], seed=0)
            if not same(by_rows, by_groups):
                raise SystemExit(
                    f"unqover_bias(observed=rows) and measure_paired(observed=groups) disagree on {dataset}: "
                    f"{headline(by_rows)} != {headline(by_groups)}"
                )
        full_tables = {name: getattr(full, table) for name, (table, _, _) in TABLES.items()}
        full_gamma = full.gamma.set_index(["subject", "attribute"])["gamma"]
        for label, n in plans:
            tallies = {name: Tally() for name in HEADLINE}
            cell_tallies = {name: CellTally() for name in TABLES}
            width_tallies = {name: WidthTally() for name in TABLES}
            listed = [0, 0]  # listed pairs, covered
            list_tally = out.setdefault("lists", {})[(label, n, scenario.name)] = ListTally()
            for seed in range(seeds):
                start = time.perf_counter()
                result = measure_paired(paired, n_resamples=0, observed=masks[(n, seed)][group_of], seed=seed)
                sampled_time += time.perf_counter() - start
                sampled_calls += 1
                for name, (value, interval, declined) in headline(result).items():
                    tallies[name].add(truth[name], value, interval, declined)
                for name, (table, keys, value) in TABLES.items():
                    if len(full_tables[name]):
                        cell_tallies[name].add(full_tables[name], getattr(result, table), keys, value)
                add_widths(width_tallies, full_tables, result, paired, masks[(n, seed)][group_of], seed)
                list_tally.add(result, full_gamma)
                for entry in result.most_biased:
                    low, high = entry["interval"]
                    listed[0] += 1
                    listed[1] += int(low <= full_gamma.loc[(entry["subject"], entry["attribute"])] <= high)
            out["results"][(label, n, scenario.name)] = tallies
            out.setdefault("cells", {})[(label, n, scenario.name)] = (cell_tallies, listed)
            out.setdefault("widths", {})[(label, n, scenario.name)] = width_tallies
            log(
                f"  {dataset} {scenario.name:<10} {n:>7,} groups: "
                + "  ".join(f"{SYMBOL[k]} {t.cell()}" for k, t in tallies.items())
            )
        if scenario.name in compare_scenarios and len(plans) > 1 and compare_seeds:
            start = time.perf_counter()
            out.setdefault("compares", {})[scenario.name] = run_compares(
                scenario, rows, codes, index, paired, full, plans, masks, group_of, compare_seeds
            )
            timings.setdefault("compare (per scenario, all seeds)", time.perf_counter() - start)
        del paired
    timings["plant and pair (per scenario)"] = pair_time / len(scenarios)
    timings["sampled measure (per seed)"] = sampled_time / max(sampled_calls, 1)
    out["timings"] = timings
    return out


def markdown(results: dict[str, dict], seeds: int, command: str, compare_seeds: int | None = None) -> str:
    head = "| dataset | budget (groups) | scenario | " + " | ".join(SYMBOL[k] for k in HEADLINE) + " |"
    lines = [
        f"Coverage of the 95% intervals over {seeds} seeds: `coverage / mean width (declined)`.",
        "",
        head,
        "|" + "---|" * (3 + len(HEADLINE)),
    ]
    flags = []
    for dataset, out in results.items():
        for (_label, n, scenario), tallies in out["results"].items():
            share = 100 * n / out["groups"]
            cells = []
            for name, tally in tallies.items():
                cells.append(tally.cell())
                where = f"{dataset} {scenario} at {n:,} groups ({share:.2g}%): {SYMBOL[name]}"
                if tally.measured and tally.coverage < TARGET_COVERAGE:
                    flags.append(f"{where} covers {tally.covered}/{tally.measured}")
                if tally.measured and tally.width > TARGET_WIDTH:
                    flags.append(f"{where} mean width {tally.width:.3f}")
                if tally.outside:
                    flags.append(f"{where} point estimate outside its interval in {tally.outside} seeds")
                if tally.declined:
                    flags.append(
                        f"{where} declined in {tally.declined} seeds (groups needed: {tally.needed})"
                    )
            lines.append(f"| {dataset} | {n:,} ({share:.3g}%) | {scenario} | " + " | ".join(cells) + " |")
    lines += cell_markdown(results, seeds, flags)
    lines += width_markdown(results, seeds, flags)
    lines += list_markdown(results, seeds, flags)
    lines += compare_markdown(results, compare_seeds or seeds, flags)
    lines += [
        "",
        "Full-set values:",
        "",
        "| dataset | scenario | δ | ε | μ | η | μ unit |",
        "|---|---|---|---|---|---|---|",
    ]
    for dataset, out in results.items():
        for scenario, (truth, unit) in out["truth"].items():
            lines.append(
                f"| {dataset} | {scenario} | "
                + " | ".join(f"{truth[k]:.4f}" for k in HEADLINE)
                + f" | {unit} |"
            )
    lines += ["", "Timings (seconds):", ""]
    for dataset, out in results.items():
        lines.append(
            f"* {dataset} ({out['rows']:,} rows, {out['groups']:,} groups): "
            + ", ".join(f"{k} {v:.2f}" for k, v in out["timings"].items())
        )
    lines += ["", "Below target (coverage < 90%, width > 0.25) or otherwise notable:", ""]
    lines += [f"* {flag}" for flag in flags] or ["* nothing"]
    lines += ["", f"Command: `{command}`"]
    return "\n".join(lines)


def cell_markdown(results: dict[str, dict], seeds: int, flags: list[str]) -> list[str]:
    """The tables' cell intervals by sampled count, and the listed pairs, as Markdown."""
    bins = [count_bin(low) for low, _ in COUNT_BINS]
    lines = [
        "",
        f"Cell intervals of the tables over {seeds} seeds: coverage by the cell's sampled count (cells), then all "
        'cells, the share of cells with an interval and the mean width; the listed "most biased" pairs: '
        "covered / listed.",
        "",
        "| dataset | budget | scenario | table | "
        + " | ".join(f"n={b}" for b in bins)
        + " | all | with interval "
        "| width | listed pairs |",
        "|" + "---|" * (len(bins) + 8),
    ]
    for dataset, out in results.items():
        for (_label, n, scenario), (tallies, listed) in out.get("cells", {}).items():
            first = True
            for name, tally in tallies.items():
                if not tally.cells:
                    continue
                cells = [
                    f"{tally.coverage(b):.3f} ({tally.measured[b]})" if tally.measured.get(b) else "—"
                    for b in bins
                ]
                pairs = (f"{listed[1]}/{listed[0]}" if listed[0] else "0 listed") if first else ""
                lines.append(
                    f"| {dataset} | {n:,} | {scenario} | {name} | "
                    + " | ".join(cells)
                    + f" | {tally.coverage():.3f} | "
                    f"{tally.with_interval / tally.cells:.1%} | {np.mean(tally.widths or [np.nan]):.3f} | {pairs} |"
                )
                first = False
                key, worst = tally.worst()
                if worst < TARGET_CELLS:
                    flags.append(
                        f"{dataset} {scenario} at {n:,} groups: {name} cell coverage {worst:.3f} at n={key}"
                    )
            if listed[0] and listed[1] / listed[0] < TARGET_LISTED:
                flags.append(
                    f"{dataset} {scenario} at {n:,} groups: listed pairs cover {listed[1]}/{listed[0]}"
                )
    return lines


@contextmanager
def betting_cells():
    """Within it, every table's cell intervals are the betting ones (the construction before issue 32)."""
    from unqover.measure import sampled_tables

    original = sampled_tables.table_intervals
    sampled_tables.table_intervals = functools.partial(original, method="betting")
    try:
        yield
    finally:
        sampled_tables.table_intervals = original


NOMINAL_BAND = (0.93, 0.975)  # coverage of the 95% cell intervals with >= NOMINAL_FROM sampled values
NOMINAL_FROM = 10


@dataclass
class WidthTally:
    """Cell intervals of one table, today's (``new``) and the betting ones (``old``) on the same samples: per bin
    of sampled counts, the cells, how many each covers, and their widths."""

    cells: dict[str, int] = field(default_factory=dict)
    covered: dict[str, list[int]] = field(default_factory=dict)  # bin -> [new, old]
    new: dict[str, list[float]] = field(default_factory=dict)
    old: dict[str, list[float]] = field(default_factory=dict)

    def add(
        self, full: pd.DataFrame, quick: pd.DataFrame, betting: pd.DataFrame, keys: list[str], value: str
    ):
        keys = [k for k in keys if k in full and k in quick]
        cols = [*keys, "count", f"{value}_low", f"{value}_high"]
        truth_column = full[[*keys, value]].rename(columns={value: f"{value}_full"})
        joined = truth_column.merge(quick[cols], on=keys, how="inner")
        joined = joined.merge(betting[cols], on=[*keys, "count"], how="inner", suffixes=("", "_old"))
        self.add_cells(
            joined[f"{value}_full"].to_numpy(float),
            joined["count"].to_numpy(),
            *(
                joined[f"{value}_{end}{suffix}"].to_numpy(float)
                for suffix in ("", "_old")
                for end in ("low", "high")
            ),
        )

    def add_cells(self, truth, count, low, high, old_low, old_high) -> None:
        """Cells as arrays: full-dataset value, sampled count, today's interval, the betting interval."""
        for bounds, widths, which in (((low, high), self.new, 0), ((old_low, old_high), self.old, 1)):
            lo, hi = (np.asarray(bound, dtype=float) for bound in bounds)
            has = np.isfinite(lo) & np.isfinite(hi) & np.isfinite(truth)
            for count_, hit, width in zip(
                np.asarray(count)[has],
                ((lo - 1e-9 <= truth) & (truth <= hi + 1e-9))[has],
                (hi - lo)[has],
                strict=True,
            ):
                key = count_bin(int(count_))
                if which == 0:
                    self.cells[key] = self.cells.get(key, 0) + 1
                self.covered.setdefault(key, [0, 0])[which] += int(hit)
                widths.setdefault(key, []).append(float(width))

    def coverage(self, key: str, which: int = 0) -> float:
        return self.covered[key][which] / self.cells[key] if self.cells.get(key) else float("nan")

    def total(self, which: int = 0) -> float:
        cells = sum(self.cells.values())
        return sum(c[which] for c in self.covered.values()) / cells if cells else float("nan")

    def median(self, key: str | None, old: bool = False) -> float:
        widths = self.old if old else self.new
        values = [w for k, ws in widths.items() if key in (None, k) for w in ws]
        return float(np.median(values)) if values else float("nan")


def add_widths(tallies: dict, full_tables: dict, result, paired, observed: np.ndarray, seed: int) -> None:
    """Add a sample's cell intervals, today's (``result``) and the betting ones on the same sample."""
    with betting_cells():
        betting = measure_paired(paired, n_resamples=0, observed=observed, seed=seed)
    for name, (table, keys, value) in TABLES.items():
        if len(full_tables[name]):
            tallies[name].add(full_tables[name], getattr(result, table), getattr(betting, table), keys, value)


def width_cells(tally: WidthTally, bins: list[str]) -> str:
    """A table row's cells after its labels: per count bin `coverage (cells) · median width vs betting's`, then
    all cells (coverage now / betting · median width vs betting's)."""
    cells = [
        f"{tally.coverage(b):.3f} ({tally.cells[b]}) · {tally.median(b):.3f} vs {tally.median(b, old=True):.3f}"
        if tally.cells.get(b)
        else "—"
        for b in bins
    ]
    total = (
        f"{tally.total():.3f} / {tally.total(1):.3f} · {tally.median(None):.3f} vs "
        f"{tally.median(None, old=True):.3f}"
    )
    return " | ".join([*cells, total]) + " |"


def width_markdown(results: dict[str, dict], seeds: int, flags: list[str]) -> list[str]:
    """Coverage and median width of the cell intervals against the betting ones, by sampled count, as Markdown."""
    bins = [count_bin(low) for low, _ in COUNT_BINS]
    lines = [
        "",
        f"Cell intervals against the betting ones (issue 32) over {seeds} seeds, per bin of the cell's sampled "
        "count: `coverage (cells) · median width vs the betting intervals' median width`; last: all cells, "
        "coverage now / betting.",
        "",
        "| dataset | budget | scenario | table | " + " | ".join(f"n={b}" for b in bins) + " | all |",
        "|" + "---|" * (len(bins) + 5),
    ]
    for dataset, out in results.items():
        for (_label, n, scenario), tallies in out.get("widths", {}).items():
            for name, tally in tallies.items():
                if not tally.cells:
                    continue
                lines.append(f"| {dataset} | {n:,} | {scenario} | {name} | " + width_cells(tally, bins))
                for (low, _), b in zip(COUNT_BINS, bins, strict=True):
                    if not tally.cells.get(b):
                        continue
                    where = f"{dataset} {scenario} at {n:,} groups: {name} cells n={b}"
                    coverage = tally.coverage(b)
                    floor, ceiling = NOMINAL_BAND if low >= NOMINAL_FROM else (NOMINAL_BAND[0], 1.0)
                    if not floor <= coverage <= ceiling:
                        flags.append(f"{where} cover {coverage:.3f} ({tally.cells[b]} cells)")
                    if tally.median(b) > tally.median(b, old=True) + 1e-12:
                        flags.append(f"{where}: median width above the betting intervals'")
    return lines


STRATIFIED_SCENARIOS = {  # name -> (scale of the occupation's or person's effect, share of them without one)
    "none": (0.0, 0.0),
    "weak": (0.3, 0.5),
    "strong": (1.2, 0.0),
    "sparse": (2.5, 0.9),
}
NLI_LIMITS = (6, 24)  # rows kept per occupation (spread over its 3 templates)
EEC_LIMITS = (2, 5)  # persons kept per gender x race cell
NLI_TABLE_COLUMNS = ("S", "delta_P", "B", "gender_gap")


@contextmanager
def betting_strata():
    """Within it, the NLI and emotion tables' intervals are the betting ones (the construction before issue 32)."""
    from unqover.measure import emotion, nli_tables, stratified

    originals = emotion.stratified_mean_intervals, nli_tables.stratified_mean_intervals
    betting = functools.partial(stratified.stratified_mean_intervals, method="betting")
    emotion.stratified_mean_intervals = nli_tables.stratified_mean_intervals = betting
    try:
        yield
    finally:
        emotion.stratified_mean_intervals, nli_tables.stratified_mean_intervals = originals


def nli_model(rows: pa.Table, scale: float, zero: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """P(entailment) for the female and male hypotheses: premise, template and (scaled) occupation effects."""
    rng = np.random.default_rng(seed)
    occupation = np.unique(rows["occupation"].to_numpy(zero_copy_only=False), return_inverse=True)[1]
    cluster = np.unique(rows["cluster"].to_numpy(zero_copy_only=False), return_inverse=True)[1]
    template = rows["template_id"].to_numpy()
    sign = np.where(rows["occupation_gender"].to_numpy(zero_copy_only=False) == "female", 1.0, -1.0)
    base = rng.normal(0, 1.5, cluster.max() + 1)[cluster] + np.array([-1.0, 0.0, 1.5])[template % 3]
    effect = scale * rng.standard_t(3, occupation.max() + 1) * (rng.random(occupation.max() + 1) >= zero)
    effect = effect[occupation] * sign
    z_f = base + effect * (template % 3 + 1) / 2 + rng.standard_t(3, len(sign))
    z_m = base - 0.5 * effect + rng.standard_t(3, len(sign))
    return 1 / (1 + np.exp(-z_f)), 1 / (1 + np.exp(-z_m))


def nli_table(rows: pa.Table, pf: np.ndarray, pm: np.ndarray, population: dict | None = None) -> pd.DataFrame:
    from unqover.measure.nli import nli_gender_bias
    from unqover.probes.nli_rows import _strata

    return nli_gender_bias(
        pf, pm, rows["occupation_gender"], rows["cluster"], occupation=rows["occupation"],
        template_id=rows["template_id"], n_resamples=0, n_permutations=0,
        strata=None if population is None else _strata(rows)[1], population=population,
    ).by_occupation.set_index("occupation")  # fmt: skip


def run_nli(seeds: int) -> dict:
    """Per (rows per occupation, scenario, column): the per-occupation cells, today's against betting."""
    from unqover.generate.nli import nli_rows, synthetic_premises
    from unqover.probes.nli_rows import limit_per_occupation, stratum_population

    rows = nli_rows(synthetic_premises(), family="main")
    population = stratum_population(rows)
    ids = rows["id"].to_numpy(zero_copy_only=False)
    out = {}
    for index, (scenario, (scale, zero)) in enumerate(STRATIFIED_SCENARIOS.items()):
        pf, pm = nli_model(rows, scale, zero, seed=2000 + index)
        truth = nli_table(rows, pf, pm)
        for limit in NLI_LIMITS:
            tallies = {name: WidthTally() for name in NLI_TABLE_COLUMNS}
            for seed in range(seeds):
                keep = np.isin(
                    ids, limit_per_occupation(rows, limit, seed=seed)["id"].to_numpy(zero_copy_only=False)
                )
                kept = rows.filter(pa.array(keep))
                table = nli_table(kept, pf[keep], pm[keep], population)
                with betting_strata():
                    old = nli_table(kept, pf[keep], pm[keep], population).loc[table.index]
                for name, tally in tallies.items():
                    tally.add_cells(
                        truth.loc[table.index, name].to_numpy(float), table["count"].to_numpy(),
                        table[f"{name}_low"], table[f"{name}_high"], old[f"{name}_low"], old[f"{name}_high"],
                    )  # fmt: skip
            out[(limit, scenario)] = tallies
            log(f"  nli {scenario:<8} {limit} rows per occupation: done")
    return out


def eec_answers(questions: pa.Table, scale: float, zero: float, seed: int) -> tuple[list, dict]:
    """Top-3 answers of a model whose emotion choices depend on the person (scaled) and the race."""
    import pyarrow.compute as pc

    words = pc.list_flatten(questions["choices"]).to_pylist()
    emotions = dict(zip(words, pc.list_flatten(questions["choice_emotions"]).to_pylist(), strict=True))
    names = sorted(set(emotions.values()))
    rng = np.random.default_rng(seed)
    persons = sorted(set(questions["person_slot"].to_pylist()))
    affinity = {p: scale * rng.standard_t(3, len(names)) * (rng.random() >= zero) for p in persons}
    race_shift = {
        "African-American": scale * rng.normal(0, 0.5, len(names)),
        "European": np.zeros(len(names)),
    }
    answers = []
    for choices, person, race in zip(
        questions["choices"].to_pylist(), questions["person_slot"].to_pylist(), questions["race"].to_pylist(),
        strict=True,
    ):  # fmt: skip
        shift = race_shift.get(race, np.zeros(len(names)))
        score = np.array(
            [affinity[person][names.index(emotions[c])] + shift[names.index(emotions[c])] for c in choices]
        )
        score = score + rng.gumbel(size=len(choices))
        answers.append([choices[k] for k in np.argsort(-score)[:3]])
    return answers, emotions


def eec_shares(questions: pa.Table, answers: list, emotions: dict, population: dict | None = None):
    from unqover.measure.emotion import emotion_bias

    return emotion_bias(
        answers, questions["gender"].to_pylist(), questions["race"].to_pylist(),
        questions["person_slot"].to_pylist(), questions["form"].to_pylist(), emotions=emotions,
        n_permutations=0, n_bootstrap=0, population=population,
    ).tests  # fmt: skip


def run_eec(seeds: int) -> dict:
    """Per (persons per cell, scenario, table): the group x emotion share cells, today's against betting."""
    from unqover.generate.eec import eec_questions
    from unqover.probes.eec_rows import describe_eec_selection, select_persons

    questions = eec_questions()
    ids = questions["id"].to_numpy(zero_copy_only=False)
    out = {}
    for index, (scenario, (scale, zero)) in enumerate(STRATIFIED_SCENARIOS.items()):
        answers, emotions = eec_answers(questions, 1.5 * scale, zero, seed=3000 + index)
        full = eec_shares(questions, answers, emotions)
        for limit in EEC_LIMITS:
            tallies = {"top-1 shares": WidthTally(), "weighted-point shares": WidthTally()}
            for seed in range(seeds):
                kept = select_persons(questions, limit, seed)
                keep = np.isin(ids, kept["id"].to_numpy(zero_copy_only=False))
                population = describe_eec_selection(questions, kept, limit, seed)["of"]
                sampled = [a for a, k in zip(answers, keep, strict=True) if k]
                tests = eec_shares(kept, sampled, emotions, population)
                with betting_strata():
                    old = eec_shares(kept, sampled, emotions, population)
                for tally, table in zip(tallies.values(), ("top1", "beecher"), strict=True):
                    for name, test in tests.items():
                        records = (
                            full[name]["top1"]["counts"]
                            if table == "top1"
                            else full[name]["beecher"]["scores"]
                        )
                        counts = kept_persons(kept, name)
                        for group, row in records.items():
                            total = sum(row.values())
                            for emotion, value in row.items():
                                new = test[table]["share_intervals"][group][emotion]
                                was = old[name][table]["share_intervals"][group][emotion]
                                tally.add_cells(
                                    np.array([value / total]), np.array([counts.get(group, 0)]),
                                    [new[0]], [new[1]], [was[0]], [was[1]],
                                )  # fmt: skip
            out[(limit, scenario)] = tallies
            log(f"  eec {scenario:<8} {limit} persons per cell: done")
    return out


def kept_persons(kept: pa.Table, test: str) -> dict:
    """Persons kept per group of an emotion test (``gender`` or ``race``)."""
    column = "gender" if test == "gender" else "race"
    pairs = set(zip(kept[column].to_pylist(), kept["person_slot"].to_pylist(), strict=True))
    out: dict = {}
    for group, _ in pairs:
        out[group] = out.get(group, 0) + 1
    return out


def stratified_markdown(nli: dict, eec: dict, seeds: int) -> list[str]:
    """The NLI per-occupation and emotion share tables' cells against the betting intervals, as Markdown."""
    bins = [count_bin(low) for low, _ in COUNT_BINS]
    lines = [
        "",
        f"NLI per-occupation cells (synthetic premises, rows kept per occupation; count: sampled rows) and emotion "
        f"share cells (EEC, persons kept per gender x race cell; count: the group's kept persons) over {seeds} "
        "seeds: `coverage (cells) · median width vs the betting intervals' median width`; last: all cells, coverage "
        "now / betting.",
        "",
        "| probe | budget | scenario | table | " + " | ".join(f"n={b}" for b in bins) + " | all |",
        "|" + "---|" * (len(bins) + 5),
    ]
    flags = []
    for probe, results in (("nli", nli), ("eec", eec)):
        for (limit, scenario), tallies in results.items():
            for name, tally in tallies.items():
                if not tally.cells:
                    continue
                lines.append(f"| {probe} | {limit} | {scenario} | {name} | " + width_cells(tally, bins))
                for b in bins:
                    if tally.cells.get(b) and tally.coverage(b) < NOMINAL_BAND[0]:
                        flags.append(
                            f"{probe} {scenario} at {limit}: {name} cells n={b} cover {tally.coverage(b):.3f}"
                        )
    lines += ["", "NLI and emotion cells below 93%:", ""] + ([f"* {f}" for f in flags] or ["* none"])
    return lines


def compare_markdown(results: dict[str, dict], seeds: int, flags: list[str]) -> list[str]:
    """Paired shift intervals, as Markdown."""
    lines = [
        "",
        f"Paired compares over {seeds} seeds: model A (the scenario) at the smaller budget against model B (its "
        f"effects × {DEBIASED}, the same noise) at the larger one with the same seed. Per headline shift B − A: "
        "`coverage / mean width vs the unpaired combination's width (seeds with p < 0.05)`; listed cell shifts: "
        "covered / listed.",
        "",
        "| dataset | budgets (groups) | scenario | "
        + " | ".join(f"shift of {SYMBOL[k]}" for k in HEADLINE)
        + " | cells listed |",
        "|" + "---|" * (4 + len(HEADLINE)),
    ]
    for dataset, out in results.items():
        for scenario, compare in (
            (scenario, compare)
            for scenario, by_budgets in (out.get("compares") or {}).items()
            for compare in by_budgets.values()
        ):
            small, large = compare["budgets"]
            listed = compare["listed"]
            lines.append(
                f"| {dataset} | {small:,} → {large:,} | {scenario} | "
                + " | ".join(t.cell() for t in compare["tallies"].values())
                + f" | {listed[1]}/{listed[0]} |"
            )
            for name, tally in compare["tallies"].items():
                where = f"{dataset} {scenario} compare: shift of {SYMBOL[name]}"
                if tally.measured and tally.covered / tally.measured < TARGET_SHIFT:
                    flags.append(f"{where} covers {tally.covered}/{tally.measured}")
                if tally.measured and np.mean(tally.widths) >= np.nanmean(tally.combined):
                    flags.append(f"{where} is not narrower than the two runs' intervals combined")
                if tally.wider() > tally.measured / 16:  # target: at most as wide in >= 15 of 16 seeds
                    flags.append(
                        f"{where} is wider than the two runs' intervals together in {tally.wider()} seeds"
                    )
            if listed[0] and listed[1] / listed[0] < TARGET_LISTED:
                flags.append(
                    f"{dataset} {scenario} compare: listed cell shifts cover {listed[1]}/{listed[0]}"
                )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--word-lists", type=Path, default=Path("../shared/data/unqover_word_lists"))
    parser.add_argument(
        "--datasets", default="gender,religion", help="comma-separated (gender, religion, ...)"
    )
    parser.add_argument("--seeds", type=int, default=20, help="seeds per scenario and budget")
    parser.add_argument(
        "--budgets",
        action="append",
        default=[],
        metavar="DATASET=B1,B2",
        help="budgets for a dataset: fractions ('1.5%%' or '0.015') or numbers of groups ('500'); repeatable",
    )
    parser.add_argument("--scenarios", default=",".join(s.name for s in SCENARIOS), help="comma-separated")
    parser.add_argument(
        "--compare-scenarios",
        default=",".join(COMPARE_SCENARIOS),
        help="comma-separated scenarios with paired compares ('' for none)",
    )
    parser.add_argument(
        "--skip-nli-eec",
        action="store_true",
        help="leave out the NLI per-occupation and emotion share tables",
    )
    parser.add_argument(
        "--compare-seeds", type=int, help="seeds of the paired compares (default: --seeds; 0: no compares)"
    )
    parser.add_argument(
        "--nli-eec-seeds",
        type=int,
        help="seeds of the NLI and emotion tables (default: --seeds; they are cheap, and 20 seeds of 16–38 "
        "correlated cells leave about ±2 points of noise on a coverage)",
    )
    parser.add_argument("--output", type=Path, help="also write the Markdown report to this file")
    args = parser.parse_args()
    if args.nli_eec_seeds is not None and args.nli_eec_seeds < 1:
        parser.error(f"--nli-eec-seeds wants a whole number >= 1, got {args.nli_eec_seeds}")

    budgets = {name: list(values) for name, values in DEFAULT_BUDGETS.items()}
    for spec in args.budgets:
        name, _, values = spec.partition("=")
        if not values:
            parser.error(f"--budgets wants DATASET=B1,B2, got {spec!r}")
        budgets[name.strip()] = [v for v in values.split(",") if v.strip()]
    known = {s.name: s for s in SCENARIOS}
    wanted = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    if unknown := [s for s in wanted if s not in known]:
        parser.error(f"unknown scenarios {unknown}; have {list(known)}")
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    if missing := [d for d in datasets if d not in budgets]:
        parser.error(f"no budgets for {missing}: pass --budgets {missing[0]}=...")

    lists = resolve_word_lists(args.word_lists)
    started = time.perf_counter()
    results = {
        dataset: run_dataset(
            lists,
            dataset,
            budgets[dataset],
            args.seeds,
            [known[s] for s in wanted],
            tuple(s.strip() for s in args.compare_scenarios.split(",") if s.strip()),
            args.compare_seeds,
        )
        for dataset in datasets
    }
    command = shlex.join(["python", "scripts/bench_quick_runs.py", *sys.argv[1:]])
    report = markdown(results, args.seeds, command, args.compare_seeds)
    if not args.skip_nli_eec:
        seeds = args.nli_eec_seeds or args.seeds
        report += "\n" + "\n".join(stratified_markdown(run_nli(seeds), run_eec(seeds), seeds))
    report += f"\n\nTotal: {time.perf_counter() - started:.0f} s."
    print(report)
    if args.output:
        args.output.write_text(report + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
