"""`unqover probe MODEL --bias nli-gender`: the NLI gender-occupation probe with the same runner and run folder.

Each row (premise x template) holds both hypotheses; the scores are P_e = sigmoid(z_e − z_c) of the female
hypothesis (``score_1``) and of the male one (``score_2``), neutral dropped as in the paper. When the model has a
neutral label its 3-way neutral probabilities are scored too (``neutral/`` in the run folder) for the neutral rate.
"""

from __future__ import annotations

import hashlib
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


def seeded_keys(seed: int, tag: str, *columns: list) -> np.ndarray:
    """A uniform number in [0, 1) per position from a hash of (tag, seed, the columns' values there).

    The same values and seed give the same number on every machine, whatever the row order (blake2b, not
    Python's salted ``hash``); ``tag`` keeps different draws of one seed independent.
    """
    return np.array(
        [
            int.from_bytes(
                hashlib.blake2b(
                    "\x1f".join((tag, str(seed), *map(str, values))).encode(), digest_size=8
                ).digest(),
                "big",
            )
            / 2.0**64
            for values in zip(*columns, strict=True)
        ]
    )


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


def probe_nli(model_id: str, options: ProbeOptions) -> ProbeRun | None:
    """Score, measure and report the NLI gender-occupation probe."""
    from unqover.measure.nli import nli_gender_bias
    from unqover.probe.nli import NLIScorer, load_nli_model
    from unqover.report.nli import nli_html, nli_markdown

    refuse_unqover_options(options, "rows per occupation, for a quick NLI run")
    state, loaded = load_for_process(model_id, options, load_nli_model, label_map=options.label_map)
    config = options.config or "synthetic"
    rows, dataset = load_nli_rows(options, config)
    selection = None
    if options.limit is not None:
        kept = limit_per_occupation(rows, options.limit, options.seed)
        selection = describe_nli_selection(rows, kept, options.limit, options.seed)
        rows = kept
    dataset = {**dataset, "rows": rows.num_rows, "fingerprint": dataset_fingerprint(rows["id"])}
    folder = options.output or default_output(model_id, NLI_BIAS, config, "default")
    provenance_model = loaded.provenance()
    identity = {
        "model": {"id": model_id, "revision": provenance_model.get("revision"), "family": "nli"},
        "labels": provenance_model.get("label_ids"),
        "dataset": dataset,
        "dtype": provenance_model.get("dtype"),
    }
    if selection is not None:
        identity["selection"] = selection
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
    if selection is not None:
        result.selection = selection
    results = {"provenance": provenance, "result": result.to_dict()}
    write_json_atomic(folder / "results.json", results)
    write_text_atomic(folder / "report.md", nli_markdown(results))
    write_text_atomic(folder / "report.html", nli_html(results))
    return ProbeRun(folder, result, provenance)
