"""Shared plumbing of the project's evaluate modules, whose references are dataset rows."""

from __future__ import annotations

import json
from collections.abc import Mapping


class ReferenceRows:
    """Mixin for an ``evaluate.Measurement`` that takes dataset rows (dicts with more keys than it reads) as references.

    evaluate checks every reference against the module's features, so each module reduces rows to its declared keys
    with ``normalize`` (and names a missing key) on every way in: ``add``, ``add_batch`` and ``compute``.
    """

    @staticmethod
    def normalize(references: list[dict]) -> list[dict]:
        raise NotImplementedError

    def _rows(self, references):
        if references is None:
            return None
        check_one_probe(references)
        return self.normalize(references)

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch of predictions and references (extra reference keys are ignored)."""
        return super().add_batch(predictions=predictions, references=self._rows(references), **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one prediction and its reference (extra reference keys are ignored)."""
        reference = None if reference is None else self._rows([reference])[0]
        return super().add(prediction=prediction, reference=reference, **kwargs)

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Compute the measures."""
        return super().compute(predictions=predictions, references=self._rows(references), **kwargs)


def row_probe(row: object) -> str | None:
    """The probe a reference row says it belongs to, where it carries one: its ``probe`` key, or the ``probe`` of
    the ``unqover`` record an lm-eval task's documents carry (``unqover lm-eval-tasks``)."""
    if not isinstance(row, Mapping):
        return None
    about = row.get("unqover")
    if isinstance(about, str):
        try:
            about = json.loads(about)
        except ValueError:
            about = None
    probe = row.get("probe") or (about.get("probe") if isinstance(about, Mapping) else None)
    return probe if isinstance(probe, str) else None


def check_one_probe(references) -> None:
    """Refuse references that carry rows of two probes: one measure is of one probe's rows."""
    first: dict[str, int] = {}
    for i, row in enumerate(references):
        probe = row_probe(row)
        if probe is not None:
            first.setdefault(probe, i)
            if len(first) > 1:
                (a, i_a), (b, i_b) = first.items()
                raise ValueError(
                    f"reference {i_a} is a row of the {a} probe and reference {i_b} one of the {b} probe: "
                    "measure one probe's rows at a time"
                )
