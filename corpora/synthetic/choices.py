"""Many small keyed choices from few draws of a :class:`~stillweb.corpora.keyed.KeyedRng`.

Names and prose need dozens of small choices (which syllable, which phrasing,
which filler sentence); taking each from a fresh 64-bit blake2b draw would make
hashing the cost of generation. :class:`SmallChoices` splits each 62-bit draw
into mixed-radix digits instead. Each digit's bias is below 2**-20: harmless for
names and wording; facts (dates, quantities, relations) draw from ``KeyedRng``
directly. Results are a pure function of the underlying keyed stream.

>>> from stillweb.corpora.keyed import KeyedRng
>>> a, b = SmallChoices(KeyedRng(1, "x")), SmallChoices(KeyedRng(1, "x"))
>>> [a.below(7) for _ in range(5)] == [b.below(7) for _ in range(5)]
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from stillweb.corpora.errors import UsageError
from stillweb.corpora.keyed import KeyedRng

T = TypeVar("T")

__all__ = ["SmallChoices", "Chooser"]

_REFILL_BELOW = 1 << 20
_DRAW_BITS = 62
_CHANCE_SCALE = 1_000_000


class Chooser(Protocol):
    """What name generators need: :class:`KeyedRng` and :class:`SmallChoices` both fit."""

    def integer(self, low: int, high: int) -> int: ...

    def choice(self, items: Sequence[T]) -> T: ...

    def chance(self, probability: float) -> bool: ...


class SmallChoices:
    """Small random choices carved out of a keyed stream, digit by digit."""

    __slots__ = ("_rng", "_pool", "_capacity")

    def __init__(self, rng: KeyedRng) -> None:
        self._rng = rng
        self._pool = 0
        self._capacity = 1

    def below(self, n: int) -> int:
        """An integer in [0, n)."""
        if self._capacity < _REFILL_BELOW * n:
            self._pool = self._rng.integer(0, (1 << _DRAW_BITS) - 1)
            self._capacity = 1 << _DRAW_BITS
        self._pool, digit = divmod(self._pool, n)
        self._capacity //= n
        return digit

    def integer(self, low: int, high: int) -> int:
        """An integer in [low, high], both ends included."""
        if high < low:
            raise UsageError(f"empty range [{low}, {high}]")
        return low + self.below(high - low + 1)

    def choice(self, items: Sequence[T]) -> T:
        """One element of a non-empty sequence."""
        if not items:
            raise UsageError("choice from an empty sequence")
        return items[self.below(len(items))]

    def chance(self, probability: float) -> bool:
        """True with the given probability (resolution one in a million)."""
        return self.below(_CHANCE_SCALE) < round(probability * _CHANCE_SCALE)
