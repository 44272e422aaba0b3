"""Searching a batch of queries on every core: worker processes over one snapshot.

tantivy releases the GIL while it searches (tantivy-py wraps ``Searcher.search``
in ``py.detach``/``allow_threads``), but parsing the query, reading titles and
making snippets hold it, and on small and medium corpora they are about half the
work; so threads stop well short of two cores (``scripts/bench_search.py batch``
measures both). A :class:`SearchPool` instead keeps ``workers`` processes, each
with the snapshot opened read-only (its files are memory-mapped, so the page
cache is shared), and hands each a contiguous slice of the batch. Every worker
runs the same :meth:`Snapshot.search` on the same files, so a batch answers
exactly what the queries answer one by one, in input order. The pool does not
know the snapshot class: it is handed the function that opens one in a worker
(:meth:`Snapshot.open`), so ``snapshot.py`` uses this module and not the reverse.

>>> pool = SearchPool("snapshots/syn-30k", 2, Snapshot.open)  # doctest: +SKIP
>>> pages = pool.search_many(["river city", "Ada Quill born"], k=10)  # doctest: +SKIP
>>> pool.close()                                           # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Protocol

from stillweb.corpora.processes import ignore_interrupts, process_context
from stillweb.corpora.records import SearchResult

__all__ = ["Searcher", "SearchPool"]

CHUNKS_PER_WORKER = 2  # a little slack so a slow slice does not idle the other worker


class Searcher(Protocol):
    """What a worker opens: anything with ``search(query, k) -> list[SearchResult]`` (a Snapshot)."""

    def search(self, query: str, k: int) -> list[SearchResult]: ...


class SearchPool:
    """``workers`` processes answering :meth:`Snapshot.search` for slices of a batch.

    Processes start as :mod:`stillweb.corpora.processes` says (``spawn``: a fresh
    interpreter, never a fork of a parent whose tantivy threads may hold locks); the
    first batch pays their start-up (about a second: imports and opening the
    snapshot), and a script that uses one must guard its entry point with
    ``if __name__ == "__main__":`` (the workers import the main module).
    """

    def __init__(self, snapshot_path: str | Path, workers: int, open_searcher: Callable[[str], Searcher]) -> None:
        """Start (lazily, on the first batch) ``workers`` processes, each calling the picklable
        ``open_searcher(snapshot_path)`` once (e.g. :meth:`Snapshot.open`)."""
        self.workers = workers
        self._executor = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=process_context(),
            initializer=_open_searcher,
            initargs=(open_searcher, str(snapshot_path)),
        )

    def search_many(self, queries: list[str], k: int) -> list[list[SearchResult]]:
        """The results of each (already validated) query, in input order."""
        if not queries:
            return []
        size = -(-len(queries) // (self.workers * CHUNKS_PER_WORKER))
        chunks = [queries[start : start + size] for start in range(0, len(queries), size)]
        pages: list[list[SearchResult]] = []
        for chunk_pages in self._executor.map(_search_chunk, chunks, [k] * len(chunks)):
            pages.extend([SearchResult(*fields) for fields in page] for page in chunk_pages)
        return pages

    def close(self) -> None:
        """Stop the worker processes."""
        self._executor.shutdown(wait=True, cancel_futures=True)


_SEARCHER: list[Searcher] = []  # the worker process's opened snapshot


def _open_searcher(open_searcher: Callable[[str], Searcher], path: str) -> None:
    ignore_interrupts()
    _SEARCHER.append(open_searcher(path))


def _search_chunk(queries: list[str], k: int) -> list[list[tuple]]:
    """Each hit's fields as a plain tuple (in field order): unpickling tuples is ~20x cheaper than dataclass instances."""
    return [[tuple(vars(result).values()) for result in _SEARCHER[0].search(query, k)] for query in queries]
