"""How the package starts worker processes: always ``spawn``, from this one place.

Every local process pool (parsing pages in :mod:`~stillweb.corpora.build.snapshot_writer`,
task attempts in :mod:`~stillweb.corpora.tasks.compose.attempts`, batched search in
:mod:`~stillweb.corpora.search.pool`) takes its context from
:func:`process_context`. Why ``spawn``: a worker starts from a fresh interpreter, so
it never inherits a lock held by a thread of the parent (tantivy's writer and
searcher threads, a server's request threads, Ray's threads), which ``fork`` can
deadlock on; it behaves the same on Linux, macOS and Windows (where it is the only
method); and ``forkserver`` would buy no start-up time here, since each worker
imports stillweb and opens its own files anyway. The price, as with any
``spawn`` pool: a script that starts one must guard its entry point with
``if __name__ == "__main__":`` (workers import the main module).

Every worker starts with :func:`ignore_interrupts`: Ctrl-C at a terminal sends SIGINT to
the whole process group, and a worker that raised ``KeyboardInterrupt`` would print its
own traceback; the parent alone is interrupted and stops its pool (``Pool.terminate``).

>>> process_context().get_start_method()
'spawn'
"""

from __future__ import annotations

import multiprocessing
import signal
from multiprocessing.context import BaseContext

__all__ = ["START_METHOD", "ignore_interrupts", "process_context"]

START_METHOD = "spawn"


def process_context() -> BaseContext:
    """The multiprocessing context every worker pool of the package uses (see the module docstring)."""
    return multiprocessing.get_context(START_METHOD)


def ignore_interrupts() -> None:
    """A worker's first call: leave SIGINT (Ctrl-C) to the parent, which stops the pool."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
