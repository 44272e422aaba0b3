"""One opened instance per path and process: the snapshot cache (and the frozen stores').

Opening a snapshot memory-maps its documents and loads its index; doing that once per
resolved path is what lets thousands of environments, the task generator and its
solvability proof, and the servers share one corpus for little memory. This is the one
cache of opened snapshots in a process: it lives in the lowest layer that opens them
(``corpora``); ``envs``, ``sandboxes`` and ``server`` use it.

A snapshot rebuilt at the same path (``stillweb build`` swaps the directory in) is
opened again: the key includes the manifest's inode and modification time.

>>> shared_snapshot("/no/such/snapshot")  # doctest: +IGNORE_EXCEPTION_DETAIL
Traceback (most recent call last):
SnapshotError: ...
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from stillweb.corpora.snapshot.reading import Snapshot

__all__ = ["shared_open", "shared_snapshot"]

Opened = TypeVar("Opened")

_OPENED: dict[tuple[Callable[..., Any], Path], tuple[tuple[int, int] | None, Any]] = {}
_LOCK = threading.Lock()


def shared_open(opener: Callable[[Path], Opened], path: str | Path, stamp_file: str | None = None) -> Opened:
    """The process-wide ``opener(path)`` for the resolved ``path``, opened on first use.

    ``stamp_file`` (a file inside ``path``): its inode and modification time join the key, so a
    directory replaced at the same path is opened anew. Errors of ``opener`` propagate.
    """
    key = (opener, Path(path).expanduser().resolve())
    with _LOCK:
        stamp = _stamp(key[1] / stamp_file) if stamp_file is not None else None
        cached = _OPENED.get(key)
        if cached is None or cached[0] != stamp:
            if cached is not None:  # rebuilt at the same path: stop the old one's worker processes, if any
                getattr(cached[1], "close", lambda: None)()
            _OPENED[key] = cached = (stamp, opener(key[1]))
        return cached[1]


def shared_snapshot(path: str | Path) -> Snapshot:
    """The process-wide :class:`Snapshot` for ``path``, opened on first use (again after a rebuild).

    Raises ``SnapshotError`` (from ``Snapshot.open``) naming what is missing.
    """
    return shared_open(Snapshot.open, path, stamp_file="manifest.json")


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_ino, stat.st_mtime_ns
