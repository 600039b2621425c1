"""Token sequences of different lengths as one padded batch."""

from __future__ import annotations

from collections.abc import Sequence


def pad_sequences(sequences: Sequence[Sequence[int]], pad_id: int, *, left: bool = False):
    """Token ids padded to the longest sequence, on the right (or the ``left``), and the mask of real tokens:
    two (len(sequences), longest) long tensors on the CPU."""
    import torch

    width = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, seq in enumerate(sequences):
        if len(seq):
            where = slice(width - len(seq), width) if left else slice(0, len(seq))
            ids[i, where], mask[i, where] = torch.as_tensor(seq, dtype=torch.long), 1
    return ids, mask
