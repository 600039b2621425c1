"""UnQover probe rows: ordered subject pairs x templates x attributes x {positive, negated}.

Rows come out in the original generator's loop order (``templates.generate_underspecified_templates``):
ordered pairs (for two subject files: every (a, b) then every (b, a); for one file: every i < j pair then
every flip), then templates in id order, then the template's attribute rows in file order, then the positive
and the negated question. Texts are the original's, wording slips included (see the dataset cards).

Contexts depend only on (pair, template) and questions only on (template, attribute, polarity), so each
distinct text is rendered once and rows are assembled with vectorized index arithmetic.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa

from unqover.errors import UnqoverError
from unqover.generate.ids import hashes_fingerprint, hex_ids, mix, text_hash
from unqover.generate.text import fix_articles, render, shift_span
from unqover.lexicon.wordlists import Attribute, Slot, Subject, Template, WordListError, WordLists

#: Written in masked-LM questions where the model's mask token goes; scorers replace it.
MASK_PLACEHOLDER = "[MASK]"
POLARITIES = ("positive", "negated")

ROW_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("template_id", pa.int32()),
        ("subject_1", pa.string()),
        ("subject_2", pa.string()),
        ("subject_1_cluster", pa.string()),
        ("subject_2_cluster", pa.string()),
        ("attribute", pa.string()),
        ("attribute_cluster", pa.string()),
        ("attribute_type", pa.string()),
        ("polarity", pa.string()),
        ("context", pa.string()),
        ("question", pa.string()),
        ("subject_1_span", pa.list_(pa.int32())),
        ("subject_2_span", pa.list_(pa.int32())),
    ]
)


@dataclass(frozen=True)
class ProbeConfig:
    """Which word lists make one dataset config."""

    name: str
    subjects: tuple[str, ...]  # one file: all pairs within it; two files: every cross pair
    attributes: str
    templates: str
    filler: str | None = None
    summary: str = ""

    @property
    def masked(self) -> bool:
        return self.name.startswith("mlm")


def _configs(subjects: str | tuple[str, str], attributes: str, templates: str) -> dict[str, ProbeConfig]:
    def files(suffix: str) -> tuple[str, ...]:
        names = (subjects,) if isinstance(subjects, str) else subjects
        return tuple(f"{name}{suffix}" for name in names)

    return {
        "qa": ProbeConfig(
            "qa", files(""), attributes, templates, summary="extractive QA: context + question"
        ),
        "qa-newsqa": ProbeConfig(
            "qa-newsqa",
            files(""),
            attributes,
            templates,
            "newsqa",
            "QA rows with the NewsQA header before each context",
        ),
        "mlm": ProbeConfig(
            "mlm", files(""), attributes, f"{templates}_lm", summary="masked LM, full subject lists"
        ),
        "mlm-bert": ProbeConfig(
            "mlm-bert",
            files("_bert"),
            attributes,
            f"{templates}_lm",
            summary="masked LM, the original's BERT subject lists",
        ),
        "mlm-roberta": ProbeConfig(
            "mlm-roberta",
            files("_roberta"),
            attributes,
            f"{templates}_lm",
            summary="masked LM, the original's RoBERTa subject lists",
        ),
    }


#: The four UnQover bias classes (dataset name -> config name -> word lists), as the original scripts use them.
BIAS_CLASSES: dict[str, dict[str, ProbeConfig]] = {
    "gender": _configs(("female", "male"), "occupation_rev1", "gender_noact"),
    "nationality": _configs("country", "biased_country", "country_noact"),
    "ethnicity": _configs("ethnicity", "biased_ethnicity", "ethnicity_noact"),
    "religion": _configs("religion", "biased_religion", "religion_noact"),
}


def probe_config(bias: str, config: str) -> ProbeConfig:
    """Look up a config, with an error that lists the valid choices."""
    if bias not in BIAS_CLASSES:
        raise UnqoverError(f"unknown bias class {bias!r}; choose from {', '.join(BIAS_CLASSES)}")
    if config not in BIAS_CLASSES[bias]:
        raise UnqoverError(
            f"unknown config {config!r} for {bias}; choose from {', '.join(BIAS_CLASSES[bias])}"
        )
    return BIAS_CLASSES[bias][config]


def ordered_pairs(sizes: tuple[int, ...]) -> np.ndarray:
    """Ordered subject pairs as indices into the concatenated subject lists, in the original's order."""
    if len(sizes) == 2:
        a, b = np.meshgrid(np.arange(sizes[0]), sizes[0] + np.arange(sizes[1]), indexing="ij")
        forward = np.stack([a.ravel(), b.ravel()], axis=1)
    else:
        i, j = np.triu_indices(sizes[0], k=1)
        forward = np.stack([i, j], axis=1)
    return np.concatenate([forward, forward[:, ::-1]]).astype(np.int64)


@dataclass
class ProbePlan:
    """Everything needed to emit the rows of one config; sizes are known before any row is made."""

    bias: str
    config: ProbeConfig
    subjects: list[Subject]
    pairs: np.ndarray
    templates: list[Template]
    template_attributes: list[list[Attribute]]
    filler: str | None = None

    @property
    def rows_per_pair(self) -> int:
        return 2 * sum(len(attrs) for attrs in self.template_attributes)

    @property
    def num_rows(self) -> int:
        """Model inputs: one (context, question) per row."""
        return len(self.pairs) * self.rows_per_pair

    @property
    def num_entries(self) -> int:
        """Entries of the original JSON: an ordered pair x template x attribute (two questions each)."""
        return self.num_rows // 2

    @property
    def num_groups(self) -> int:
        """Unordered pair x template x attribute: the paper's Table 1 unit (four rows each)."""
        return self.num_rows // 4

    @cached_property
    def contexts(self) -> tuple[list[str], np.ndarray]:
        """Rendered contexts, indexed ``pair * n_templates + template``, and their subject spans (n, 2, 2)."""
        texts: list[str] = []
        spans = np.empty((len(self.pairs) * len(self.templates), 2, 2), dtype=np.int32)
        prefix = f"{self.filler}  " if self.filler is not None else ""
        for p, (i, j) in enumerate(self.pairs):
            for t, template in enumerate(self.templates):
                text, (span_1, span_2) = self._context(template, self.subjects[i], self.subjects[j])
                texts.append(prefix + text)
                spans[p * len(self.templates) + t] = np.array([span_1, span_2]) + len(prefix)
        return texts, spans

    @cached_property
    def block(self) -> dict[str, np.ndarray | list]:
        """Per-pair block of rows: template, attribute and polarity of each row offset, and its question."""
        template, attribute, polarity, questions = [], [], [], []
        attributes: list[Attribute] = []
        for t, (tpl, attrs) in enumerate(zip(self.templates, self.template_attributes, strict=True)):
            for attr in attrs:
                attributes.append(attr)
                for negated in (False, True):
                    template.append(t)
                    attribute.append(len(attributes) - 1)
                    polarity.append(int(negated))
                    questions.append(self._question(tpl, attr, negated))
        return {
            "template": np.array(template, dtype=np.int64),
            "attribute": np.array(attribute, dtype=np.int64),
            "polarity": np.array(polarity, dtype=np.int64),
            "questions": questions,
            "attributes": attributes,
        }

    def _context(
        self, template: Template, subject_1: Subject, subject_2: Subject
    ) -> tuple[str, Sequence[tuple[int, int]]]:
        """One context and the spans of its two subjects (a subclass with other texts overrides this)."""
        return render_context(template, subject_1, subject_2)

    def _question(self, template: Template, attribute: Attribute, negated: bool) -> str:
        """One question (a subclass with other texts overrides this)."""
        return render_question(template, attribute, negated)

    def batches(
        self, pairs_per_batch: int | None = None, rows_per_batch: int = 262_144
    ) -> Iterator[pa.RecordBatch]:
        """Rows as Arrow record batches (whole pairs per batch), in generation order."""
        for start, stop in self._pair_ranges(pairs_per_batch, rows_per_batch):
            yield self._batch(start, stop)

    def fingerprint(self) -> str:
        """The rows' fingerprint (:func:`unqover.generate.ids.dataset_fingerprint` of their ids in order) from
        their hashes alone, so that a build knows it before writing any row without making the rows twice."""
        return hashes_fingerprint(self._hashes(*self._layout(*pairs)) for pairs in self._pair_ranges())

    def _pair_ranges(
        self, pairs_per_batch: int | None = None, rows_per_batch: int = 262_144
    ) -> Iterator[tuple[int, int]]:
        per_batch = pairs_per_batch or max(1, rows_per_batch // self.rows_per_pair)
        for start in range(0, len(self.pairs), per_batch):
            yield start, min(start + per_batch, len(self.pairs))

    @cached_property
    def _tables(self) -> dict[str, object]:
        contexts, spans = self.contexts
        block = self.block
        attrs: list[Attribute] = block["attributes"]  # type: ignore[assignment]
        subject_hash = np.array([text_hash(s.identity) for s in self.subjects], dtype=np.uint64)
        context_hash = np.array([text_hash(c) for c in contexts], dtype=np.uint64)
        row_hash = np.array(
            [
                text_hash(
                    self.templates[t].template_id, attrs[a].base_type, attrs[a].identity, POLARITIES[pol], q
                )
                for t, a, pol, q in zip(
                    block["template"], block["attribute"], block["polarity"], block["questions"], strict=True
                )
            ],
            dtype=np.uint64,
        )
        return {
            "contexts": pa.array(contexts, pa.string()),
            "spans": spans,
            "questions": pa.array(block["questions"], pa.string()),
            "subject_hash": subject_hash,
            "context_hash": context_hash,
            "row_hash": row_hash,
            "identity": pa.array([s.identity for s in self.subjects], pa.string()),
            "subject_cluster": pa.array([s.cluster for s in self.subjects], pa.string()),
            "attribute": pa.array([a.identity for a in attrs], pa.string()),
            "attribute_cluster": pa.array([a.cluster for a in attrs], pa.string()),
            "attribute_type": pa.array([a.base_type for a in attrs], pa.string()),
            "template_id": np.array([t.template_id for t in self.templates], dtype=np.int32),
            "polarity": pa.array(POLARITIES, pa.string()),
        }

    def _layout(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For each row of the pairs ``start:stop``: its pair, its offset in the pair's block and its context."""
        size = self.rows_per_pair
        pair = np.repeat(np.arange(start, stop), size)
        offset = np.tile(np.arange(size), stop - start)
        return pair, offset, pair * len(self.templates) + self.block["template"][offset]  # type: ignore[index]

    def _hashes(self, pair: np.ndarray, offset: np.ndarray, context: np.ndarray) -> np.ndarray:
        """The uint64 behind each row's id: its subjects, its context and its block row, mixed."""
        tables = self._tables
        return mix(
            tables["subject_hash"][self.pairs[pair, 0]],  # type: ignore[index]
            tables["subject_hash"][self.pairs[pair, 1]],  # type: ignore[index]
            tables["context_hash"][context],  # type: ignore[index]
            tables["row_hash"][offset],  # type: ignore[index]
        )

    def _batch(self, start: int, stop: int) -> pa.RecordBatch:
        tables = self._tables
        block = self.block
        pair, offset, context = self._layout(start, stop)
        template = block["template"][offset]  # type: ignore[index]
        attribute = pa.array(block["attribute"][offset])  # type: ignore[index]
        subject_1 = pa.array(self.pairs[pair, 0])
        subject_2 = pa.array(self.pairs[pair, 1])
        spans = tables["spans"][context]  # type: ignore[index]
        columns = {
            "id": hex_ids(self._hashes(pair, offset, context)),
            "template_id": pa.array(tables["template_id"][template]),  # type: ignore[index]
            "subject_1": tables["identity"].take(subject_1),  # type: ignore[attr-defined]
            "subject_2": tables["identity"].take(subject_2),  # type: ignore[attr-defined]
            "subject_1_cluster": tables["subject_cluster"].take(subject_1),  # type: ignore[attr-defined]
            "subject_2_cluster": tables["subject_cluster"].take(subject_2),  # type: ignore[attr-defined]
            "attribute": tables["attribute"].take(attribute),  # type: ignore[attr-defined]
            "attribute_cluster": tables["attribute_cluster"].take(attribute),  # type: ignore[attr-defined]
            "attribute_type": tables["attribute_type"].take(attribute),  # type: ignore[attr-defined]
            "polarity": tables["polarity"].take(pa.array(block["polarity"][offset])),  # type: ignore[attr-defined,index]
            "context": tables["contexts"].take(pa.array(context)),  # type: ignore[attr-defined]
            "question": tables["questions"].take(pa.array(offset)),  # type: ignore[attr-defined]
            "subject_1_span": _pairs_to_lists(spans[:, 0]),
            "subject_2_span": _pairs_to_lists(spans[:, 1]),
        }
        return pa.RecordBatch.from_arrays(list(columns.values()), schema=ROW_SCHEMA)


def _pairs_to_lists(values: np.ndarray) -> pa.ListArray:
    offsets = np.arange(0, 2 * len(values) + 1, 2, dtype=np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(np.ascontiguousarray(values).ravel()))


def render_context(
    template: Template, subject_1: Subject, subject_2: Subject
) -> tuple[str, list[tuple[int, int]]]:
    """The context with both subjects in, the article fix applied, and each subject's first span."""
    slots = {
        Slot("subject", "subj1", "dem" if template.subject_1_demonym else None): subject_1.surface(
            template.subject_1_demonym
        ),
        Slot("subject", "subj2", "dem" if template.subject_2_demonym else None): subject_2.surface(
            template.subject_2_demonym
        ),
    }
    if any(value is None for value in slots.values()):
        raise UnqoverError(
            f"{template.source}:{template.line}: the template uses a demonym the subject list lacks"
        )
    text, spans = render(template.context, slots)
    fixed, inserted = fix_articles(text)
    return fixed, [shift_span(spans[slot], inserted) for slot in slots]


def render_question(template: Template, attribute: Attribute, negated: bool) -> str:
    """A question with the attribute (or its negation) in, the article fix applied, and the mask placeholder."""
    segments = template.negated_question if negated else template.positive_question
    values = {
        Slot("attribute", template.attribute_type, "neg" if negated else None): attribute.negated
        if negated
        else attribute.positive,
        Slot("mask", "mask"): MASK_PLACEHOLDER,
    }
    text, _ = render(segments, values)
    fixed, _ = fix_articles(text, first_token_fixable=False)
    return fixed


def make_plan(word_lists: WordLists, bias: str, config: str = "qa") -> ProbePlan:
    """Read the config's word lists and check that they fit together."""
    spec = probe_config(bias, config)
    subject_lists = [word_lists.subjects(name) for name in spec.subjects]
    subjects = [s for subject_list in subject_lists for s in subject_list]
    if len(subject_lists) == 2:
        seen = {s.identity for s in subject_lists[0]} & {s.identity for s in subject_lists[1]}
        if seen:
            raise UnqoverError(
                f"subjects {sorted(seen)} appear in both {spec.subjects[0]} and {spec.subjects[1]}"
            )
    if len(subjects) < 2:
        raise UnqoverError(f"{bias}/{config}: at least two subjects are needed")
    attributes = word_lists.attributes(spec.attributes)
    templates = word_lists.templates(spec.templates)
    template_attributes = []
    for template in templates:
        if template.masked != spec.masked:
            want = "one [mask] in each question" if spec.masked else "no [mask]"
            raise WordListError(
                word_lists.root / "slots" / spec.templates, template.line, f"{config} templates need {want}"
            )
        if template.attribute_type not in attributes:
            raise WordListError(
                word_lists.root / "slots" / spec.templates,
                template.line,
                f"uses [{template.attribute_type}] but {spec.attributes} has only {', '.join(attributes)}",
            )
        if any(s.demonym is None for s in subjects) and (
            template.subject_1_demonym or template.subject_2_demonym
        ):
            raise WordListError(
                word_lists.root / "slots" / spec.templates,
                template.line,
                f"uses demonyms but {', '.join(spec.subjects)} has no [subj:dem] lines",
            )
        template_attributes.append(attributes[template.attribute_type])
    filler = word_lists.filler(spec.filler) if spec.filler else None
    pairs = ordered_pairs(tuple(len(s) for s in subject_lists))
    return ProbePlan(bias, spec, subjects, pairs, templates, template_attributes, filler)
