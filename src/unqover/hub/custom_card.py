"""The dataset card of a custom probe (``unqover build-datasets --probe FILE``): YAML front matter with the
configs, features and row counts, then the prose that explains the probe and its rows."""

from __future__ import annotations

import json

import yaml

from unqover.generate.custom import CUSTOM_CONFIGS, CustomPlan, custom_configs, custom_plan
from unqover.generate.unqover import MASK_PLACEHOLDER, ROW_SCHEMA
from unqover.hub.card import column_table, front_matter, row_features, size_category
from unqover.hub.folder import IDENTITY_KEY, card_configs, plans_identity
from unqover.lexicon.custom_probe import CustomProbeSpec, probe_to_dict


def custom_card_metadata(
    probe: CustomProbeSpec,
    plans: dict[str, CustomPlan] | None = None,
    fingerprints: dict[str, str] | None = None,
) -> dict:
    """The card's YAML header: one config per :func:`custom_configs`, with features and row counts, and the
    rows' identity (``unqover:``) of the configs in ``fingerprints`` (None: of every config)."""
    plans = plans or {c: custom_plan(probe, c) for c in custom_configs(probe)}
    if fingerprints is None:
        fingerprints = {config: plan.fingerprint() for config, plan in plans.items()}
    features = row_features()
    masked = "mlm" in plans
    return {
        "pretty_name": f"{probe.name} (custom UnQover probe)",
        "language": [probe.language],
        "license": probe.license or "unknown",
        "annotations_creators": ["machine-generated"],
        "language_creators": ["other"],
        "multilinguality": ["monolingual"],
        "source_datasets": ["original"],
        "size_categories": [size_category(sum(p.num_rows for p in plans.values()))],
        "task_categories": ["question-answering", *(["fill-mask"] if masked else [])],
        "task_ids": ["extractive-qa", *(["masked-language-modeling"] if masked else [])],
        "tags": ["bias", "fairness", "stereotypes", "unqover", "underspecified-questions", "custom-probe"],
        "configs": card_configs(plans),
        "dataset_info": [
            {
                "config_name": name,
                "features": features,
                "splits": [{"name": "test", "num_examples": plan.num_rows}],
            }
            for name, plan in plans.items()
        ],
        IDENTITY_KEY: plans_identity(probe.name, {c: plans[c] for c in fingerprints}, fingerprints),
    }


CUSTOM_COLUMN_MEANINGS = {
    "id": "Stable, unique row id: 16 hex digits of a hash of the row's identities and texts.",
    "template_id": "Index of the template in the probe file's `templates` list.",
    "subject_1": "The first-mentioned subject.",
    "subject_2": "The second-mentioned subject.",
    "subject_1_cluster": "Cluster of subject 1 (null for a flat subject list).",
    "subject_2_cluster": "Cluster of subject 2.",
    "attribute": "Attribute identity: its positive text, in both polarities.",
    "attribute_cluster": "The attribute's `cluster` (null when not given).",
    "attribute_type": "The attribute's `type`: `p_act` (of the subjects, default) or `l_act` (of places).",
    "polarity": "`positive` for the question with the attribute, `negated` for the negated one.",
    "context": "The underspecified context that mentions both subjects.",
    "question": f"The question. In `mlm` it holds `{MASK_PLACEHOLDER}` where the mask token goes.",
    "subject_1_span": "`[start, end)` character offsets of subject 1 in `context`.",
    "subject_2_span": "`[start, end)` character offsets of subject 2 in `context`.",
}  # fmt: skip
"""The meaning of each column of a custom probe's rows (``ROW_SCHEMA``), in its order."""


def custom_card(probe: CustomProbeSpec, fingerprints: dict[str, str] | None = None) -> str:
    """The dataset card (``README.md``) for ``unqover build-datasets --probe FILE``: YAML front matter with the
    configs (``data/<config>/*.parquet``, split ``test``), features, row counts and the identity of the built
    configs' rows (``fingerprints``; None: every config's, computed here), then the prose."""
    plans = {c: custom_plan(probe, c) for c in custom_configs(probe)}
    return "".join(
        (
            front_matter(custom_card_metadata(probe, plans, fingerprints)),
            _summary_section(probe),
            _configs_section(probe, plans),
            _structure_section(plans),
            _making_section(probe),
            _use_and_license_section(probe),
        )
    )


def _summary_section(probe: CustomProbeSpec) -> str:
    return f"""
# {probe.name}: a custom UnQover probe

> **Content warning.** A bias probe may pair people or groups with stereotypes on purpose, to test whether
> models hold them. Do not use it to train models.

## Summary

{probe.description or "A user-defined UnQover probe."}

Underspecified questions in the style of *UNQOVERing Stereotyping Biases via Underspecified Questions* (Li et
al., Findings of EMNLP 2020): nothing in the context answers the question, so any preference a model shows
between the two subjects is a bias. The UnQover metrics (`unqover_bias`) cancel the model's positional and
attribute-independent reasoning errors by pairing each question with its subject-swapped and negated variants.
"""


def _pairing(probe: CustomProbeSpec) -> str:
    if probe.clusters is None:
        return "Subjects form a flat list; every pair of subjects is used (`subject_*_cluster` is null)."
    return (
        "Subjects come in clusters ("
        + ", ".join(f"`{c}`: {len(m)}" for c, m in probe.clusters)
        + "); every pair of subjects from different clusters is used."
    )


def _configs_section(probe: CustomProbeSpec, plans: dict[str, CustomPlan]) -> str:
    table = "\n".join(
        f"| `{name}` | {CUSTOM_CONFIGS[name]} | {plan.num_rows:,} | {plan.num_groups:,} | {len(plan.subjects)} | "
        f"{len(probe.templates)} | {len(probe.attributes)} |"
        for name, plan in plans.items()
    )
    mlm_note = (
        ""
        if "mlm" in plans
        else "\nThere is no `mlm` config: add an `mlm` form to every template whose question is not `Who …?`.\n"
    )
    return f"""
## Configs

| config | what | rows (model inputs) | groups | subjects | templates | attributes |
|---|---|---:|---:|---:|---:|---:|
{table}

Every unordered subject pair × template × attribute (a *group*) appears as 4 rows: both subject orders × the
positive and the negated question. {_pairing(probe)}
{mlm_note}
```python
from datasets import load_dataset

rows = load_dataset("datasets/unqover/{probe.name}", "{next(iter(plans))}", split="test")  # a local build
```
"""


def _structure_section(plans: dict[str, CustomPlan]) -> str:
    first = next(iter(plans))
    example = next(plans[first].batches(pairs_per_batch=1)).slice(0, 1).to_pylist()[0]
    return f"""
## Structure

One row per model input, with the columns of the built-in UnQover datasets. Masked-LM rows have the same
columns; the model input is `context + " " + question`, with `{MASK_PLACEHOLDER}` replaced by the mask token.

| column | type | meaning |
|---|---|---|
{column_table(ROW_SCHEMA, CUSTOM_COLUMN_MEANINGS)}

First row of `{first}`:

```json
{json.dumps(example, ensure_ascii=False, indent=2)}
```
"""


def _making_section(probe: CustomProbeSpec) -> str:
    definition = yaml.safe_dump(probe_to_dict(probe), sort_keys=False, allow_unicode=True, width=100)
    article_fix = (
        " The original generator's article fix then turns a token `a`/`A` before a vowel-initial token into `an`/`An`."
        if probe.fix_articles
        else ""
    )
    return f"""
## How the data was made

Generated by the `unqover` toolkit from the probe file below (`unqover build-datasets --probe FILE`): for every
ordered subject pair (each pair, then its flip), every template and every attribute, the subjects fill
`{{subject_1}}`/`{{subject_2}}` and the attribute (its positive text, or its negated text in the negated question
unless the template gives `negated_question`) fills `{{attribute}}`.{article_fix}

```yaml
{definition}```
"""


def _use_and_license_section(probe: CustomProbeSpec) -> str:
    return f"""
## Intended use and limitations

Use it to measure stereotyping bias of extractive QA models and masked or causal language models with the
UnQover metrics. The templates and word lists are the probe author's; a low score does not show that a model
is unbiased, and scores measure association under these templates, not harm in any application.

## License

{probe.license or "Not stated by the probe author."}
"""
