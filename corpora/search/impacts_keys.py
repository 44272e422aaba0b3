"""The vocabulary of a snapshot's impact postings: keys (``field \\0 term`` as UTF-8), their 64-bit hashes,
and looking lists up by key (issue 48).

Format ``stillweb-impacts/2`` numbers its lists in the order of their keys' hashes (:func:`key_hash`,
seeded: FNV-1a over the bytes, then the splitmix64 finalizer, Steele et al., "Fast splittable
pseudorandom number generators", OOPSLA 2014), so a build can merge postings by hash without ever
sorting or holding the vocabulary's strings: a key is found by binary search over the sorted hashes
and then compared byte for byte with the stored key (:func:`lookup_hashed`), so a query term that
merely shares a hash with an indexed one matches nothing. Two indexed keys sharing a hash are found by
the build, which then starts over with the next seed (recorded in ``meta.json``). Format
``stillweb-impacts/1`` kept its keys sorted by bytes (:func:`lookup_sorted`).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["term_key", "key_hash", "key_hashes", "lookup_hashed", "lookup_sorted", "joined"]

_SEP = "\x00"


def term_key(field: str, term: str) -> bytes:
    """The vocabulary key of ``term`` in ``field`` (UTF-8 bytes, field first): what lists are looked up by."""
    return f"{field}{_SEP}{term}".encode("utf-8", "replace")


def joined(keys: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """``keys`` as one uint8 buffer and the int64 offsets of their ends (what the numba functions read)."""
    return (np.frombuffer(b"".join(keys), dtype=np.uint8),
            np.cumsum(np.fromiter(map(len, keys), dtype=np.int64, count=len(keys)), dtype=np.int64))


@numba.njit(cache=True, nogil=True)
def key_hash(data, start, end, seed):
    """The 64-bit hash of the bytes ``data[start:end]`` with ``seed`` (uint64)."""
    h = np.uint64(0xCBF29CE484222325) ^ (np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15))
    for i in range(start, end):
        h = (h ^ np.uint64(data[i])) * np.uint64(0x100000001B3)
    h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(31))


@numba.njit(cache=True, nogil=True)
def key_hashes(data, ends, seed):
    """The hash of each key of ``data`` split at ``ends``."""
    out = np.empty(len(ends), np.uint64)
    start = 0
    for i in range(len(ends)):
        out[i] = key_hash(data, start, ends[i], seed)
        start = ends[i]
    return out


@numba.njit(cache=True, nogil=True)
def _same(keys, start, end, wanted, low, high):
    if end - start != high - low:
        return False
    for i in range(end - start):
        if keys[start + i] != wanted[low + i]:
            return False
    return True


@numba.njit(cache=True, nogil=True)
def lookup_hashed(hashes, keys, key_offsets, wanted, ends, seed):
    """The list number of each wanted key (``wanted`` split at ``ends``), -1 if absent: lists are numbered in
    ``hashes`` order (sorted), ``keys[key_offsets[i]:key_offsets[i + 1]]`` is list ``i``'s key."""
    found = np.full(len(ends), -1, np.int64)
    low_end = 0
    for w in range(len(ends)):
        h = key_hash(wanted, low_end, ends[w], seed)
        at = np.searchsorted(hashes, h)
        while at < len(hashes) and hashes[at] == h:
            if _same(keys, key_offsets[at], key_offsets[at + 1], wanted, low_end, ends[w]):
                found[w] = at
                break
            at += 1
        low_end = ends[w]
    return found


@numba.njit(cache=True, nogil=True)
def _compare(keys, start, end, wanted, low, high):
    """-1, 0 or 1 as the key ``keys[start:end]`` sorts before, as or after ``wanted[low:high]`` (bytes order)."""
    n, m = end - start, high - low
    for i in range(min(n, m)):
        if keys[start + i] != wanted[low + i]:
            return -1 if keys[start + i] < wanted[low + i] else 1
    return -1 if n < m else (1 if n > m else 0)


@numba.njit(cache=True, nogil=True)
def lookup_sorted(keys, key_offsets, key_lists, wanted, ends):
    """Format 1: the list number of each wanted key in the vocabulary sorted by bytes, -1 if absent."""
    found = np.full(len(ends), -1, np.int64)
    low_end = 0
    for w in range(len(ends)):
        low, high = 0, len(key_offsets) - 1
        while low < high:  # the first key not before the wanted one
            middle = (low + high) // 2
            if _compare(keys, key_offsets[middle], key_offsets[middle + 1], wanted, low_end, ends[w]) < 0:
                low = middle + 1
            else:
                high = middle
        if low < len(key_offsets) - 1 and _compare(keys, key_offsets[low], key_offsets[low + 1], wanted, low_end, ends[w]) == 0:
            found[w] = key_lists[low]
        low_end = ends[w]
    return found
