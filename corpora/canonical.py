"""The one JSON text of a value: what recordings, frozen stores, profiles and comparisons hash and compare.

Sorted keys, ASCII with escapes (lone surrogates, which policies can send, stay exact and the file
valid UTF-8), compact separators, no NaN (so no raw newline and no non-standard constant).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

__all__ = ["canonical_json"]


def canonical_json(value: Any) -> str:
    """The one JSON text of a value: sorted keys, ASCII with escapes, no NaN.

    ASCII escaping keeps lone surrogates (which policies can send) exact and
    the file valid UTF-8.

    >>> print(canonical_json({"b": 1, "a": [1.5, "é"]}))
    {"a":[1.5,"\\u00e9"],"b":1}
    """
    return json.dumps(_plain(value), sort_keys=True, ensure_ascii=True, separators=(",", ":"), allow_nan=False)


def _plain(value: Any) -> Any:
    """JSON-ready copy: dataclasses to dicts, tuples to lists, paths to str, numpy scalars to Python."""
    if isinstance(value, PurePath):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _plain(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if hasattr(value, "item") and callable(value.item):
        return value.item()
    return value
