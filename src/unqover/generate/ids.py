"""Stable 64-bit row ids: a hash of the row's content, the same on every machine and run."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

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


_NIBBLE = np.full(256, 255, dtype=np.uint8)
_NIBBLE[np.frombuffer(b"0123456789abcdef", dtype=np.uint8)] = np.arange(16, dtype=np.uint8)


def parse_hex_ids(ids: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
    """The uint64 behind 16-hex-digit ids (the inverse of :func:`hex_ids`), or None if any id is not one."""
    array = ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids
    array = array.cast(pa.string())
    n = len(array)
    if array.null_count or n == 0:
        return None
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32, count=n + 1, offset=array.offset * 4)
    if offsets[-1] - offsets[0] != 16 * n or np.any(np.diff(offsets) != 16):
        return None
    data = np.frombuffer(array.buffers()[2], dtype=np.uint8, count=16 * n, offset=int(offsets[0]))
    nibbles = _NIBBLE[data].reshape(n, 16)
    if (nibbles == 255).any():
        return None
    packed = (nibbles[:, 0::2] << 4) | nibbles[:, 1::2]  # (n, 8) bytes, most significant first
    return np.ascontiguousarray(packed).view(">u8").ravel().astype(np.uint64)


def dataset_fingerprint(ids: pa.ChunkedArray | pa.Array) -> str:
    """BLAKE2b of the row ids in order: the same rows give the same fingerprint on every machine (a dataset
    card, its Parquet files, run.json and an lm-eval task folder all record it)."""
    keys = parse_hex_ids(ids)
    if keys is not None:
        return hashes_fingerprint([keys])
    digest = hashlib.blake2b(digest_size=16)
    for value in ids.to_pylist():
        digest.update(value.encode() + b"\n")
    return digest.hexdigest()


def hashes_fingerprint(chunks: Iterable[np.ndarray]) -> str:
    """:func:`dataset_fingerprint` of the hex ids of these uint64 hashes (chunks in row order), without making
    the id strings: a generator knows its rows' fingerprint from their hashes alone."""
    digest = hashlib.blake2b(digest_size=16)
    for chunk in chunks:
        digest.update(np.asarray(chunk, dtype="<u8").tobytes())
    return digest.hexdigest()


def match_ids(left: pa.ChunkedArray, right: pa.ChunkedArray) -> np.ndarray:
    """For each id of ``left``, its position in ``right`` (which has unique ids), or -1 when absent."""
    left_keys, right_keys = parse_hex_ids(left), parse_hex_ids(right)
    if left_keys is None or right_keys is None:
        import pyarrow.compute as pc

        return pc.fill_null(pc.index_in(left, value_set=right), -1).to_numpy().astype(np.int64)
    if len(left_keys) == len(right_keys) and np.array_equal(left_keys, right_keys):
        return np.arange(len(left_keys))  # the usual case: predictions in dataset order
    right_order, left_order = np.argsort(right_keys), np.argsort(left_keys)
    sorted_right = right_keys[right_order]
    sorted_left = left_keys[left_order]
    found = np.minimum(np.searchsorted(sorted_right, sorted_left), len(sorted_right) - 1)
    position = np.empty(len(left_keys), dtype=np.int64)
    position[left_order] = np.where(sorted_right[found] == sorted_left, right_order[found], -1)
    return position


def count_distinct(ids: pa.ChunkedArray) -> int:
    """Number of distinct ids (fast path for hex ids)."""
    keys = parse_hex_ids(ids)
    if keys is None:
        import pyarrow.compute as pc

        return pc.count_distinct(ids).as_py()
    keys.sort()
    return int(len(keys) and 1 + np.count_nonzero(keys[1:] != keys[:-1]))
