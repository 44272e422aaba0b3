"""A sharded snapshot's search: groups of shards, each answering its top k, merged by score (issue 48).

Every group scores with the statistics of the whole collection, so a document's score is the one the
unsharded build gives it, and :class:`ShardedIndex` merges the groups' hits by score, ties by doc id
(``(-score, doc_id)``, the project's one sort key): a document of the merged top ``k`` is in its own
group's top ``k``, so the merged top ``k`` is the whole index's. This is the scatter-gather of
distributed search engines (Elasticsearch's ``dfs_query_then_fetch``, which also scores every shard with
global statistics), with the statistics fixed at build time instead of gathered per query:

- a :class:`ShardIndex` is one shard of a snapshot whose shards carry impact postings computed with the
  collection's statistics (format 6 rows, :mod:`stillweb.corpora.snapshot.sharded`): pruned, as one
  snapshot's search is, over the shard's own postings only;
- a :class:`RangeIndex` (shards without impact postings) is tantivy over the whole ``index/`` (every
  shard's segments: tantivy sums their statistics) among a range of doc ids.

A group is searched here (:class:`LocalGroup`) or by a Ray actor holding it
(:mod:`stillweb.corpora.search.shard_actors`).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import tantivy

from stillweb.corpora.errors import DataError
from stillweb.corpora.search.impacts import IMPACTS_DIR, ImpactIndex
from stillweb.corpora.search.index import SearchIndex

__all__ = ["ShardGroup", "ShardIndex", "RangeIndex", "LocalGroup", "ShardedIndex", "merge_hits", "among", "shard_index",
           "whole_parameters"]


class ShardGroup(Protocol):
    """What :class:`ShardedIndex` asks of a group of shards: each query's top ``k`` hits among the group's
    doc ids, ranked by ``(-score, doc_id)`` (``passages``: format 4 hits ``(doc_id, score, start)``, else
    ``(doc_id, score)``), asked for by :meth:`submit` and read by :meth:`result`, so that every group
    works at once."""

    def submit(self, queries: Sequence[str], k: int, fields: tuple[str, ...] | None, passages: bool) -> Any: ...

    def result(self, submitted: Any) -> list[list[tuple]]: ...


def merge_hits(pages: Sequence[Sequence[tuple]], k: int) -> list[tuple]:
    """The top ``k`` of several ranked hit lists whose doc ids differ, by ``(-score, doc_id)``.

    >>> merge_hits([[(0, 2.0), (3, 1.0)], [(5, 2.0), (6, 1.5)]], 3)
    [(0, 2.0), (5, 2.0), (6, 1.5)]
    """
    return heapq.nsmallest(k, (hit for page in pages for hit in page), key=lambda hit: (-hit[1], hit[0]))


def among(schema: tantivy.Schema, query: tantivy.Query, within: tuple[int, int] | None) -> tantivy.Query:
    """``query`` among doc ids ``within[0]`` to ``within[1] - 1`` (``None``: all), each score as without it: a
    fast-field range that adds 0.0 (a segment whose doc ids all lie outside is skipped whole)."""
    if within is None:
        return query
    ids = tantivy.Query.range_query(schema, "doc_id", tantivy.FieldType.Unsigned, within[0], within[1], include_upper=False)
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.Must, tantivy.Query.const_score_query(ids, 0.0))])


class RangeIndex(SearchIndex):
    """The sharded snapshot's whole index (``index/``, with the collection's statistics) searched among doc
    ids ``first`` to ``end - 1`` only: each query is :func:`among` them, so each score is the whole index's.
    Sharded snapshots hold rows, searched by tantivy (a page's exact-title clause would escape the range)."""

    def __init__(self, directory: Path, parameters: dict, first: int, end: int) -> None:
        super().__init__(directory, parameters)
        if self.passages or parameters.get("impacts"):
            raise DataError(f"{directory} is not the index of a sharded snapshot of rows")
        self.first, self.end = first, end

    def _parse(self, query: str, fields: list[str]) -> tantivy.Query:
        return among(self._index.schema, super()._parse(query, fields), (self.first, self.end))


class ShardIndex(SearchIndex):
    """One shard of a sharded snapshot whose shards carry impact postings scored with the collection's
    statistics (format 6 rows): its documents ranked from its own postings (pruned, as one snapshot's are)
    under their global doc ids; format 5's proximity clauses scored by tantivy over ``directory``, the whole
    snapshot's ``index/`` (the collection's statistics again). Each score is the one the unsharded build
    gives the document, to the bit."""

    def __init__(self, directory: Path, parameters: dict, impacts: Path, first: int) -> None:
        super().__init__(directory, parameters)
        if self.passages:
            raise DataError(f"{directory} is not the index of a sharded snapshot of rows")
        self._impacts = _Moved(ImpactIndex(impacts), first)


def whole_parameters(manifest: dict) -> dict:
    """How tantivy searches a sharded snapshot's ``index/``, every shard's segments (impact postings are the shards')."""
    return {key: value for key, value in manifest["index"].items() if key != "impacts"}


def shard_index(path: Path, manifest: dict, shard: dict) -> ShardIndex:
    """The search of one shard (an entry of ``manifest["shards"]``) of the sharded snapshot at ``path``."""
    return ShardIndex(path / "index", whole_parameters(manifest), path / shard["path"] / "index" / IMPACTS_DIR,
                      shard["first_doc_id"])


class _Moved:
    """A shard's impact postings, its units (0..n-1) seen as global doc ids (``first`` on)."""

    def __init__(self, impacts: ImpactIndex, first: int) -> None:
        self.impacts, self.first = impacts, first

    def top(self, clauses: list, k: int, pairs: list = (), pair_scores: Callable | None = None, *bounds) -> list[tuple[int, float]]:
        scores = (lambda units: pair_scores(units + self.first)) if pair_scores is not None else None
        return [(self.first + unit, score) for unit, score in self.impacts.top(clauses, k, pairs, scores, *bounds)]


class LocalGroup:
    """A :class:`ShardGroup` answered in this process by one index (a :class:`ShardIndex` or a
    :class:`RangeIndex`; a shard actor's, or a test's)."""

    def __init__(self, index: SearchIndex) -> None:
        self.index = index

    def submit(self, queries: Sequence[str], k: int, fields: tuple[str, ...] | None, passages: bool) -> list[list[tuple]]:
        return [self.index.search(query, k, fields) for query in queries]

    def result(self, submitted: list[list[tuple]]) -> list[list[tuple]]:
        return submitted


class ShardedIndex:
    """Groups of shards searched as one index, with the reading side of a
    :class:`~stillweb.corpora.search.index.SearchIndex` (``search``, ``search_passages``, ``search_many``,
    ``num_docs``, ``passages``, ``fields``, ``analyzer``), so :class:`~stillweb.corpora.snapshot.reading.Snapshot`
    reads it as it reads one index: titles and snippets are made once, for the merged hits.

    ``whole``: the index over every shard, which says how the groups search.
    """

    def __init__(self, groups: Sequence[ShardGroup], whole: Any) -> None:
        self.groups = list(groups)
        self.remote = any(getattr(group, "remote", False) for group in self.groups)  # Snapshot.search_many: whole batches
        self.passages, self.fields, self.analyzer = whole.passages, whole.fields, whole.analyzer
        self.num_docs = whole.num_docs

    def search(self, query: str, k: int, fields: tuple[str, ...] | None = None) -> list[tuple[int, float]]:
        """Top ``k`` ``(doc_id, score)`` over every group (a format 4 page: its best passage's score)."""
        return [(hit[0], hit[1]) for hit in self.search_many([query], k, fields, self.passages)[0]]

    def search_passages(self, query: str, k: int, fields: tuple[str, ...] | None = None) -> list[tuple[int, float, int]]:
        """Format 4 pages: the top ``k`` ``(doc_id, score, start of the best passage)`` over every group."""
        return self.search_many([query], k, fields, True)[0]

    def search_many(self, queries: Sequence[str], k: int, fields: tuple[str, ...] | None = None,
                    passages: bool | None = None) -> list[list[tuple]]:
        """Each query's merged top ``k``, in input order: every group answers the whole batch (all at
        once), then each query's hits are merged."""
        passages = self.passages if passages is None else passages
        submitted = [group.submit(queries, k, fields, passages) for group in self.groups]
        answers = [group.result(handle) for group, handle in zip(self.groups, submitted)]
        return [merge_hits([answer[position] for answer in answers], k) for position in range(len(queries))]
