"""A quick run of a generated probe without its every row: the groups its sample needs, made from their subject
pairs, and what the measure needs of the others, counted from the probe's file.

A custom probe of 1,000 subjects and 20 attributes has about 10 million groups (40 million rows); a quick run of
10 groups needs 40 of them. Its groups are every unordered subject pair in every cell (template x attribute), so
the design's draw (:func:`unqover.scoring.sampling.select_crossed_groups`) and the measure's population counts
(:class:`unqover.measure.sampled.PopulationCounts`: records per subject and attribute) follow from the pairs and
cells alone. The sample's rows, ids and order are those of making every row and drawing from them.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from unqover.generate.custom import custom_group_rows, custom_label_rows, custom_plan, unordered_pairs
from unqover.lexicon.custom_probe import CustomProbeSpec
from unqover.measure.sampled import PopulationCounts
from unqover.measure.unqover import pair_dataset_rows
from unqover.scoring.sampling import budget, cell_hashes, select_crossed_groups, text_hashes

#: Bytes of memory per unordered subject pair while its groups are drawn (a few 8-byte arrays per pair).
BYTES_PER_PAIR = 64


def num_groups(probe: CustomProbeSpec, config: str) -> int:
    """The probe's groups: unordered pairs x templates x attributes."""
    plan = custom_plan(probe, config)
    return len(unordered_pairs(plan)) * len(probe.templates) * len(probe.attributes)


def sampled_rows(
    probe: CustomProbeSpec, config: str, *, limit: int | None, sample: float | None, seed: int
) -> pa.Table:
    """The rows of the design's seeded sample (``limit`` groups or the fraction ``sample`` of them): the rows
    :func:`unqover.scoring.sampling.select_groups` keeps of every row, made from the sampled groups only."""
    plan = custom_plan(probe, config)
    pairs = unordered_pairs(plan)
    templates = [t for t in range(len(probe.templates)) for _ in probe.attributes]
    attributes = [a for _ in probe.templates for a in probe.attributes]
    cells = cell_hashes(templates, [a.positive for a in attributes], [a.type for a in attributes])
    n = budget(len(pairs) * len(cells), limit, sample)
    chosen = select_crossed_groups(text_hashes([s.identity for s in plan.subjects]), pairs, cells, n, seed)
    return custom_group_rows(probe, config, chosen)


def population_counts(probe: CustomProbeSpec, config: str, mode: str) -> PopulationCounts:
    """What a quick run's measure (in ``mode``) needs of the probe's every group: their number, the records of each
    subject with each attribute (one per group of its pairs and that attribute's cells), and the labels its rows
    give (from a few rows that hold every subject and cell)."""
    rows = custom_label_rows(probe, config)
    zeros = np.zeros(rows.num_rows)
    labels = pair_dataset_rows(rows, zeros, zeros, mode=mode)
    labels = labels.subset(np.zeros(labels.num_groups, dtype=bool))
    plan = custom_plan(probe, config)
    pairs = unordered_pairs(plan)
    fold = str.lower if mode == "paper" else str  # the paper mode's keys are lower-cased
    subject_index = {fold(label): k for k, label in enumerate(labels.subjects)}
    subject = np.array([subject_index[fold(s.identity)] for s in plan.subjects])
    typed = labels.attribute_types is not None
    attribute_index = {
        (t if typed else None, fold(a)): k
        for k, (t, a) in enumerate(
            zip(labels.attribute_types if typed else labels.attributes, labels.attributes, strict=True)
        )
    }
    attribute = np.array(
        [attribute_index[(a.type if typed else None, fold(a.positive))] for a in probe.attributes]
    )
    # the records of subject x with one attribute: a group per partner of x and template
    records = np.bincount(pairs.reshape(-1), minlength=len(plan.subjects)) * len(probe.templates)
    size = len(labels.attributes)
    key_count = np.zeros(len(labels.subjects) * size, dtype=np.int64)
    keys = subject[:, None] * size + attribute[None, :]
    np.add.at(key_count, keys.reshape(-1), np.repeat(records, len(attribute)))  # keys merge in the paper mode
    groups = len(pairs) * len(probe.templates) * len(probe.attributes)
    return PopulationCounts(groups, size, key_count, labels=labels)
