"""A server at its session limit under 1,000 concurrent creates (429s naming the limit, then recovery, no
leaked session), and a client that disconnects mid-step (the retried step with the same request id gets the
stored result; the environment stepped once). Servers bind 127.0.0.1; every loop is bounded."""

from __future__ import annotations

import asyncio
import socket
from urllib.parse import urlsplit

import httpx
import pytest

from stillweb.server.app import start_server_process
from stillweb.server.plumbing import ServerSettings
from stillweb.server.session_store import SessionError, SessionStore
from support.faults import http_post, post_once
from support.network import free_port

LIMIT = 8
CREATE = {"env_id": "stillweb/WikiQA-v0", "kwargs": {"tasks": "hard"}}
SEARCH = '<tool_call>{"name": "search", "arguments": {"query": "river city"}}</tool_call>'


@pytest.fixture(scope="module")
def server(tasks_snapshot):
    """A one-worker server over the tasks snapshot holding at most LIMIT sessions."""
    port = free_port()
    process = start_server_process([tasks_snapshot], port, ServerSettings(max_sessions=LIMIT))
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        process.kill()
        process.wait()


async def _creates(url: str, count: int) -> list[tuple[int, dict]]:
    return await asyncio.gather(*(post_once(url, "/sessions", CREATE) for _ in range(count)))


@pytest.mark.slow
def test_a_thousand_concurrent_creates_at_the_session_limit(server):
    responses = asyncio.run(_creates(server, 1000))
    created = [body["session_id"] for status, body in responses if status == 201]
    refused = [body for status, body in responses if status == 429]
    assert len(created) == LIMIT and len(refused) == 1000 - LIMIT
    detail = refused[0]["detail"]
    assert f"maximum of {LIMIT} sessions" in detail and "DELETE /sessions/{id}" in detail
    with httpx.Client(base_url=server, timeout=60) as client:
        for session_id in created:
            assert client.delete(f"/sessions/{session_id}").status_code == 200
        # recovery, and no slot leaked by the storm: exactly LIMIT sessions fit again
        again = [client.post("/sessions", json=CREATE) for _ in range(LIMIT + 1)]
        assert [response.status_code for response in again] == [201] * LIMIT + [429]
        for response in again[:LIMIT]:
            assert client.delete(f"/sessions/{response.json()['session_id']}").status_code == 200


def _send_and_hang_up(url: str, path: str, body: dict) -> None:
    """Send one POST and close the connection without reading the answer (a client that went away)."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(http_post(parts.hostname, path, body))
        sock.shutdown(socket.SHUT_RDWR)


@pytest.mark.slow
def test_a_step_whose_client_hung_up_is_answered_from_the_store_on_retry(server, tasks_snapshot):
    import gymnasium as gym

    with httpx.Client(base_url=server, timeout=60) as client:
        session_id = client.post("/sessions", json=CREATE).json()["session_id"]
        try:
            reset = client.post(f"/sessions/{session_id}/reset", json={"seed": 3, "request_id": "r0"}).json()
            _send_and_hang_up(server, f"/sessions/{session_id}/step", {"action": SEARCH, "request_id": "s1"})
            retried = client.post(f"/sessions/{session_id}/step", json={"action": SEARCH, "request_id": "s1"})
            assert retried.status_code == 200
            again = client.post(f"/sessions/{session_id}/step", json={"action": SEARCH, "request_id": "s1"})
            assert again.content == retried.content  # the stored bytes
            info = client.get(f"/sessions/{session_id}").json()
            assert info["episode_steps"] == 1 and info["total_steps"] == 1  # stepped once, not three times
            reused = client.post(f"/sessions/{session_id}/step", json={"action": "other", "request_id": "s1"})
            assert reused.status_code == 409 and "already used for a different request" in reused.json()["detail"]
        finally:
            client.delete(f"/sessions/{session_id}")
    env = gym.make("stillweb/WikiQA-v0", snapshot=str(tasks_snapshot), tasks="hard")
    observation, _info = env.reset(seed=3)
    assert observation == reset["observation"]
    assert env.step(SEARCH)[0] == retried.json()["observation"]  # what the one step really returned


def test_a_create_holds_its_slot_while_its_environment_is_built():
    """Creates in flight count against the limit: one more is refused at once, before any environment is built."""
    store = SessionStore(max_sessions=2, idle_timeout_s=900)
    with store.slot(), store.slot():
        with pytest.raises(SessionError, match="maximum of 2 sessions"):
            with store.slot():
                pass
    with store.slot():  # both places are free again when the creates end (here without a session)
        pass
    assert len(store) == 0
