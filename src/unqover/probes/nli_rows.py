"""The NLI probe's rows and scores: loading and checking the rows, the quick run's draw per occupation, the
runner's row scorer and the measures of scored rows. Loaded by :mod:`unqover.probes.nli` when a run starts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from unqover.errors import UnqoverError
from unqover.generate.nli import nli_rows, synthetic_premises
from unqover.measure.diagnostics import nli_findings
from unqover.measure.nli import nli_gender_bias
from unqover.probes.base import (
    RunOptions,
)
from unqover.probes.row_identity import check_columns, given_or_built
from unqover.report.diagnostics import nli_warnings
from unqover.scoring.sampling import seeded_keys

NLI_COLUMNS = (
    "id",
    "premise",
    "hypothesis_female",
    "hypothesis_male",
    "occupation",
    "occupation_gender",
    "cluster",
    "template_id",
)


class NLIRowScorer:
    """Adapts :class:`unqover.scoring.nli.NLIScorer` to the runner: one row gives (female, male) values."""

    def __init__(self, scorer, output: str = "p_entail") -> None:
        self.scorer, self.output = scorer, output

    def input_key(self, rows: pa.Table) -> pa.Array:
        return pc.binary_join_element_wise(
            rows["premise"], rows["hypothesis_female"], rows["hypothesis_male"], "\x1f"
        )

    def length_key(self, rows: pa.Table) -> np.ndarray:
        return (
            pc.utf8_length(rows["premise"]).to_numpy() + pc.utf8_length(rows["hypothesis_female"]).to_numpy()
        ).astype(np.int64)

    def check_rows(self, rows: pa.Table) -> None:
        """The longest pairs fit the model's positions: checked before a run writes anything."""
        female, male = (pc.utf8_length(rows[f"hypothesis_{g}"]).to_numpy() for g in ("female", "male"))
        chars = pc.utf8_length(rows["premise"]).to_numpy() + np.maximum(female, male)
        longest = rows.take(np.argsort(-chars.astype(np.int64), kind="stable")[:16])
        for column in ("hypothesis_female", "hypothesis_male"):
            self.scorer.check_pairs(longest["premise"].to_pylist(), longest[column].to_pylist())

    def score(self, rows: pa.Table) -> np.ndarray:
        premises = rows["premise"].to_pylist()
        female = self.scorer.score_pairs(premises, rows["hypothesis_female"].to_pylist())[self.output]
        male = self.scorer.score_pairs(premises, rows["hypothesis_male"].to_pylist())[self.output]
        return np.stack([female, male], axis=1).astype(np.float64)


class NLIPromptRowScorer(NLIRowScorer):
    """Adapts :class:`unqover.scoring.nli_prompt.NLIPromptScorer` to the runner: a row's two hypotheses are asked
    in one pass, and rows with one premise batch together (they share its tokens)."""

    def group_key(self, rows: pa.Table) -> pa.Array:
        return rows["premise"]

    def score(self, rows: pa.Table) -> np.ndarray:
        female, male = self.scorer.score_rows(rows)
        return np.stack([female[self.output], male[self.output]], axis=1).astype(np.float64)


def check_nli_source(name: str, dataset: str | None, config: str) -> None:
    """Refuse a config with no rows to load (no --dataset, no local build, and not the synthetic premises made in
    memory): found before any model loads."""
    if (
        not dataset
        and config != "synthetic"
        and not (Path("datasets/unqover") / name / "data" / config).is_dir()
    ):
        raise UnqoverError(
            f"no {config!r} NLI data: build it (unqover build-datasets {name}) or pass --dataset"
        )


def load_nli_rows(name: str, dataset: str | None, config: str) -> tuple[pa.Table, dict]:
    """--dataset, else a local build in datasets/unqover/<name>, else synthetic premises made in memory."""
    check_nli_source(name, dataset, config)
    found = given_or_built(name, dataset, config, Path("datasets/unqover") / name)
    # neither: the synthetic config (checked above), its premises made in memory
    rows, source = found or (nli_rows(synthetic_premises(), family="main"), "generated synthetic premises")
    check_columns(rows, NLI_COLUMNS, source, f"an {name} dataset")
    return rows, {"source": source, "config": config, "split": "test"}


def _strata(rows: pa.Table) -> tuple[list[str], list[str], list[str]]:
    """Per row: the occupation, the template (family and id when the rows have families) and the source premise."""
    template = [str(t) for t in rows["template_id"].to_pylist()]
    if "template_family" in rows.column_names:
        template = [f"{f}/{t}" for f, t in zip(rows["template_family"].to_pylist(), template, strict=True)]
    return (
        [str(o) for o in rows["occupation"].to_pylist()],
        template,
        [str(c) for c in rows["cluster"].to_pylist()],
    )


def limit_per_occupation(rows: pa.Table, limit: int, seed: int = 0) -> pa.Table:
    """Keep about ``limit`` rows per occupation, drawn at random (seeded) within occupation × template strata.

    Each occupation's ``limit`` rows are spread evenly over its templates (which templates get one more when
    ``limit`` is not a multiple of their number is drawn per occupation, so a run with fewer rows than templates
    still sees every template across occupations). Inside an occupation × template stratum the unit is the source
    premise (``cluster``): its rows there are kept or dropped together (so a premise with several rows in one
    stratum can overshoot the quota), drawn in the order of a seeded hash of (seed, occupation, template, premise).
    Each stratum draws on its own, so the kept rows come from many source premises and the premise-cluster
    bootstrap of the measure sees as many clusters as the run allows. The kept rows depend only on the rows'
    content and the seed (not on their order or the machine), and keep their order.
    """
    if isinstance(limit, bool) or not isinstance(limit, int | np.integer) or limit < 1:
        raise UnqoverError(f"limit must be a whole number of rows per occupation >= 1, got {limit!r}")
    if rows.num_rows == 0:
        return rows
    occupation, template, cluster = _strata(rows)
    templates: dict[str, set[str]] = {}
    for o, t in zip(occupation, template, strict=True):
        templates.setdefault(o, set()).add(t)
    quota: dict[tuple[str, str], int] = {}
    for o, mine in templates.items():
        ordered = sorted(mine, key=lambda t: (seeded_keys(seed, "nli-template", [o], [t])[0], t))
        base, extra = divmod(int(limit), len(ordered))
        quota |= {(o, t): base + (rank < extra) for rank, t in enumerate(ordered)}
    units: dict[tuple[str, str, str], list[int]] = {}
    for i, key in enumerate(zip(occupation, template, cluster, strict=True)):
        units.setdefault(key, []).append(i)
    keys = list(units)
    draw = seeded_keys(seed, "nli-premise", *zip(*keys, strict=True))
    kept_rows: dict[tuple[str, str], int] = {}
    keep = np.zeros(rows.num_rows, dtype=bool)
    for _, (o, t, c) in sorted(zip(draw, keys, strict=True)):
        if kept_rows.get((o, t), 0) < quota[o, t]:
            kept_rows[o, t] = kept_rows.get((o, t), 0) + len(units[o, t, c])
            keep[units[o, t, c]] = True
    return rows if keep.all() else rows.filter(pa.array(keep))


def stratum_population(rows: pa.Table) -> dict[tuple[str, str], tuple[int, int, int]]:
    """Per occupation × template stratum of the full rows: (source premises, rows, most rows of one premise), what
    a quick run's per-occupation intervals need of the rows it did not keep."""
    sizes: dict[tuple[str, str, str], int] = {}
    for key in zip(*_strata(rows), strict=True):
        sizes[key] = sizes.get(key, 0) + 1
    out: dict[tuple[str, str], tuple[int, int, int]] = {}
    for (o, t, _), n in sizes.items():
        premises, total, most = out.get((o, t), (0, 0, 0))
        out[o, t] = (premises + 1, total + n, max(most, n))
    return out


def describe_nli_selection(rows: pa.Table, kept: pa.Table, limit: int, seed: int) -> dict:
    """run.json's ``selection`` of a quick run: the rule, and what was kept of what (rows, premises, occupations)."""

    def counts(table: pa.Table) -> dict[str, int]:
        occupation, template, cluster = _strata(table)
        return {
            "rows": table.num_rows,
            "source_premises": len(set(cluster)),
            "occupations": len(set(occupation)),
            "templates": len(set(template)),
        }

    return {
        "limit": limit,
        "per": "occupation",
        "seed": seed,
        "strata": "occupation x template",
        "unit": "source premise (cluster) within a stratum, drawn by a seeded hash",
        "kept": counts(kept),
        "of": counts(rows),
    }


def check_coverage(rows: pa.Table, scores: pa.Table, selection: dict | None, where: str, config: str) -> None:
    """Refuse predictions (``scores``, ids all in ``rows``) that score part of the rows they should: every row of
    the dataset config, or of the quick run's selection the provenance records (``limit`` and ``seed``, drawn
    again with :func:`limit_per_occupation`)."""
    limit = (selection or {}).get("limit")
    expected, what = rows, f"the {rows.num_rows:,} {config!r} NLI rows"
    if limit is not None:
        seed = (selection or {}).get("seed", 0)
        expected = limit_per_occupation(rows, limit, seed)
        what = f"the {expected.num_rows:,} rows that its --limit {limit} selection (seed {seed}) keeps"
    covered = int(pc.sum(pc.is_in(expected["id"], value_set=scores["id"])).as_py() or 0)
    if covered < expected.num_rows:
        raise UnqoverError(
            f"{where} scores {covered:,} of {what} ({expected.num_rows - covered:,} missing), so it measures no "
            "dataset: score every row (a `--limit` run records its selection, from which `unqover measure` "
            "estimates the full dataset)"
        )
    if covered < scores.num_rows:
        raise UnqoverError(
            f"{where} scores {scores.num_rows - covered:,} rows outside {what}: were they made by another run?"
        )


def measure_nli(
    rows: pa.Table,
    scores: pa.Table,
    neutral: pa.Table | None,
    run: RunOptions,
    selection: dict | None,
    population: dict | None = None,
):
    """The NLI measures of scored rows (``scores``, ``neutral`` aligned with ``rows``); ``population``: a quick
    run's :func:`stratum_population` of the full rows (per-occupation intervals for the full-dataset values)."""
    result = nli_gender_bias(
        scores["score_1"].to_numpy(),
        scores["score_2"].to_numpy(),
        rows["occupation_gender"].to_pylist(),
        rows["cluster"].to_pylist(),
        occupation=rows["occupation"].to_pylist(),
        template_id=rows["template_id"].to_pylist(),
        neutral_female=None if neutral is None else neutral["score_1"].to_numpy(),
        neutral_male=None if neutral is None else neutral["score_2"].to_numpy(),
        n_resamples=run.resamples,
        seed=run.seed,
        strata=_strata(rows)[1] if population is not None else None,
        population=population,
    )
    if selection is not None:
        result.selection = selection
    found = nli_warnings(nli_findings(scores["score_1"].to_numpy(), scores["score_2"].to_numpy()))
    result.warnings = [*found, *result.warnings]  # a degenerate run's first
    return result
