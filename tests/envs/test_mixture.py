"""``stillweb/Mixture-v0``: a seeded, weighted mixture of environments, in-process, over HTTP and in adapters."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import stillweb.envs  # noqa: F401 - registers the environments
from stillweb.envs.mixture import mixable_env_ids

ENVS = {"stillweb/WikiQA-v0": 3, "stillweb/Lookup-v0": 1}


def mixture_kwargs(snapshot) -> dict:
    return {"envs": ENVS, "snapshot": str(snapshot), "max_turns": 4,
            "member_kwargs": {"stillweb/WikiQA-v0": {"tasks": "hard"}, "stillweb/Lookup-v0": {"max_tasks": 20}}}


def episode_sequence(env, seeds) -> list[list[str]]:
    """(env id, task id) of a reset per seed, then of three unseeded resets."""
    picks = [env.reset(seed=seed)[1] for seed in seeds] + [env.reset()[1] for _ in range(3)]
    return [[info["env_id"], info["task_id"]] for info in picks]


def test_mixture_picks_by_weight_and_reports_env_and_task(tasks_snapshot):
    env = gym.make("stillweb/Mixture-v0", **mixture_kwargs(tasks_snapshot))
    sequence = episode_sequence(env, range(80))
    counts = Counter(env_id for env_id, _ in sequence)
    assert set(counts) == set(ENVS) and 2 < counts["stillweb/WikiQA-v0"] / counts["stillweb/Lookup-v0"] < 5
    assert all(task_id for _, task_id in sequence)
    assert episode_sequence(env, range(80)) == sequence  # same seeds, same tasks
    observation, info = env.reset(seed=3, options={"env_id": "stillweb/Lookup-v0"})
    assert info["env_id"] == "stillweb/Lookup-v0" and "Passage" in observation
    observation, reward, terminated, truncated, info = env.step("<answer>no idea</answer>")
    assert terminated and info["env_id"] == "stillweb/Lookup-v0" and info["task_id"]
    with pytest.raises(ValueError, match="not in this mixture"):
        env.reset(options={"env_id": "stillweb/Remote-v0"})


def test_check_env_passes(tasks_snapshot):
    env = gym.make("stillweb/Mixture-v0", **mixture_kwargs(tasks_snapshot))
    check_env(env.unwrapped, skip_render_check=True)


def test_members_match_the_same_env_alone(tasks_snapshot):
    mixture = gym.make("stillweb/Mixture-v0", **mixture_kwargs(tasks_snapshot))
    alone = gym.make("stillweb/WikiQA-v0", snapshot=str(tasks_snapshot), tasks="hard", max_turns=4)
    seed = next(seed for seed in range(50) if mixture.reset(seed=seed)[1]["env_id"] == "stillweb/WikiQA-v0")
    observation, info = mixture.reset(seed=seed)
    assert (observation, info["task_id"]) == (alone.reset(seed=seed)[0], alone.unwrapped._episode.task.task_id)
    action = '<tool_call>{"name": "search", "arguments": {"query": "river"}}</tool_call>'
    assert mixture.step(action)[0] == alone.step(action)[0]


def test_bad_mixtures_name_the_problem(tasks_snapshot):
    with pytest.raises(ValueError, match="unknown environment 'stillweb/Nope-v0'.*stillweb/Lookup-v0"):
        gym.make("stillweb/Mixture-v0", envs={"stillweb/Nope-v0": 1}, snapshot=str(tasks_snapshot))
    with pytest.raises(ValueError, match="registered"):
        gym.make("stillweb/Mixture-v0", envs={"stillweb/Remote-v0": 1})
    with pytest.raises(ValueError, match="positive finite"):
        gym.make("stillweb/Mixture-v0", envs={"stillweb/Lookup-v0": 0}, snapshot=str(tasks_snapshot))
    with pytest.raises(ValueError, match="not in the mixture"):
        gym.make("stillweb/Mixture-v0", envs={"stillweb/Lookup-v0": 1}, snapshot=str(tasks_snapshot),
                 member_kwargs={"stillweb/WikiQA-v0": {}})
    assert "stillweb/Mixture-v0" not in mixable_env_ids() and "stillweb/WikiQA-v0" in mixable_env_ids()


SEQUENCE_SCRIPT = """
import json, sys, gymnasium as gym, stillweb.envs
env = gym.make("stillweb/Mixture-v0", **json.loads(sys.argv[1]))
infos = [env.reset(seed=seed)[1] for seed in range(20)] + [env.reset()[1] for _ in range(3)]
print(json.dumps([[info["env_id"], info["task_id"]] for info in infos]))
"""


def test_sequence_is_identical_in_another_process(tasks_snapshot):
    kwargs = json.dumps(mixture_kwargs(tasks_snapshot))
    runs = [subprocess.run([sys.executable, "-c", SEQUENCE_SCRIPT, kwargs], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": str(value)}).stdout for value in (1, 2)]
    env = gym.make("stillweb/Mixture-v0", **mixture_kwargs(tasks_snapshot))
    assert runs[0] == runs[1] and json.loads(runs[0]) == episode_sequence(env, range(20))


def test_mixture_over_http_sessions_matches_in_process(tasks_snapshot):
    from fastapi.testclient import TestClient

    from stillweb.server.app import make_app
    from stillweb.server.plumbing import ServerSettings

    client = TestClient(make_app([tasks_snapshot], ServerSettings(max_sessions=2)))
    kwargs = {key: value for key, value in mixture_kwargs(tasks_snapshot).items() if key != "snapshot"}
    created = client.post("/sessions", json={"env_id": "stillweb/Mixture-v0", "kwargs": kwargs})
    assert created.status_code == 201, created.text
    session = created.json()["session_id"]
    remote = [client.post(f"/sessions/{session}/reset", json={"seed": seed}).json()["info"] for seed in range(8)]
    env = gym.make("stillweb/Mixture-v0", **mixture_kwargs(tasks_snapshot))
    local = [env.reset(seed=seed)[1] for seed in range(8)]
    assert [(i["env_id"], i["task_id"]) for i in remote] == [(i["env_id"], i["task_id"]) for i in local]
    hostile = {**kwargs, "member_kwargs": {"stillweb/WikiQA-v0": {"tasks": "../../etc/passwd"}}}
    refused = client.post("/sessions", json={"env_id": "stillweb/Mixture-v0", "kwargs": hostile})
    assert refused.status_code == 422 and "not a path" in refused.text


@pytest.mark.extra("skyrl")
def test_skyrl_adapter_plays_a_mixture(tasks_snapshot):
    pytest.importorskip("skyrl_gym")
    from stillweb.envs.integrations.skyrl import StillwebTextEnv

    config = {"env_id": "stillweb/Mixture-v0", **mixture_kwargs(tasks_snapshot)}
    for seed in range(6):
        env = StillwebTextEnv(config, extras={"seed": seed})
        prompt, metadata = env.init([])
        assert metadata["env_id"] in ENVS and prompt[-1]["role"] == "user"
        output = env.step("<answer>unknown</answer>")
        assert output["done"] and output["metadata"]["env_id"] == metadata["env_id"]
