"""Rows of a user-defined probe (:mod:`unqover.lexicon.custom`), made exactly like the UnQover classes' rows.

A custom probe becomes a :class:`~unqover.generate.unqover.ProbePlan`, so its rows have the built-in columns,
types, ids (the same content hash: the same probe file gives the same ids on every machine), loop order and
batching, and they go through the same Parquet writer, measures and reports:

* ordered subject pairs: every unordered pair (i < j in file order; across clusters when the file gives
  clusters, all pairs for a flat list), then every flipped pair;
* for each pair, each template in file order (``template_id`` = its index), each attribute in file order, the
  positive then the negated question: 4 rows per unordered pair x template x attribute (a group);
* ``attribute`` holds the positive text in both polarities; the negated question has the attribute's
  ``negated`` text, or the template's ``negated_question`` with the positive text;
* ``subject_k_span`` are the ``[start, end)`` offsets of subject k's first mention in ``context``;
* configs: ``qa`` (context + question) and ``mlm`` (the same contexts; the question is the template's ``mlm``
  form, or derived from a ``"Who …?"`` question as ``"[MASK] …."``, with
  :data:`~unqover.generate.unqover.MASK_PLACEHOLDER` where the model's mask token goes);
* ``fix_articles: true`` applies the original generator's article fix ("a" -> "an" before a vowel letter).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa

from unqover.errors import UnqoverError
from unqover.generate.text import fix_articles, render, shift_span
from unqover.generate.unqover import MASK_PLACEHOLDER, ROW_SCHEMA, ProbeConfig, ProbePlan
from unqover.lexicon.custom import CustomProbeError
from unqover.lexicon.custom_probe import (
    ATTRIBUTE,
    ATTRIBUTE_NEGATED,
    MASK,
    SUBJECT_1,
    SUBJECT_2,
    CustomProbeSpec,
    segments,
)
from unqover.lexicon.wordlists import Attribute, Segment, Subject, Template

#: Configs of a custom probe dataset, in card order.
CUSTOM_CONFIGS = {
    "qa": "extractive QA: context + question",
    "mlm": f"masked LM: context + question with {MASK_PLACEHOLDER}",
}
#: Rows per Arrow record batch (as ``ProbePlan.batches``): a custom probe's rows are made one batch at a time.
ROWS_PER_BATCH = 262_144
#: Every template uses this one attribute slot; the row's ``attribute_type`` is the attribute's own ``type``.
_SLOT_TYPE = ATTRIBUTE.name


@dataclass
class CustomPlan(ProbePlan):
    """A :class:`ProbePlan` whose texts come from a probe file (the article fix optional, no filler)."""

    fix: bool = False

    def _render(self, fields: tuple[Segment, ...], values: dict, first_token_fixable: bool):
        text, spans = render(fields, values)
        if not self.fix:
            return text, spans
        fixed, inserted = fix_articles(text, first_token_fixable=first_token_fixable)
        return fixed, {slot: shift_span(span, inserted) for slot, span in spans.items()}

    def _context(
        self, template: Template, subject_1: Subject, subject_2: Subject
    ) -> tuple[str, Sequence[tuple[int, int]]]:
        text, found = self._render(
            template.context, {SUBJECT_1: subject_1.identity, SUBJECT_2: subject_2.identity}, True
        )
        return text, (found[SUBJECT_1], found[SUBJECT_2])

    def _question(self, template: Template, attribute: Attribute, negated: bool) -> str:
        values = {ATTRIBUTE: attribute.positive, ATTRIBUTE_NEGATED: attribute.negated, MASK: MASK_PLACEHOLDER}
        fields = template.negated_question if negated else template.positive_question
        return self._render(fields, values, False)[0]


def custom_configs(probe: CustomProbeSpec) -> list[str]:
    """The configs this probe can make: ``qa`` always, ``mlm`` when every template has a masked-LM form."""
    return [c for c in CUSTOM_CONFIGS if c == "qa" or all(t.masked_derivable for t in probe.templates)]


def custom_ordered_pairs(probe: CustomProbeSpec) -> np.ndarray:
    """Ordered subject pairs (indices into ``probe.subjects``): every i < j pair (across clusters when the
    probe has clusters), then every flip; for two clusters this is the built-in gender order."""
    clusters = probe.subject_clusters
    n = len(probe.subjects)
    i, j = np.triu_indices(n, k=1)
    if probe.clusters is not None:
        codes = np.array([[c for c, _ in probe.clusters].index(c) for c in clusters])
        keep = codes[i] != codes[j]
        i, j = i[keep], j[keep]
    forward = np.stack([i, j], axis=1)
    return np.concatenate([forward, forward[:, ::-1]]).astype(np.int64)


def _template(probe: CustomProbeSpec, index: int, masked: bool) -> Template:
    spec = probe.templates[index]
    if masked:
        positive_text, negated_text = spec.masked_question, spec.masked_negated_question
        if positive_text is None or (spec.negated_question is not None and negated_text is None):
            which = "question" if positive_text is None else "negated_question"
            key = "mlm" if positive_text is None else "mlm_negated"
            raise CustomProbeError(
                probe.source,
                f"no masked-LM form for the mlm config: the {which} {getattr(spec, which)!r} is not of the form "
                f"'Who ...?'; add {key}, e.g. \"{{mask}} {{attribute}}.\"",
                f"templates[{index}].{key}",
                spec.line,
            )
    else:
        positive_text, negated_text = spec.question, spec.negated_question
    positive = segments(positive_text)
    if negated_text is not None:  # the template negates; {attribute} is the positive text
        negated = segments(negated_text)
    else:  # the attribute's negated text goes where {attribute} is
        negated = tuple(ATTRIBUTE_NEGATED if s == ATTRIBUTE else s for s in positive)
    return Template(
        template_id=index,
        context=segments(spec.context),
        positive_question=positive,
        negated_question=negated,
        attribute_type=_SLOT_TYPE,
        subject_1_demonym=False,
        subject_2_demonym=False,
        masked=masked,
        source=probe.source,
        line=spec.line or 0,
    )


def custom_plan(probe: CustomProbeSpec, config: str = "qa") -> CustomPlan:
    """The generation plan of one config (``qa`` or ``mlm``); sizes are known before any row is made.

    Use ``plan.batches()`` for Arrow record batches (as :func:`unqover.hub.build.write_parquet_shards` does) or
    :func:`custom_rows` for one table.
    """
    if config not in CUSTOM_CONFIGS:
        raise UnqoverError(
            f"unknown config {config!r} for the custom probe {probe.name}; choose from {', '.join(CUSTOM_CONFIGS)}"
        )
    masked = config == "mlm"
    templates = [_template(probe, i, masked) for i in range(len(probe.templates))]
    attributes = [
        Attribute(
            slot_type=a.type, positive=a.positive, negated=a.negated, identity=a.positive, cluster=a.cluster
        )  # type: ignore[arg-type]
        for a in probe.attributes
    ]
    subjects = [Subject(s, c) for s, c in zip(probe.subjects, probe.subject_clusters, strict=True)]
    spec = ProbeConfig(
        name=config,
        subjects=tuple(c for c, _ in probe.clusters) if probe.clusters else ("subjects",),
        attributes="attributes",
        templates="templates",
        summary=CUSTOM_CONFIGS[config],
    )
    return CustomPlan(
        bias=probe.name,
        config=spec,
        subjects=subjects,
        pairs=custom_ordered_pairs(probe),
        templates=templates,
        template_attributes=[attributes] * len(templates),
        fix=probe.fix_articles,
    )


def row_bytes(plan: CustomPlan, pairs: int = 64, columns: Sequence[str] | None = None) -> float:
    """The mean size in memory of one row of ``plan`` (Arrow bytes; of its ``columns`` only, when given), from the
    rows of up to ``pairs`` subject pairs spread over the plan: a large probe's size is known before its rows are
    made."""
    chosen = np.unique(np.linspace(0, len(plan.pairs) - 1, num=min(pairs, len(plan.pairs))).astype(np.int64))
    table = pa.Table.from_batches(list(_part(plan, chosen).batches()), schema=ROW_SCHEMA)
    if columns is not None:
        table = table.select(list(columns))
    return table.nbytes / max(table.num_rows, 1)


def _part(plan: CustomPlan, pairs: np.ndarray) -> CustomPlan:
    """The plan of some of ``plan``'s ordered pairs (indices into ``plan.pairs``, in order): their rows are those
    rows of the whole plan, ids included, in the same order."""
    part = replace(plan, pairs=plan.pairs[pairs])
    part.__dict__["block"] = plan.block  # the questions of a pair: the same for every part
    return part


def _pair_batches(plan: CustomPlan, progress: bool, name: str) -> Iterator[pa.RecordBatch]:
    """Every row of ``plan`` as record batches, made a batch of subject pairs at a time (each batch renders only its
    own contexts), with a progress bar when ``progress``."""
    from tqdm.auto import tqdm

    per_batch = max(1, ROWS_PER_BATCH // plan.rows_per_pair)
    with tqdm(total=plan.num_rows, unit="row", unit_scale=True, desc=f"generating {name}",
              disable=not progress) as bar:  # fmt: skip
        for start in range(0, len(plan.pairs), per_batch):
            part = _part(plan, np.arange(start, min(start + per_batch, len(plan.pairs))))
            for batch in part.batches(rows_per_batch=ROWS_PER_BATCH):
                yield batch
                bar.update(batch.num_rows)


def custom_rows(probe: CustomProbeSpec, config: str = "qa", progress: bool = False) -> pa.Table:
    """All rows of one config as one table with the built-in UnQover columns (``ROW_SCHEMA``).

    The rows are made a batch of subject pairs at a time (each batch renders only its own contexts), so that
    ``progress`` can show a bar that moves while a large probe (thousands of subjects: millions of rows) is made;
    the rows and their order are those of ``custom_plan(probe, config).batches()``.
    """
    plan = custom_plan(probe, config)
    return pa.Table.from_batches(list(_pair_batches(plan, progress, probe.name)), schema=ROW_SCHEMA)


def unordered_pairs(plan: CustomPlan) -> np.ndarray:
    """Each unordered subject pair of ``plan`` once, as (i, j) subject indices: the first half of ``plan.pairs``
    (the second half flips them). A group is one of these pairs in one cell (template x attribute)."""
    return plan.pairs[: len(plan.pairs) // 2]


def custom_label_rows(probe: CustomProbeSpec, config: str = "qa") -> pa.Table:
    """Rows in which every subject, cluster, template and attribute of the probe appears: the rows of the first
    pair of each subject (a few pairs, every cell), so that a large probe's labels are known without its rows."""
    plan = custom_plan(probe, config)
    pairs = unordered_pairs(plan)
    first = np.full(len(plan.subjects), len(pairs))
    for side in (0, 1):
        np.minimum.at(first, pairs[:, side], np.arange(len(pairs)))
    cover = np.unique(first[first < len(pairs)])
    return _rows_of_pairs(plan, cover)


def custom_group_rows(probe: CustomProbeSpec, config: str, groups: np.ndarray) -> pa.Table:
    """The rows (every column) of some of the probe's groups, made from those groups alone: the rows of
    :func:`custom_rows` of those groups, ids included, in its order. ``groups``: (pair, cell) per group, the pair an
    index into :func:`unordered_pairs`, the cell ``template x attributes + attribute`` (file order)."""
    plan = custom_plan(probe, config)
    half, per_template = len(plan.pairs) // 2, len(probe.attributes)
    parts, order = [], []
    for cell in np.unique(groups[:, 1]):
        pairs = np.sort(groups[groups[:, 1] == cell, 0])
        both = np.concatenate([pairs, pairs + half])  # both subject orders, as indices into plan.pairs
        template, attribute = divmod(int(cell), per_template)
        part = replace(
            plan,
            pairs=plan.pairs[both],
            templates=[plan.templates[template]],
            template_attributes=[[plan.template_attributes[template][attribute]]],
        )
        parts.append(pa.Table.from_batches(list(part.batches()), schema=ROW_SCHEMA))
        order.append(np.repeat(both * len(plan.templates) * per_template + cell, 2))  # positive, then negated
    if not parts:
        return ROW_SCHEMA.empty_table()
    return pa.concat_tables(parts).take(pa.array(np.argsort(np.concatenate(order), kind="stable")))


def _rows_of_pairs(plan: CustomPlan, pairs: np.ndarray) -> pa.Table:
    """The rows of some unordered pairs (sorted indices into :func:`unordered_pairs`), in both subject orders."""
    both = np.concatenate([pairs, pairs + len(plan.pairs) // 2])
    return pa.Table.from_batches(list(_part(plan, both).batches()), schema=ROW_SCHEMA)


__all__ = [
    "CUSTOM_CONFIGS",
    "CustomPlan",
    "custom_configs",
    "custom_group_rows",
    "custom_label_rows",
    "custom_ordered_pairs",
    "custom_plan",
    "custom_rows",
    "row_bytes",
    "unordered_pairs",
]
