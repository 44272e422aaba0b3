"""The trainer adapters over ``stillweb/Apps-v0``: TRL's environment factory (one method per
endpoint, plus answer), OpenEnv's environment and SkyRL-gym's text env (the reference agent's
text actions): the reference program earns the environment's reward through each."""

from __future__ import annotations

import pytest

from stillweb.envs import ReferenceAgent
from stillweb.sandboxes.apps import ENDPOINTS

pytestmark = pytest.mark.extra


def test_trl_factory_offers_the_endpoints_and_rewards_the_reference_program(apps_snapshot):
    pytest.importorskip("trl")
    from stillweb.envs.integrations.trl import environment_factory

    env = environment_factory(apps_snapshot, "core", env_id="stillweb/Apps-v0")()
    assert set(ENDPOINTS) | {"answer"} <= set(dir(env))
    task = next(task for task in env.episode.env.tasks if task.extra["category"] == "dependent_writes")
    env.reset(task_id=task.task_id)
    for call in task.extra["program"][0]:
        getattr(env, call["name"])(**call["arguments"])
    assert env.get_reward() == 0.0
    env.answer(text="Done.")
    assert env.get_reward() == 1.0


def test_trl_dataset_of_app_tasks_is_the_environments_own_prompt(apps_snapshot):
    pytest.importorskip("trl")
    from stillweb.envs.apps.env import AppsEnv
    from stillweb.envs.integrations.trl import environment_factory, task_dataset

    dataset = task_dataset(apps_snapshot, "core", "dev", env_id="stillweb/Apps-v0")
    env = AppsEnv(apps_snapshot, "core", "dev", tool_format="openai")
    assert dataset["task_id"] == [task.task_id for task in env.tasks]
    for row in dataset.select(range(3)):
        _, info = env.reset(options={"task_id": row["task_id"]})
        system, user = row["prompt"]
        assert user["content"] == info["messages"][1]["content"] and "You are operating the apps of " in user["content"]
        assert system["content"] == env.instructions() and "<tools>" not in system["content"]  # the app operator's words
        assert info["messages"][0]["content"].startswith(system["content"].split(",")[0]) and "research" not in system["content"]
    factory = environment_factory(apps_snapshot, "core", "dev", env_id="stillweb/Apps-v0")()
    factory.reset(**dataset[0])  # the rows start episodes of the same tasks
    assert factory.episode.info["task_id"] == dataset[0]["task_id"]


def test_openenv_environment_runs_app_tasks(apps_snapshot):
    pytest.importorskip("openenv.core")
    from stillweb.envs.integrations.openenv import StillwebAction, StillwebEnvironment

    env = StillwebEnvironment(apps_snapshot, "core", env_id="stillweb/Apps-v0", error_rate=0.2)
    for task in env.env.tasks[:4]:
        observation, agent = env.reset(seed=0, task_id=task.task_id), ReferenceAgent(task)
        while not observation.done:
            observation = env.step(StillwebAction(text=agent.act(observation.text)))
        assert observation.reward == 1.0 and observation.info["reward_parts"]["state_match"] == 1.0


def test_skyrl_text_env_runs_app_tasks(apps_snapshot):
    pytest.importorskip("skyrl_gym")
    from stillweb.envs.integrations.skyrl import StillwebTextEnv

    from stillweb.envs.apps.env import AppsEnv

    task = next(task for task in AppsEnv(apps_snapshot, "core").tasks if task.extra["category"] == "multi_turn")
    env = StillwebTextEnv({"snapshot": str(apps_snapshot), "tasks": "core", "env_id": "stillweb/Apps-v0"}, {"task_id": task.task_id})
    messages, _ = env.init([])
    agent, observation, done = ReferenceAgent(task), messages[-1]["content"], False
    while not done:
        output = env.step(agent.act(observation))
        done = output["done"]
        observation = output["observations"][-1]["content"] if output["observations"] else ""
    assert output["reward"] == 1.0


def test_verifiers_taskset_lists_the_app_tasks(apps_snapshot):
    pytest.importorskip("verifiers")
    from stillweb.envs.apps.env import AppsEnv
    from stillweb.envs.integrations.verifiers import openenv_config

    config = openenv_config("http://127.0.0.1:1", apps_snapshot, "core", split="dev", env_id="stillweb/Apps-v0")
    assert [reset["task_id"] for reset in config.resets] == [task.task_id for task in AppsEnv(apps_snapshot, "core", "dev").tasks]
