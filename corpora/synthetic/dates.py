"""Dates of the synthetic world: the fixed "now" and compact YYYYMMDD integers.

Entities store dates as ``YYYYMMDD`` ints in arrays (:mod:`.world`); facts and
pages decode them (:mod:`.facts`, :mod:`.wikitext_pages`).

>>> decode_date(encode_date(1950, 3, 4))
(1950, 3, 4)
"""

from __future__ import annotations

from stillweb.corpora.keyed import KeyedRng

__all__ = ["PRESENT_YEAR", "decode_date", "encode_date", "keyed_date"]

PRESENT_YEAR = 2025  # the world's "now": a constant, never the wall clock


def encode_date(year: int, month: int, day: int) -> int:
    """A date as the integer YYYYMMDD (compact storage in arrays)."""
    return year * 10000 + month * 100 + day


def decode_date(value: int) -> tuple[int, int, int]:
    """The (year, month, day) of a YYYYMMDD integer."""
    return value // 10000, value // 100 % 100, value % 100


def keyed_date(rng: KeyedRng, first_year: int, last_year: int) -> int:
    """A YYYYMMDD date with a year in [first_year, last_year] (days 1-28, always valid)."""
    return encode_date(rng.integer(first_year, last_year), rng.integer(1, 12), rng.integer(1, 28))
