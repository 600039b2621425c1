"""The ``nli-gender`` dataset folder: NLI gender-occupation probes (Sharma, Dey & Sinha 2021) as Parquet + card.

Layout, like the UnQover datasets of :mod:`unqover.hub.build` (``load_dataset(folder, config, split="test")``
reads it offline; ``scripts/publish.py`` pushes it)::

    <root>/nli-gender/README.md                                  the card, YAML ``configs:`` included
    <root>/nli-gender/data/<config>/test-00000-of-00001.parquet  one shard per config

Configs:

- ``synthetic`` (default), ``synthetic-quoted``, ``synthetic-named``: our own premises
  (:data:`unqover.generate.nli.SYNTHETIC_PREMISES`) with the main templates, the premise-quoted templates and the
  occupation-named templates (paper Appendix A.4). Always built; no corpus, no network.
- ``mnli``, ``snli`` (in-distribution) and ``anli``, ``qnli`` (out-of-distribution): corpus premises that pass
  :func:`unqover.generate.nli.filter_premises`, equalized to ``n_per_occupation`` per occupation
  (:func:`unqover.generate.nli.equalize`), with the main templates. Built only for the sources passed in
  ``sources`` (a local file, or None for the Hub).

Sentence splitting (:func:`split_sentences`, used for ANLI contexts and QNLI sentences): a break after ``.``,
``!`` or ``?`` (and any closing quotes or brackets) followed by whitespace and a capital letter, digit or opening
quote, except after a known abbreviation (``Mr.``, ``Dr.``, ``St.``, ``Inc.`` ...), a single-letter initial
(``J.``) or a dotted acronym (``U.S.``). It is deliberately simple; the premise filters drop most of its misses
(long or name-bearing sentences).
"""

from __future__ import annotations

import csv
import json
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from tqdm.auto import tqdm

from unqover.env import offline
from unqover.errors import UnqoverError
from unqover.generate.nli import (
    ROW_SCHEMA,
    SYNTHETIC_PREMISES,
    TEMPLATES,
    equalize,
    filter_premises,
    kept,
    nli_rows,
    occupation_labels,
    rejection_counts,
    synthetic_premises,
)
from unqover.hub.card import size_category
from unqover.hub.folder import NLI_DATASET, SPLIT, BuiltDataset, refuse_existing, staged

NAME = NLI_DATASET

#: Synthetic configs: name -> template family of :data:`unqover.generate.nli.TEMPLATES`. ``synthetic`` is the default.
SYNTHETIC_CONFIGS: dict[str, str] = {
    "synthetic": "main",
    "synthetic-quoted": "quoted",
    "synthetic-named": "named",
}


@dataclass(frozen=True)
class SourceSpec:
    """Where a corpus's premises come from on the Hub, and what the card says about it."""

    hub_id: str
    hub_config: str
    splits: tuple[str, ...]
    column: str
    split_sentences: bool
    role: str
    title: str
    license: str
    license_note: str


#: Premise corpora (spec §4.2). ``column`` is the premise text column; local files may use ``sentence1`` too.
SOURCES: dict[str, SourceSpec] = {
    "mnli": SourceSpec(
        "nyu-mll/glue",
        "mnli",
        ("train",),
        "premise",
        False,
        "in-distribution",
        "MultiNLI",
        "other",
        "MultiNLI: mostly OANC text (permissive) plus fiction under other permissive licences, some CC BY-SA 3.0 "
        "(see the MultiNLI data description)",
    ),
    "snli": SourceSpec(
        "stanfordnlp/snli",
        "plain_text",
        ("train",),
        "premise",
        False,
        "in-distribution",
        "SNLI",
        "cc-by-sa-4.0",
        "SNLI: CC BY-SA 4.0",
    ),
    "anli": SourceSpec(
        "facebook/anli",
        "plain_text",
        ("train_r1", "train_r2", "train_r3"),
        "premise",
        True,
        "out-of-distribution",
        "ANLI",
        "cc-by-nc-4.0",
        "ANLI: CC BY-NC 4.0 (non-commercial)",
    ),
    "qnli": SourceSpec(
        "nyu-mll/glue",
        "qnli",
        ("train",),
        "sentence",
        True,
        "out-of-distribution",
        "QNLI",
        "cc-by-sa-4.0",
        "QNLI: CC BY-SA 4.0 (Wikipedia text via SQuAD)",
    ),
}

#: corpus configs: ``<source>`` (main templates) and ``<source>-quoted`` / ``<source>-named`` (appendix templates)
CORPUS_CONFIGS: dict[str, tuple[str, str]] = {
    f"{source}{suffix}": (source, family)
    for source in SOURCES
    for suffix, family in (("", "main"), ("-quoted", "quoted"), ("-named", "named"))
}
ALL_CONFIGS: tuple[str, ...] = (*SYNTHETIC_CONFIGS, *CORPUS_CONFIGS)

_COLUMN_ALIASES = {"premise": ("premise", "sentence1"), "sentence": ("sentence",)}
_LOCAL_SUFFIXES = (".parquet", ".jsonl", ".json", ".csv", ".tsv")


# --- sentences ---------------------------------------------------------------------------------------------

_ABBREVIATIONS = frozenset(
    {
        "mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "mt", "ft", "lt", "gen", "col", "capt", "sgt", "rev",
        "gov", "sen", "rep", "inc", "ltd", "co", "corp", "bros", "vs", "etc", "no", "nos", "vol", "fig", "approx",
        "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "ca", "cf", "al",
    }
)  # fmt: skip

_BREAK = re.compile(r"[.!?]+[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences with the simple rule of the module docstring (whitespace normalized)."""
    text = " ".join(str(text).split())
    out: list[str] = []
    start = 0
    for match in _BREAK.finditer(text):
        if text[match.start()] == ".":
            word = text[start : match.start()].rsplit(" ", 1)[-1].lstrip("\"'([").lower()
            if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()) or "." in word:
                continue
        out.append(text[start : match.end()].strip())
        start = match.end()
    rest = text[start:].strip()
    if rest:
        out.append(rest)
    return out


def _dedup(texts: Iterable[object]) -> list[str]:
    seen: set[str] = set()
    out = []
    for raw in texts:
        if raw is None:
            continue
        text = " ".join(str(raw).split())
        if text and text not in seen:
            seen.add(text)
            out.append(text)
    return out


def _how_to_pass(source: str) -> str:
    spec = SOURCES[source]
    return (
        f"pass a local file instead: sources={{'{source}': 'path/to/{source}.parquet'}} (Parquet, JSON Lines, "
        f"CSV/TSV with a '{spec.column}' column, or a folder saved with Dataset.save_to_disk)"
    )


def _pick_column(names: Sequence[str], column: str, where: object) -> str:
    for candidate in _COLUMN_ALIASES.get(column, (column,)):
        if candidate in names:
            return candidate
    raise UnqoverError(f"{where} has no '{column}' column (columns: {', '.join(names) or 'none'})")


def _read_file(path: Path, column: str) -> list[object]:
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        names = pq.read_schema(path).names
        return pq.read_table(path, columns=[_pick_column(names, column, path)]).column(0).to_pylist()
    if suffix in {".jsonl", ".json"}:
        rows = []
        with path.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise UnqoverError(f"{path}:{number}: not JSON Lines ({exc})") from None
        if not rows:
            return []
        name = _pick_column(list(rows[0]), column, path)
        return [row.get(name) for row in rows]
    if suffix in {".csv", ".tsv"}:
        with path.open(encoding="utf-8", newline="") as handle:
            if suffix == ".tsv":
                reader = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
            else:
                reader = csv.DictReader(handle)
            name = _pick_column(list(reader.fieldnames or []), column, path)
            return [row.get(name) for row in reader]
    raise UnqoverError(f"{path}: unsupported file type; use one of {', '.join(_LOCAL_SUFFIXES)}")


def _read_local(path: Path, column: str) -> list[object]:
    if not path.exists():
        raise UnqoverError(f"premise source {path} does not exist")
    if path.is_file():
        return _read_file(path, column)
    if any((path / marker).exists() for marker in ("dataset_info.json", "state.json", "dataset_dict.json")):
        import datasets

        saved = datasets.load_from_disk(str(path))
        parts = list(saved.values()) if isinstance(saved, datasets.DatasetDict) else [saved]
        texts: list[object] = []
        for part in parts:
            texts.extend(part[_pick_column(part.column_names, column, path)])
        return texts
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in _LOCAL_SUFFIXES)
    if not files:
        raise UnqoverError(f"{path} holds no {', '.join(_LOCAL_SUFFIXES)} files and is not a saved dataset")
    return [text for file in files for text in _read_file(file, column)]


def _read_hub(source: str) -> list[object]:
    spec = SOURCES[source]
    if offline():
        raise UnqoverError(
            f"cannot load {source} from the Hub ({spec.hub_id}) while offline; {_how_to_pass(source)}"
        )
    import datasets

    try:
        ds = datasets.load_dataset(spec.hub_id, spec.hub_config, split="+".join(spec.splits))
    except Exception as exc:
        raise UnqoverError(
            f"cannot load {source} from the Hub ({spec.hub_id}, {spec.hub_config}): {exc}; {_how_to_pass(source)}"
        ) from exc
    return list(ds[spec.column])


def load_source_sentences(source: str, path: str | os.PathLike | None = None) -> list[str]:
    """Candidate premise sentences of one corpus, deduplicated, in first-seen order.

    ``source`` is ``mnli``, ``snli``, ``anli`` or ``qnli``. With ``path``, read a local Parquet / JSON Lines /
    CSV / TSV file (or a folder of them, or a folder written by ``save_to_disk``) with the premise column of
    :data:`SOURCES` (``premise``, or ``sentence1`` as in the raw SNLI/MNLI files; ``sentence`` for QNLI); without
    it, load the Hub dataset's training split(s). ANLI and QNLI texts are split with :func:`split_sentences`.
    Raises :class:`UnqoverError` when offline without ``path``, saying how to pass a local file.
    """
    if source not in SOURCES:
        raise UnqoverError(f"unknown premise source {source!r}: use one of {', '.join(SOURCES)}")
    spec = SOURCES[source]
    texts = _read_local(Path(path), spec.column) if path is not None else _read_hub(source)
    if spec.split_sentences:
        texts = [sentence for text in texts if text is not None for sentence in split_sentences(str(text))]
    return _dedup(texts)


# --- configs -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NliConfigBuild:
    """One config's rows and how they were made (the card's numbers)."""

    name: str
    family: str
    source: str
    table: pa.Table
    premises: int
    substituted: int
    candidates: int | None = None
    kept: int | None = None
    rejections: dict[str, int] = field(default_factory=dict)

    @property
    def num_rows(self) -> int:
        return self.table.num_rows


def check_nli_configs(configs: Sequence[str] | None) -> list[str]:
    """Validate ``nli-gender`` config names; ``None`` means the synthetic configs."""
    if configs is None:
        return list(SYNTHETIC_CONFIGS)
    unknown = [c for c in configs if c not in ALL_CONFIGS]
    if unknown:
        raise UnqoverError(
            f"unknown {NAME} config {', '.join(unknown)}; choose from {', '.join(ALL_CONFIGS)}"
        )
    return list(configs)


def synthetic_count(n_per_occupation: int) -> int | None:
    """Frames per occupation for the synthetic configs: all of them (None) unless fewer are asked."""
    if n_per_occupation < 1:
        raise UnqoverError("n_per_occupation must be at least 1")
    return None if n_per_occupation >= len(SYNTHETIC_PREMISES) else n_per_occupation


def make_nli_configs(
    *,
    sources: Mapping[str, str | os.PathLike | None] | None = None,
    configs: Sequence[str] | None = None,
    n_per_occupation: int = 50,
    labels: str = "paper",
    seed: int = 0,
) -> dict[str, NliConfigBuild]:
    """Generate the rows of every requested config in memory (see :func:`build_nli_dataset`)."""
    sources = dict(sources or {})
    for source in sources:
        if source not in SOURCES:
            raise UnqoverError(f"unknown premise source {source!r}: use one of {', '.join(SOURCES)}")
    occupation_labels(labels)  # validates the scheme
    if configs is None:
        wanted = [*SYNTHETIC_CONFIGS, *(c for c, (s, _) in CORPUS_CONFIGS.items() if s in sources)]
    else:
        wanted = check_nli_configs(configs)
        missing = [c for c in wanted if c in CORPUS_CONFIGS and CORPUS_CONFIGS[c][0] not in sources]
        if missing:
            raise UnqoverError(
                f"config {', '.join(missing)} needs a premise source: pass sources={{'{missing[0]}': PATH}} "
                "(or None to load it from the Hub)"
            )
    out: dict[str, NliConfigBuild] = {}
    prepared: dict[str, tuple] = {}
    synthetic = None
    for name in wanted:
        if name in SYNTHETIC_CONFIGS:
            if synthetic is None:
                synthetic = synthetic_premises(synthetic_count(n_per_occupation), seed=seed)
            family = SYNTHETIC_CONFIGS[name]
            out[name] = NliConfigBuild(
                name, family, "synthetic", nli_rows(synthetic, family, labels), len(synthetic), 0
            )
            continue
        source, family = CORPUS_CONFIGS[name]
        if (
            source not in prepared
        ):  # one filtering and equalization per corpus, shared by its template families
            sentences = load_source_sentences(source, sources[source])
            verdicts = filter_premises(sentences, source=source)
            accepted = kept(verdicts)
            try:
                prepared[source] = (
                    sentences,
                    verdicts,
                    accepted,
                    equalize(accepted, n_per_occupation, seed=seed),
                )
            except UnqoverError as exc:
                raise UnqoverError(f"{name}: {exc}") from None
        sentences, verdicts, accepted, premises = prepared[source]
        out[name] = NliConfigBuild(
            name,
            family,
            source,
            nli_rows(premises, family, labels),
            len(premises),
            sum(p.is_substituted for p in premises),
            candidates=len(sentences),
            kept=len(accepted),
            rejections=rejection_counts(verdicts),
        )
    return out


def build_nli_dataset(
    root: str | os.PathLike,
    *,
    sources: Mapping[str, str | os.PathLike | None] | None = None,
    configs: Sequence[str] | None = None,
    n_per_occupation: int = 50,
    labels: str = "paper",
    seed: int = 0,
    overwrite: bool = False,
    progress: bool = True,
) -> BuiltDataset:
    """Write ``root/nli-gender`` (card + one Parquet shard per config), atomically.

    ``sources`` maps ``mnli``/``snli``/``anli``/``qnli`` to a local file or folder, or to None to load the
    corpus from the Hub; without it only the synthetic configs are built. ``n_per_occupation`` premises per
    occupation for corpus configs (synthetic configs use all 40 frames unless fewer are asked); ``labels`` is
    ``"paper"`` (default) or ``"data"`` (:func:`unqover.generate.nli.occupation_labels`). An existing
    ``data/`` folder is an error unless ``overwrite``.
    """
    started = time.perf_counter()
    target = Path(root) / NAME
    refuse_existing(target, overwrite)
    builds = make_nli_configs(
        sources=sources, configs=configs, n_per_occupation=n_per_occupation, labels=labels, seed=seed
    )
    with staged(Path(root), NAME) as staging:
        for build in tqdm(builds.values(), desc=NAME, unit="config", disable=not progress):
            folder = staging / "data" / build.name
            folder.mkdir(parents=True)
            pq.write_table(build.table, folder / f"{SPLIT}-00000-of-00001.parquet", compression="zstd")
        card = nli_dataset_card(builds, labels=labels, n_per_occupation=n_per_occupation, seed=seed)
        (staging / "README.md").write_text(card, encoding="utf-8")
    return BuiltDataset(
        target, {name: b.num_rows for name, b in builds.items()}, time.perf_counter() - started
    )


# --- card --------------------------------------------------------------------------------------------------

CITATION = """@misc{sharma2021evaluating,
    title = {Evaluating Gender Bias in Natural Language Inference},
    author = {Sharma, Shanya and Dey, Manan and Sinha, Koustuv},
    year = {2021},
    eprint = {2105.05541},
    archivePrefix = {arXiv},
    primaryClass = {cs.CL},
    url = {https://arxiv.org/abs/2105.05541},
}"""

COLUMNS = [
    ("id", "string", "Stable, unique row id: 16 hex digits of a hash of premise, occupation, template family and id."),
    ("premise", "string", "The premise: a short sentence that mentions exactly one of the 38 occupations."),
    ("occupation", "string", "The occupation the premise mentions (singular, as in the paper's list; `CEO` upper-case)."),
    ("occupation_gender", "string", "`female` or `male`: the occupation's label (the paper's, unless the card says otherwise)."),
    ("source_occupation", "string", "The occupation of the sentence this premise was made from (differs when substituted)."),
    ("is_substituted", "bool", "True when the premise is a corpus sentence with another occupation swapped in (equalization)."),
    ("source", "string", "`synthetic`, `mnli`, `snli`, `anli` or `qnli`."),
    ("template_family", "string", "`main`, `quoted` (premise in quotes) or `named` (occupation named)."),
    ("template_id", "int32", "0, 1 or 2: the template's position in its family."),
    ("hypothesis_female", "string", "The hypothesis with `female`."),
    ("hypothesis_male", "string", "The hypothesis with `male`."),
    ("cluster", "string", "Hash of the source sentence (corpus sentence or synthetic frame): resample clusters, not rows."),
]  # fmt: skip

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


def nli_card_metadata(builds: Mapping[str, NliConfigBuild]) -> dict:
    """The card's YAML header: configs, features, row counts, licences."""
    import datasets

    features = datasets.Features.from_arrow_schema(ROW_SCHEMA)._to_yaml_list()
    licenses = ["apache-2.0"]
    for build in builds.values():
        if build.source in SOURCES and SOURCES[build.source].license not in licenses:
            licenses.append(SOURCES[build.source].license)
    configs = []
    for i, name in enumerate(builds):
        entry: dict = {"config_name": name}
        if i == 0:
            entry["default"] = True
        entry["data_files"] = [{"split": SPLIT, "path": f"data/{name}/*.parquet"}]
        configs.append(entry)
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
        "configs": configs,
        "dataset_info": [{"config_name": name, "features": features} for name in builds],
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
    builds: Mapping[str, NliConfigBuild], *, labels: str = "paper", n_per_occupation: int = 50, seed: int = 0
) -> str:
    """The full Markdown card (YAML header + prose) of the ``nli-gender`` dataset."""
    header = yaml.safe_dump(nli_card_metadata(builds), sort_keys=False, allow_unicode=True, width=1000)
    columns = "\n".join(f"| `{name}` | {dtype} | {text} |" for name, dtype, text in COLUMNS)
    defects = "\n".join(f"- {d}" for d in DEFECTS)
    first = next(iter(builds))
    example = json.dumps(builds[first].table.slice(0, 1).to_pylist()[0], ensure_ascii=False, indent=2)
    built = ", ".join(f"`{name}`" for name in builds)
    absent = [s for s in SOURCES if s not in builds]
    absent_text = (
        f" Not in this build: {', '.join(f'`{s}`' for s in absent)} (built only when their premise source is given)."
        if absent
        else ""
    )
    label_text = (
        "the paper's labels (Appendix A.3: 19 female- and 19 male-labelled occupations, `baker` male)"
        if labels == "paper"
        else "data-driven labels (female when more than 50% of workers are women, BLS figures as in WinoBias)"
    )
    synthetic_n = synthetic_count(n_per_occupation)
    synthetic_text = (
        f"every one of our {len(SYNTHETIC_PREMISES)} sentence frames"
        if synthetic_n is None
        else f"{synthetic_n} of our {len(SYNTHETIC_PREMISES)} sentence frames (seeded sample)"
    )
    main = "\n".join(f"{i}. `{t.format(gender='[gender]')}`" for i, t in enumerate(TEMPLATES["main"]))
    quoted = "\n".join(
        f"{i}. `{t.format(gender='[gender]', premise='[premise]')}`"
        for i, t in enumerate(TEMPLATES["quoted"])
    )
    named = "\n".join(
        f"{i}. `{t.format(gender='[gender]', occupation='[occupation]')}`"
        for i, t in enumerate(TEMPLATES["named"])
    )
    return f"""---
{header}---

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

## Configs

Configs in this build: {built}.{absent_text}

{_config_table(builds)}

Corpus configs (`mnli`, `snli`: in-distribution for models trained on them; `anli`, `qnli`:
out-of-distribution) hold {n_per_occupation} premises per occupation; synthetic configs use {synthetic_text} per
occupation. Every premise appears once per template.

```python
from datasets import load_dataset

# or a local folder: load_dataset("datasets/unqover/nli-gender", "{first}", split="test")
rows = load_dataset("unqover/nli-gender", "{first}", split="test")
```

## Structure

One row per premise × template; the model scores (premise, `hypothesis_female`) and (premise,
`hypothesis_male`).

| column | type | meaning |
|---|---|---|
{columns}

First row of `{first}`:

```json
{example}
```

Templates (`[gender]` is `female` or `male`; no trailing punctuation, as in the paper):

Main (paper Table 3; `synthetic` and the corpus configs):

{main}

Premise quoted (Appendix A.4, Table 8; `synthetic-quoted`; the premise in double quotes without its final
period):

{quoted}

Occupation named (Appendix A.4, Table 10; `synthetic-named`; singular, lower-case occupation):

{named}

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
   {seed}), then copies of other occupations' sentences with the occupation substituted (number kept, `a`/`an`
   fixed), as in the paper's Table 2.

Rejections per filter (first failing check):

{_filter_table(builds)}

Rebuild with (`unqover build-datasets nli-gender` also builds the synthetic configs):

```python
from unqover.hub.nli_dataset import build_nli_dataset

# synthetic configs only: no corpus, no network
build_nli_dataset("datasets/unqover", overwrite=True)

# plus corpus configs: None loads the corpus from the Hub; a path reads a local Parquet/JSONL/CSV file
sources = {{"mnli": None, "snli": None, "anli": None, "qnli": "qnli.parquet"}}
build_nli_dataset("datasets/unqover", sources=sources, overwrite=True)
```

## Known defects

{defects}

## Intended use and limitations

Use it to measure occupation-gender associations of NLI models, in comparison with the paper. The premises
are short and simple and the occupation list is small, US-centric and English-only; a low score does not show
that a model is unbiased.

## License and attribution

{_license_lines(builds)}

Probe design, occupation list and templates by Shanya Sharma, Manan Dey and Koustuv Sinha; generated by the
`unqover` toolkit.

## Citation

```bibtex
{CITATION}
```
"""
