"""Dataset cards for the UnQover datasets, written from the generation plans so their numbers are the data's."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import pyarrow as pa
import yaml

from unqover.generate.unqover import MASK_PLACEHOLDER, ROW_SCHEMA, ProbePlan
from unqover.hub.eval_results import results_section
from unqover.hub.folder import IDENTITY_KEY, card_configs, plans_identity
from unqover.lexicon.upstream import UPSTREAM_COMMIT, UPSTREAM_REPO

CITATION = """@inproceedings{li-etal-2020-unqovering,
    title = "{UNQOVER}ing Stereotyping Biases via Underspecified Questions",
    author = "Li, Tao and Khot, Tushar and Khashabi, Daniel and Sabharwal, Ashish and Srikumar, Vivek",
    booktitle = "Findings of the Association for Computational Linguistics: EMNLP 2020",
    year = "2020",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/2020.findings-emnlp.311",
}"""

COMMON_DEFECTS = [
    'The article fix only turns "a" into "an" before a vowel letter, whatever the sound, and never the reverse '
    '(it writes "an European", "an Uzbekistani"); the first word of a question is never fixed.',
    'Many "negated" attributes are antonyms rather than logical negations ("were bad at music" / "were good at music").',
    'Some attribute lines have grammar slips, kept as published: "had nearly no illegal immigrant", '
    '"smell of flower", "speed when driving", singular forms that keep "their".',
]

COLUMN_MEANINGS = {
    "id": "Stable, unique row id: 16 hex digits of a hash of the row's identities and texts. The same inputs give the same id on every machine.",
    "template_id": "Index of the template among the non-comment lines of the template file (the original's `tid`).",
    "subject_1": "Identity of the first-mentioned subject (the `[subj]` text: a name, country, ethnicity or religion).",
    "subject_2": "Identity of the second-mentioned subject.",
    "subject_1_cluster": "Group of subject 1 (`female`/`male` for gender; null when the list has none).",
    "subject_2_cluster": "Group of subject 2.",
    "attribute": "Attribute identity: the positive text of the attribute's base (plural) form, e.g. `was an accountant`.",
    "attribute_cluster": "Attribute class (`crime`, `rude`, `poor`, `indecent`, `negative`; null for occupations).",
    "attribute_type": "`p_act` (people attribute) or `l_act` (place attribute).",
    "polarity": "`positive` for the question with the attribute, `negated` for the one with its negation.",
    "context": "The underspecified context that mentions both subjects.",
    "question": f"The question. In `mlm*` configs it holds `{MASK_PLACEHOLDER}` where the model's mask token goes.",
    "subject_1_span": "`[start, end)` character offsets of subject 1's surface text (demonym where the template uses one) in `context`.",
    "subject_2_span": "`[start, end)` character offsets of subject 2's surface text in `context`.",
}  # fmt: skip
"""The meaning of each column of ``ROW_SCHEMA``, in its order (the card's column table)."""


def front_matter(metadata: Mapping) -> str:
    """A card's YAML header between its ``---`` lines (the Hub reads configs, features and licence from it)."""
    return f"---\n{yaml.safe_dump(metadata, sort_keys=False, allow_unicode=True, width=1000)}---\n"


def _type_name(dtype: pa.DataType, code_lists: bool) -> str:
    if pa.types.is_list(dtype):
        name = f"list<{dtype.value_type}>"
        return f"`{name}`" if code_lists else name
    return str(dtype)


def column_table(schema: pa.Schema, meanings: Mapping[str, str], *, code_lists: bool = False) -> str:
    """The rows of a card's ``| column | type | meaning |`` table: each column of ``schema`` in order, with its
    Arrow type (list types in backticks with ``code_lists``) and its meaning. Every column needs one, and only
    the schema's columns have one, so the table cannot drift from the rows."""
    if list(meanings) != schema.names:
        raise ValueError(f"the meanings name {list(meanings)}, the schema {schema.names}")
    return "\n".join(
        f"| `{field.name}` | {_type_name(field.type, code_lists)} | {meanings[field.name]} |"
        for field in schema
    )


def size_category(rows: int) -> str:
    """The Hub's ``size_categories`` bucket of a row count."""
    for bound, label in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
    ):
        if rows < bound:
            return label
    return "1M<n<10M" if rows < 10_000_000 else "10M<n<100M"


def row_features(schema: pa.Schema = ROW_SCHEMA) -> list[dict]:
    """``schema`` (default: the UnQover rows') as a card's ``features`` list, as ``datasets`` writes it."""
    import datasets  # slow to import: only when a card is written

    return datasets.Features.from_arrow_schema(schema)._to_yaml_list()


def card_metadata(plans: Mapping[str, ProbePlan], probe: str, fingerprints: Mapping[str, str]) -> dict:
    """The card's YAML header: configs with their files, features and sizes, and what the rows are (``unqover:``
    the probe, the unqover version, each config's rows and fingerprint)."""
    features = row_features()
    masked = any(plan.config.masked for plan in plans.values())
    qa = any(not plan.config.masked for plan in plans.values())
    return {
        "pretty_name": None,  # filled by dataset_card
        "language": ["en"],
        "license": "apache-2.0",
        "annotations_creators": ["machine-generated"],
        "language_creators": ["expert-generated"],
        "multilinguality": ["monolingual"],
        "source_datasets": ["original"],
        "size_categories": [size_category(sum(p.num_rows for p in plans.values()))],
        "task_categories": [c for c, use in (("question-answering", qa), ("fill-mask", masked)) if use],
        "task_ids": [t for t, use in (("extractive-qa", qa), ("masked-language-modeling", masked)) if use],
        "tags": ["bias", "fairness", "stereotypes", "unqover", "underspecified-questions"],
        "configs": card_configs(plans),
        "dataset_info": [{"config_name": name, "features": features} for name in plans],
        IDENTITY_KEY: plans_identity(probe, plans, fingerprints),
    }


def _config_table(plans: Mapping[str, ProbePlan]) -> str:
    lines = [
        "| config | what | rows (model inputs) | entries (ordered pair × template × attribute) | groups (paper Table 1 unit) | subjects | templates | word lists (subjects / attributes / templates) |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, plan in plans.items():
        c = plan.config
        lists = f"`{' + '.join(c.subjects)}` / `{c.attributes}` / `{c.templates}`" + (
            f" + filler `{c.filler}`" if c.filler else ""
        )
        lines.append(
            f"| `{name}` | {c.summary} | {plan.num_rows:,} | {plan.num_entries:,} | {plan.num_groups:,} | "
            f"{len(plan.subjects)} | {len(plan.templates)} | {lists} |"
        )
    return "\n".join(lines)


def _example(plans: Mapping[str, ProbePlan]) -> str:
    plan = next(iter(plans.values()))
    row = next(plan.batches(pairs_per_batch=1)).slice(0, 1).to_pylist()[0]
    return json.dumps(row, ensure_ascii=False, indent=2)


def dataset_card(
    bias: str,
    plans: Mapping[str, ProbePlan],
    fingerprints: Mapping[str, str],
    *,
    title: str,
    summary: str,
    defects: Sequence[str],
) -> str:
    """The full Markdown card (YAML header + prose) of one UnQover dataset (``fingerprints``: each config's,
    :meth:`unqover.generate.unqover.ProbePlan.fingerprint`).

    The words of its bias class come from the probe's definition: ``title`` ("gender–occupation"), ``summary``
    (what each context pairs and asks, with an example) and the class's own ``defects`` (listed before
    :data:`COMMON_DEFECTS`).
    """
    metadata = card_metadata(plans, bias, fingerprints)
    metadata["pretty_name"] = f"UnQover {title} probes"
    return "".join(
        (
            front_matter(metadata),
            _summary_section(title, summary),
            _configs_section(bias, plans),
            _structure_section(plans),
            _making_section(bias),
            _defects_and_use_section(defects),
            f"{results_section(bias)}\n",
            _license_section(),
        )
    )


def _summary_section(title: str, summary: str) -> str:
    return f"""
# UnQover {title} probes

> **Content warning.** This dataset contains stereotypes about people's {title.split("–")[0]} that are offensive.
> They are there by design: the dataset probes whether models hold them. Do not use it to train models.

## Summary

Underspecified questions from *UNQOVERing Stereotyping Biases via Underspecified Questions* (Li et al.,
Findings of EMNLP 2020). Each context {summary}. Nothing in the context answers the question, so any
preference a model shows between the two subjects is a bias; the UnQover metrics (`unqover_bias`) cancel the
model's positional and attribute-independent reasoning errors by pairing each question with its
subject-swapped and negated variants.

The rows are exactly the original generator's (allenai/unqover, `templates.generate_underspecified_templates
--template_type slot_act_map`) on the upstream word lists at commit `{UPSTREAM_COMMIT[:7]}`: the same contexts,
questions and answer texts in the same loop order, wording slips included.
"""


def _configs_section(bias: str, plans: Mapping[str, ProbePlan]) -> str:
    first = next(iter(plans))
    return f"""
## Configs

{_config_table(plans)}

Every unordered subject pair × template × attribute (a *group*) appears as 4 rows: both subject orders × the
positive and the negated question. The paper's Table 1 counts groups.

```python
from datasets import load_dataset

# or a local folder: load_dataset("datasets/unqover/{bias}", "{first}", split="test")
rows = load_dataset("unqover/{bias}", "{first}", split="test")
```
"""


def _structure_section(plans: Mapping[str, ProbePlan]) -> str:
    return f"""
## Structure

One row per model input. Masked-LM rows have the same columns; the model input is `context + " " + question`,
with `{MASK_PLACEHOLDER}` in the question replaced by the tokenizer's mask token.

| column | type | meaning |
|---|---|---|
{column_table(ROW_SCHEMA, COLUMN_MEANINGS)}

First row of `{next(iter(plans))}`:

```json
{_example(plans)}
```
"""


def _making_section(bias: str) -> str:
    return f"""
## How the data was made

For every ordered subject pair (two subject lists: every cross pair, then every flipped pair; one list: every
pair i < j, then every flip), every template and every attribute row of the template's slot type:

1. the attribute (positive text in the positive question, negated text in the negated one) and the subjects
   (identity or demonym, as the template asks) fill their placeholders;
2. the original's article fix: a token `a`/`A` before a token that starts with a vowel letter becomes `an`/`An`;
3. `qa-newsqa` puts the NewsQA header (`[aug] yes no  [text] (CNN) --`) and two spaces before the context;
4. `mlm*` questions carry `{MASK_PLACEHOLDER}` where the mask token goes.

Subject spans are computed while filling the template, so they are exact and word-boundary safe. Templates,
subjects and attributes come from the upstream word lists ({UPSTREAM_REPO} at
`{UPSTREAM_COMMIT}`, Apache-2.0), which `unqover build-datasets` downloads and checks by SHA-256 or reads
from a local folder. Rebuild with:

```
unqover build-datasets {bias}                       # downloads the pinned word lists
unqover build-datasets --word-lists PATH {bias}     # or a local word_lists/ folder
```
"""


def _defects_and_use_section(defects: Sequence[str]) -> str:
    defect_lines = "\n".join(f"- {d}" for d in [*defects, *COMMON_DEFECTS])
    return f"""
## Known defects (kept for fidelity)

{defect_lines}

## Intended use and limitations

Use it to measure stereotyping bias of extractive QA models and masked or causal language models with the
UnQover metrics, in comparison with the paper. The templates are short and artificial and the subject and
attribute lists are small, US-centric and English-only; a low score does not show that a model is unbiased,
and scores measure association under these templates, not harm in any application. The `mlm-bert` and
`mlm-roberta` configs reproduce the original's single-token subject lists; `mlm` uses the full lists and leaves
multi-token subjects to the scorer.

"""


def _license_section() -> str:
    return f"""## License and attribution

Apache-2.0. Word lists and templates by Tao Li, Tushar Khot, Daniel Khashabi, Ashish Sabharwal and Vivek
Srikumar, from [{UPSTREAM_REPO}](https://github.com/{UPSTREAM_REPO}) (Apache-2.0); generated by the `unqover`
toolkit.

## Citation

```bibtex
{CITATION}
```
"""
