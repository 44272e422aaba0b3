"""What the task generator reads from a corpus: facts, titles, texts, search, redirects.

:class:`TaskWorld` is the small protocol the generator needs. :class:`SnapshotWorld`
adapts a :class:`stillweb.corpora.snapshot.reading.Snapshot`; :class:`MemoryWorld` holds
everything in memory and searches with a tiny deterministic term-overlap ranking:
kept on purpose as the public way to generate tasks over facts that are not a
snapshot (a small hand-made knowledge base; the generator's own tests use it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import pyarrow as pa

from stillweb.corpora.snapshot.records import FACTS_SCHEMA, SearchResult

__all__ = ["TaskWorld", "SnapshotWorld", "MemoryWorld", "open_world"]


class TaskWorld(Protocol):
    """The read-only view of a corpus that task generation needs."""

    fingerprint: str
    real: bool  # pages of the real world (a Wikipedia dump), not a synthetic world: prove/real_world.py applies

    def facts_table(self) -> pa.Table: ...

    def title_of(self, doc_id: int) -> str: ...

    def text_of(self, doc_id: int) -> str: ...

    def search(self, query: str, k: int) -> list[SearchResult]: ...

    def aliases_of(self, doc_id: int) -> list[str]: ...

    def doc_count(self) -> int: ...


class SnapshotWorld:
    """A :class:`TaskWorld` over an on-disk snapshot (``Snapshot.open(path)``)."""

    def __init__(self, snapshot) -> None:
        self.snapshot = snapshot
        self.fingerprint: str = snapshot.fingerprint
        self.real: bool = (getattr(snapshot, "manifest", None) or {}).get("source", {}).get("kind") != "synthetic"
        self._aliases: dict[int, list[str]] | None = None

    def facts_table(self) -> pa.Table:
        """All facts of the snapshot."""
        return self.snapshot.facts_table

    def title_of(self, doc_id: int) -> str:
        """The title of a document."""
        return self.snapshot.title_of(doc_id)

    def text_of(self, doc_id: int) -> str:
        """The plaintext of a document."""
        return self.snapshot.get(doc_id).text

    def search(self, query: str, k: int) -> list[SearchResult]:
        """The snapshot's BM25 search."""
        return self.snapshot.search(query, k=k)

    def doc_count(self) -> int:
        """How many documents the snapshot has."""
        return len(self.snapshot)

    def aliases_of(self, doc_id: int) -> list[str]:
        """Redirect titles pointing at a document, sorted."""
        if self._aliases is None:
            self._aliases = {}
            for alias, target in sorted(self.snapshot.redirects.items()):
                self._aliases.setdefault(target, []).append(alias)
        return list(self._aliases.get(doc_id, []))


def open_world(snapshot_path: str | Path) -> SnapshotWorld:
    """The snapshot at ``snapshot_path`` as a task world (the process's one opened snapshot:
    :func:`~stillweb.corpora.snapshot.shared.shared_snapshot`, which the environments that verify tasks share)."""
    from stillweb.corpora.snapshot.shared import shared_snapshot

    return SnapshotWorld(shared_snapshot(snapshot_path))


_WORD = re.compile(r"\w+")


@dataclass
class MemoryWorld:
    """An in-memory :class:`TaskWorld`: ``titles`` and ``texts`` by doc id, facts as dict rows.

    Each fact row has the keys of ``FACTS_SCHEMA`` (missing keys default to
    null / -1). Search ranks documents by the number of distinct query words
    they contain (ties by doc id), which is enough for the shortcut filter.
    """

    titles: Mapping[int, str]
    texts: Mapping[int, str]
    facts: Sequence[Mapping[str, object]]
    redirects: Mapping[int, Sequence[str]] = field(default_factory=dict)
    fingerprint: str = "memory"
    real: bool = False  # True: the facts are read as real-world ones (prove/real_world.py)

    def facts_table(self) -> pa.Table:
        """The facts as an Arrow table with the snapshot schema."""
        defaults = {"value_type": "text", "object": -1, "template": "", "value": ""}
        rows = [{name: row.get(name, defaults.get(name)) for name in FACTS_SCHEMA.names} for row in self.facts]
        return pa.Table.from_pylist(rows, schema=FACTS_SCHEMA)

    def title_of(self, doc_id: int) -> str:
        """The title of a document."""
        return self.titles[doc_id]

    def text_of(self, doc_id: int) -> str:
        """The text of a document."""
        return self.texts[doc_id]

    def search(self, query: str, k: int) -> list[SearchResult]:
        """Documents ranked by distinct query words contained (the score; ties by doc id)."""
        words = {w.lower() for w in _WORD.findall(query)}
        scored = []
        for doc_id in sorted(self.texts):
            doc_words = {w.lower() for w in _WORD.findall(self.titles[doc_id] + " " + self.texts[doc_id])}
            score = len(words & doc_words)
            if score:
                scored.append((-score, doc_id))
        scored.sort()
        return [SearchResult(d, self.titles[d], float(-negative), self.texts[d][:200]) for negative, d in scored[:k]]

    def doc_count(self) -> int:
        """How many documents the world has."""
        return len(self.texts)

    def aliases_of(self, doc_id: int) -> list[str]:
        """Redirect titles of a document, sorted."""
        return sorted(self.redirects.get(doc_id, []))
