"""The explorer's job layer: one UnQover question scored by a model, and the dataset rows it can start from.

The paper's Fig. 2, live: one context, two subjects, a question and its negation, both subject orders. The four
model inputs (subjects swapped x question negated) are scored with the probe definition's own scorer and paired
and measured with the library's measure functions, so B and C here are exactly those of a full run. Which probes
the explorer offers is each definition's ``explorable``; nothing here names a probe.

The Space (``unqover.space.explore``) checks the user's text and formats the result; everything that touches
models, generators, word lists and measures is here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from unqover.env import word_lists_folder as word_lists_folder  # the Space's word lists, decided as the CLI's
from unqover.errors import UnqoverError
from unqover.probes.base import ProbeDefinition
from unqover.probes.row_identity import check_local_build

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

#: where ``unqover build-datasets`` writes by default: a local build of a probe's dataset is read from here
DATASETS_ROOT = Path("datasets/unqover")
#: the dataset config the explorer's rows come from (extractive QA questions: a context and a question)
EXAMPLE_CONFIG = "qa"


@dataclass(frozen=True)
class Exploration:
    """Scores S(subject | context order, question) and the resulting B and C."""

    x1: str
    x2: str
    scores: np.ndarray  # (order, polarity, subject): order 0 mentions x1 first; polarity 0 asks a, 1 asks ā
    b1: float
    b2: float
    c: float


def explorable() -> list[str]:
    """The probes whose dataset rows the explorer offers, in registry order (the first one scores free text)."""
    from unqover.probes.registry import PROBES

    return [name for name, probe in PROBES.items() if probe.explorable]


def explorer_probe(probe: ProbeDefinition | str | None = None) -> ProbeDefinition:
    """An explorable probe definition: ``probe`` itself or by name; None: the first explorable probe."""
    from unqover.probes.registry import PROBES

    names = explorable()
    if probe is None:
        if not names:
            raise UnqoverError("no probe offers its rows to the explorer")
        return PROBES[names[0]]
    definition = probe if isinstance(probe, ProbeDefinition) else PROBES.get(probe)
    if definition is None or not definition.explorable:
        raise UnqoverError(
            f"dataset rows come from the probes {', '.join(names)}, not {getattr(probe, 'name', probe)!r}"
        )
    return definition


def families(probe: ProbeDefinition | str | None = None) -> tuple[str, ...]:
    """The model families the explorer scores (those of its probe)."""
    return explorer_probe(probe).families


def _spans(context: str, first: str, second: str) -> tuple[list[int], list[int]]:
    a = context.find(first)
    b = context.find(second, a + len(first))
    return [a, a + len(first)], [b, b + len(second)]


def swapped(context: str, subject_1: str, subject_2: str) -> str:
    """The context with the two subjects' places exchanged."""
    pattern = re.compile(
        "|".join(re.escape(s) for s in sorted((subject_1, subject_2), key=len, reverse=True))
    )
    return pattern.sub(lambda m: subject_2 if m.group(0) == subject_1 else subject_1, context)


def masked_question(question: str) -> str:
    """A cloze for masked LMs: ``Who was a hunter?`` -> ``[MASK] was a hunter.``; a question with [MASK] is kept."""
    from unqover.generate.unqover import MASK_PLACEHOLDER as mask

    if mask in question:
        return question
    cloze = re.sub(r"^\s*who\s+", f"{mask} ", question, flags=re.I)
    if mask not in cloze:
        raise UnqoverError(
            f"a masked LM needs the question as a sentence with {mask} (e.g. '{mask} was a hunter.') or "
            "starting with 'Who'"
        )
    return re.sub(r"\?\s*$", ".", cloze.strip())


def question_rows(
    subject_1: str, subject_2: str, context: str, question: str, negated: str, *, masked: bool = False
) -> pa.Table:
    """The four UnQover rows of one question, in the dataset's columns (subject_1 is the one mentioned first).

    The inputs are checked by the caller (``unqover.space.explore.check_inputs``): both subjects differ, neither
    contains the other and the context names each exactly once.
    """
    import pyarrow as pa

    if masked:
        question, negated = masked_question(question), masked_question(negated)
    rows = []
    for text in (context, swapped(context, subject_1, subject_2)):
        first, second = sorted((subject_1, subject_2), key=text.find)
        span_1, span_2 = _spans(text, first, second)
        for polarity, asked in (("positive", question), ("negated", negated)):
            rows.append(
                {
                    "id": f"explore-{len(rows)}",
                    "template_id": 0,
                    "subject_1": first,
                    "subject_2": second,
                    "attribute": question,
                    "polarity": polarity,
                    "context": text,
                    "question": asked,
                    "subject_1_span": span_1,
                    "subject_2_span": span_2,
                }
            )
    return pa.Table.from_pylist(rows)


def score_question(
    model,
    subject_1: str,
    subject_2: str,
    context: str,
    question: str,
    negated: str,
    probe: ProbeDefinition | str | None = None,
) -> Exploration:
    """Score the four inputs of one question with the probe's scorer for the model's family (its default
    settings) and measure B(x1), B(x2) and C. ``model`` is loaded by
    :func:`unqover.jobs.models.load_model_for`."""
    import numpy as np

    from unqover.measure.pairing import pair_rows
    from unqover.measure.unqover import bias_scores
    from unqover.scoring.requests import FILL_IN, first_wanted

    definition = explorer_probe(probe)
    masked = first_wanted(model.capabilities, definition.wants) == FILL_IN  # a masked LM's rows
    rows = question_rows(subject_1, subject_2, context, question, negated, masked=masked)
    scorer = definition.scorers(model, definition.check_settings({}))[""]
    if masked:
        kept, coverage = scorer.single_token_coverage(rows)
        if kept.num_rows < rows.num_rows:
            raise UnqoverError(
                f"a masked LM scores single-token subjects only, and {subject_1!r} or {subject_2!r} is not one "
                f"token for this model ({coverage.as_dict()}); try other subjects"
            )
    scores = np.asarray(scorer.score(rows), dtype=np.float64)
    paired = pair_rows(
        rows["subject_1"],
        rows["subject_2"],
        rows["template_id"],
        rows["attribute"],
        rows["polarity"],
        scores[:, 0],
        scores[:, 1],
    )
    b1, b2, c = bias_scores(paired)
    return Exploration(
        str(paired.subjects[paired.x1[0]]),
        str(paired.subjects[paired.x2[0]]),
        paired.scores[0],
        float(b1[0]),
        float(b2[0]),
        float(c[0]),
    )


def local_build(probe: ProbeDefinition, config: str = EXAMPLE_CONFIG) -> list[Path]:
    """The parquet files of a local build of the probe's dataset (``unqover build-datasets``), if there is one."""
    for dataset in probe.datasets:
        found = sorted((DATASETS_ROOT / dataset / "data" / config).glob("*.parquet"))
        if found:
            folder = DATASETS_ROOT / dataset
            check_local_build(probe, folder)
            return found
    return []


def example_rows(
    probe: ProbeDefinition | str, word_lists: str | Path | None = None, count: int = 20
) -> list[tuple[str, str, str, str, str]]:
    """The first ``count`` positive/negated question pairs of an explorable probe's QA dataset, as explorer
    inputs (subject 1, subject 2, context, question, negated question): from a local build of its dataset when
    there is one, else generated from the word lists (default: the pinned upstream lists)."""
    import pyarrow.parquet as pq

    definition = explorer_probe(probe)
    built = local_build(definition)
    if built:
        batch = pq.ParquetFile(built[0]).read_row_group(0).slice(0, 4 * count).to_pylist()
    else:
        from unqover.generate.unqover import make_plan
        from unqover.lexicon import resolve_word_lists

        plan = make_plan(resolve_word_lists(word_lists), definition.name, EXAMPLE_CONFIG)
        batch = next(plan.batches(pairs_per_batch=1)).to_pylist()
    found = []
    for positive, negative in zip(batch[::2], batch[1::2], strict=True):
        a, b = positive["subject_1_span"], positive["subject_2_span"]
        context = positive["context"]
        found.append(
            (context[a[0] : a[1]], context[b[0] : b[1]], context, positive["question"], negative["question"])
        )
        if len(found) >= count:
            break
    return found
