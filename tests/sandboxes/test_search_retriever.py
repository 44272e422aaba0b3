"""The search tool's ``retriever`` and ``/retrieve``'s (issue 37): offered only on a snapshot with a dense
index (other schemas stay byte-identical), dense and hybrid rankings as ``Snapshot.search`` gives them,
and a missing query embedding as an error observation, never another ranking."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.snapshot.shared import shared_snapshot
from stillweb.sandboxes import ToolCall, ToolRegistry
from stillweb.sandboxes.tools.search import SearchTool
from stillweb.server.app import make_app
from support.dense import DIMENSIONS, dense_copy
from support.embeddings_stub import serve_embeddings
from support.network import free_port



@pytest.fixture(scope="module")
def dense_snapshot(small_snapshot, tmp_path_factory):
    return dense_copy(small_snapshot, tmp_path_factory.mktemp("dense-tool") / "syn-300")


def test_retriever_is_offered_only_with_a_dense_index(small_snapshot, dense_snapshot):
    plain = SearchTool(Snapshot.open(small_snapshot))
    assert (plain.description, plain.parameters) == (SearchTool.description, SearchTool.parameters)
    assert "retriever" not in json.dumps(plain.parameters) and "retriever" not in plain.description
    dense = SearchTool(Snapshot.open(dense_snapshot))
    assert dense.parameters["properties"]["retriever"]["enum"] == ["bm25", "dense", "hybrid"]
    assert dense.parameters["properties"]["query"] == SearchTool.parameters["properties"]["query"]
    assert "'retriever'" in dense.description
    result = ToolRegistry(Snapshot.open(small_snapshot)).call(ToolCall("search", {"query": "river", "retriever": "dense"}))
    assert result.flag == "bad_arguments" and "retriever" in result.text


def test_tool_retriever_rankings_and_frozen_queries(dense_snapshot, tmp_path):
    store = tmp_path / "q.log"
    with serve_embeddings(free_port(), dimensions=DIMENSIONS) as (url, app):
        snapshot = Snapshot.open(dense_snapshot)
        snapshot.use_query_embeddings(endpoint=url, store=store)
        registry = ToolRegistry(snapshot)
        for mode in ("dense", "hybrid"):
            result = registry.call(ToolCall("search", {"query": ["capital city", "river"], "k": 3, "retriever": mode}))
            assert result.flag is None
            got = [[hit["doc_id"] for hit in query["results"]] for query in result.data["queries"]]
            assert got == [[hit.doc_id for hit in snapshot.search(q, 3, mode)] for q in ("capital city", "river")]
        bad = registry.call(ToolCall("search", {"query": "river", "retriever": "semantic"}))
        assert bad.flag == "bad_arguments" and "must be one of bm25, dense, hybrid" in bad.text
        batch = registry.call_many([ToolCall("search", {"query": "capital city", "retriever": "dense"}),
                                    ToolCall("search", {"query": "capital city"})])
        assert [r.flag for r in batch] == [None, None] and batch[0].text != batch[1].text
        calls = app.state.calls
    offline = Snapshot.open(dense_snapshot)
    offline.use_query_embeddings(store=store)
    again = ToolRegistry(offline).call(ToolCall("search", {"query": ["capital city", "river"], "k": 3, "retriever": "hybrid"}))
    assert again.text == result.text and calls == 2  # two queries embedded once each, then read from the record
    missing = ToolRegistry(offline).call(ToolCall("search", {"query": "never recorded", "retriever": "dense"}))
    assert missing.flag == "not_recorded" and "retriever='bm25'" in missing.text


def test_retrieve_route_retriever(dense_snapshot, small_snapshot, tmp_path, monkeypatch):
    with serve_embeddings(free_port(), dimensions=DIMENSIONS) as (url, _app):
        monkeypatch.setenv("STILLWEB_EMBEDDINGS_ENDPOINT", url)
        monkeypatch.setenv("STILLWEB_QUERY_EMBEDDINGS", str(tmp_path / "q.log"))
        client = TestClient(make_app([dense_snapshot, small_snapshot]))
        body = {"queries": ["capital city", "river"], "topk": 3, "return_scores": True, "retriever": "hybrid"}
        answer = client.post("/retrieve", json=body)
        assert answer.status_code == 200
        expected = Snapshot.open(dense_snapshot)
        expected.use_query_embeddings(endpoint=url, store=tmp_path / "q.log")
        assert [[item["document"]["doc_id"] for item in page] for page in answer.json()["result"]] == \
            [[hit.doc_id for hit in expected.search(q, 3, "hybrid")] for q in ("capital city", "river")]
        bad = client.post("/retrieve", json={**body, "retriever": "semantic"})
        assert bad.status_code == 422 and "'bm25', 'dense' or 'hybrid'" in json.dumps(bad.json())
        plain = client.post("/retrieve", json={**body, "snapshot": small_snapshot.name})
        assert plain.status_code == 400 and "stillweb build dense" in plain.json()["detail"]
    monkeypatch.delenv("STILLWEB_EMBEDDINGS_ENDPOINT")
    shared_snapshot(dense_snapshot).use_query_embeddings()  # the process-wide snapshot, as a server started now has it
    offline = TestClient(make_app([dense_snapshot]))
    assert offline.post("/retrieve", json=body).json() == answer.json()
    missing = offline.post("/retrieve", json={**body, "queries": ["nobody asked this"]})
    assert (missing.status_code, missing.json()["error"]) == (404, "not_recorded"), missing.json()
