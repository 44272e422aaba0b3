"""Async rollouts on Ray: trajectories equal the in-process, HTTP and pool ones byte for byte
(but for the policy version each step line carries); an HTTP policy's versions are recorded; a worker killed mid-episode loses and duplicates
nothing; a policy timeout truncates with the reason; a full buffer holds workers back."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import gymnasium as gym
import pytest

from support.ray_env import ENV_ID, agent_scripts, env_kwargs_for, recorded_lines
from stillweb.corpora.canonical import canonical_json
from stillweb.envs.runs.recording import replay, reset_record, step_record
from stillweb.server.app import start_server_process
from support.network import free_port

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.extra("ray")

from stillweb.envs.ray import EnvPool, EpisodeSpec, HttpPolicy, RolloutService, ScriptedPolicy  # noqa: E402

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the test policies below travel by value


class GatedPolicy(ScriptedPolicy):
    """Waits at (task, turn) until ``gate`` exists: the test kills the worker while it waits."""

    def __init__(self, actions, gate: str, task_id: str, turn: int) -> None:
        super().__init__(actions)
        self.gate, self.task_id, self.turn = gate, task_id, turn

    def __call__(self, observation, info):
        while info["task_id"] == self.task_id and info["turn"] == self.turn and not os.path.exists(self.gate):
            time.sleep(0.02)
        return super().__call__(observation, info)


class SlowPolicy(ScriptedPolicy):
    """Takes ``seconds`` to answer at ``turn`` of ``task_id``."""

    def __init__(self, actions, task_id: str, turn: int, seconds: float) -> None:
        super().__init__(actions)
        self.task_id, self.turn, self.seconds = task_id, turn, seconds

    def __call__(self, observation, info):
        if info["task_id"] == self.task_id and info["turn"] == self.turn:
            time.sleep(self.seconds)
        return super().__call__(observation, info)


@pytest.fixture(scope="module")
def env_kwargs(small_snapshot):
    return env_kwargs_for(small_snapshot)


@pytest.fixture(scope="module")
def scripts(env_kwargs):
    return agent_scripts(env_kwargs, 4)


@pytest.fixture(scope="module")
def in_process(env_kwargs, scripts, tmp_path_factory):
    """Each scripted episode's recording, in-process."""
    folder = tmp_path_factory.mktemp("in-process")
    return {task_id: recorded_lines(gym.make(ENV_ID, **env_kwargs), folder / f"{task_id}.jsonl", seed, task_id, actions)
            for task_id, seed, actions in scripts}


def without_versions(trajectory) -> list[str]:
    """The trajectory's lines without the ``policy_version`` the workers add to each step (checked here)."""
    lines = []
    for line in trajectory.lines:
        record = json.loads(line)
        if record["type"] == "step":
            assert record.pop("policy_version") == trajectory.policy_versions[len(lines) - 2]
        lines.append(canonical_json(record))
    return lines


def specs_of(scripts) -> list[EpisodeSpec]:
    return [EpisodeSpec(f"{task_id}/{seed}", seed, {"task_id": task_id}) for task_id, seed, _ in scripts]


def policy_of(scripts) -> ScriptedPolicy:
    return ScriptedPolicy({task_id: actions for task_id, _seed, actions in scripts})


@pytest.mark.slow
def test_rollout_trajectories_equal_in_process_http_and_pool(ray_runtime, env_kwargs, scripts, in_process,
                                                               small_snapshot, tmp_path):
    service = RolloutService(ENV_ID, env_kwargs, policy_of(scripts), workers=2, buffer_capacity=8)
    try:
        trajectories = service.run(specs_of(scripts))
    finally:
        service.close()
    for trajectory, (task_id, _seed, actions) in zip(trajectories, scripts):
        assert without_versions(trajectory) == in_process[task_id]
        assert trajectory.steps == len(actions) and (trajectory.terminated or trajectory.truncated)
        path = tmp_path / f"{task_id}.jsonl"
        path.write_text("".join(line + "\n" for line in trajectory.lines), encoding="utf-8")
        assert replay(path).ok

    port = free_port()
    server = start_server_process([small_snapshot], port)
    try:
        for task_id, seed, actions in scripts:
            served = {key: value for key, value in env_kwargs.items() if key != "snapshot"}  # the server's default
            remote = gym.make("stillweb/Remote-v0", url=f"http://127.0.0.1:{port}", env_id=ENV_ID, **served)
            lines = recorded_lines(remote, tmp_path / f"http-{task_id}.jsonl", seed, task_id, actions)
            assert lines[1:] == in_process[task_id][1:]  # the header names Remote-v0; every reset and step is equal
    finally:
        server.kill()
        server.wait()

    pool = EnvPool(ENV_ID, len(scripts), envs_per_actor=2, env_kwargs=env_kwargs)
    try:
        resets = pool.run([("reset", seed, {"task_id": task_id}) for task_id, seed, _ in scripts])
        pooled = [[canonical_json(reset_record(seed, {"task_id": task_id}, *result))]
                  for (task_id, seed, _), result in zip(scripts, resets)]
        for turn in range(max(len(actions) for *_, actions in scripts)):
            batch = [("step", actions[turn]) if turn < len(actions) else None for *_, actions in scripts]
            for index, result in enumerate(pool.run(batch)):
                if result is not None:
                    pooled[index].append(canonical_json(step_record(batch[index][1], *result)))
    finally:
        pool.close()
    assert pooled == [in_process[task_id][1:] for task_id, *_ in scripts]


@pytest.mark.slow
def test_http_policy_versions_and_stale_filter(ray_runtime, env_kwargs, scripts):
    actions = {task_id: script for task_id, _seed, script in scripts}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            info = request["info"]
            script = actions[info["task_id"]]
            action = script[info["turn"]] if info["turn"] < len(script) else "<answer>unknown</answer>"
            body = json.dumps({"action": action, "policy_version": 7 if info["task_id"] == scripts[0][0] else 9}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    service = RolloutService(ENV_ID, env_kwargs, HttpPolicy(f"http://127.0.0.1:{server.server_port}/act"), workers=2)
    try:
        service.submit(specs_of(scripts[:2]))
        taken = service.take(2, timeout_s=120, min_policy_version=8)
        assert [t.episode_id for t in taken] == [specs_of(scripts)[1].episode_id]
        assert set(taken[0].policy_versions) == {9} and taken[0].policy_version == 9
        steps = [json.loads(line) for line in taken[0].lines[2:]]
        assert steps and all(step["policy_version"] == 9 for step in steps)  # where the health plots read it
        assert service.stats()["stale_dropped"] == 1
    finally:
        service.close()
        server.shutdown()


@pytest.mark.slow
def test_worker_killed_mid_episode_loses_and_duplicates_nothing(ray_runtime, env_kwargs, scripts, in_process, tmp_path):
    victim_task, _seed, victim_actions = max(scripts, key=lambda script: len(script[2]))
    assert len(victim_actions) >= 3
    gate = tmp_path / "gate"
    policy = GatedPolicy({task_id: actions for task_id, _s, actions in scripts}, str(gate), victim_task, 2)
    service = RolloutService(ENV_ID, env_kwargs, policy, workers=2, buffer_capacity=8)
    specs = specs_of(scripts)
    victim = next(spec.episode_id for spec in specs if spec.options["task_id"] == victim_task)
    try:
        service.submit(specs)
        deadline = time.monotonic() + 120
        while len(ray.get(service.buffer.journal.remote(victim))) < 2:  # two steps journaled, the third waiting
            assert time.monotonic() < deadline, "the victim episode never reached its third step"
            time.sleep(0.05)
        worker = next(number for number, episode in service.in_flight().items() if episode == victim)
        ray.kill(service.workers[worker])
        gate.touch()
        taken = []
        while len(taken) < len(specs):
            batch = service.take(len(specs) - len(taken), timeout_s=120)
            assert batch, "trajectories went missing"
            taken += batch
        assert sorted(t.episode_id for t in taken) == sorted(spec.episode_id for spec in specs)
        for trajectory in taken:
            assert without_versions(trajectory) == in_process[trajectory.episode_id.split("/")[0]]
        stats = service.stats()
        assert stats["restarts"] == 1 and stats["stored"] == len(specs) and stats["size"] == 0
    finally:
        service.close()


def test_policy_timeout_truncates_with_the_reason(ray_runtime, env_kwargs, scripts):
    task_id, seed, actions = scripts[0]
    policy = SlowPolicy({task_id: actions}, task_id, 1, seconds=5.0)
    service = RolloutService(ENV_ID, env_kwargs, policy, workers=1, policy_timeout_s=0.5)
    try:
        (trajectory,) = service.run([EpisodeSpec("slow", seed, {"task_id": task_id})])
    finally:
        service.close()
    assert trajectory.truncated and not trajectory.terminated and trajectory.reward == 0.0
    assert trajectory.info["truncation_reason"] == "policy_timeout" and trajectory.info["mask_from_loss"] is True
    assert trajectory.steps == 1


@pytest.mark.slow
def test_full_buffer_holds_workers_back(ray_runtime, env_kwargs, scripts):
    specs = [EpisodeSpec(f"ep{index}", index) for index in range(5)]
    service = RolloutService(ENV_ID, env_kwargs, ScriptedPolicy({}), workers=2, buffer_capacity=2)
    try:
        service.submit(specs)
        deadline = time.monotonic() + 120
        while service.stats()["waited_full"] < 1:
            assert time.monotonic() < deadline, "no put ever waited on the full buffer"
            time.sleep(0.05)
        assert service.stats()["size"] == 2
        taken = []
        while len(taken) < len(specs):
            taken += service.take(min(2, len(specs) - len(taken)), timeout_s=60)
        assert sorted(t.episode_id for t in taken) == [spec.episode_id for spec in specs]
    finally:
        service.close()
