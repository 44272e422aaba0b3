"""English text as tantivy's analyzer indexes it, at numba speed and exactly (``impacts_tokens.py``, issue 48).

tantivy's simple tokenizer cuts text at every character that is not alphanumeric (Rust's
``char::is_alphanumeric``); every ASCII byte that is not a letter or a digit is such a character, and
no token crosses one. So UTF-8 text splits at those bytes into *segments* (runs of ASCII letters,
digits and non-ASCII bytes) whose terms do not depend on their neighbours: a segment's terms are what
tantivy's own analyzer gives for the segment alone (one term, none for a stop word or a word over 40
bytes, several where a non-ASCII character that is not alphanumeric splits it). :class:`SegmentTerms`
asks tantivy once per distinct segment and remembers the answer in a numba hash table (open
addressing, FNV-1a), so a chunk's tokens are resolved without a Python call per token or per word.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["segments", "SegmentTerms", "expand"]

MISS = -(1 << 62)


@numba.njit(cache=True, nogil=True)
def segments(data, starts, ends, units):
    """Maximal runs of bytes that are ASCII letters, digits or non-ASCII in each range ``data[starts[i]:ends[i]]``
    (of unit ``units[i]``): their starts, ends and units."""
    total = 0
    for r in range(len(starts)):
        total += (ends[r] - starts[r] + 1) // 2 + 1
    out_start = np.empty(total, np.int64)
    out_end = np.empty(total, np.int64)
    out_unit = np.empty(total, np.int64)
    n = 0
    for r in range(len(starts)):
        inside = False
        for i in range(starts[r], ends[r]):
            b = data[i]
            word = b >= 128 or (48 <= b <= 57) or (65 <= b <= 90) or (97 <= b <= 122)
            if word and not inside:
                out_start[n], out_unit[n], inside = i, units[r], True
            elif not word and inside:
                out_end[n], n, inside = i, n + 1, False
        if inside:
            out_end[n], n = ends[r], n + 1
    return out_start[:n], out_end[:n], out_unit[:n]


@numba.njit(cache=True, nogil=True, inline="always")
def _fnv(data, start, end):
    """FNV-1a, then a multiply-xorshift so the low bits (the slot) depend on every byte."""
    h = np.uint64(14695981039346656037)
    for i in range(start, end):
        h = (h ^ np.uint64(data[i])) * np.uint64(1099511628211)
    h = (h ^ (h >> np.uint64(32))) * np.uint64(0xD6E8FEB86659FD93)
    return h ^ (h >> np.uint64(32))


@numba.njit(cache=True, nogil=True, inline="always")
def _equal(a, a_start, b, b_start, length):
    """True when ``a[a_start:a_start + length]`` and ``b[b_start:b_start + length]`` hold the same bytes."""
    for i in range(length):
        if a[a_start + i] != b[b_start + i]:
            return False
    return True


@numba.njit(cache=True, nogil=True)
def _find(slots, hashes, starts, lengths, pool, data, start, end, h):
    """The slot of the segment ``data[start:end]`` (hash ``h``): its entry's, or the empty slot where it goes."""
    mask = len(slots) - 1
    slot = np.int64(h & np.uint64(mask))
    while True:
        entry = slots[slot]
        if entry < 0:
            return slot
        if hashes[entry] == h and lengths[entry] == end - start and _equal(pool, starts[entry], data, start, end - start):
            return slot
        slot = (slot + 1) & mask


@numba.njit(cache=True, nogil=True)
def _resolve(slots, hashes, starts, lengths, codes, pool, data, seg_start, seg_end):
    """Each segment's remembered code, or MISS - i for the i-th distinct segment not remembered; and the first
    occurrence of each of those. The segments are first told apart in a small table of this call's own (it stays
    in cache), so the large table is read once per distinct segment, not once per token."""
    size = 1 << 12
    local = np.full(size, -1, np.int64)  # (31 high bits of the hash << 32) | distinct number
    d_hash = np.empty(1024, np.uint64)
    d_first = np.empty(1024, np.int64)
    d_offset = np.empty(1025, np.int64)  # a distinct segment's bytes in `copy`, kept together (in cache)
    d_offset[0] = 0
    copy = np.empty(len(data), np.uint8)
    ids = np.empty(len(seg_start), np.int64)
    count = 0
    for s in range(len(seg_start)):
        start, end = seg_start[s], seg_end[s]
        h = _fnv(data, start, end)
        tag = np.int64(h >> np.uint64(33)) << 32
        slot = np.int64(h & np.uint64(size - 1))
        while True:
            value = local[slot]
            if value < 0:
                if count == len(d_hash):
                    d_hash, d_first = np.concatenate((d_hash, d_hash)), np.concatenate((d_first, d_first))
                    d_offset = np.concatenate((d_offset, d_offset[1:]))
                d_hash[count], d_first[count], ids[s] = h, s, count
                copy[d_offset[count]:d_offset[count] + end - start] = data[start:end]
                d_offset[count + 1] = d_offset[count] + end - start
                local[slot] = tag | count
                count += 1
                if 2 * count > size:  # rehash at double the size
                    size *= 2
                    local = np.full(size, -1, np.int64)
                    for d in range(count):
                        slot = np.int64(d_hash[d] & np.uint64(size - 1))
                        while local[slot] >= 0:
                            slot = (slot + 1) & (size - 1)
                        local[slot] = (np.int64(d_hash[d] >> np.uint64(33)) << 32) | d
                break
            if value & ~np.int64(0xFFFFFFFF) == tag:
                d = value & 0xFFFFFFFF
                if d_offset[d + 1] - d_offset[d] == end - start and _equal(copy, d_offset[d], data, start, end - start):
                    ids[s] = d
                    break
            slot = (slot + 1) & (size - 1)
    known = np.empty(count, np.int64)
    missing = np.empty(count, np.int64)
    n_missing = 0
    for d in range(count):
        entry = slots[_find(slots, hashes, starts, lengths, pool, copy, d_offset[d], d_offset[d + 1], d_hash[d])]
        if entry >= 0:
            known[d] = codes[entry]
        else:
            known[d], missing[n_missing] = MISS - n_missing, d_first[d]
            n_missing += 1
    out = np.empty(len(seg_start), np.int64)
    for s in range(len(seg_start)):
        out[s] = known[ids[s]]
    return out, missing[:n_missing]


@numba.njit(cache=True, nogil=True)
def _insert(slots, hashes, starts, lengths, codes, pool, count, used, data, seg_start, seg_end, new_codes):
    """Remember the segments (absent so far) with their codes; returns the new entry count and pool use."""
    for s in range(len(seg_start)):
        h = _fnv(data, seg_start[s], seg_end[s])
        slot = _find(slots, hashes, starts, lengths, pool, data, seg_start[s], seg_end[s], h)
        length = seg_end[s] - seg_start[s]
        pool[used:used + length] = data[seg_start[s]:seg_end[s]]
        hashes[count], starts[count], lengths[count], codes[count] = h, used, length, new_codes[s]
        slots[slot] = count
        count, used = count + 1, used + length
    return count, used


@numba.njit(cache=True, nogil=True)
def _rehash(size, hashes, count):
    slots = np.full(size, -1, np.int64)
    for entry in range(count):
        slot = np.int64(hashes[entry] & np.uint64(size - 1))
        while slots[slot] >= 0:
            slot = (slot + 1) & (size - 1)
        slots[slot] = entry
    return slots


@numba.njit(cache=True, nogil=True)
def expand(codes, occurrence_units, several_offsets, several_terms, units):
    """The terms of the segment occurrences in order (code >= 0: that term; -1: none; -2 - i: the terms
    ``several_terms[several_offsets[i]:several_offsets[i + 1]]``), their units, and each unit's term count."""
    total = 0
    for code in codes:
        total += 1 if code >= 0 else 0 if code == -1 else several_offsets[-2 - code + 1] - several_offsets[-2 - code]
    out_terms = np.empty(total, np.int64)
    out_units = np.empty(total, np.int64)
    lengths = np.zeros(units, np.int64)
    n = 0
    for s in range(len(codes)):
        code = codes[s]
        if code >= 0:
            out_terms[n], out_units[n] = code, occurrence_units[s]
            n += 1
        elif code != -1:
            for j in range(several_offsets[-2 - code], several_offsets[-2 - code + 1]):
                out_terms[n], out_units[n] = several_terms[j], occurrence_units[s]
                n += 1
    for t in range(n):
        lengths[out_units[t]] += 1
    return out_terms, out_units, lengths


class SegmentTerms:
    """The code of every segment seen so far (see :func:`expand`), in numba arrays; ``analyze(text)`` gives a
    segment's terms as term numbers (tantivy's analyzer, then the worker's term numbering)."""

    def __init__(self, analyze) -> None:
        self._analyze = analyze
        self.count = self.used = 0
        self.slots = np.full(1 << 16, -1, np.int64)
        self.hashes = np.zeros(1 << 15, np.uint64)
        self.starts = np.zeros(1 << 15, np.int64)
        self.lengths = np.zeros(1 << 15, np.int64)
        self.codes = np.zeros(1 << 15, np.int64)
        self.pool = np.zeros(1 << 18, np.uint8)
        self.several_offsets, self.several_terms = [0], []

    def codes_of(self, data: np.ndarray, seg_start: np.ndarray, seg_end: np.ndarray) -> np.ndarray:
        """The code of each segment ``data[seg_start[i]:seg_end[i]]``, tantivy asked about new ones only."""
        codes, missing = _resolve(self.slots, self.hashes, self.starts, self.lengths, self.codes, self.pool, data, seg_start, seg_end)
        if not len(missing):
            return codes
        raw = data.tobytes()
        new = np.empty(len(missing), np.int64)
        for number, (start, end) in enumerate(zip(seg_start[missing].tolist(), seg_end[missing].tolist())):
            found = self._analyze(raw[start:end].decode("utf-8"))
            if len(found) == 1:
                new[number] = found[0]
            elif not found:
                new[number] = -1
            else:
                new[number] = -1 - len(self.several_offsets)
                self.several_terms.extend(found)
                self.several_offsets.append(len(self.several_terms))
        self._grow(len(missing), int((seg_end[missing] - seg_start[missing]).sum()))
        self.count, self.used = _insert(self.slots, self.hashes, self.starts, self.lengths, self.codes, self.pool, self.count,
                                        self.used, data, seg_start[missing], seg_end[missing], new)
        where = codes <= MISS // 2
        codes[where] = new[MISS - codes[where]]
        return codes

    def several(self) -> tuple[np.ndarray, np.ndarray]:
        """The term lists of segments with several terms, as offsets and terms (for :func:`expand`)."""
        return np.asarray(self.several_offsets, dtype=np.int64), np.asarray(self.several_terms, dtype=np.int64)

    def _grow(self, entries: int, size: int) -> None:
        if self.count + entries > len(self.hashes):
            capacity = max(2 * len(self.hashes), self.count + entries)
            for name in ("hashes", "starts", "lengths", "codes"):
                old = getattr(self, name)
                setattr(self, name, np.concatenate([old, np.zeros(capacity - len(old), old.dtype)]))
        if self.used + size > len(self.pool):
            self.pool = np.concatenate([self.pool, np.zeros(max(len(self.pool), self.used + size - len(self.pool)), np.uint8)])
        if 2 * (self.count + entries) > len(self.slots):
            size = len(self.slots)
            while 2 * (self.count + entries) > size:
                size *= 2
            self.slots = _rehash(size, self.hashes, self.count)
