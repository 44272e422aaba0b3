"""RemoteEnv against a real server process: parity with the in-process environment
(reference and random agents, a few hundred steps), transparent resume after the
server is killed and restarted, and retries that never step twice."""

from __future__ import annotations

import json
import socket

import gymnasium as gym
import httpx
import pytest

import stillweb.envs.remote  # noqa: F401 - registers stillweb/Remote-v0
from support.network import free_port
from support.snapshots import fact_tasks
from stillweb.envs import RandomTextAgent, ReferenceAgent
from stillweb.envs.remote import HttpConnection, RemoteEnv, RemoteEnvError
from stillweb.server.app import start_server_process
from stillweb.server.sessions import to_jsonable

TOOL_FORMAT = "tongyi"


@pytest.fixture(scope="module")
def tasks(small_snapshot):
    return fact_tasks(small_snapshot)


@pytest.fixture(scope="module")
def server_url(small_server_url):
    return small_server_url


def as_json(value):
    """What ``value`` looks like after the server's JSON encoding."""
    return json.loads(json.dumps(to_jsonable(value)))


def play_in_parallel(local, remote, make_agent, seed: int) -> int:
    """Play one episode on both envs with the local env's agent; assert identical outputs; return steps."""
    local_obs, local_info = local.reset(seed=seed)
    remote_obs, remote_info = remote.reset(seed=seed)
    assert (remote_obs, remote_info) == (local_obs, as_json(local_info))
    agent = make_agent(local.unwrapped.tasks.by_id(local_info["task_id"]), seed)
    observation, steps, done = local_obs, 0, False
    while not done:
        action = agent.act(observation)
        local_out = local.step(action)
        remote_out = remote.step(action)
        assert remote_out[:4] == local_out[:4]
        assert remote_out[4] == as_json(local_out[4])
        observation, done, steps = local_out[0], local_out[2] or local_out[3], steps + 1
    return steps


@pytest.mark.parametrize(
    "make_agent, episodes, limits",
    [
        (lambda task, seed: ReferenceAgent(task, TOOL_FORMAT), 40, {}),
        (lambda task, seed: RandomTextAgent(seed), 48, {"max_format_errors": None}),
        # context management condenses earlier messages: the message deltas keep a shorter prefix
        (lambda task, seed: ReferenceAgent(task, TOOL_FORMAT), 40, {"context": {"budget_tokens": 400, "keep_recent_turns": 1}}),
    ],
    ids=["reference", "random", "reference-managed-context"],
)
@pytest.mark.slow
def test_parity_with_in_process(server_url, small_snapshot, tasks, make_agent, episodes, limits):
    kwargs = {"tasks": tasks, "tool_format": TOOL_FORMAT, "max_turns": 8, **limits}
    local = gym.make("stillweb/WikiQA-v0", snapshot=str(small_snapshot), **kwargs)
    remote = gym.make("stillweb/Remote-v0", url=server_url, env_id="stillweb/WikiQA-v0", **kwargs)
    steps = sum(play_in_parallel(local, remote, make_agent, seed) for seed in range(episodes))
    assert steps >= 100
    remote.close()
    local.close()


@pytest.mark.slow
def test_resume_after_server_is_killed_and_restarted(small_snapshot, tasks):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    kwargs = {"tasks": tasks, "tool_format": TOOL_FORMAT, "max_turns": 16}
    local = gym.make("stillweb/WikiQA-v0", snapshot=str(small_snapshot), **kwargs)
    local_obs, local_info = local.reset(seed=3)
    agent = ReferenceAgent(local.unwrapped.tasks.by_id(local_info["task_id"]), TOOL_FORMAT)
    actions, expected = [], []
    observation, done = local_obs, False
    while not done:
        actions.append(agent.act(observation))
        out = local.step(actions[-1])
        expected.append((out[0], out[1], out[2], out[3], as_json(out[4])))
        observation, done = out[0], out[2] or out[3]
    assert len(actions) >= 3

    process = start_server_process([small_snapshot], port)
    remote = RemoteEnv(url, env_id="stillweb/WikiQA-v0", backoff=0.05, retries=40, **kwargs)
    try:
        remote.reset(seed=3)
        assert remote.step(actions[0]) == expected[0]
        first_session = remote.session_id
        process.kill()
        process.wait()
        process = start_server_process([small_snapshot], port)
        got = [remote.step(action) for action in actions[1:]]
        assert got == expected[1:]
        assert remote.resumes == 1 and remote.session_id != first_session
    finally:
        remote.close()
        process.kill()
        process.wait()


class DropFirstStepResponse(HttpConnection):
    """Forwards requests, but loses the response of the first step (as a timeout would)."""

    dropped = False

    def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        answer = super().request(method, path, body)
        if path.endswith("/step") and not self.dropped:
            self.dropped = True
            raise TimeoutError("response lost")
        return answer


def test_lost_response_is_retried_without_stepping_twice(server_url, tasks):
    connection = DropFirstStepResponse(server_url, timeout=60)
    remote = RemoteEnv(server_url, env_id="stillweb/WikiQA-v0", connection=connection, backoff=0.01, tasks=tasks)
    remote.reset(seed=0)
    observation, *_ = remote.step('<tool_call>{"name": "search", "arguments": {"query": "river"}}</tool_call>')
    assert connection.dropped and "river" in observation.lower()
    state = httpx.get(f"{server_url}/sessions/{remote.session_id}").json()
    assert state["episode_steps"] == 1 and remote.resumes == 0
    remote.close()


def test_connection_closed_while_idle_is_reopened(server_url, tasks):
    remote = RemoteEnv(server_url, env_id="stillweb/WikiQA-v0", retries=1, tasks=tasks)
    remote.reset(seed=0)
    remote._connection._socket.shutdown(socket.SHUT_RDWR)  # as the server's keep-alive timeout would
    observation, *_ = remote.step('<tool_call>{"name": "search", "arguments": {"query": "river"}}</tool_call>')
    assert "river" in observation.lower() and remote.resumes == 0
    remote.close()


def test_errors_surface_clearly(server_url, tasks):
    with pytest.raises(RemoteEnvError, match="unknown_env_id"):
        RemoteEnv(server_url, env_id="stillweb/Nope-v0")
    with pytest.raises(RemoteEnvError, match="bad_kwargs"):
        RemoteEnv(server_url, env_id="stillweb/WikiQA-v0", tasks=tasks, max_turns=0)
    remote = RemoteEnv(server_url, env_id="stillweb/WikiQA-v0", tasks=tasks)
    with pytest.raises(RuntimeError, match="reset"):
        remote.step("<answer>x</answer>")
    remote.close()
    with pytest.raises(RemoteEnvError, match="failed after 2 attempts"):
        RemoteEnv(f"http://127.0.0.1:{free_port()}", retries=2, backoff=0.01, tasks=tasks)
