"""Answer calls from a frozen store: a hit from disk, a miss an error or (``on_miss="live"``) a forwarded,
recorded call. Shared by the in-process :class:`~stillweb.sandboxes.frozen.tool.FrozenTool` and the
proxy routes of ``stillweb freeze record|serve``.

A :class:`Replayer` counts hits, misses and live calls (``counts``) and forwards each missing
key once even when several callers ask for it at the same time, so every caller (and every
later replay) sees the same, first answer.

>>> replayer = Replayer(FrozenStore.open("frozen/"))                       # doctest: +SKIP
>>> replayer.answer(request, forward=lambda: upstream.forward(...)).source  # doctest: +SKIP
'store'
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from stillweb.corpora.errors import UsageError
from stillweb.sandboxes.frozen.store import FrozenStore, request_key

__all__ = ["ON_MISS", "Answer", "Replayer", "NOT_RECORDED"]

ON_MISS = ("error", "live")
NOT_RECORDED = "not_recorded"


@dataclass(frozen=True)
class Answer:
    """One call's outcome: ``source`` is ``"store"``, ``"live"`` (forwarded and recorded now) or
    ``"not_recorded"`` (a miss, ``response`` is ``None``); ``key`` the request's content address."""

    key: str
    source: str
    response: dict[str, Any] | None

    @property
    def missed(self) -> bool:
        """True when the call is not in the store and was not forwarded."""
        return self.source == NOT_RECORDED


class Replayer:
    """The store's answers, plus the live upstream on a miss when ``on_miss == "live"``."""

    def __init__(self, store: FrozenStore, on_miss: str = "error") -> None:
        if on_miss not in ON_MISS:
            raise UsageError(f"on_miss must be one of {ON_MISS}, got {on_miss!r}")
        self.store = store
        self.on_miss = on_miss
        self._lock = threading.Lock()
        self._in_flight: dict[str, threading.Lock] = {}
        self._counts = {"hits": 0, "misses": 0, "live": 0}

    @property
    def counts(self) -> dict[str, int]:
        """``{"hits", "misses", "live"}`` since this replayer was made."""
        with self._lock:
            return dict(self._counts)

    def answer(self, request: Mapping[str, Any], forward: Callable[[], dict[str, Any]] | None = None) -> Answer:
        """The stored answer to ``request``; on a miss, ``forward()`` (the live call) when going live is
        allowed and given, else a ``not_recorded`` answer. Errors of ``forward`` propagate, unrecorded."""
        key = request_key(request)
        record = self.store.get(key)
        if record is None and self.on_miss == "live" and forward is not None:
            with self._lock:
                gate = self._in_flight.setdefault(key, threading.Lock())
            with gate:  # one live call per key at a time; later callers find it stored
                record = self.store.get(key)
                if record is None:
                    stored = self.store.add(request, forward())
                    self._count("live")
                    return Answer(key, "live", stored["response"])
        if record is None:
            self._count("misses")
            return Answer(key, NOT_RECORDED, None)
        self._count("hits")
        return Answer(key, "store", record["response"])

    def _count(self, name: str) -> None:
        with self._lock:
            self._counts[name] += 1
