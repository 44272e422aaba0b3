"""Environment sessions over HTTP: create/reset/step/inspect/close, request ids
that make retries safe, replay, limits and idle expiry with clear 404s."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from stillweb.server.app import make_app
from stillweb.server.session_store import SessionError, SessionStore
from stillweb.server.sessions import StepFastPath, _step_target
from stillweb.server.plumbing import BUFFERED_BODY, ServerSettings

TASKS = [
    {"task_id": "a", "question": "Which film is about a river?", "answer": "The Nopomel River"},
    {"task_id": "b", "question": "What is the capital of Braora?", "answer": "Heiel"},
]
SEARCH = '<tool_call>{"name": "search", "arguments": {"query": "river"}}</tool_call>'
ANSWER = "<answer>Heiel</answer>"


@pytest.fixture(scope="module")
def client(small_snapshot):
    return TestClient(make_app([small_snapshot], ServerSettings(max_sessions=4)))


def create(client, **kwargs) -> str:
    response = client.post("/sessions", json={"env_id": "stillweb/WikiQA-v0", "kwargs": {"tasks": TASKS, **kwargs}})
    assert response.status_code == 201, response.text
    return response.json()["session_id"]


def test_episode_over_http(client):
    session = create(client, max_turns=3)
    reset = client.post(f"/sessions/{session}/reset", json={"seed": 1, "request_id": "r0"}).json()
    assert reset["info"]["task_id"] in {"a", "b"} and reset["episode"] == 1
    step = client.post(f"/sessions/{session}/step", json={"action": SEARCH, "request_id": "s1"}).json()
    assert step["step"] == 1 and not step["terminated"] and "river" in step["observation"].lower()
    final = client.post(f"/sessions/{session}/step", json={"action": ANSWER, "request_id": "s2"}).json()
    assert final["terminated"] and "reward_parts" in final["info"]
    late = client.post(f"/sessions/{session}/step", json={"action": ANSWER, "request_id": "s3"})
    assert late.status_code == 409 and late.json()["error"] == "episode_over"
    info = client.get(f"/sessions/{session}").json()
    assert (info["episode_steps"], info["episode_over"], info["snapshot"]) == (2, True, "synthetic-300-s0")
    assert client.delete(f"/sessions/{session}").status_code == 200


def test_retried_request_id_does_not_step_twice(client):
    session = create(client)
    client.post(f"/sessions/{session}/reset", json={"seed": 0, "request_id": "r"})
    first = client.post(f"/sessions/{session}/step", json={"action": SEARCH, "request_id": "same"})
    again = client.post(f"/sessions/{session}/step", json={"action": SEARCH, "request_id": "same"})
    assert first.content == again.content
    assert client.get(f"/sessions/{session}").json()["episode_steps"] == 1
    reused = client.post(f"/sessions/{session}/step", json={"action": ANSWER, "request_id": "same"})
    assert reused.status_code == 409 and reused.json()["error"] == "request_id_reused"
    client.delete(f"/sessions/{session}")


def test_replay_rebuilds_the_same_state(client):
    actions = [SEARCH, '<tool_call>{"name": "open", "arguments": {"doc": 3}}</tool_call>']
    original = create(client)
    client.post(f"/sessions/{original}/reset", json={"seed": 5})
    for action in actions:
        client.post(f"/sessions/{original}/step", json={"action": action})
    expected = client.post(f"/sessions/{original}/step", json={"action": SEARCH}).json()

    rebuilt = create(client)
    ops = [{"op": "reset", "seed": 5}] + [{"op": "step", "action": action} for action in actions]
    replay = client.post(f"/sessions/{rebuilt}/replay", json={"ops": ops}).json()
    assert replay == {"applied": 3, "episode_steps": 2, "episode_over": False}
    assert client.post(f"/sessions/{rebuilt}/step", json={"action": SEARCH}).json() == expected
    for session in (original, rebuilt):
        client.delete(f"/sessions/{session}")


def test_unknown_closed_and_step_before_reset(client):
    missing = client.post("/sessions/nope/step", json={"action": "x"})
    assert missing.status_code == 404 and missing.json()["error"] == "session_not_found"
    session = create(client)
    early = client.post(f"/sessions/{session}/step", json={"action": "x"})
    assert early.status_code == 409 and early.json()["error"] == "not_reset"
    client.delete(f"/sessions/{session}")
    closed = client.get(f"/sessions/{session}")
    assert closed.status_code == 404 and "closed" in closed.json()["detail"]


def test_session_limit_is_429(client):
    sessions = [create(client) for _ in range(4)]
    response = client.post("/sessions", json={"env_id": "stillweb/WikiQA-v0", "kwargs": {"tasks": TASKS}})
    assert response.status_code == 429 and "maximum of 4" in response.json()["detail"]
    for session in sessions:
        client.delete(f"/sessions/{session}")


def test_snapshot_argument_names_a_served_snapshot(client):
    response = client.post("/sessions", json={"env_id": "stillweb/WikiQA-v0", "kwargs": {"tasks": TASKS, "snapshot": "/etc"}})
    assert response.status_code == 404 and response.json()["error"] == "snapshot_not_found"


def test_idle_sessions_expire_with_a_clear_404():
    now = [0.0]
    store = SessionStore(max_sessions=2, idle_timeout_s=10.0, clock=lambda: now[0])

    class Env:
        closed = False

        def close(self):
            self.closed = True

    env = Env()
    session = store.add("stillweb/WikiQA-v0", {}, env)
    now[0] = 5.0
    assert store.get(session.session_id) is session  # touching keeps it alive
    now[0] = 14.0
    assert store.expire_idle() == 0
    now[0] = 16.0
    with pytest.raises(SessionError) as caught:
        store.get(session.session_id)
    assert caught.value.code == "session_expired" and env.closed


def test_step_fast_path_answers_as_the_route(small_snapshot):
    """The same requests against the app with and without the step fast path get the same bytes."""
    fast = make_app([small_snapshot])
    routed = make_app([small_snapshot])
    routed.user_middleware[:] = [item for item in routed.user_middleware if item.cls is not StepFastPath]
    json_type = {"Content-Type": "application/json"}
    steps = [
        (json.dumps({"action": SEARCH, "request_id": "s1"}), json_type),
        (json.dumps({"action": SEARCH, "request_id": "s1"}), json_type),  # a retry: the stored result
        (json.dumps({"action": ANSWER, "request_id": "s1"}), json_type),  # id reused: 409
        (json.dumps({"request_id": "s2"}), json_type),  # no action: 422
        (json.dumps({"action": 5}), json_type),  # schema error: FastAPI's 422
        (json.dumps({"action_codepoints": [ord(c) for c in "x\ud800y"]}), json_type),
        ("{not json", json_type),
        (json.dumps({"action": SEARCH}), {"Content-Type": "text/plain"}),
        (json.dumps({"action": ANSWER, "request_id": "s3"}), json_type),
        (json.dumps({"action": SEARCH}), json_type),  # after the end: 409
    ]
    answers = []
    for app in (fast, routed):
        client = TestClient(app)
        session = create(client)
        client.post(f"/sessions/{session}/reset", json={"seed": 0})
        got = [client.post(f"/sessions/{session}/step", content=body, headers=headers) for body, headers in steps]
        got.append(client.post("/sessions/nope/step", json={"action": SEARCH}))
        answers.append([(response.status_code, response.headers["content-type"], response.content) for response in got])
    assert answers[0] == answers[1]
    assert [status for status, _, _ in answers[0]] == [200, 200, 409, 422, 422, 200, 422, 422, 200, 409, 404]


def test_step_fast_path_takes_json_steps_only():
    scope = {"type": "http", "method": "POST", "path": "/sessions/abc/step", "headers": [(b"content-type", b"application/json")], BUFFERED_BODY: b"{}"}
    assert _step_target(scope) == "abc"
    assert _step_target({**scope, "headers": [(b"content-type", b"application/json; charset=utf-8")]}) == "abc"
    assert _step_target({**scope, "path": "/sessions/abc/reset"}) is None
    assert _step_target({**scope, "method": "GET"}) is None
    assert _step_target({**scope, "headers": []}) is None


def test_server_shutdown_closes_every_session(small_snapshot):
    app = make_app([small_snapshot])
    with TestClient(app) as client:
        response = client.post("/sessions", json={"env_id": "stillweb/WikiQA-v0", "kwargs": {"tasks": TASKS}})
        assert response.status_code == 201 and len(app.state.sessions) == 1
    assert len(app.state.sessions) == 0
    with TestClient(app) as client:  # the closed session answers as closed, with the store's own code
        gone = client.get(f"/sessions/{response.json()['session_id']}")
    assert gone.status_code == 404 and gone.json()["error"] == "session_expired"


def test_reset_limits_override_over_http_equals_in_process(client, small_snapshot):
    from stillweb.envs import WikiQAEnv

    session = create(client, max_turns=6)
    options = {"task_id": "a", "limits": {"max_turns": 2}}
    reset = client.post(f"/sessions/{session}/reset", json={"seed": 0, "options": options}).json()
    steps = [client.post(f"/sessions/{session}/step", json={"action": SEARCH}).json() for _ in range(2)]
    assert reset["info"]["limits"]["max_turns"] == 2 and steps[-1]["truncated"]
    assert steps[-1]["info"]["truncation_reason"] == "max_turns"
    local = WikiQAEnv(small_snapshot, TASKS, max_turns=6)
    observation, info = local.reset(seed=0, options=options)
    assert (observation, json.loads(json.dumps(info))) == (reset["observation"], reset["info"])
    for step in steps:
        assert json.loads(json.dumps(list(local.step(SEARCH)))) == [step[key] for key in
                                                                     ("observation", "reward", "terminated", "truncated", "info")]
    bad = client.post(f"/sessions/{session}/reset", json={"seed": 0, "options": {"limits": {"max_action_chars": 9}}})
    assert bad.status_code == 422 and bad.json()["error"] == "bad_reset"
    assert "max_action_chars" in bad.json()["detail"] and "max_tool_calls" in bad.json()["detail"]
