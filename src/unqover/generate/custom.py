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

import json
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa
import yaml

from unqover.errors import UnqoverError
from unqover.generate.text import fix_articles, render, shift_span
from unqover.generate.unqover import MASK_PLACEHOLDER, ROW_SCHEMA, ProbeConfig, ProbePlan
from unqover.lexicon.custom import (
    ATTRIBUTE,
    ATTRIBUTE_NEGATED,
    MASK,
    SUBJECT_1,
    SUBJECT_2,
    CustomProbe,
    CustomProbeError,
    probe_to_dict,
    segments,
)
from unqover.lexicon.wordlists import Attribute, Segment, Subject, Template

#: Configs of a custom probe dataset, in card order.
CUSTOM_CONFIGS = {
    "qa": "extractive QA: context + question",
    "mlm": f"masked LM: context + question with {MASK_PLACEHOLDER}",
}
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

    @cached_property
    def contexts(self) -> tuple[list[str], np.ndarray]:
        texts: list[str] = []
        spans = np.empty((len(self.pairs) * len(self.templates), 2, 2), dtype=np.int32)
        for p, (i, j) in enumerate(self.pairs):
            values = {SUBJECT_1: self.subjects[i].identity, SUBJECT_2: self.subjects[j].identity}
            for t, template in enumerate(self.templates):
                text, found = self._render(template.context, values, True)
                texts.append(text)
                spans[p * len(self.templates) + t] = np.array([found[SUBJECT_1], found[SUBJECT_2]])
        return texts, spans

    @cached_property
    def block(self) -> dict[str, np.ndarray | list]:
        template, attribute, polarity, questions = [], [], [], []
        attributes: list[Attribute] = []
        for t, (tpl, attrs) in enumerate(zip(self.templates, self.template_attributes, strict=True)):
            for attr in attrs:
                attributes.append(attr)
                values = {ATTRIBUTE: attr.positive, ATTRIBUTE_NEGATED: attr.negated, MASK: MASK_PLACEHOLDER}
                for negated in (False, True):
                    template.append(t)
                    attribute.append(len(attributes) - 1)
                    polarity.append(int(negated))
                    fields = tpl.negated_question if negated else tpl.positive_question
                    questions.append(self._render(fields, values, False)[0])
        return {
            "template": np.array(template, dtype=np.int64),
            "attribute": np.array(attribute, dtype=np.int64),
            "polarity": np.array(polarity, dtype=np.int64),
            "questions": questions,
            "attributes": attributes,
        }


def custom_configs(probe: CustomProbe) -> list[str]:
    """The configs this probe can make: ``qa`` always, ``mlm`` when every template has a masked-LM form."""
    return [c for c in CUSTOM_CONFIGS if c == "qa" or all(t.masked_derivable for t in probe.templates)]


def ordered_pairs(probe: CustomProbe) -> np.ndarray:
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


def _template(probe: CustomProbe, index: int, masked: bool) -> Template:
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


def custom_plan(probe: CustomProbe, config: str = "qa") -> CustomPlan:
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
        pairs=ordered_pairs(probe),
        templates=templates,
        template_attributes=[attributes] * len(templates),
        fix=probe.fix_articles,
    )


def custom_rows(probe: CustomProbe, config: str = "qa") -> pa.Table:
    """All rows of one config as one table with the built-in UnQover columns (``ROW_SCHEMA``)."""
    plan = custom_plan(probe, config)
    return pa.Table.from_batches(list(plan.batches()), schema=ROW_SCHEMA)


# -- dataset card ------------------------------------------------------------------------------------------


def _features() -> list[dict]:
    """``ROW_SCHEMA`` as the card's ``features`` list (what ``datasets.Features._to_yaml_list`` writes)."""
    names = {pa.string(): "string", pa.int32(): "int32"}
    out = []
    for column in ROW_SCHEMA:
        if pa.types.is_list(column.type):
            out.append({"name": column.name, "list": names[column.type.value_type]})
        else:
            out.append({"name": column.name, "dtype": names[column.type]})
    return out


def _size_category(rows: int) -> str:
    for bound, label in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
    ):
        if rows < bound:
            return label
    return "1M<n<10M" if rows < 10_000_000 else "10M<n<100M"


def custom_card_metadata(probe: CustomProbe, plans: dict[str, CustomPlan] | None = None) -> dict:
    """The card's YAML header: one config per :func:`custom_configs`, with features and row counts."""
    plans = plans or {c: custom_plan(probe, c) for c in custom_configs(probe)}
    features = _features()
    masked = "mlm" in plans
    configs = []
    for i, name in enumerate(plans):
        entry: dict = {"config_name": name}
        if i == 0:
            entry["default"] = True
        entry["data_files"] = [{"split": "test", "path": f"data/{name}/*.parquet"}]
        configs.append(entry)
    return {
        "pretty_name": f"{probe.name} (custom UnQover probe)",
        "language": [probe.language],
        "license": probe.license or "unknown",
        "annotations_creators": ["machine-generated"],
        "language_creators": ["other"],
        "multilinguality": ["monolingual"],
        "source_datasets": ["original"],
        "size_categories": [_size_category(sum(p.num_rows for p in plans.values()))],
        "task_categories": ["question-answering", *(["fill-mask"] if masked else [])],
        "task_ids": ["extractive-qa", *(["masked-language-modeling"] if masked else [])],
        "tags": ["bias", "fairness", "stereotypes", "unqover", "underspecified-questions", "custom-probe"],
        "configs": configs,
        "dataset_info": [
            {
                "config_name": name,
                "features": features,
                "splits": [{"name": "test", "num_examples": plan.num_rows}],
            }
            for name, plan in plans.items()
        ],
    }


def custom_card(probe: CustomProbe) -> str:
    """The dataset card (``README.md``) for ``unqover build-datasets --probe FILE``: YAML front matter with the
    configs (``data/<config>/*.parquet``, split ``test``), features and row counts, then the prose."""
    plans = {c: custom_plan(probe, c) for c in custom_configs(probe)}
    header = yaml.safe_dump(
        custom_card_metadata(probe, plans), sort_keys=False, allow_unicode=True, width=1000
    )
    first = next(iter(plans))
    example = next(plans[first].batches(pairs_per_batch=1)).slice(0, 1).to_pylist()[0]
    table = "\n".join(
        f"| `{name}` | {CUSTOM_CONFIGS[name]} | {plan.num_rows:,} | {plan.num_groups:,} | {len(plan.subjects)} | "
        f"{len(probe.templates)} | {len(probe.attributes)} |"
        for name, plan in plans.items()
    )
    if probe.clusters is not None:
        pairing = (
            "Subjects come in clusters ("
            + ", ".join(f"`{c}`: {len(m)}" for c, m in probe.clusters)
            + "); every pair of subjects from different clusters is used."
        )
    else:
        pairing = "Subjects form a flat list; every pair of subjects is used (`subject_*_cluster` is null)."
    mlm_note = (
        ""
        if "mlm" in plans
        else "\nThere is no `mlm` config: add an `mlm` form to every template whose question is not `Who …?`.\n"
    )
    definition = yaml.safe_dump(probe_to_dict(probe), sort_keys=False, allow_unicode=True, width=100)
    description = probe.description or "A user-defined UnQover probe."
    columns = [
        ("id", "string", "Stable, unique row id: 16 hex digits of a hash of the row's identities and texts."),
        ("template_id", "int32", "Index of the template in the probe file's `templates` list."),
        ("subject_1", "string", "The first-mentioned subject."),
        ("subject_2", "string", "The second-mentioned subject."),
        ("subject_1_cluster", "string", "Cluster of subject 1 (null for a flat subject list)."),
        ("subject_2_cluster", "string", "Cluster of subject 2."),
        ("attribute", "string", "Attribute identity: its positive text, in both polarities."),
        ("attribute_cluster", "string", "The attribute's `cluster` (null when not given)."),
        (
            "attribute_type",
            "string",
            "The attribute's `type`: `p_act` (of the subjects, default) or `l_act` (of places).",
        ),
        (
            "polarity",
            "string",
            "`positive` for the question with the attribute, `negated` for the negated one.",
        ),
        ("context", "string", "The underspecified context that mentions both subjects."),
        (
            "question",
            "string",
            f"The question. In `mlm` it holds `{MASK_PLACEHOLDER}` where the mask token goes.",
        ),
        ("subject_1_span", "list<int32>", "`[start, end)` character offsets of subject 1 in `context`."),
        ("subject_2_span", "list<int32>", "`[start, end)` character offsets of subject 2 in `context`."),
    ]
    column_rows = "\n".join(f"| `{n}` | {t} | {m} |" for n, t, m in columns)
    return f"""---
{header}---

# {probe.name}: a custom UnQover probe

> **Content warning.** A bias probe may pair people or groups with stereotypes on purpose, to test whether
> models hold them. Do not use it to train models.

## Summary

{description}

Underspecified questions in the style of *UNQOVERing Stereotyping Biases via Underspecified Questions* (Li et
al., Findings of EMNLP 2020): nothing in the context answers the question, so any preference a model shows
between the two subjects is a bias. The UnQover metrics (`unqover_bias`) cancel the model's positional and
attribute-independent reasoning errors by pairing each question with its subject-swapped and negated variants.

## Configs

| config | what | rows (model inputs) | groups | subjects | templates | attributes |
|---|---|---:|---:|---:|---:|---:|
{table}

Every unordered subject pair × template × attribute (a *group*) appears as 4 rows: both subject orders × the
positive and the negated question. {pairing}
{mlm_note}
```python
from datasets import load_dataset

rows = load_dataset("datasets/unqover/{probe.name}", "{first}", split="test")  # a local build
```

## Structure

One row per model input, with the columns of the built-in UnQover datasets. Masked-LM rows have the same
columns; the model input is `context + " " + question`, with `{MASK_PLACEHOLDER}` replaced by the mask token.

| column | type | meaning |
|---|---|---|
{column_rows}

First row of `{first}`:

```json
{json.dumps(example, ensure_ascii=False, indent=2)}
```

## How the data was made

Generated by the `unqover` toolkit from the probe file below (`unqover build-datasets --probe FILE`): for every
ordered subject pair (each pair, then its flip), every template and every attribute, the subjects fill
`{{subject_1}}`/`{{subject_2}}` and the attribute (its positive text, or its negated text in the negated question
unless the template gives `negated_question`) fills `{{attribute}}`.{
        " The original generator's article fix then turns a token `a`/`A` before a vowel-initial token into `an`/`An`."
        if probe.fix_articles
        else ""
    }

```yaml
{definition}```

## Intended use and limitations

Use it to measure stereotyping bias of extractive QA models and masked or causal language models with the
UnQover metrics. The templates and word lists are the probe author's; a low score does not show that a model
is unbiased, and scores measure association under these templates, not harm in any application.

## License

{probe.license or "Not stated by the probe author."}
"""


__all__ = [
    "CUSTOM_CONFIGS",
    "CustomPlan",
    "custom_card",
    "custom_card_metadata",
    "custom_configs",
    "custom_plan",
    "custom_rows",
    "ordered_pairs",
]
