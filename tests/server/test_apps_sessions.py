"""``stillweb/Apps-v0`` over HTTP sessions (the generic session routes, nothing app-specific):
the reference agent passes, retried request ids do not act twice, and every observation and
reward equals the in-process environment's."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from stillweb.envs import ReferenceAgent
from stillweb.envs.apps.env import AppsEnv
from stillweb.server.app import make_app
from stillweb.server.plumbing import ServerSettings


@pytest.fixture(scope="module")
def client(apps_snapshot):
    return TestClient(make_app([apps_snapshot], ServerSettings(max_sessions=4)))


def test_reference_episodes_over_http_equal_in_process(client, apps_snapshot):
    local = AppsEnv(apps_snapshot, "core", error_rate=0.2)
    created = client.post("/sessions", json={"env_id": "stillweb/Apps-v0", "kwargs": {"tasks": "core", "error_rate": 0.2}})
    assert created.status_code == 201, created.text
    session = created.json()["session_id"]
    for number, task in enumerate(local.tasks[:6]):
        options = {"task_id": task.task_id}
        observation, info = local.reset(seed=number, options=options)
        remote = client.post(f"/sessions/{session}/reset", json={"seed": number, "options": options,
                                                                 "request_id": f"r{number}"}).json()
        assert remote["observation"] == observation and remote["info"]["state_fingerprint"] == info["state_fingerprint"]
        agent, done, step = ReferenceAgent(task), False, 0
        while not done:
            action = agent.act(observation)
            observation, reward, terminated, truncated, info = local.step(action)
            body = {"action": action, "request_id": f"s{number}-{step}"}
            answer = client.post(f"/sessions/{session}/step", json=body).json()
            retried = client.post(f"/sessions/{session}/step", json=body).json()
            assert answer == retried  # a retry returns the stored result, it does not step again
            assert (answer["observation"], answer["reward"], answer["terminated"]) == (observation, reward, terminated)
            assert answer["info"]["state_fingerprint"] == info["state_fingerprint"]
            done, step = terminated or truncated, step + 1
        assert reward == 1.0
    client.delete(f"/sessions/{session}")
