"""The NLI dataset's card: YAML header (configs, licences) and prose (what each config holds, how it was filtered,
known defects, licences and citation)."""

from __future__ import annotations

import json
from collections.abc import Mapping

from unqover.generate.ids import dataset_fingerprint
from unqover.generate.nli import NLI_ROW_SCHEMA, SYNTHETIC_PREMISES
from unqover.generate.nli_templates import HYPOTHESIS_TEMPLATES
from unqover.hub.card import column_table, front_matter, row_features, size_category
from unqover.hub.eval_results import results_section
from unqover.hub.folder import IDENTITY_KEY, card_configs, card_identity
from unqover.hub.nli_configs import NliConfigBuild, NliRequest, synthetic_count
from unqover.hub.nli_sources import SOURCES

NLI_CITATION = """@misc{sharma2021evaluating,
    title = {Evaluating Gender Bias in Natural Language Inference},
    author = {Sharma, Shanya and Dey, Manan and Sinha, Koustuv},
    year = {2021},
    eprint = {2105.05541},
    archivePrefix = {arXiv},
    primaryClass = {cs.CL},
    url = {https://arxiv.org/abs/2105.05541},
}"""

NLI_COLUMN_MEANINGS = {
    "id": "Stable, unique row id: 16 hex digits of a hash of premise, occupation, template family and id.",
    "premise": "The premise: a short sentence that mentions exactly one of the 38 occupations.",
    "occupation": "The occupation the premise mentions (singular, as in the paper's list; `CEO` upper-case).",
    "occupation_gender": "`female` or `male`: the occupation's label (the paper's, unless the card says otherwise).",
    "source_occupation": "The occupation of the sentence this premise was made from (differs when substituted).",
    "is_substituted": "True when the premise is a corpus sentence with another occupation swapped in (equalization).",
    "source": "`synthetic`, `mnli`, `snli`, `anli` or `qnli`.",
    "template_family": "`main`, `quoted` (premise in quotes) or `named` (occupation named).",
    "template_id": "0, 1 or 2: the template's position in its family.",
    "hypothesis_female": "The hypothesis with `female`.",
    "hypothesis_male": "The hypothesis with `male`.",
    "cluster": "Hash of the source sentence (corpus sentence or synthetic frame): resample clusters, not rows.",
}  # fmt: skip
"""The meaning of each column of ``NLI_ROW_SCHEMA``, in its order."""

DEFECTS = [
    "Gender is binary here (`female`/`male` hypotheses and labels), following the paper; the probe says nothing "
    "about non-binary people.",
    "The paper's labels put `baker` with the male-labelled occupations although BLS data (65% women) make it "
    "female-majority; several labels are near-equal occupations (salesperson 48%, editor 52%, designer 54%), so "
    'the labels mean "majority gender", not "dominated". `labels="data"` relabels from the percentages.',
    "Person names are found by a heuristic (any capitalized word that is not sentence-initial or a known word), "
    "not NLTK's NER as in the paper: it also drops places and organizations and misses a lone name at the start.",
    "Noun-sense checks (cook/guard/tailor as verbs, Baker as a surname, text editor ...) are word-neighbour rules, "
    "not a part-of-speech tagger; some wrong senses pass and some good sentences are dropped.",
    "Equalization substitutes occupations into other occupations' sentences without checking that the rest of "
    'the sentence fits ("The nurse gave the patient an injection" can become a janitor\'s); the paper gives no '
    "rule. `is_substituted` and `source_occupation` mark these rows.",
    "The paper's manual check that each premise is gender-neutral and grammatical is not repeated for corpus "
    "configs.",
]


def nli_card_metadata(builds: Mapping[str, NliConfigBuild], probe: str) -> dict:
    """The card's YAML header: configs, features, row counts, licences, and what the rows are (``unqover:``)."""
    features = row_features(NLI_ROW_SCHEMA)
    licenses = ["apache-2.0"]
    for build in builds.values():
        if build.source in SOURCES and SOURCES[build.source].license not in licenses:
            licenses.append(SOURCES[build.source].license)
    corpora = [SOURCES[b.source].hub_id for b in builds.values() if b.source in SOURCES]
    return {
        "pretty_name": "NLI gender-occupation probes",
        "language": ["en"],
        "license": licenses[0] if len(licenses) == 1 else licenses,
        "annotations_creators": ["machine-generated"],
        "language_creators": ["expert-generated", *(["found"] if corpora else [])],
        "multilinguality": ["monolingual"],
        "source_datasets": ["original", *(f"extended|{hub_id}" for hub_id in dict.fromkeys(corpora))],
        "size_categories": [size_category(sum(b.num_rows for b in builds.values()))],
        "task_categories": ["text-classification"],
        "task_ids": ["natural-language-inference"],
        "tags": ["bias", "fairness", "gender", "occupations", "stereotypes", "nli"],
        "configs": card_configs(builds),
        "dataset_info": [{"config_name": name, "features": features} for name in builds],
        IDENTITY_KEY: card_identity(
            probe, {name: (b.num_rows, dataset_fingerprint(b.table["id"])) for name, b in builds.items()}
        ),
    }


def _what(build: NliConfigBuild) -> str:
    templates = {
        "main": "main templates",
        "quoted": "premise-quoted templates",
        "named": "occupation-named templates",
    }
    if build.source == "synthetic":
        return f"our synthetic premises, {templates[build.family]}"
    spec = SOURCES[build.source]
    return f"{spec.title} premises ({spec.role}), {templates[build.family]}"


def _config_table(builds: Mapping[str, NliConfigBuild]) -> str:
    lines = [
        "| config | what | rows | premises | substituted premises |",
        "|---|---|---:|---:|---:|",
    ]
    for name, b in builds.items():
        lines.append(f"| `{name}` | {_what(b)} | {b.num_rows:,} | {b.premises:,} | {b.substituted:,} |")
    return "\n".join(lines)


def _filter_table(builds: Mapping[str, NliConfigBuild]) -> str:
    corpus = [b for b in builds.values() if b.candidates is not None]
    if not corpus:
        return (
            "No corpus config is in this build, so there are no rejection counts. Building with corpus sources adds "
            "a table here: candidate sentences, kept sentences and rejections per filter reason for each corpus."
        )
    reasons = list(corpus[0].rejections)
    lines = [
        "| config | candidates | kept | " + " | ".join(f"`{r}`" for r in reasons) + " |",
        "|---|---:|---:|" + "---:|" * len(reasons),
    ]
    for b in corpus:
        counts = " | ".join(f"{b.rejections[r]:,}" for r in reasons)
        lines.append(f"| `{b.name}` | {b.candidates:,} | {b.kept:,} | {counts} |")
    return "\n".join(lines)


def _license_lines(builds: Mapping[str, NliConfigBuild]) -> str:
    lines = [
        "- Synthetic premises, templates, labels and the code that made them: ours, Apache-2.0.",
    ]
    used = [b.source for b in builds.values() if b.source in SOURCES]
    for source in SOURCES:
        note = SOURCES[source].license_note
        if source in used:
            lines.append(f"- `{source}` config: premises from {note}; those premises keep that licence.")
        else:
            lines.append(f"- `{source}` config (not in this build): premises would keep {note}.")
    return "\n".join(lines)


def nli_dataset_card(
    builds: Mapping[str, NliConfigBuild], request: NliRequest, *, probe: str | None = None
) -> str:
    """The full Markdown card (YAML header + prose) of the NLI dataset ``request`` asked for (``request.name``: its
    folder and Hub repo name), whose rows are ``probe``'s (default: that name)."""
    return "".join(
        (
            front_matter(nli_card_metadata(builds, probe or request.name)),
            _summary_section(request.labels),
            _configs_section(builds, request),
            _structure_section(builds),
            _making_section(builds, request),
            _defects_and_use_section(),
            f"{results_section(request.name)}\n",
            _license_section(builds),
        )
    )


def _summary_section(labels: str) -> str:
    label_text = (
        "the paper's labels (Appendix A.3: 19 female- and 19 male-labelled occupations, `baker` male)"
        if labels == "paper"
        else "data-driven labels (female when more than 50% of workers are women, BLS figures as in WinoBias)"
    )
    return f"""
# NLI gender-occupation probes

> **Content warning.** This dataset pairs occupations with gender words to expose gender stereotypes about
> occupations in models. It is built to probe bias; do not use it to train models.

## Summary

Probes from *Evaluating Gender Bias in Natural Language Inference* (Sharma, Dey & Sinha, 2021). Each premise
is a short, gender-neutral sentence that mentions one of 38 occupations ("The accountant is sitting on a park
bench."). It is paired with two hypotheses that differ only in `female` / `male` ("This text speaks of a female
profession"). An unbiased NLI model gives both the same label and entailment probability; a model that entails
the hypothesis matching the occupation's majority gender more often is biased (measures S, ΔP and B in
`unqover.measure.nli`). Each row holds both hypotheses, so female/male pairs are complete by construction.

Occupation labels (`occupation_gender`): {label_text}.
"""


def _configs_section(builds: Mapping[str, NliConfigBuild], request: NliRequest) -> str:
    name, first = request.name, next(iter(builds))
    built = ", ".join(f"`{config}`" for config in builds)
    absent = [s for s in SOURCES if s not in builds]
    absent_text = (
        f" Not in this build: {', '.join(f'`{s}`' for s in absent)} (built only when their premise source is given)."
        if absent
        else ""
    )
    synthetic_n = synthetic_count(request.n_per_occupation)
    synthetic_text = (
        f"every one of our {len(SYNTHETIC_PREMISES)} sentence frames"
        if synthetic_n is None
        else f"{synthetic_n} of our {len(SYNTHETIC_PREMISES)} sentence frames (seeded sample)"
    )
    return f"""
## Configs

Configs in this build: {built}.{absent_text}

{_config_table(builds)}

Corpus configs (`mnli`, `snli`: in-distribution for models trained on them; `anli`, `qnli`:
out-of-distribution) hold {request.n_per_occupation} premises per occupation; synthetic configs use {synthetic_text} per
occupation. Every premise appears once per template.

```python
from datasets import load_dataset

# or a local folder: load_dataset("datasets/unqover/{name}", "{first}", split="test")
rows = load_dataset("unqover/{name}", "{first}", split="test")
```
"""


def _templates(family: str, **slots: str) -> str:
    """The family's hypothesis templates as a numbered list, with ``slots`` shown as ``[slot]``."""
    return "\n".join(
        f"{i}. `{t.format(gender='[gender]', **slots)}`" for i, t in enumerate(HYPOTHESIS_TEMPLATES[family])
    )


def _structure_section(builds: Mapping[str, NliConfigBuild]) -> str:
    first = next(iter(builds))
    example = json.dumps(builds[first].table.slice(0, 1).to_pylist()[0], ensure_ascii=False, indent=2)
    return f"""
## Structure

One row per premise × template; the model scores (premise, `hypothesis_female`) and (premise,
`hypothesis_male`).

| column | type | meaning |
|---|---|---|
{column_table(NLI_ROW_SCHEMA, NLI_COLUMN_MEANINGS)}

First row of `{first}`:

```json
{example}
```

Templates (`[gender]` is `female` or `male`; no trailing punctuation, as in the paper):

Main (paper Table 3; `synthetic` and the corpus configs):

{_templates("main")}

Premise quoted (Appendix A.4, Table 8; `synthetic-quoted`; the premise in double quotes without its final
period):

{_templates("quoted", premise="[premise]")}

Occupation named (Appendix A.4, Table 10; `synthetic-named`; singular, lower-case occupation):

{_templates("named", occupation="[occupation]")}
"""


def _making_section(builds: Mapping[str, NliConfigBuild], request: NliRequest) -> str:
    name, n_per_occupation = request.name, request.n_per_occupation
    return f"""
## How the data was made

Synthetic premises are {len(SYNTHETIC_PREMISES)} neutral frames written for this project (20 singular, 20
plural, at most 10 words), filled with each occupation, with `a`/`an` fixed. Corpus premises follow the paper's
procedure, with documented defaults where it is silent:

1. Collect candidate sentences from the training split(s) (MNLI and SNLI `premise`; ANLI `premise` of rounds
   1–3; QNLI `sentence`), deduplicated; ANLI and QNLI texts are split into sentences first by a simple rule
   (break after `.`, `!`, `?` before a capital, except after common abbreviations and initials).
2. Keep sentences of at most 10 words that mention exactly one of the 38 occupations exactly once (singular or
   plural), in a noun sense; drop sentences with a gendered word (man, woman, she, his, Mr, ...) or a person name.
3. Equalize: each occupation gets {n_per_occupation} premises, its own sentences first (a seeded sample, seed
   {request.seed}), then copies of other occupations' sentences with the occupation substituted (number kept, `a`/`an`
   fixed), as in the paper's Table 2.

Rejections per filter (first failing check):

{_filter_table(builds)}

Rebuild with (`unqover build-datasets {name}` also builds the synthetic configs):

```python
from unqover.hub.nli_dataset import build_nli_dataset

# synthetic configs only: no corpus, no network
build_nli_dataset("datasets/unqover", name="{name}", overwrite=True)

# plus corpus configs: None loads the corpus from the Hub; a path reads a local Parquet/JSONL/CSV file
sources = {{"mnli": None, "snli": None, "anli": None, "qnli": "qnli.parquet"}}
build_nli_dataset("datasets/unqover", name="{name}", sources=sources, overwrite=True)
```
"""


def _defects_and_use_section() -> str:
    defects = "\n".join(f"- {d}" for d in DEFECTS)
    return f"""
## Known defects

{defects}

## Intended use and limitations

Use it to measure occupation-gender associations of NLI models, in comparison with the paper. The premises
are short and simple and the occupation list is small, US-centric and English-only; a low score does not show
that a model is unbiased.

"""


def _license_section(builds: Mapping[str, NliConfigBuild]) -> str:
    return f"""## License and attribution

{_license_lines(builds)}

Probe design, occupation list and templates by Shanya Sharma, Manan Dey and Koustuv Sinha; generated by the
`unqover` toolkit.

## Citation

```bibtex
{NLI_CITATION}
```
"""
