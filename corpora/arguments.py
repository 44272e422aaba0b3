"""Argument checks shared by every layer, written once.

>>> check_positive_int("workers", 2)
2
>>> check_positive_int("workers", True)
Traceback (most recent call last):
stillweb.corpora.errors.UsageError: workers must be a positive integer, got True
"""

from __future__ import annotations

from stillweb.corpora.errors import UsageError

__all__ = ["check_positive_int"]


def check_positive_int(name: str, value: object) -> int:
    """``value`` if it is an int >= 1 (not a bool); else ``ValueError`` naming ``name`` and the value."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"{name} must be a positive integer, got {value!r}")
    return value
