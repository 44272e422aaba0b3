"""Keyed randomness: every random choice is a pure function of (seed, path of names).

The rule from ARCHITECTURE.md: no global or library RNG streams. A draw is keyed
by the seed and a path such as ``(seed, "person", 1234, "birth_year")``, so adding
an entity or running in parallel never shifts another choice, and the bytes come
from blake2b, whose output is fixed by its specification (not by a library
version).

>>> rng = KeyedRng(0, "person", 7)
>>> rng.integer(1900, 2000) == KeyedRng(0, "person", 7).integer(1900, 2000)
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

from stillweb.corpora.errors import UsageError

T = TypeVar("T")

__all__ = ["KeyedRng", "stable_hash"]


def _encode_path(seed: int, path: tuple) -> bytes:
    parts = [repr(seed)]
    for name in path:
        if not isinstance(name, (str, int)):
            raise TypeError(f"key path parts must be str or int, got {type(name).__name__}: {name!r}")
        parts.append(f"{type(name).__name__[0]}:{name}")
    return "\x1f".join(parts).encode("utf-8")


def stable_hash(text: str, digest_size: int = 8) -> str:
    """Hex blake2b digest of a string: a stable identifier for content."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=digest_size).hexdigest()


class KeyedRng:
    """A small random stream keyed by (seed, path), in counter mode over blake2b.

    Successive draws from one ``KeyedRng`` are deterministic; two streams with
    different paths are independent. Use one stream per decision site, e.g.
    ``KeyedRng(seed, "film", film_id, "director")``.
    """

    __slots__ = ("_key", "_counter", "_pool")

    def __init__(self, seed: int, *path: str | int) -> None:
        self._key = hashlib.blake2b(_encode_path(seed, path), digest_size=32).digest()
        self._counter = 0
        self._pool = b""

    def child(self, *path: str | int) -> "KeyedRng":
        """An independent stream below this one (does not consume draws)."""
        rng = KeyedRng.__new__(KeyedRng)
        rng._key = hashlib.blake2b(self._key + _encode_path(0, path), digest_size=32).digest()
        rng._counter = 0
        rng._pool = b""
        return rng

    def _u64(self) -> int:
        if len(self._pool) < 8:
            block = hashlib.blake2b(
                self._counter.to_bytes(8, "big"), key=self._key, digest_size=64
            ).digest()
            self._counter += 1
            self._pool += block
        value, self._pool = self._pool[:8], self._pool[8:]
        return int.from_bytes(value, "big")

    def random(self) -> float:
        """A float in [0, 1) with 53 random bits."""
        return (self._u64() >> 11) / float(1 << 53)

    def integer(self, low: int, high: int) -> int:
        """An integer in [low, high], both ends included (unbiased)."""
        if high < low:
            raise UsageError(f"empty range [{low}, {high}]")
        span = high - low + 1
        limit = (1 << 64) - ((1 << 64) % span)
        while True:
            value = self._u64()
            if value < limit:
                return low + value % span

    def chance(self, probability: float) -> bool:
        """True with the given probability."""
        return self.random() < probability

    def choice(self, items: Sequence[T]) -> T:
        """One element of a non-empty sequence."""
        if not items:
            raise UsageError("choice from an empty sequence")
        return items[self.integer(0, len(items) - 1)]

    def weighted_choice(self, items: Sequence[T], weights: Sequence[float]) -> T:
        """One element, with probability proportional to its weight."""
        total = float(sum(weights))
        if not items or total <= 0:
            raise UsageError("weighted choice needs items and a positive total weight")
        target = self.random() * total
        running = 0.0
        for item, weight in zip(items, weights):
            running += weight
            if target < running:
                return item
        return items[-1]

    def shuffled(self, items: Sequence[T]) -> list[T]:
        """A new list with the items in a keyed random order (Fisher-Yates)."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.integer(0, i)
            out[i], out[j] = out[j], out[i]
        return out

    def sample(self, items: Sequence[T], count: int) -> list[T]:
        """``count`` distinct elements in a keyed random order."""
        if count > len(items):
            raise UsageError(f"cannot sample {count} from {len(items)} items")
        return self.shuffled(items)[:count]
