"""A frozen live tool inside WikiQA-v0 and the HTTP server: mounted beside the snapshot's search, its
fingerprint in every info, a live-touched episode marked, a miss flagged `not_recorded`, and a recorded
episode replayed against the store with identical observations and rewards."""

from __future__ import annotations

import json

import gymnasium as gym
import httpx
import pytest

import stillweb.envs  # noqa: F401 - registers the environments
from support.live_services import SEARCH_SCHEMA
from support.network import free_port

from stillweb.envs.runs.recording import RecordEpisodes, replay
from stillweb.sandboxes import ToolCall, ToolRegistry
from stillweb.sandboxes.frozen import FrozenStore, FrozenTool
from stillweb.server.app import start_server_process

ACTIONS = ['<tool_call>{"name": "web_search", "arguments": {"q": "river", "k": 2}}</tool_call>',
           '<tool_call>{"name": "search", "arguments": {"query": "river"}}</tool_call>',
           '<tool_call>{"name": "web_search", "arguments": {"q": "lake"}}</tool_call>',
           "<answer>Paris</answer>"]


def _spec(store, **extra) -> dict:
    return {"store": str(store), "name": "web_search", "path": "/search", "parameters": SEARCH_SCHEMA,
            "description": "Search the web.", **extra}


def _run(env, path) -> list:
    recorder = RecordEpisodes(env, path)
    outcomes = [recorder.reset(seed=0)]
    for action in ACTIONS:
        outcomes.append(recorder.step(action))
        if outcomes[-1][2] or outcomes[-1][3]:
            break
    recorder.close()
    return outcomes


def test_record_live_then_replay_from_the_store(live_http, tasks_snapshot, tmp_path):
    store = FrozenStore.create(tmp_path / "frozen", "http", live_http)
    live = gym.make("stillweb/WikiQA-v0", snapshot=str(tasks_snapshot), tasks="hard",
                    frozen_tools=[_spec(store.path, on_miss="live", upstream=live_http)])
    recorded = _run(live, tmp_path / "live.jsonl")
    assert recorded[0][1]["frozen"] == {"live_calls": 0, "not_recorded": 0, "on_miss": {"web_search": "live"}}
    last = recorded[-1][-1]
    assert last["frozen"]["live_calls"] == 2 and [c["source"] for c in recorded[1][-1]["frozen_calls"]] == ["live"]
    assert "web_search" in recorded[0][0] and "search" in recorded[0][0]  # beside the snapshot's search
    frozen = [_spec(store.path)]
    offline = gym.make("stillweb/WikiQA-v0", snapshot=str(tasks_snapshot), tasks="hard", frozen_tools=frozen)
    replayed = _run(offline, tmp_path / "offline.jsonl")
    assert [step[0] for step in replayed] == [step[0] for step in recorded]  # same observations...
    assert [step[1] for step in replayed[1:]] == [step[1] for step in recorded[1:]]  # ...and rewards
    assert replayed[-1][-1]["frozen"]["live_calls"] == 0
    assert replayed[0][1]["tool_fingerprints"] == {"web_search": FrozenStore.open(store.path).fingerprint}
    assert replay(tmp_path / "offline.jsonl").ok  # re-running the recording gives the same bytes
    marked = replay(tmp_path / "live.jsonl", frozen_tools=frozen)  # only the live marks differ offline
    assert not marked.ok and marked.field == "info" and marked.recorded["frozen"]["on_miss"] == {"web_search": "live"}


def test_miss_is_flagged_and_schema_mounted(live_http, tasks_snapshot, tmp_path):
    store = FrozenStore.create(tmp_path / "frozen", "http", live_http)
    env = gym.make("stillweb/WikiQA-v0", snapshot=str(tasks_snapshot), tasks="hard", tools=["web_search", "answer"],
                   frozen_tools=[_spec(store.path)])
    observation, info = env.reset(seed=0)
    assert "Search the web." in observation and "search" not in json.dumps(env.unwrapped.registry.names[1:])
    observation, reward, terminated, truncated, info = env.step(ACTIONS[0])
    assert info["tool_flags"] == ["not_recorded"] and "never recorded" in observation
    assert info["frozen"]["not_recorded"] == 1 and info["frozen_calls"][0]["source"] == "not_recorded"
    registry = ToolRegistry(env.unwrapped.snapshot, tools=["search"], extra=[FrozenTool.from_spec(_spec(store.path, name="search"))])
    assert registry.call(ToolCall("search", {"q": "x"})).flag == "not_recorded"  # instead of the snapshot's search
    assert registry.call(ToolCall("search", {"query": "x"})).flag == "bad_arguments"


@pytest.mark.slow
def test_http_server_sessions_use_a_frozen_tool(live_http, tasks_snapshot, tmp_path):
    store = FrozenStore.create(tmp_path / "frozen", "http", live_http)
    FrozenTool.from_spec(_spec(store.path, on_miss="live", upstream=live_http)).run({"q": "river", "k": 2})
    port = free_port()
    server = start_server_process([tasks_snapshot], port, frozen_tools=[_spec(store.path)])
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            tool = client.post("/tools/call", json={"name": "web_search", "arguments": {"q": "river", "k": 2}}).json()
            assert tool["flag"] is None and "river result" in tool["text"]
            bad = client.post("/sessions", json={"env_id": "stillweb/WikiQA-v0",
                                                 "kwargs": {"tasks": "hard", "frozen_tools": [_spec("/etc")]}})
            assert bad.status_code == 422 and "web_search" in bad.json()["detail"]
            created = client.post("/sessions", json={"env_id": "stillweb/WikiQA-v0",
                                                     "kwargs": {"tasks": "hard", "frozen_tools": ["web_search"]}}).json()
            session = created["session_id"]
            client.post(f"/sessions/{session}/reset", json={"seed": 0, "request_id": "r0"})
            step = client.post(f"/sessions/{session}/step", json={"action": ACTIONS[0], "request_id": "s1"}).json()
            assert step["observation"].count("river result") == 2 and step["info"]["frozen_calls"][0]["source"] == "store"
    finally:
        server.kill()
        server.wait()
