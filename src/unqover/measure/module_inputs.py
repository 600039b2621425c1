"""Shared plumbing of the project's evaluate modules, whose references are dataset rows."""

from __future__ import annotations


class ReferenceRows:
    """Mixin for an ``evaluate.Measurement`` that takes dataset rows (dicts with more keys than it reads) as references.

    evaluate checks every reference against the module's features, so each module reduces rows to its declared keys
    with ``normalize`` (and names a missing key) on every way in: ``add``, ``add_batch`` and ``compute``.
    """

    @staticmethod
    def normalize(references: list[dict]) -> list[dict]:
        raise NotImplementedError

    def _rows(self, references):
        return None if references is None else self.normalize(references)

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch of predictions and references (extra reference keys are ignored)."""
        return super().add_batch(predictions=predictions, references=self._rows(references), **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one prediction and its reference (extra reference keys are ignored)."""
        reference = None if reference is None else self.normalize([reference])[0]
        return super().add(prediction=prediction, reference=reference, **kwargs)

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Compute the measures."""
        return super().compute(predictions=predictions, references=self._rows(references), **kwargs)
