"""verifiers: its OpenEnv taskset over the stillweb OpenEnv server, stepped the way OpenEnvEnv.run steps it."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.extra

pytest.importorskip("verifiers.v1")
pytest.importorskip("openenv.core")

import anyio  # noqa: E402
import httpx  # noqa: E402

from stillweb.envs import ReferenceAgent, WikiQAEnv  # noqa: E402
from stillweb.envs.integrations.verifiers import openenv_taskset  # noqa: E402


@pytest.mark.slow
def test_taskset_loads_one_task_per_task_id_and_its_episode_matches_in_process(openenv_server, tasks_snapshot):  # noqa: F811
    from openenv import GenericEnvClient
    from verifiers.v1.tasksets.openenv.taskset import parse_action

    local = WikiQAEnv(tasks_snapshot, "hard")  # default limits, as the server's
    tasks = list(openenv_taskset(openenv_server, tasks_snapshot, "hard"))
    assert [task.data.reset for task in tasks] == [{"task_id": task.task_id} for task in local.tasks]
    assert tasks[0].data.base_url == openenv_server and tasks[0].data.idx == 0

    async def run(task):
        schema = httpx.get(f"{openenv_server}/schema").json()["action"]
        total = 0.0
        async with GenericEnvClient(base_url=task.data.base_url) as client:
            result = await client.reset(**task.data.reset)
            prompt, _ = local.reset(options=task.data.reset)
            assert result.observation["text"] == prompt
            agent, observation = ReferenceAgent(local.tasks.by_id(task.data.reset["task_id"])), prompt
            while not result.done:
                action = agent.act(observation)
                result = await client.step(parse_action(action, schema))  # verifiers' own reply -> action
                observation, reward, *_ = local.step(action)
                assert result.observation["text"] == observation and result.reward == reward
                total += result.reward or 0.0
        return total

    assert [anyio.run(run, task) for task in tasks] == [1.0] * len(tasks)  # every task solved with defaults
