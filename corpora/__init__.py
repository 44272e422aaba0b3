"""Corpus snapshots: sources, parsing, the search index, the knowledge graph and tasks.

>>> from stillweb.corpora import Snapshot
"""

from stillweb.corpora.snapshot.manifest import SnapshotError
from stillweb.corpora.snapshot.records import Fact, SearchResult
from stillweb.corpora.snapshot.reading import Document, Snapshot

__all__ = ["Snapshot", "SnapshotError", "SearchResult", "Document", "Fact"]
