"""The array work of merging impact runs (``impacts_build.py``): telling lists apart by key, placing postings,
block maxima, and ``.npy`` files written a slice at a time."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numba
import numpy as np

from stillweb.corpora.search.impacts import BLOCK, posting_score

__all__ = ["mapped", "check_keys", "scatter", "blocks", "NpyWriter"]


def mapped(path: Path, dtype: np.dtype) -> np.ndarray:
    """The spill file at ``path`` as a read-only array (an empty file: an empty array)."""
    return np.memmap(path, dtype=dtype, mode="r") if path.stat().st_size else np.zeros(0, dtype)


@numba.njit(cache=True, nogil=True)
def check_keys(hashes, blob, starts, ends):
    """The first segment of each list (segments sorted by hash); -1 marks two keys sharing a hash."""
    first = np.empty(len(hashes), np.int64)
    n = 0
    for i in range(len(hashes)):
        if i == 0 or hashes[i] != hashes[i - 1]:
            first[n] = i
            n += 1
            continue
        j = first[n - 1]
        if ends[i] - starts[i] != ends[j] - starts[j]:
            return np.full(1, -1, np.int64)
        for b in range(ends[i] - starts[i]):
            if blob[starts[i] + b] != blob[starts[j] + b]:
                return np.full(1, -1, np.int64)
    return first[:n]


@numba.njit(cache=True, nogil=True)
def scatter(units, tf, sources, counts):
    out_units = np.empty(counts.sum(), np.int64)
    out_tf = np.empty(counts.sum(), tf.dtype)
    at = 0
    for s in range(len(sources)):
        for p in range(counts[s]):
            out_units[at], out_tf[at] = units[sources[s] + p], tf[sources[s] + p]
            at += 1
    return out_units, out_tf


@numba.njit(cache=True, nogil=True)
def blocks(units, tf, list_starts, weights, fields, norms, caches):
    """The largest score and the last unit of each block of :data:`BLOCK` postings of each list."""
    blocks = 0
    for l in range(len(list_starts) - 1):
        blocks += (list_starts[l + 1] - list_starts[l] + BLOCK - 1) // BLOCK
    block_max = np.zeros(blocks, np.float32)
    block_last = np.empty(blocks, np.int32)
    b = 0
    for l in range(len(list_starts) - 1):
        f = fields[l]
        for start in range(list_starts[l], list_starts[l + 1], BLOCK):
            stop = min(start + BLOCK, list_starts[l + 1])
            top = np.float32(0.0)
            for p in range(start, stop):
                top = max(top, posting_score(weights[l], tf[p], caches[f, norms[f, units[p]]]))
            block_max[b], block_last[b] = top, units[stop - 1]
            b += 1
    return block_max, block_last


class NpyWriter:
    """An ``.npy`` file of values written in order, a slice at a time (no whole array in memory); ``total`` None:
    the values go to a side file and the header, once their number is known, before them at :meth:`close`."""

    def __init__(self, path: Path, dtype, total: int | None) -> None:
        self._path, self._dtype, self._count = path, np.dtype(dtype), 0
        self._file = open(path if total is not None else path.with_suffix(".part"), "wb")
        if total is not None:
            self._header(self._file, total)

    def _header(self, handle, total: int) -> None:
        np.lib.format.write_array_header_1_0(handle, {"descr": self._dtype.str, "fortran_order": False, "shape": (total,)})

    def write(self, values: np.ndarray) -> None:
        self._file.write(np.ascontiguousarray(values, dtype=self._dtype).tobytes())
        self._count += len(values)

    def close(self) -> None:
        self._file.close()
        part = self._path.with_suffix(".part")
        if part.exists():
            with open(self._path, "wb") as handle, open(part, "rb") as values:
                self._header(handle, self._count)
                shutil.copyfileobj(values, handle, 1 << 22)
            os.unlink(part)
