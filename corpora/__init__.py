"""Corpus snapshots: sources, parsing, the search index, the knowledge graph and tasks.

>>> from stillweb.corpora import Snapshot
"""

from stillweb.corpora.manifest import SnapshotError
from stillweb.corpora.records import Fact, SearchResult
from stillweb.corpora.snapshot import Document, Snapshot

__all__ = ["Snapshot", "SnapshotError", "SearchResult", "Document", "Fact"]
