"""verifiers' native Taskset, Env.run and Toolset over a snapshot, in-process: WikiQA-v0's observations and rewards.

The rollout here drives ``StillwebEnv.run`` with a scripted player that has verifiers'
``interaction``/``turn``/``Segment`` shape (fast, no harness program);
test_integrations_verifiers_runner.py plays the same tasks through verifiers' own runner
(``vf-eval``, its ``null`` harness prepared with ``uv``, the ``subprocess`` runtime).
"""

from __future__ import annotations

import contextlib

import pytest

pytestmark = pytest.mark.extra

pytest.importorskip("verifiers.v1")

import anyio  # noqa: E402
from verifiers.v1 import AssistantMessage  # noqa: E402
from verifiers.v1.agent import Segment  # noqa: E402

from stillweb.envs import ReferenceAgent, WikiQAEnv  # noqa: E402
from stillweb.envs.integrations.verifiers_native import (StillwebEnv, StillwebTaskset,  # noqa: E402
                                                         StillwebTasksetConfig, StillwebToolset, StillwebToolsetConfig)


class ScriptedPlayer:
    """``agents.player``: replies with the reference agent's actions; keeps what it was told."""

    def __init__(self, agent: ReferenceAgent) -> None:
        self.agent, self.heard, self.trace = agent, [], _Trace()

    @contextlib.asynccontextmanager
    async def interaction(self, task):
        self.heard.append(f"{task.data.system_prompt}\n\n{task.data.prompt}")
        yield self

    async def turn(self, message: str | None = None) -> Segment:
        if message is not None:
            self.heard.append(message)
        return Segment(messages=[AssistantMessage(content=self.agent.act(self.heard[-1]))])


class _Trace:
    def __init__(self) -> None:
        self.rewards, self.info = {}, {}

    def record_reward(self, name: str, value: float, weight: float = 1.0) -> None:
        self.rewards[name] = value


def test_taskset_env_run_and_toolset_match_wikiqa(tasks_snapshot):
    config = StillwebTasksetConfig(id="stillweb", snapshot=str(tasks_snapshot), tasks="hard", env_kwargs={"max_turns": 64})
    tasks = list(StillwebTaskset(config))
    local = WikiQAEnv(tasks_snapshot, "hard", max_turns=64)
    assert [task.data.task_id for task in tasks] == [task.task_id for task in local.tasks]
    assert tasks[0].data.system_prompt == local.system_prompt and tasks[0].key == tasks[0].data.task_id

    task = tasks[0]
    player = ScriptedPlayer(ReferenceAgent(local.tasks.by_id(task.data.task_id)))
    agents = type("Agents", (), {"player": player})()
    anyio.run(StillwebEnv.run, object.__new__(StillwebEnv), task, agents)  # the Env's own run(), no harness

    prompt, _ = local.reset(options={"task_id": task.data.task_id})
    replay = ReferenceAgent(local.tasks.by_id(task.data.task_id))
    observations, observation, done, reward = [prompt], prompt, False, 0.0
    while not done:
        observation, reward, terminated, truncated, _ = local.step(replay.act(observation))
        observations.append(observation)
        done = terminated or truncated
    assert player.heard == observations[:-1]  # every observation but the last (the episode ended there)
    assert player.trace.rewards == {"stillweb_reward": reward} and reward == 1.0

    toolset = StillwebToolset(StillwebToolsetConfig(snapshot=str(tasks_snapshot)))
    found = toolset.search("river")
    assert found == local.registry.call(_call("search", {"query": "river"})).text and "[doc " in found
    assert toolset.open(0) == local.registry.call(_call("open", {"doc": 0})).text
    assert toolset.find(-1, "x") == local.registry.call(_call("find", {"doc": -1, "pattern": "x"})).text


def test_toolset_registers_its_tools_with_an_mcp_server(tasks_snapshot):
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("stillweb")
    StillwebToolset(StillwebToolsetConfig(snapshot=str(tasks_snapshot))).register(server)
    names = sorted(tool.name for tool in anyio.run(server.list_tools))
    assert names == ["find", "open", "search"]


def _call(name, arguments):
    from stillweb.sandboxes import ToolCall

    return ToolCall(name=name, arguments=arguments)
