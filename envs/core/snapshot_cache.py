"""One opened snapshot per process, shared by every environment that names it.

Opening a snapshot memory-maps its documents and loads its index; doing that
once per path (the cache key is the resolved path) is what lets thousands of
environments share one corpus for little memory.

>>> shared_snapshot("/no/such/snapshot")  # doctest: +IGNORE_EXCEPTION_DETAIL
Traceback (most recent call last):
SnapshotError: ...
"""

from __future__ import annotations

import threading
from pathlib import Path

from stillweb.corpora.snapshot import Snapshot

__all__ = ["shared_snapshot"]

_OPENED: dict[Path, Snapshot] = {}
_LOCK = threading.Lock()


def shared_snapshot(path: str | Path) -> Snapshot:
    """The process-wide :class:`Snapshot` for ``path``, opened on first use.

    Raises ``SnapshotError`` (from ``Snapshot.open``) naming what is missing.
    """
    key = Path(path).expanduser().resolve()
    with _LOCK:
        snapshot = _OPENED.get(key)
        if snapshot is None:
            snapshot = _OPENED[key] = Snapshot.open(key)
        return snapshot
