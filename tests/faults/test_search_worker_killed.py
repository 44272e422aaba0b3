"""A ``search_many`` worker killed mid-batch: the batch still answers, identical to searching one by one, and
the next batch gets a fresh pool. Mid-batch is made certain: both workers are stopped (SIGSTOP) before the
batch is sent, one is killed while the batch waits on them, the other is let go."""

from __future__ import annotations

import os
import signal
import threading

from stillweb.corpora.snapshot.reading import Snapshot
from support.faults import resume, stop


def test_a_worker_killed_mid_batch_loses_nothing(small_snapshot):
    snapshot = Snapshot.open(small_snapshot)
    queries = [snapshot.title_of(doc_id) + " born" for doc_id in range(0, len(snapshot), 2)]
    expected = [snapshot.search(query, 5) for query in queries]
    try:
        assert snapshot.search_many(queries[:40], 5, workers=2) == expected[:40]  # the pool is up
        first_pool = snapshot._pool
        pids = sorted(first_pool.pids)
        stop(pids)
        answers = []
        batch = threading.Thread(target=lambda: answers.append(snapshot.search_many(queries, 5, workers=2)))
        batch.start()
        batch.join(timeout=0.5)
        assert batch.is_alive()  # waiting on the stopped workers: the batch is in flight
        os.kill(pids[0], signal.SIGKILL)
        resume(pids[1:])
        batch.join(timeout=120)
        assert answers == [expected]
        assert snapshot._pool is None  # the broken pool was closed
        assert snapshot.search_many(queries, 5, workers=2) == expected  # a fresh pool
        assert snapshot._pool is not None and snapshot._pool is not first_pool
    finally:
        snapshot.close()
