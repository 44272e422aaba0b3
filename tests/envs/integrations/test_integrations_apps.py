"""The trainer adapters over ``stillweb/Apps-v0``: TRL's environment factory (one method per endpoint, plus answer)
through TRL's schema extraction and a GRPO step, OpenEnv's client and server, and SkyRL-gym's ``make`` (the reference
agent's text actions): the reference program earns the environment's reward through each."""

from __future__ import annotations

import pytest

from stillweb.envs import ReferenceAgent
from stillweb.sandboxes.apps import ENDPOINTS

pytestmark = pytest.mark.extra


@pytest.mark.slow
def test_trl_grpo_step_extracts_the_endpoints_and_earns_the_reference_programs_reward(apps_snapshot, tmp_path, monkeypatch):
    """TRL's own schema extraction reads one method per endpoint as the environment's schemas say; a GRPO step whose
    model makes the reference program's calls, then answers, gets reward 1 from each rollout's environment."""
    pytest.importorskip("trl")
    from transformers.utils import get_json_schema

    from stillweb.envs.integrations.trl import environment_factory, task_dataset
    from support.trl_tiny import grpo_step, logged_env_reward

    factory = environment_factory(apps_snapshot, "core", env_id="stillweb/Apps-v0")
    probe = factory()
    schemas = {schema["function"]["name"]: schema["function"] for schema in probe.episode.env.tool_schemas()}
    assert set(ENDPOINTS) | {"answer"} <= set(schemas)
    for name, schema in schemas.items():
        extracted = get_json_schema(getattr(factory, name))["function"]
        assert (extracted["name"], sorted(extracted["parameters"]["properties"])) == (name, sorted(schema["parameters"]["properties"]))
        assert sorted(extracted["parameters"].get("required", [])) == sorted(schema["parameters"].get("required", []))
    task = next(task for task in probe.episode.env.tasks if task.extra["category"] == "single_write")
    dataset = task_dataset(apps_snapshot, "core", env_id="stillweb/Apps-v0").filter(lambda row: row["task_id"] == task.task_id)
    program = [call for turn in task.extra["program"] for call in turn]
    trainer = grpo_step(factory, dataset, program + [{"name": "answer", "arguments": {"text": "Done."}}], tmp_path, monkeypatch,
                        tool_names_only=True)
    rollouts = trainer._environment_pool[None]
    assert len(rollouts) == 2
    for env in rollouts:
        assert env.episode.info["task_id"] == task.task_id and env.episode.info["tool_calls"] == len(program)
        assert env.get_reward() == 1.0 and env.episode.info["reward_parts"]["state_match"] == 1.0
    assert logged_env_reward(trainer) == 1.0


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


def test_openenv_client_and_server_run_app_tasks_as_in_process(apps_snapshot):
    """OpenEnv's own client, over its server (``create_app``, uvicorn on 127.0.0.1), plays the reference agent on app
    tasks with injected errors: every observation and reward equals the in-process AppsEnv's, and each ends at 1."""
    pytest.importorskip("openenv.core")
    from stillweb.envs.apps.env import AppsEnv
    from stillweb.envs.integrations.openenv import StillwebAction, StillwebEnvClient, create_app
    from support.network import serving_app

    local = AppsEnv(apps_snapshot, "core", error_rate=0.2)
    with serving_app(create_app(apps_snapshot, "core", env_id="stillweb/Apps-v0", error_rate=0.2)) as url:
        with StillwebEnvClient(base_url=url).sync() as client:
            for task in local.tasks[:4]:
                result = client.reset(seed=0, task_id=task.task_id)
                observation, _info = local.reset(seed=0, options={"task_id": task.task_id})
                assert result.observation.text == observation
                agent = ReferenceAgent(task)
                while not result.done:
                    action = agent.act(observation)
                    result = client.step(StillwebAction(text=action))
                    observation, reward, terminated, truncated, info = local.step(action)
                    assert (result.observation.text, result.reward, result.done) == (observation, reward, terminated or truncated)
                assert result.reward == 1.0 and result.observation.info["reward_parts"]["state_match"] == 1.0


def test_skyrl_gym_make_runs_app_tasks(apps_snapshot):
    """``skyrl_gym.make`` (SkyRL-gym's registry, as its trainer builds envs) with the adapter's env id plays the
    reference agent's text on a multi-turn app task to reward 1."""
    skyrl_gym = pytest.importorskip("skyrl_gym")
    from stillweb.envs.apps.env import AppsEnv
    from stillweb.envs.integrations.skyrl import SKYRL_ENV_ID, StillwebTextEnv

    task = next(task for task in AppsEnv(apps_snapshot, "core").tasks if task.extra["category"] == "multi_turn")
    env = skyrl_gym.make(SKYRL_ENV_ID, env_config={"snapshot": str(apps_snapshot), "tasks": "core", "env_id": "stillweb/Apps-v0"},
                         extras={"extra_info": {"task_id": task.task_id}})
    assert isinstance(env, StillwebTextEnv)
    messages, metadata = env.init([])
    assert metadata["task_id"] == task.task_id
    agent, observation, done, turns = ReferenceAgent(task), messages[-1]["content"], False, 0
    while not done:
        output = env.step(agent.act(observation))
        done, turns = output["done"], turns + 1
        observation = output["observations"][-1]["content"] if output["observations"] else ""
    assert output["reward"] == 1.0 and turns > len(task.extra["program"])


def test_verifiers_taskset_lists_the_app_tasks(apps_snapshot):
    pytest.importorskip("verifiers")
    from stillweb.envs.apps.env import AppsEnv
    from stillweb.envs.integrations.verifiers import openenv_config

    config = openenv_config("http://127.0.0.1:1", apps_snapshot, "core", split="dev", env_id="stillweb/Apps-v0")
    assert [reset["task_id"] for reset in config.resets] == [task.task_id for task in AppsEnv(apps_snapshot, "core", "dev").tasks]
