"""Reading a corpus snapshot: search, documents, redirects and facts.

>>> snap = Snapshot.open("~/.cache/stillweb/synthetic-20000-s0")   # doctest: +SKIP
>>> [r.title for r in snap.search("river city founded", k=3)]      # doctest: +SKIP

A snapshot is immutable. Documents are read from ``docs.arrow`` (the same rows
as ``docs.parquet``, uncompressed and memory-mapped), so many processes serving
one snapshot share its pages through the OS page cache instead of each holding
a decompressed copy.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from stillweb.corpora.errors import UsageError
from stillweb.corpora.arguments import check_positive_int
from stillweb.corpora.snapshot.columns import StringColumn
from stillweb.corpora.search.dense import DENSE_DIR, DenseIndex, check_mode, no_dense_index
from stillweb.corpora.search.dense_model import SHIPPED
from stillweb.corpora.search.fusion import fusion_of
from stillweb.corpora.search.embeddings import ENDPOINT_VARIABLE, STORE_VARIABLE, QueryEmbedder
from stillweb.corpora.search.index import INDEX_PARAMETERS, MAX_K, MAX_QUERY_CHARS
from stillweb.corpora.snapshot.manifest import SnapshotError, check_table_footers, read_manifest, read_snapshot_table
from stillweb.corpora.search.page_ranking import passage_snippet
from stillweb.corpora.snapshot.records import Fact, SearchResult
from stillweb.corpora.snapshot.sharded import check_not_a_shard, is_sharded, open_docs, open_search_index, open_sharded_index, shard_paths
from stillweb.corpora.search.pool import SearchPool
from stillweb.corpora.search.chinese import fold_utf8_to_simplified
from stillweb.corpora.search.snippets import SNIPPET_CHARS, make_snippet, snippet_needles

__all__ = ["Snapshot", "Document"]

MIN_POOL_BATCH = 8  # smaller batches are answered in-process: a round trip to the workers costs about a query


@dataclass(frozen=True)
class Document:
    """One document of a snapshot (an article, or one passage of a passage-level snapshot)."""

    doc_id: int
    source_id: str
    title: str
    url: str
    kind: str
    text: str
    categories: tuple[str, ...]


def _check_query(query: object, name: str) -> None:
    if not isinstance(query, str) or not query.strip():
        raise UsageError(f"{name} must be a non-empty string, got {str(query)[:80]!r}")


def _check_k(k: object) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise UsageError(f"k must be an integer in 1..{MAX_K}, got {k!r}")


class Snapshot:
    """An opened snapshot directory. Use :meth:`open`."""

    def __init__(self, path: Path, manifest: dict, query_embedder: QueryEmbedder | None = None) -> None:
        self.path = path
        self.manifest = manifest
        self.fingerprint: str = manifest["fingerprint"]
        self.dense_info: dict | None = manifest.get("dense")  # the dense index's model and parameters, if any
        self.query_embedder = query_embedder or self._default_embedder()
        self._pool: SearchPool | None = None
        self._pool_lock = threading.Lock()
        # A sharded snapshot (snapshot/sharded.py): its shards' documents end to end, searched as one.
        self._docs = open_docs(shard_paths(path, manifest) if is_sharded(manifest) else [path])
        self._titles = StringColumn(self._docs.column("title"))
        self._texts = StringColumn(self._docs.column("text"))
        # Format 1 snapshots have no source ids: they read as "".
        has_ids = "source_id" in self._docs.column_names
        self._source_ids = StringColumn(self._docs.column("source_id")) if has_ids else None
        has_heads = "source_head" in self._docs.column_names  # wiki-18 rows' heads as written (records.py)
        self._heads = StringColumn(self._docs.column("source_head")) if has_heads else None
        self._index = (open_sharded_index(path, manifest) if is_sharded(manifest)
                       else open_search_index(path, manifest.get("index") or INDEX_PARAMETERS, path))
        self.analyzer = self._index.analyzer  # the language analyzer of the index (None: English)
        if self._index.num_docs != len(self):
            raise SnapshotError(
                f"index {path / 'index'} has {self._index.num_docs} documents, docs.arrow has {len(self)}"
            )

    @classmethod
    def open(cls, path: str | Path, query_embedder: QueryEmbedder | None = None) -> "Snapshot":
        """Open the snapshot at ``path``; :class:`SnapshotError` names what is missing or damaged.

        ``query_embedder`` says where dense and hybrid searches find query embeddings (default:
        :meth:`use_query_embeddings` with no arguments)."""
        path = Path(path).expanduser().resolve()
        manifest = read_manifest(path)
        check_not_a_shard(path, manifest)
        for name in ("docs.arrow", "facts.parquet", "redirects.parquet", "index/meta.json"):
            if not is_sharded(manifest) and not (path / name).is_file():  # a sharded one's: checked shard by shard
                raise SnapshotError(f"snapshot {path} is incomplete: missing {name}")
        check_table_footers(path)
        return cls(path, manifest, query_embedder)

    def _default_embedder(self) -> QueryEmbedder | None:
        if self.dense_info is None:
            return None
        store = os.environ.get(STORE_VARIABLE)
        return QueryEmbedder(model=self.dense_info["model"], query_prefix=self.dense_info.get("query_prefix", ""),
                             store=Path(store) if store else None, endpoint=os.environ.get(ENDPOINT_VARIABLE) or None,
                             shipped=self.dense_info.get("from") == SHIPPED)

    def use_query_embeddings(self, endpoint: str | None = None, store: str | Path | None = None,
                             timeout: float = 60.0) -> None:
        """Where dense and hybrid searches get query embeddings: recorded in ``store`` (default: the
        ``$STILLWEB_QUERY_EMBEDDINGS`` file, else ``<snapshot>.query-embeddings.log`` beside the snapshot);
        a query not recorded yet is embedded by ``endpoint`` (default ``$STILLWEB_EMBEDDINGS_ENDPOINT``) and
        recorded, or without one is a :class:`~stillweb.corpora.search.embeddings.QueryNotRecorded` error."""
        if self.dense_info is None:
            raise UsageError(no_dense_index(self.path))
        default = self._default_embedder()
        self.query_embedder = QueryEmbedder(default.model, default.query_prefix, Path(store) if store else default.store,
                                            endpoint or default.endpoint, timeout, default.shipped)

    def __len__(self) -> int:
        return self._docs.num_rows

    @property
    def documents(self) -> pa.Table:
        """Every document as one memory-mapped Arrow table, row = doc id (``docs.arrow``; a sharded
        snapshot's shards end to end, each row's ``doc_id`` column its shard's own)."""
        return self._docs

    def __repr__(self) -> str:
        return f"Snapshot({str(self.path)!r}, docs={len(self)}, fingerprint={self.fingerprint[:12]})"

    # -- search ---------------------------------------------------------------------

    def search(self, query: str, k: int = 10, mode: str = "bm25") -> list[SearchResult]:
        """Rank documents for ``query``: ``mode`` ``"bm25"`` (title and body, title weighs more),
        ``"dense"`` (the dense index, :mod:`stillweb.corpora.search.dense`) or ``"hybrid"`` (both fused).

        Any text is accepted: a passage snapshot of format 3 reads it as its
        terms; other snapshots honour tantivy syntax where valid and read the
        rest leniently (the manifest's ``index.query``); text past the first 2,000 characters is
        ignored. Ties are broken by ascending ``doc_id``. Raises ``ValueError``
        for an empty query, ``k`` outside 1..100, an unknown mode, or dense
        search on a snapshot without a dense index; dense and hybrid raise
        :class:`~stillweb.corpora.search.embeddings.QueryNotRecorded` for a query with no
        recorded embedding and no server to make one.
        """
        _check_query(query, "query")
        _check_k(k)
        if check_mode(mode) == "bm25":
            search = self._index.search_passages if self._index.passages else self._index.search
            return self._bm25_page(query, search(query, k))
        return self._dense_many([query], k, mode)[0]

    def _bm25_page(self, query: str, hits: list[tuple]) -> list[SearchResult]:
        """Results of the index's hits for ``query``: ``(doc_id, score, start)`` of format 4 pages, else ``(doc_id, score)``."""
        return self._passage_results(hits) if self._index.passages else self._results(query, hits)

    def _results(self, query: str, hits: list[tuple[int, float]]) -> list[SearchResult]:
        """Ranked ``(doc_id, score)`` pairs as results with titles and snippets."""
        ids = [doc_id for doc_id, _score in hits]
        needles = snippet_needles(query, self.analyzer)
        fold = fold_utf8_to_simplified if self.analyzer is not None else None  # needles of 中國 are 中国
        return [
            SearchResult(doc_id, title, score, make_snippet(text, needles, fold=fold), source_id)
            for (doc_id, score), title, text, source_id in zip(hits, self._titles.many(ids), self._texts.many_bytes(ids),
                                                               self._source_ids_of(ids))
        ]

    def _passage_results(self, hits: list[tuple[int, float, int]]) -> list[SearchResult]:
        """Format 4 pages: ranked ``(doc_id, score, best passage start)`` as results, each snippet the
        opening of the page's best passage (:func:`~stillweb.corpora.search.page_ranking.passage_snippet`)."""
        ids = [doc_id for doc_id, _score, _start in hits]
        windows = self._texts.windows(ids, [start for _doc_id, _score, start in hits], SNIPPET_CHARS)
        return [
            SearchResult(doc_id, title, score, passage_snippet(window, more), source_id)
            for (doc_id, score, _start), title, (window, more), source_id in zip(hits, self._titles.many(ids), windows,
                                                                                 self._source_ids_of(ids))
        ]

    def _dense_many(self, queries: list[str], k: int, mode: str) -> list[list[SearchResult]]:
        """Dense or hybrid results of (validated) queries, their dense rankings computed in one pass."""
        if self._dense is None:
            raise UsageError(no_dense_index(self.path))
        embeddings = [self.query_embedder.embed(query[:MAX_QUERY_CHARS], self.path) for query in queries]
        fusion = fusion_of(self.dense_info)  # as the manifest records it (search/fusion.py)
        pages = []
        for query, dense in zip(queries, self._dense.search_many(embeddings, max(k, fusion.depth))):
            if mode == "dense":
                pages.append(self._results(query, dense[:k]))
            else:
                pages.append(self._results(query, fusion.fuse(self._index.search(query, fusion.depth), dense, k)))
        return pages

    @cached_property
    def _dense(self) -> DenseIndex | None:
        if self.dense_info is None:
            return None
        return DenseIndex(self.path / DENSE_DIR, self.dense_info, len(self))

    def search_many(self, queries: Sequence[str], k: int = 10, workers: int | None = None,
                    mode: str = "bm25") -> list[list[SearchResult]]:
        """:meth:`search` for each of ``queries``, in input order, spread over ``workers`` cores (this
        process and ``workers - 1`` worker processes).

        The results equal ``[self.search(q, k) for q in queries]``. ``workers``
        defaults to the cores this process may use; with one worker, or a batch
        smaller than :data:`MIN_POOL_BATCH`, the batch runs here. The worker
        processes start on first use and stay for later batches (:meth:`close`
        stops them). ``mode="dense"`` and ``"hybrid"`` run here, scoring the whole
        batch in one pass over the vectors (exact sums: the same results as one by
        one). Raises ``ValueError`` naming the first bad query or ``k``.
        """
        queries = list(queries)
        for position, query in enumerate(queries):
            _check_query(query, f"queries[{position}]")
        _check_k(k)
        check_mode(mode)
        if workers is None:
            workers = len(os.sched_getaffinity(0))
        check_positive_int("workers", workers)
        if mode != "bm25":  # one pass over the vectors for the whole batch beats splitting it over processes
            return self._dense_many(queries, k, mode)
        if getattr(self._index, "remote", False):  # shards on Ray actors (snapshot/sharded.py): one call each per batch
            return [self._bm25_page(query, hits) for query, hits in zip(queries, self._index.search_many(queries, k))]
        if workers == 1 or len(queries) < MIN_POOL_BATCH:
            return [self.search(query, k) for query in queries]
        with self._pool_lock:  # server threads may send batches at once: one pool per snapshot
            if self._pool is None or self._pool.workers != workers:
                self._close_pool()
                self._pool = SearchPool(self.path, workers, Snapshot.open)
            pool = self._pool
        try:
            return pool.search_many(queries, k, local=self)
        except BrokenProcessPool:  # a worker was killed: answer here, start afresh next time
            with self._pool_lock:  # this pool only: another thread may have started a new one meanwhile
                if self._pool is pool:
                    self._close_pool()
            return [self.search(query, k) for query in queries]

    def close(self) -> None:
        """Stop the worker processes of :meth:`search_many`, if any (the snapshot stays usable)."""
        with self._pool_lock:
            self._close_pool()

    def _close_pool(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def nearest_titles(self, text: str, n: int = 5) -> list[str]:
        """Titles that best match ``text`` (title-only search), for 'not found' hints."""
        if not isinstance(text, str) or not text.strip():
            return []
        return [self.title_of(doc_id) for doc_id, _score in self._index.search(text, n, fields=("title",))]

    # -- documents ------------------------------------------------------------------

    def title_of(self, doc_id: int) -> str:
        """The title of a document id (``IndexError`` when out of range)."""
        return self._titles[doc_id]

    def _source_ids_of(self, doc_ids: list[int]) -> list[str]:
        """Source ids of a page of hits, in one column pass (``""`` each for a format 1 snapshot)."""
        return self._source_ids.many(doc_ids) if self._source_ids is not None else [""] * len(doc_ids)

    def source_id_of(self, doc_id: int) -> str:
        """The corpus's own id of a document (``""`` when the source had none)."""
        return self._source_ids[doc_id] if self._source_ids is not None else ""

    def text_of(self, doc_id: int) -> str:
        """The text of a document id (``IndexError`` when out of range)."""
        return self._texts[doc_id]

    def contents_head_of(self, doc_id: int) -> str:
        """What precedes the text in the document's ``contents`` (Search-R1's corpus format): the source's
        own head, byte for byte, on a snapshot of wiki-18 rows (``"Title"\\n``), else ``title + "\\n"``."""
        return self._heads[doc_id] if self._heads is not None else self._titles[doc_id] + "\n"

    def contents_of(self, doc_id: int) -> str:
        """The document as a Search-R1 corpus row's ``contents``: :meth:`contents_head_of` + the text."""
        return self.contents_head_of(doc_id) + self._texts[doc_id]

    @cached_property
    def _title_groups(self) -> tuple[dict[str, int], dict[str, list[int]]]:
        """Title -> its first doc id, and title -> all its doc ids for titles with several passages."""
        first: dict[str, int] = {}
        several: dict[str, list[int]] = {}
        for doc_id, title in enumerate(self._docs.column("title").to_pylist()):
            known = first.setdefault(title, doc_id)
            if known != doc_id:
                several.setdefault(title, [known]).append(doc_id)
        return first, several

    @property
    def _title_ids(self) -> dict[str, int]:
        return self._title_groups[0]

    def passages_of(self, doc_id: int) -> list[int]:
        """Doc ids of every document sharing ``doc_id``'s title, in source order (``[doc_id]`` when alone)."""
        return list(self._title_groups[1].get(self.title_of(doc_id), [doc_id]))

    @cached_property
    def _folded_ids(self) -> dict[str, int]:
        folded: dict[str, int] = {}
        for title, doc_id in self._title_ids.items():
            folded.setdefault(title.casefold(), doc_id)
        for alias, doc_id in self._redirects.items():
            folded.setdefault(alias.casefold(), doc_id)
        return folded

    @cached_property
    def _redirects(self) -> dict[str, int]:
        table = read_snapshot_table(self.path / "redirects.parquet")
        return dict(zip(table.column("alias").to_pylist(), table.column("doc_id").to_pylist()))

    @property
    def redirects(self) -> dict[str, int]:
        """Alias title -> doc id of every redirect (a read-only view; do not modify)."""
        return self._redirects

    def resolve(self, title: str) -> int | None:
        """Doc id for a title: exact title, then redirect alias, then case-insensitive."""
        if not isinstance(title, str):
            return None
        title = " ".join(title.replace("_", " ").split())
        found = self._title_ids.get(title)
        if found is None:
            found = self._redirects.get(title)
        if found is None:
            found = self._folded_ids.get(title.casefold())
        return found

    def lookup(self, doc: int | str) -> Document | None:
        """The document for a doc id or title (redirects resolve), or ``None``."""
        if isinstance(doc, bool):
            return None
        if isinstance(doc, int):
            doc_id = doc if 0 <= doc < len(self) else None
        else:
            doc_id = self.resolve(doc)
        if doc_id is None:
            return None
        row = self._docs.slice(doc_id, 1).to_pylist()[0]
        return Document(
            doc_id=doc_id,  # a shard's rows carry the shard's own ids; the position is the global one
            source_id=row.get("source_id") or "",
            title=row["title"],
            url=row["url"],
            kind=row["kind"],
            text=row["text"],
            categories=tuple(row["categories"] or ()),
        )

    def get(self, doc: int | str) -> Document:
        """The document for a doc id or title; ``KeyError`` naming it when absent."""
        found = self.lookup(doc)
        if found is None:
            raise KeyError(f"no document {doc!r} in snapshot {self.path}")
        return found

    # -- facts ----------------------------------------------------------------------

    @cached_property
    def facts_table(self) -> pa.Table:
        """All facts (``facts.parquet``) as an Arrow table."""
        return read_snapshot_table(self.path / "facts.parquet")

    def facts(self, subject: int | None = None, relation: str | None = None, object: int | None = None) -> list[Fact]:
        """Facts matching every given filter, in table order (``Fact.index`` is the row)."""
        table = self.facts_table
        mask = None
        for column, value in (("subject", subject), ("relation", relation), ("object", object)):
            if value is not None:
                condition = pc.equal(table.column(column), value)
                mask = condition if mask is None else pc.and_(mask, condition)
        rows = range(table.num_rows) if mask is None else pc.indices_nonzero(mask).to_pylist()
        if mask is not None:
            table = table.filter(mask)
        return [Fact(index, **row) for index, row in zip(rows, table.to_pylist())]
