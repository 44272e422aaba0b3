"""Searching a batch of queries on every core: worker processes over one snapshot.

tantivy releases the GIL while it searches (tantivy-py wraps ``Searcher.search``
in ``py.detach``/``allow_threads``), but parsing the query, reading titles and
making snippets hold it, and on small and medium corpora they are about half the
work; so threads stop well short of two cores (``scripts/bench_search.py batch``
measures both). A :class:`SearchPool` instead keeps worker processes, each
with the snapshot opened read-only (its files are memory-mapped, so the page
cache is shared), and hands them contiguous slices of the batch; the calling
process searches queries too (``local``), so ``workers`` cores take
``workers - 1`` processes and no core waits on a parent that only relays
(issue 43). The calling process feeds the workers between two of its own
queries, with no thread of its own: a feeder thread would contend for the GIL
with this process's titles and snippets, and wait on it (at a batch of 64 the
threaded version reached 1.49x one core on two idle cores). Every worker
runs the same :meth:`Snapshot.search` on the same files, so a batch answers
exactly what the queries answer one by one, in input order. The pool does not
know the snapshot class: it is handed the function that opens one in a worker
(:meth:`Snapshot.open`), so ``snapshot.py`` uses this module and not the reverse.

Each worker is a process with one pipe: the parent writes a slice, the worker
writes back its hits as plain tuples. No executor, queue feeder or management
thread sits between them (``ProcessPoolExecutor`` cost 0.40 ms of CPU per query
against 0.23 ms through pipes on a 30k-article batch, issue 37).

>>> pool = SearchPool("snapshots/syn-30k", 2, Snapshot.open)  # doctest: +SKIP
>>> pages = pool.search_many(["river city", "Ada Quill born"], k=10)  # doctest: +SKIP
>>> pool.close()                                           # doctest: +SKIP
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Protocol

from stillweb.corpora.processes import ignore_interrupts, process_context
from stillweb.corpora.snapshot.records import SearchResult

__all__ = ["Searcher", "SearchPool"]

CHUNKS_PER_WORKER = 4  # slack so a slow slice (or a core taken by another process) does not idle the others
_CLOSE_WAIT_SECONDS = 5.0
_AHEAD = 2  # slices sent to a worker before its first answer comes back: one searching, one waiting in the pipe
_MIN_SLICE = 1  # query: the slices shrink to one as the batch runs out
_GUIDE = 4  # a slice is 1/(cores * _AHEAD * _GUIDE) of the queries left (guided scheduling)


class Searcher(Protocol):
    """What a worker opens: anything with ``search(query, k) -> list[SearchResult]`` (a Snapshot)."""

    def search(self, query: str, k: int) -> list[SearchResult]: ...


class SearchPool:
    """Processes answering :meth:`Snapshot.search` for slices of a batch (``workers`` of them, or
    ``workers - 1`` beside the caller's own share when a batch is given ``local``).

    Processes start as :mod:`stillweb.corpora.processes` says (``spawn``: a fresh
    interpreter, never a fork of a parent whose tantivy threads may hold locks); the
    first batch pays their start-up (about a second: imports and opening the
    snapshot), and a script that uses one must guard its entry point with
    ``if __name__ == "__main__":`` (the workers import the main module). A worker
    that dies raises ``BrokenProcessPool`` from :meth:`search_many`. Batches from
    several threads take turns.
    """

    def __init__(self, snapshot_path: str | Path, workers: int, open_searcher: Callable[[str], Searcher]) -> None:
        """Start (lazily, on the first batch) ``workers`` processes, each calling the picklable
        ``open_searcher(snapshot_path)`` once (e.g. :meth:`Snapshot.open`)."""
        self.workers = workers
        self._path = str(snapshot_path)
        self._open_searcher = open_searcher
        self._processes: list = []
        self._connections: list[Connection] = []
        self._lock = threading.Lock()

    @property
    def pids(self) -> list[int]:
        """Process ids of the running workers (empty before the first batch)."""
        return [process.pid for process in self._processes]

    def search_many(self, queries: list[str], k: int, local: Searcher | None = None) -> list[list[SearchResult]]:
        """The results of each (already validated) query, in input order.

        With ``local`` (the snapshot this process has open), this process searches slices too, one
        core's share, while the worker processes search theirs: ``workers`` cores in all, one fewer
        process to feed (:meth:`Snapshot.search_many` passes itself)."""
        if not queries:
            return []
        with self._lock:
            self._start(self.workers - 1 if local is not None else self.workers)
            if local is not None:
                return self._share(queries, k, local)
            size = -(-len(queries) // (len(self._connections) * CHUNKS_PER_WORKER))
            chunks = [queries[start : start + size] for start in range(0, len(queries), size)]
            answers: list[list | None] = [None] * len(chunks)
            self._relay(chunks, answers, collections.deque(range(len(chunks))), k)
        return [page for chunk in answers for page in chunk]

    def _relay(self, chunks: list[list[str]], answers: list, pending: collections.deque, k: int) -> None:
        """Only the workers search: this process hands out slices and waits."""
        busy: dict[Connection, int] = {}

        def feed(connection: Connection) -> None:
            if pending:
                busy[connection] = pending.popleft()
                _send(connection, (chunks[busy[connection]], k))

        for connection in self._connections:
            feed(connection)
        while busy:
            for connection in wait(list(busy)):
                answers[busy.pop(connection)] = _results(_receive(connection))
                feed(connection)

    def _share(self, queries: list[str], k: int, local: Searcher) -> list[list[SearchResult]]:
        """This process searches queries one at a time from the back while the workers take slices from the front.

        No thread: between two of its own queries this process polls the pipes, collects a finished slice and
        sends the next, keeping each worker :data:`_AHEAD` slices ahead (one searching, one waiting in the pipe)
        so a worker never idles on a round trip, and never contending for the GIL with this process's own
        titles and snippets. Slices shrink as the batch runs out (guided scheduling: a share of what remains),
        so the last ones end about together."""
        answers: list = [None] * len(queries)
        front, back = 0, len(queries)  # workers take queries[front:...], this process queries[back - 1]
        busy: dict[Connection, collections.deque] = {connection: collections.deque() for connection in self._connections}
        cores = len(self._connections) + 1

        def feed(connection: Connection) -> None:
            nonlocal front
            while front < back and len(busy[connection]) < _AHEAD:
                size = max(_MIN_SLICE, -(-(back - front) // (cores * _AHEAD * _GUIDE)))
                end = min(back, front + size)
                busy[connection].append(front)
                _send(connection, (queries[front:end], k))
                front = end

        def collect(connection: Connection) -> None:
            first = busy[connection].popleft()
            pages = _results(_receive(connection))
            answers[first : first + len(pages)] = pages

        try:
            for connection in self._connections:
                feed(connection)
            while front < back:
                back -= 1
                answers[back] = local.search(queries[back], k)
                for connection in wait(list(self._connections), 0):
                    collect(connection)
                    feed(connection)
            for connection in self._connections:
                while busy[connection]:
                    collect(connection)
        except BaseException:
            for connection in self._connections:  # leave no answer in a pipe for the next batch to read
                while busy[connection]:
                    busy[connection].popleft()
                    try:
                        connection.recv()
                    except (EOFError, OSError):
                        break
            raise
        return answers

    def _start(self, processes: int) -> None:
        if self._processes or processes < 1:
            return
        context = process_context()
        for _ in range(processes):
            parent, child = context.Pipe()
            process = context.Process(target=_serve, args=(child, self._open_searcher, self._path), daemon=True)
            process.start()
            child.close()
            self._processes.append(process)
            self._connections.append(parent)

    def close(self) -> None:
        """Stop the worker processes, after the batch another thread may be running."""
        with self._lock:
            for connection in self._connections:
                try:
                    connection.send(None)
                except OSError:  # a worker that died has closed its end
                    pass
            for process in self._processes:
                process.join(_CLOSE_WAIT_SECONDS)
                if process.is_alive():
                    process.kill()
                    process.join()
            for connection in self._connections:
                connection.close()
            self._processes, self._connections = [], []


def _results(pages: list) -> list[list[SearchResult]]:
    return [[SearchResult(*fields) for fields in page] for page in pages]


def _send(connection: Connection, message: tuple) -> None:
    try:
        connection.send(message)
    except OSError as error:
        raise BrokenProcessPool(f"a search worker died: {error}") from None


def _receive(connection: Connection) -> list:
    try:
        return connection.recv()
    except (EOFError, OSError) as error:
        raise BrokenProcessPool(f"a search worker died: {error!r}") from None


def _serve(connection: Connection, open_searcher: Callable[[str], Searcher], path: str) -> None:
    """A worker: open the snapshot, then answer slices until told to stop (``None``)."""
    ignore_interrupts()
    searcher = open_searcher(path)
    try:
        while (message := connection.recv()) is not None:
            queries, k = message
            # Each hit's fields as a plain tuple (in field order): unpickling tuples is ~20x cheaper than dataclasses.
            connection.send([[tuple(vars(result).values()) for result in searcher.search(query, k)] for query in queries])
    except (EOFError, BrokenPipeError):  # the parent is gone
        return
