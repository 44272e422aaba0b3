"""Corpus snapshots: sources, parsing, the search index, the knowledge graph and tasks.

>>> from stillweb.corpora import Snapshot
"""

from .manifest import SnapshotError
from .snapshot import Document, Fact, SearchResult, Snapshot

__all__ = ["Snapshot", "SnapshotError", "SearchResult", "Document", "Fact"]
