"""OpenEnv: the served environment stepped by OpenEnv's own EnvClient, against the in-process WikiQAEnv."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.extra

pytest.importorskip("openenv.core")

from stillweb.envs import ReferenceAgent, WikiQAEnv  # noqa: E402
from stillweb.envs.integrations.openenv import StillwebAction, StillwebEnvClient  # noqa: E402


def test_reference_agent_solves_every_task_through_env_client_with_defaults(openenv_server, tasks_snapshot):
    """Default limits (from the task set) on both sides; every step matches the in-process env."""
    local = WikiQAEnv(tasks_snapshot, "hard")
    for task in local.tasks:
        _play_reference_episode(openenv_server, local, task)


def _play_reference_episode(openenv_server, local, task):
    with StillwebEnvClient(base_url=openenv_server).sync() as client:
        result = client.reset(task_id=task.task_id)
        prompt, info = local.reset(options={"task_id": task.task_id})
        assert result.observation.text == prompt and result.observation.task_id == task.task_id
        agent, observation = ReferenceAgent(task), prompt
        while not result.done:
            action = agent.act(observation)
            result = client.step(StillwebAction(text=action))
            observation, reward, terminated, truncated, info = local.step(action)
            assert result.observation.text == observation
            assert (result.reward, result.observation.terminated, result.observation.truncated) == (reward, terminated, truncated)
        expected = json.loads(json.dumps({key: value for key, value in info.items() if key != "messages"}))
        assert result.observation.info == expected and result.reward == 1.0
        state = client.state()
        assert state.task_id == task.task_id and state.step_count == info["turn"]


def test_sessions_are_separate_and_bad_text_is_an_observation(openenv_server, tasks_snapshot):
    local = WikiQAEnv(tasks_snapshot, "hard")
    first, second = (StillwebEnvClient(base_url=openenv_server).sync() for _ in range(2))
    with first, second:
        one = first.reset(task_id=local.tasks[0].task_id)
        two = second.reset(task_id=local.tasks[1].task_id)
        assert one.observation.task_id != two.observation.task_id
        bad = first.step(StillwebAction(text="<tool_call>{oops"))
        assert "Format error" in bad.observation.text and not bad.done
        assert first.state().step_count == 1 and second.state().step_count == 0
