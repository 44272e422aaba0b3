"""The HTTP tool server: tool routes answer exactly what the in-process registry
answers, Search-R1 retrieval (checked with SkyRL-gym's real client against a
running server), the guard (token, body limits), clear 4xx for bad input, and
blocking calls that do not stall other requests."""

from __future__ import annotations

import asyncio
import json
import threading

import httpx
import pytest
from fastapi.testclient import TestClient

from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.server.app import make_app
from stillweb.sandboxes import ToolCall, ToolRegistry
from stillweb.server.plumbing import ServerSettings

CALLS = [
    {"name": "search", "arguments": {"query": "river"}},
    {"name": "search", "arguments": {"query": ["film", "album"], "k": 2}},
    {"name": "open", "arguments": {"doc": 3}},
    {"name": "find", "arguments": {"doc": 3, "pattern": "the"}},
    {"name": "open", "arguments": {"doc": 10**9}},
    {"name": "calculator", "arguments": {"expression": "2*(3+4)"}},
    {"name": "search", "arguments": {"query": 5}},
    {"name": "search", "arguments": [1, 2]},
    {"name": "rm -rf", "arguments": {}},
    {"name": "answer", "arguments": {"text": "Ostra", "citations": [1]}},
]


@pytest.fixture(scope="module")
def app(small_snapshot):
    return make_app([small_snapshot])


@pytest.fixture(scope="module")
def client(app):
    return TestClient(app)


@pytest.fixture(scope="module")
def registry(small_snapshot):
    return ToolRegistry(Snapshot.open(small_snapshot))


def test_tool_list_matches_registry(client, registry):
    body = client.get("/tools").json()
    assert body["names"] == list(registry.names)
    assert body["schemas"] == registry.schemas()


@pytest.mark.parametrize("call", CALLS, ids=lambda call: f"{call['name']}")
def test_tool_call_matches_in_process(client, registry, call):
    response = client.post("/tools/call", json={**call, "call_id": "c1"})
    assert response.status_code == 200
    expected = registry.call(ToolCall(call["name"], call["arguments"], "c1")).to_dict()
    assert response.json() == json.loads(json.dumps(expected))


def test_flags_come_through(client):
    flags = [client.post("/tools/call", json=call).json()["flag"] for call in CALLS]
    assert {"unknown_tool", "bad_arguments", "not_found"} <= set(flags)


def test_batch_matches_single_calls(client):
    batch = client.post("/tools/batch", json={"calls": CALLS}).json()["results"]
    singles = [client.post("/tools/call", json=call).json() for call in CALLS]
    assert batch == singles


def test_unknown_snapshot_is_404(client):
    response = client.post("/tools/call", json={"name": "search", "arguments": {"query": "x"}, "snapshot": "nope"})
    assert response.status_code == 404 and response.json()["error"] == "snapshot_not_found"


def test_retrieve_search_r1_format(client, small_snapshot):
    snapshot = Snapshot.open(small_snapshot)
    body = client.post("/retrieve", json={"queries": ["river", "film director", "   "], "topk": 3, "return_scores": True}).json()
    assert len(body["result"]) == 3 and body["result"][2] == []
    hits = snapshot.search("river", 3)
    # Search-R1's id is the corpus's own id (the dump's page id here); doc_id is stillweb's dense id
    assert [item["document"]["id"] for item in body["result"][0]] == [hit.source_id for hit in hits]
    assert [item["document"]["doc_id"] for item in body["result"][0]] == [hit.doc_id for hit in hits]
    assert all(hit.source_id for hit in hits)
    assert [item["score"] for item in body["result"][0]] == [pytest.approx(hit.score) for hit in hits]
    first = snapshot.get(hits[0].doc_id)
    assert body["result"][0][0]["document"]["contents"] == f"{first.title}\n{first.text[:2000]}"
    plain = client.post("/retrieve", json={"queries": ["river"], "topk": 3}).json()
    assert plain["result"] == [[item["document"] for item in body["result"][0]]]


def test_retrieve_needs_exactly_one_query_source(client):
    assert client.post("/retrieve", json={"topk": 3}).status_code == 422
    assert client.post("/retrieve", json={"query": "a", "queries": ["b"]}).status_code == 422


@pytest.mark.parametrize(
    "method, path, content",
    [
        ("POST", "/tools/call", b"{not json"),
        ("POST", "/tools/call", b'{"name": 5}'),
        ("POST", "/tools/call", b"[]"),
        ("POST", "/tools/batch", b'{"calls": "many"}'),
        ("POST", "/retrieve", b'{"queries": [1, 2], "topk": "x"}'),
        ("POST", "/retrieve", b'{"queries": ["a"], "topk": 100000}'),
        ("POST", "/sessions", b'{"env_id": "stillweb/WikiQA-v0", "kwargs": {"tasks": "../../etc/passwd"}}'),
        ("POST", "/sessions", b'{"env_id": "stillweb/Remote-v0", "kwargs": {"url": "http://example.com"}}'),
        ("POST", "/sessions", b'{"env_id": "stillweb/WikiQA-v0", "kwargs": {"max_turns": "many"}}'),
        ("GET", "/no/such/route", b""),
        ("DELETE", "/tools", b""),
        ("POST", "/tools/call", "\udcff".encode("utf-8", "surrogateescape")),
    ],
)
def test_bad_requests_get_clear_4xx(client, method, path, content):
    response = client.request(method, path, content=content, headers={"Content-Type": "application/json"})
    assert 400 <= response.status_code < 500, response.text
    assert response.json()["error"] and response.json()["detail"]


def test_body_limit_from_content_length_and_stream(small_snapshot):
    client = TestClient(make_app([small_snapshot], ServerSettings(max_body_bytes=1000)))
    big = json.dumps({"name": "search", "arguments": {"query": "x" * 5000}})
    response = client.post("/tools/call", content=big, headers={"Content-Type": "application/json"})
    assert response.status_code == 413 and response.json()["error"] == "body_too_large"

    def chunks():  # streamed: no Content-Length, the limit is enforced while reading
        for _ in range(10):
            yield b"x" * 500

    response = client.post("/tools/call", content=chunks(), headers={"Content-Type": "application/json"})
    assert response.status_code == 413


def test_token_required_except_health(small_snapshot):
    client = TestClient(make_app([small_snapshot], ServerSettings(token="s3cret")))
    assert client.get("/health").status_code == 200
    assert client.get("/tools").status_code == 401
    assert client.get("/openapi.json").status_code == 401
    assert client.get("/tools", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/tools", headers={"Authorization": "Bearer s3cret"}).status_code == 200


def test_openapi_documents_every_route_with_examples(client):
    schema = client.get("/openapi.json").json()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert operation.get("summary") and operation.get("description"), f"{method} {path} is undocumented"
    for name, model in schema["components"]["schemas"].items():
        if name.startswith(("HTTPValidationError", "ValidationError")):
            continue
        has_example = "examples" in model or all("examples" in field or "$ref" in field or "anyOf" in field or "items" in field
                                                 for field in model.get("properties", {}).values())
        assert has_example, f"{name} has no example"


RELEASE_S = 300.0  # how long the slow call waits for the searches at most: a safety net against a hang, never reached


async def _searches_during_slow_call(app, slow_started: threading.Event, searches_done: threading.Event) -> list[int]:
    """Start the slow python call, then (once it runs) 20 searches one after another, then let the slow call end;
    the searches' statuses."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://server") as client:
        slow = asyncio.create_task(client.post("/tools/call", json={"name": "python", "arguments": {"code": "print(1)"}}))
        assert await asyncio.to_thread(slow_started.wait, RELEASE_S)
        statuses = []
        for index in range(20):
            response = await client.post("/tools/call", json={"name": "search", "arguments": {"query": f"river {index}"}})
            statuses.append(response.status_code)
        searches_done.set()
        assert (await slow).status_code == 200
        return statuses


def test_slow_call_does_not_delay_other_requests(small_snapshot, monkeypatch):
    """The slow call cannot finish before every search has been answered: it waits for them (an order of events, not
    a time bound). A server that ran the searches behind it would leave it waiting until RELEASE_S gave up."""
    app = make_app([small_snapshot])
    python_tool = app.state.catalog.registry().tool("python")
    original = python_tool.run
    slow_started, searches_done, released = threading.Event(), threading.Event(), []

    def slow_run(arguments):
        slow_started.set()
        released.append(searches_done.wait(RELEASE_S))
        return original(arguments)

    monkeypatch.setattr(python_tool, "run", slow_run)
    statuses = asyncio.run(_searches_during_slow_call(app, slow_started, searches_done))
    assert statuses == [200] * 20 and released == [True]


@pytest.mark.slow
def test_skyrl_gym_search_tool_against_live_server(small_server_url, small_snapshot):
    from skyrl_gym.tools.search import SearchToolGroup

    group = SearchToolGroup(search_url=f"{small_server_url}/retrieve", topk=3, log_requests=False)
    text = json.loads(group.search("river"))["result"]
    snapshot = Snapshot.open(small_snapshot)
    hits = snapshot.search("river", 3)
    for number, hit in enumerate(hits, start=1):
        assert f"Doc {number}: {snapshot.get(hit.doc_id).title}\n" in text
    assert "Search error" not in text


def test_serve_command_binds_loopback_by_default():
    import argparse

    from stillweb.cli import serve

    parser = argparse.ArgumentParser()
    serve.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["serve", "snap/a", "snap/b", "--token", "t", "--workers", "2"])
    assert (args.host, args.port, args.snapshots, args.token, args.workers) == ("127.0.0.1", 8000, ["snap/a", "snap/b"], "t", 2)
    with pytest.raises(SystemExit):
        parser.parse_args(["serve", "snap/a", "--workers", "0"])
