"""Stable 64-bit row ids: a hash of the row's content, the same on every machine and run."""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa

_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_SHIFTS = np.arange(60, -1, -4, dtype=np.uint64)


def text_hash(*parts: object) -> np.uint64:
    """BLAKE2b-64 of the parts, joined by a separator that cannot occur in word-list text."""
    joined = "\x1f".join(str(p) for p in parts).encode("utf-8")
    return np.frombuffer(hashlib.blake2b(joined, digest_size=8).digest(), dtype="<u8")[0]


def mix(*hashes: np.ndarray) -> np.ndarray:
    """Combine uint64 hash arrays (broadcasting) with the splitmix64 finalizer; order matters."""
    out = np.zeros(np.broadcast(*hashes).shape, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for h in hashes:
            z = (out ^ h) + np.uint64(0x9E3779B97F4A7C15)
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            out = z ^ (z >> np.uint64(31))
    return out


def hex_ids(hashes: np.ndarray) -> pa.StringArray:
    """uint64 hashes as 16-character lowercase hex strings, built without a Python loop."""
    n = len(hashes)
    nibbles = (hashes.astype(np.uint64)[:, None] >> _SHIFTS) & np.uint64(0xF)
    data = _HEX[nibbles.astype(np.intp)]
    offsets = np.arange(0, 16 * (n + 1), 16, dtype=np.int32)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(data)))
