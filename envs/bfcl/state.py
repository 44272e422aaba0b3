"""The state of BFCL's API instances as JSON values: what the viewer shows, the fingerprint in
``info``, and each step's ``state_diff``.

BFCL's state checker compares every public attribute of each instance (``vars()`` without the
``_`` ones); :func:`jsonable` writes the same attributes as JSON values (objects such as the file
system's directories by their public attributes, without the ``parent`` link that points back up).

>>> state_diff({"A": {"x": 1, "y": {"k": [1]}}}, {"A": {"x": 1, "y": {"k": [1, 2]}, "z": True}})
[{'path': 'A.y.k', 'before': [1], 'after': [1, 2]}, {'path': 'A.z', 'before': None, 'after': True}]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stillweb.corpora.canonical import canonical_json
from stillweb.corpora.keyed import stable_hash

__all__ = ["jsonable", "state_diff", "state_fingerprint", "MAX_DIFF_ENTRIES"]

# A step's state_diff lists at most this many changed paths (then one entry saying how many more).
MAX_DIFF_ENTRIES = 64


def jsonable(value: Any, ancestors: tuple[int, ...] = ()) -> Any:
    """``value`` as JSON values: objects by their public attributes, minus any attribute or entry that
    points back up the tree (a directory's ``parent``); sets as sorted lists; tuples as lists."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    inside = ancestors + (id(value),)
    if isinstance(value, dict):
        return {str(key): jsonable(item, inside) for key, item in value.items() if id(item) not in inside}
    if isinstance(value, (list, tuple)):
        return [jsonable(item, inside) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(item, inside) for item in value), key=canonical_json)
    if hasattr(value, "__dict__"):
        return {key: jsonable(item, inside) for key, item in vars(value).items()
                if not key.startswith("_") and id(item) not in inside}
    return str(value)


def state_fingerprint(state: Mapping[str, Any]) -> str:
    """A hash of a state (its canonical JSON)."""
    return stable_hash(canonical_json(state), 16)


def state_diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The changed leaves between two states, by dotted path, in key order (dicts are walked, any
    other value compared whole); a missing side is ``None``."""
    changes: list[dict[str, Any]] = []
    _walk(before, after, "", changes)
    if len(changes) > MAX_DIFF_ENTRIES:
        more = len(changes) - MAX_DIFF_ENTRIES
        changes = changes[:MAX_DIFF_ENTRIES] + [{"path": f"... {more} more changes", "before": None, "after": None}]
    return changes


def _walk(before: Any, after: Any, path: str, changes: list[dict[str, Any]]) -> None:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after)):
            _walk(before.get(key), after.get(key), f"{path}.{key}" if path else key, changes)
    elif before != after or type(before) is not type(after):
        changes.append({"path": path, "before": before, "after": after})
