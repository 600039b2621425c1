"""The UnQover probes' rows and scores: which columns a dataset needs, the scorer of the requests a model
answers, the rows' fit to them, scores matched to rows by id and the measures of them (full or sampled).

Loaded by the definitions in :mod:`unqover.probes.unqover` when a run starts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from unqover.errors import UnqoverError
from unqover.generate.ids import match_ids
from unqover.generate.unqover import MASK_PLACEHOLDER
from unqover.measure.diagnostics import unqover_run_findings
from unqover.measure.pairing import PairingError
from unqover.measure.sampled import PopulationCounts
from unqover.measure.unqover import UnqoverBias, unqover_bias
from unqover.predictions import UNQOVER_ROW_FIELDS
from unqover.probes.row_identity import check_columns
from unqover.report.diagnostics import design_warning, unqover_warnings
from unqover.scoring.requests import ANSWER_SPANS, CONTINUATIONS, FILL_IN, first_wanted
from unqover.scoring.sampling import DESIGN, budget, check_design, find_groups, selected_groups

#: The columns a scorer and the measure need of a dataset's rows.
REQUIRED_COLUMNS = ("id", *UNQOVER_ROW_FIELDS)
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


def make_scorer(
    model,
    wants: Sequence[str],
    scoring: str,
    *,
    chat_template: str = "auto",
    system_prompt: str | None = None,
):
    """The scorer of the first of ``wants`` (the probe's requests: answer spans, fill-ins, continuations) that
    ``model`` answers, from the engine that loaded it; ``scoring`` "paper": the original code's quirks; a causal
    LM's prompts take ``chat_template`` ("auto", "none" or a template's text) and ``system_prompt``."""
    from unqover.scoring.engines import scorer_for

    if scoring == "paper" and first_wanted(model.capabilities, wants) == CONTINUATIONS:
        raise UnqoverError(
            "the original code scored no causal LMs: --scoring paper applies to QA and masked LMs"
        )
    return scorer_for(model, wants, scoring=scoring, chat_template=chat_template, system_prompt=system_prompt)


def check_unqover_columns(rows: pa.Table, source: str) -> None:
    """Refuse rows without an UnQover dataset's columns (:data:`REQUIRED_COLUMNS`)."""
    check_columns(rows, REQUIRED_COLUMNS, source, "an UnqOver dataset")


#: a model in words, by the UnQover request it answers
CAPABILITY_NAMES = {
    ANSWER_SPANS: "an extractive QA model",
    FILL_IN: "a masked LM",
    CONTINUATIONS: "a causal LM",
}


def check_rows_fit(rows: pa.Table, capability: str, config: str) -> None:
    """Refuse rows the model cannot answer meaningfully: masked-LM rows (questions with the mask placeholder) for
    QA and causal LMs, question rows (no placeholder) for masked LMs (``capability``: what it answers)."""
    if rows.num_rows == 0:
        return
    masked = int(pc.sum(pc.match_substring(rows["question"], MASK_PLACEHOLDER)).as_py() or 0)
    if capability == FILL_IN and masked < rows.num_rows:
        raise UnqoverError(
            f"a masked LM scores masked-LM rows, but {rows.num_rows - masked:,} of the {rows.num_rows:,} "
            f"{config!r} rows have no {MASK_PLACEHOLDER} in their question: use --config mlm (or leave "
            "--config out)"
        )
    if capability != FILL_IN and masked:
        raise UnqoverError(
            f"{CAPABILITY_NAMES.get(capability, capability)} answers questions, but the {config!r} rows are for masked LMs "
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
    population: PopulationCounts | None = None,
    **options,
) -> UnqoverBias:
    """The UnQover measures of ``scores`` (matched to ``rows`` by id, in any order). When they cover part of
    ``rows`` (the whole dataset), or ``rows`` are a quick run's sample of a dataset counted in ``population``, the
    result estimates the full-dataset values."""
    score_1, score_2, observed = scores_by_row(rows, scores)
    if observed.all() and population is None:
        return unqover_bias(rows, score_1, score_2, mode=mode, n_resamples=resamples, seed=seed, **options)
    return unqover_bias(
        rows,
        score_1,
        score_2,
        mode=mode,
        n_resamples=resamples,
        seed=seed,
        observed=None if observed.all() else observed,
        sample_info=sample_info,
        population=population,
        **options,
    )


def add_warnings(result: UnqoverBias, scores: pa.Table, coverage: dict | None) -> UnqoverBias:
    """``result`` with the warnings of a degenerate run first (``unqover.report.diagnostics``): answer scores ≈0,
    constant or tied in most questions, subjects a masked LM's tokenizer left out (run.json's ``coverage``)."""
    found = unqover_warnings(
        unqover_run_findings(scores["score_1"].to_numpy(), scores["score_2"].to_numpy(), coverage)
    )
    result.warnings = [*found, *result.warnings]
    return result


def describe_sample(rows: pa.Table, observed: np.ndarray, selection: dict, subset: str | None = None) -> dict:
    """How the scored rows were drawn: this project's design with a known seed (checked exactly), or a subset
    whose strata at least hold their proportional shares (the design's property for any seed). ``subset``: why
    the rows are a subset that matches no design whatever their strata (lm-eval's ``--limit``); so is part of a
    recorded sample. Only whole groups count: those of which a row is missing are not measured
    (``--drop-incomplete``)."""
    groups = find_groups(rows)
    size = np.bincount(groups.row_group, minlength=groups.num_groups)
    kept = np.bincount(groups.row_group[observed], minlength=groups.num_groups) == size
    n, seed, drawn = int(kept.sum()), selection.get("seed"), selection.get("groups")
    designed = selection.get("design") == DESIGN
    if (
        designed
        and isinstance(seed, int)
        and not isinstance(seed, bool)
        and seed >= 0
        and drawn in (None, n)
        and n
    ):
        exact = selected_groups(groups, budget(groups.num_groups, n), seed)
        if np.array_equal(exact, kept):
            return {"design": DESIGN, "seed": seed, "matches_design": True}
        if subset is None and n in (
            drawn,
            selection.get("limit"),
        ):  # all of a sample, but not the one claimed
            raise UnqoverError(
                f"the predictions record the design's sample of {n:,} groups drawn with seed {seed}, but their "
                f"groups are not the ones seed {seed} draws: a sample is measured as the draw of the seed it "
                "records, so record the seed that drew them"
            )
    if subset is None and designed and isinstance(drawn, int) and n != drawn:
        subset = f"{n:,} of the sample's {drawn:,} groups were scored whole"
    if subset is not None:
        return {
            "design": None,
            "seed": None,
            "matches_design": False,
            "kind": "subset",
            "why": subset,
            "warning": f"{subset}, which are no design's sample; the intervals assume an equal-probability "
            "random sample",
        }
    check = check_design(groups, kept)
    info = {"design": DESIGN if check.matches else "unknown", "seed": None, "matches_design": check.matches}
    if not check.matches:
        info["warning"] = design_warning(check.stratum, check.kept, check.size, check.expected)
    return info


def generated_rows(name: str, word_lists: Path | None, config: str) -> tuple[pa.Table, dict]:
    """The rows of the bias class ``name`` generated in memory from word lists (default: the pinned upstream
    lists), and where they came from."""
    from unqover.lexicon import resolve_word_lists
    from unqover.probes.word_list_source import CHECKSUMS_KEY, generate, lists_checksum

    lists = resolve_word_lists(word_lists)
    rows = generate(lists, name, config)
    root = str(Path(lists.root).resolve())
    content = lists_checksum(lists.root, name, config)  # what another machine finds the lists by
    return rows, {
        "source": f"generated from {root}",
        "generator": {"bias": name, "word_lists": root, CHECKSUMS_KEY: content},
        "bias": name,
        "config": config,
        "split": "test",
    }


def scores_over(
    rows: pa.Table, predictions: list[Path], where: str
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Each predictions file's score_1, score_2 and scored-row mask over ``rows`` (matched by ``id``); ``where``
    names the rows in the error of an id they lack."""
    from unqover.predictions import read_predictions

    scored = []
    for path in predictions:
        scores, _ = read_predictions(path)
        score_1, score_2, observed = scores_by_row(rows, scores)
        if observed.sum() < scores.num_rows:
            raise UnqoverError(f"{scores.num_rows - int(observed.sum()):,} ids of {path} are not in {where}")
        scored.append((score_1, score_2, observed))
    return scored


def measure_joined_scores(
    rows: pa.Table, scores: pa.Table, provenance: dict, where: str, *, resamples: int, seed: int, **options
) -> UnqoverBias:
    """``unqover measure``: scores joined to their dataset rows by ``id`` and measured. Scores that cover part of
    the rows (a quick run, or `unqover sample` ids scored elsewhere) give estimates of the full-dataset values."""
    from unqover.predictions import lm_eval_subset

    position = match_ids(scores["id"], rows["id"])
    if (position < 0).any():
        unknown = np.flatnonzero(position < 0)
        raise UnqoverError(
            f"{len(unknown)} prediction ids are not in {where}, e.g. "
            f"{scores['id'][int(unknown[0])].as_py()!r}: were they made on another dataset?"
        )
    sample_info = None
    if scores.num_rows < rows.num_rows:
        observed = np.zeros(rows.num_rows, dtype=bool)
        observed[position] = True
        sample_info = describe_sample(
            rows, observed, provenance.get("selection") or {}, lm_eval_subset(provenance)
        )
    try:
        result = measure_scores(
            rows, scores, resamples=resamples, seed=seed, sample_info=sample_info, **options
        )
    except PairingError as err:  # groups scored in part: name lm-eval's --limit when it cut them
        why = lm_eval_subset(provenance)
        if why is None:
            raise
        raise UnqoverError(
            f"{str(err).rstrip('.')} ({why}); for a quick run use the _sample task "
            "(unqover lm-eval-tasks --groups N)"
        ) from None
    return add_warnings(result, scores, provenance.get("coverage"))


def population_table(population) -> pa.Table:
    """The rows of a whole dataset given as a table, a ``datasets.Dataset`` or a list of dicts, with the columns
    the measure reads (:data:`ROW_COLUMNS`, those it has)."""
    if isinstance(population, pa.Table):
        table = population
    elif hasattr(population, "data") and isinstance(getattr(population.data, "table", None), pa.Table):
        table = population.data.table  # a datasets.Dataset (the selected rows: flatten its indices first)
        if getattr(population, "_indices", None) is not None:
            table = population.flatten_indices().data.table
    elif isinstance(population, list | tuple) and all(isinstance(row, Mapping) for row in population):
        table = pa.Table.from_pylist(list(population))
    else:
        raise UnqoverError(
            "population: give the whole dataset's rows as a pyarrow Table, a datasets.Dataset or a list of dicts, "
            f"not {type(population).__name__}"
        )
    if "id" not in table.column_names:
        raise UnqoverError("population: its rows need their `id` (the dataset's id column)")
    return table.select([c for c in ROW_COLUMNS if c in table.column_names])


def sample_of_population(
    population, scores: pa.Table, *, resamples: int, seed: int, selection: dict | None = None, **options
) -> UnqoverBias:
    """Scores of a sample of a dataset's groups (id, score_1, score_2) measured against the whole dataset
    ``population`` exactly as ``unqover measure`` measures them: estimates of the whole dataset's values with
    their intervals, or declined with the reason (the evaluate module's ``population``). ``selection`` is how the
    sample was drawn (default: this project's design with ``seed``)."""
    from unqover.scoring.sampling import DESIGN

    rows = population_table(population)
    chosen = selection if selection is not None else {"design": DESIGN, "seed": seed}
    return measure_joined_scores(
        rows, scores, {"selection": chosen}, "the population", resamples=resamples, seed=seed, **options
    )
