"""Build memory that does not grow with the corpus (issue 48): what a build must remember per row, kept compact.

A build of Search-R1's ``wiki-18`` (21M passages) or of all of English Wikipedia must fit a small machine.
Two things held memory per row before:

- :class:`InFlight`: ``multiprocessing.Pool.imap`` reads its input as fast as it can and queues every
  parsed result until the caller takes it; when reading outruns indexing (a row corpus parses in no
  time), the queue held most of the corpus. The window lets at most ``limit`` chunks be in flight.
- :class:`DigestSet`: the sets a build checks every row against (repeated source ids, titles or texts,
  a title already given to the index) were Python sets of ints or strings, 70-100 bytes an entry. Here a
  digest takes its own width plus one byte, in one sorted numpy array, with the newest entries in a
  bounded Python set that is merged into the array when full (a two-level log-structured merge, as in
  O'Neil et al.'s LSM-tree, here with numpy's stable sort merging the two sorted runs).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Iterator
from typing import TypeVar

import numpy as np

__all__ = ["InFlight", "DigestSet", "digest"]

T = TypeVar("T")
RECENT = 1 << 18  # entries kept as Python bytes before a merge (about 20 MB)
_SUFFIX = b"\x01"  # numpy's bytes dtype drops trailing NUL bytes: a digest ending in one would not compare equal


def digest(text: str, size: int = 8) -> bytes:
    """The ``size``-byte BLAKE2b digest of ``text`` (lone surrogates kept, as a corpus may hold them).

    >>> digest("Paris").hex()
    '6be76756dfb79024'
    """
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=size).digest()


class InFlight:
    """At most ``limit`` items handed to a consumer (a process pool) and not yet taken back.

    >>> window = InFlight(2)
    >>> fed = window.feed(iter(range(5)))
    >>> next(fed), next(fed)
    (0, 1)
    >>> window.taken(); next(fed)
    2
    """

    def __init__(self, limit: int) -> None:
        self._slots = threading.Semaphore(limit)
        self._closed = False

    def feed(self, items: Iterable[T]) -> Iterator[T]:
        """``items``, each waiting for a free slot (the pool's task thread waits, not the caller)."""
        for item in items:
            self._slots.acquire()
            if self._closed:
                return
            yield item

    def taken(self) -> None:
        """One item's result was taken: its slot is free."""
        self._slots.release()

    def close(self) -> None:
        """Stop feeding (a failed build): a feeder waiting for a slot wakes up and ends."""
        self._closed = True
        self._slots.release()


class DigestSet:
    """A set of ``width``-byte digests in about ``width + 1`` bytes each (see the module docstring).

    >>> seen = DigestSet(8, recent=2)
    >>> [seen.add(digest(word)) for word in ["a", "b", "c", "a", "d", "b"]]
    [True, True, True, False, True, False]
    >>> len(seen), digest("c") in seen, digest("e") in seen
    (4, True, False)
    """

    def __init__(self, width: int, recent: int | None = None) -> None:
        self._dtype = np.dtype(f"S{width + 1}")
        self._sorted = np.empty(0, dtype=self._dtype)
        self._recent: set[bytes] = set()
        self._limit = recent or RECENT

    def __len__(self) -> int:
        return len(self._sorted) + len(self._recent)

    def __contains__(self, key: bytes) -> bool:
        if key in self._recent:
            return True
        key += _SUFFIX
        at = int(self._sorted.searchsorted(key))
        return at < len(self._sorted) and self._sorted[at] == key

    def add(self, key: bytes) -> bool:
        """Add ``key``; whether it was new."""
        if key in self:
            return False
        self._recent.add(key)
        if len(self._recent) >= self._limit:
            fresh = np.array(sorted(key + _SUFFIX for key in self._recent), dtype=self._dtype)
            self._sorted = np.sort(np.concatenate([self._sorted, fresh]), kind="stable")  # timsort: merges the two runs
            self._recent = set()
        return True
