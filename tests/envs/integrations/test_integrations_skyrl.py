"""SkyRL-gym: the registered text env through skyrl_gym.make, against the in-process WikiQAEnv."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.extra

skyrl_gym = pytest.importorskip("skyrl_gym")

from stillweb.envs import ReferenceAgent, WikiQAEnv  # noqa: E402
from stillweb.envs.integrations.skyrl import SKYRL_ENV_ID  # noqa: E402


@pytest.mark.parametrize("tool_format", ["tongyi", "search_r1"])
def test_reference_episode_through_skyrl_make_matches_in_process(tasks_snapshot, tool_format):
    from omegaconf import OmegaConf

    config = {"snapshot": str(tasks_snapshot), "tasks": "hard", "tool_format": tool_format}  # default limits
    local = WikiQAEnv(**config)
    for task in list(local.tasks)[: None if tool_format == "tongyi" else 2]:
        env = skyrl_gym.make(SKYRL_ENV_ID, env_config=OmegaConf.create(config), extras={"extra_info": {"task_id": task.task_id}})
        prompt, metadata = env.init([])
        expected_prompt, info = local.reset(options={"task_id": task.task_id})
        assert metadata["task_id"] == task.task_id
        assert prompt == info["messages"] and "\n\n".join(m["content"] for m in prompt) == expected_prompt
        agent, done, observation = ReferenceAgent(task, tool_format=tool_format), False, expected_prompt
        while not done:
            action = agent.act(observation)
            out = env.step(action)
            observation, reward, terminated, truncated, info = local.step(action)
            done = terminated or truncated
            assert out["done"] == done and out["reward"] == reward
            assert out["observations"] == ([] if done else [{"role": "user", "content": observation}])
        assert out["metadata"]["reward_parts"] == info["reward_parts"]
        assert env.get_metrics()["total"] == info["reward_parts"]["total"]
        if tool_format == "tongyi":
            assert out["reward"] == 1.0


def test_bad_config_names_the_problem_and_bad_text_is_an_observation(tasks_snapshot):
    with pytest.raises(ValueError, match="snapshot"):
        skyrl_gym.make(SKYRL_ENV_ID, env_config={"tasks": "hard"})
    env = skyrl_gym.make(SKYRL_ENV_ID, env_config={"snapshot": str(tasks_snapshot), "tasks": "hard"}, extras={"seed": 3})
    env.init([])
    out = env.step("<tool_call>{not json")
    assert not out["done"] and "Format error" in out["observations"][0]["content"]
