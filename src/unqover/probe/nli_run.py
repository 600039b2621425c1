"""`unqover probe MODEL --bias nli-gender`: the NLI gender-occupation probe with the same runner and run folder.

Each row (premise x template) holds both hypotheses; the scores are P_e = sigmoid(z_e − z_c) of the female
hypothesis (``score_1``) and of the male one (``score_2``), neutral dropped as in the paper. When the model has a
neutral label its 3-way neutral probabilities are scored too (``neutral/`` in the run folder) for the neutral rate.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from unqover.errors import UnqoverError
from unqover.files import write_json_atomic, write_text_atomic
from unqover.predictions import write_predictions
from unqover.probe.run import (
    NLI_BIAS,
    ProbeOptions,
    ProbeRun,
    claim_and_score,
    dataset_fingerprint,
    default_output,
    library_versions,
    load_for_process,
    refuse_unqover_options,
)

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
    """Adapts :class:`unqover.probe.nli.NLIScorer` to the runner: one row gives (female, male) values."""

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

    def score(self, rows: pa.Table) -> np.ndarray:
        premises = rows["premise"].to_pylist()
        female = self.scorer.score_pairs(premises, rows["hypothesis_female"].to_pylist())[self.output]
        male = self.scorer.score_pairs(premises, rows["hypothesis_male"].to_pylist())[self.output]
        return np.stack([female, male], axis=1).astype(np.float64)


def load_nli_rows(options: ProbeOptions, config: str) -> tuple[pa.Table, dict]:
    """--dataset, else a local build in datasets/unqover/nli-gender, else synthetic premises made in memory."""
    from unqover.hub.load import load_rows

    if options.dataset:
        rows, source = load_rows(options.dataset, config), str(options.dataset)
    elif (Path("datasets/unqover") / NLI_BIAS / "data" / config).is_dir():
        source = str(Path("datasets/unqover") / NLI_BIAS)
        rows = load_rows(source, config)
    elif config == "synthetic":
        from unqover.generate.nli import nli_rows, synthetic_premises

        rows, source = nli_rows(synthetic_premises(), family="main"), "generated synthetic premises"
    else:
        raise UnqoverError(
            f"no {config!r} NLI data: build it (unqover build-datasets nli-gender) or pass --dataset"
        )
    missing = [c for c in NLI_COLUMNS if c not in rows.column_names]
    if missing:
        raise UnqoverError(f"dataset {source} lacks the columns {missing}; is it an nli-gender dataset?")
    return rows, {"source": source, "config": config, "split": "test"}


def limit_per_occupation(rows: pa.Table, limit: int) -> pa.Table:
    """Keep ``limit`` rows per occupation, round-robin over templates (first row of each template, then the
    second, ...), in row order: a deterministic quick run that still sees every occupation and template."""
    from unqover.probe.sampling import _codes, _rank_within

    if isinstance(limit, bool) or not isinstance(limit, int | np.integer) or limit < 1:
        raise UnqoverError(f"limit must be a whole number of rows per occupation >= 1, got {limit!r}")
    if rows.num_rows == 0:
        return rows
    (occupation,), _ = _codes(rows["occupation"])
    (template,), num_templates = _codes(rows["template_id"].cast(pa.string()))
    order = np.arange(rows.num_rows)
    within_template = _rank_within(occupation * num_templates + template, order)
    rank = _rank_within(occupation, within_template * num_templates + template)
    keep = rank < int(limit)
    return rows if keep.all() else rows.filter(pa.array(keep))


def probe_nli(model_id: str, options: ProbeOptions) -> ProbeRun | None:
    """Score, measure and report the NLI gender-occupation probe."""
    from unqover.measure.nli import nli_gender_bias
    from unqover.probe.nli import NLIScorer, load_nli_model
    from unqover.report.nli import nli_html, nli_markdown

    refuse_unqover_options(options, "rows per occupation, for a quick NLI run")
    state, loaded = load_for_process(model_id, options, load_nli_model, label_map=options.label_map)
    config = options.config or "synthetic"
    rows, dataset = load_nli_rows(options, config)
    if options.limit is not None:
        rows = limit_per_occupation(rows, options.limit)
    dataset = {**dataset, "rows": rows.num_rows, "fingerprint": dataset_fingerprint(rows["id"])}
    folder = options.output or default_output(model_id, NLI_BIAS, config, "default")
    provenance_model = loaded.provenance()
    identity = {
        "model": {"id": model_id, "revision": provenance_model.get("revision"), "family": "nli"},
        "labels": provenance_model.get("label_ids"),
        "dataset": dataset,
        "dtype": provenance_model.get("dtype"),
    }
    if options.limit is not None:
        identity["selection"] = {"limit": options.limit, "per": "occupation"}
    scorer = NLIScorer(loaded, batch_size=1 << 30)  # the runner chooses the batches
    extra = {"neutral": NLIRowScorer(scorer, "neutral")} if "neutral" in loaded.label_ids else {}
    scores, _, merged = claim_and_score(rows, NLIRowScorer(scorer), folder, identity, options, state, extra)
    if scores is None:
        return None
    provenance = {
        **identity,
        "model": {**identity["model"], **provenance_model},
        "versions": library_versions(),
    }
    write_predictions(folder / "predictions.parquet", scores, provenance)
    neutral = merged.get("neutral")
    result = nli_gender_bias(
        scores["score_1"].to_numpy(),
        scores["score_2"].to_numpy(),
        rows["occupation_gender"].to_pylist(),
        rows["cluster"].to_pylist(),
        occupation=rows["occupation"].to_pylist(),
        template_id=rows["template_id"].to_pylist(),
        neutral_female=None if neutral is None else neutral["score_1"].to_numpy(),
        neutral_male=None if neutral is None else neutral["score_2"].to_numpy(),
        n_resamples=options.resamples,
        seed=options.seed,
    )
    results = {"provenance": provenance, "result": result.to_dict()}
    write_json_atomic(folder / "results.json", results)
    write_text_atomic(folder / "report.md", nli_markdown(results))
    write_text_atomic(folder / "report.html", nli_html(results))
    return ProbeRun(folder, result, provenance)
