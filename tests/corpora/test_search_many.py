"""Batched search on every core: ``Snapshot.search_many`` (worker processes), the tools'
batch route and Search-R1 ``/retrieve`` answer exactly what one-by-one search answers,
in input order, in two processes alike, and survive a killed worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest
from fastapi.testclient import TestClient

from stillweb.corpora.keyed import KeyedRng
from stillweb.corpora.snapshot.reading import MIN_POOL_BATCH, Snapshot
from stillweb.sandboxes import ToolCall, ToolRegistry
from stillweb.server.app import make_app

HOSTILE = ["don't", "alpha (", "Zürich café", "x" * 2500, "river river RIVER", "AND OR NOT", "née"]


def batch_queries(snapshot: Snapshot, count: int) -> list[str]:
    queries = list(HOSTILE)
    for i in range(count):
        rng = KeyedRng(0, "batch-query", i)
        title = snapshot.title_of(rng.integer(0, len(snapshot) - 1))
        queries += [title, f"{title} born", f"When was {title} founded and by whom?"]
    return queries


@pytest.fixture(scope="module")
def snapshot(small_snapshot):
    opened = Snapshot.open(small_snapshot)
    yield opened
    opened.close()


@pytest.mark.parametrize("k", [1, 10])
def test_search_many_equals_one_by_one_in_input_order(snapshot, k):
    queries = batch_queries(snapshot, 20)
    assert len(queries) >= 4 * MIN_POOL_BATCH
    expected = [snapshot.search(query, k) for query in queries]
    assert snapshot.search_many(queries, k, workers=2) == expected
    assert snapshot.search_many(queries, k, workers=1) == expected
    assert snapshot.search_many(list(reversed(queries)), k, workers=2) == list(reversed(expected))
    assert snapshot.search_many(queries[:3], k) == expected[:3]  # small batches run in-process
    assert snapshot.search_many([], k) == []


def test_this_process_searches_a_share_beside_one_worker_fewer(snapshot):
    """Two cores: one worker process and this one (issue 43); three: two workers. Both parts answer slices."""
    queries = batch_queries(snapshot, 40)
    expected = [snapshot.search(query, 10) for query in queries]
    for workers in (2, 3):
        assert snapshot.search_many(queries, 10, workers=workers) == expected
        assert len(snapshot._pool.pids) == workers - 1
    local_calls = []

    class Counting:
        def search(self, query, k):
            local_calls.append(query)
            return snapshot.search(query, k)

    assert snapshot._pool.search_many(queries, 10, local=Counting()) == expected
    assert 0 < len(local_calls) < len(queries)  # the workers answered the rest


def test_every_batch_size_answers_in_input_order(snapshot):
    """The workers take shrinking slices from the front and this process single queries from the back:
    every split point, odd sizes and a batch of one slice alike, gives the one-by-one answers."""
    queries = batch_queries(snapshot, 14)
    expected = [snapshot.search(query, 4) for query in queries]
    for size in [*range(MIN_POOL_BATCH, MIN_POOL_BATCH + 12), len(queries) // 2 + 1, len(queries)]:
        for start in (0, len(queries) - size):
            assert snapshot.search_many(queries[start : start + size], 4, workers=2) == expected[start : start + size]


def test_a_failing_local_search_leaves_no_answer_in_the_pipes(snapshot):
    """When this process's own share raises mid-batch, the slices the workers were sent are still read,
    so the next batch gets its own answers and not the old ones."""
    queries = batch_queries(snapshot, 30)
    expected = [snapshot.search(query, 10) for query in queries]
    snapshot.search_many(queries, 10, workers=2)

    class Failing:
        def search(self, query, k):
            raise RuntimeError(f"no search for {query!r}")

    with pytest.raises(RuntimeError, match="no search for"):
        snapshot._pool.search_many(queries, 10, local=Failing())
    assert snapshot.search_many(list(reversed(queries)), 10, workers=2) == list(reversed(expected))


def test_search_many_names_the_bad_query_or_argument(snapshot):
    with pytest.raises(ValueError, match=r"queries\[2\]"):
        snapshot.search_many(["river", "film", "   ", "album"])
    with pytest.raises(ValueError, match="k must be"):
        snapshot.search_many(["river"], k=0)
    with pytest.raises(ValueError, match="workers"):
        snapshot.search_many(["river"], workers=0)


def test_a_killed_worker_does_not_lose_the_batch(small_snapshot):
    snapshot = Snapshot.open(small_snapshot)
    queries = batch_queries(snapshot, 10)
    expected = [snapshot.search(query, 5) for query in queries]
    try:
        assert snapshot.search_many(queries, 5, workers=2) == expected
        for pid in snapshot._pool.pids:
            os.kill(pid, signal.SIGKILL)
        assert snapshot.search_many(queries, 5, workers=2) == expected  # answered in-process
        assert snapshot.search_many(queries, 5, workers=2) == expected  # and a fresh pool after
    finally:
        snapshot.close()


@pytest.mark.slow
def test_search_many_is_identical_in_two_processes(small_snapshot):
    script = textwrap.dedent(f"""
        import hashlib
        from stillweb.corpora.snapshot.reading import Snapshot
        snapshot = Snapshot.open({str(small_snapshot)!r})
        queries = [snapshot.title_of(i) + " born" for i in range(0, len(snapshot), 7)]
        pages = snapshot.search_many(queries, 10, workers=2)
        print(hashlib.sha256(repr([[(r.doc_id, r.title, repr(r.score), r.snippet) for r in page] for page in pages]).encode()).hexdigest())
        snapshot.close()
    """)
    digests = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
               for _ in range(2)}
    assert len(digests) == 1 and len(next(iter(digests)).strip()) == 64


def test_registry_call_many_batches_searches_with_the_same_results(snapshot):
    registry = ToolRegistry(snapshot)
    queries = batch_queries(snapshot, 6)
    calls = [ToolCall("search", {"query": query, "k": 3}, f"c{i}") for i, query in enumerate(queries)]
    calls += [ToolCall("search", {"query": queries[:3]}), ToolCall("search", {"query": "   "}),
              ToolCall("open", {"doc": 3}), ToolCall("search", {"query": 5})]
    assert registry.call_many(calls) == [registry.call(call) for call in calls]


def test_http_batch_and_retrieve_match_one_by_one(small_snapshot):
    client = TestClient(make_app([small_snapshot]))
    snapshot = Snapshot.open(small_snapshot)
    queries = batch_queries(snapshot, 6) + ["   "]
    body = client.post("/retrieve", json={"queries": queries, "topk": 3, "return_scores": True}).json()["result"]
    singles = [client.post("/retrieve", json={"queries": [q], "topk": 3, "return_scores": True}).json()["result"][0]
               for q in queries]
    assert body == singles and body[-1] == [] and sum(map(bool, body)) > len(queries) // 2
    calls = [{"name": "search", "arguments": {"query": q, "k": 2}} for q in queries]
    batch = client.post("/tools/batch", json={"calls": calls}).json()["results"]
    assert batch == [client.post("/tools/call", json=call).json() for call in calls]
