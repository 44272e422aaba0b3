"""The one episode loop: agents, factories and policies; a policy sees the whole conversation; a
policy failure ends the episode; every consumer plays through it (no other ``env.step`` loop)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from stillweb.envs import ReferenceAgent, WikiQAEnv, play_episode, run_episode
from stillweb.envs.agents.loop import PolicyFailure

ROOT = Path(__file__).resolve().parents[3]
CONSUMERS = ("envs/profiles/runner.py", "envs/integrations/sft.py", "server/viewer/tasks.py", "envs/ray/rollouts.py",
             "envs/wikiqa/solvability.py", "envs/agents/scripted.py")


@pytest.fixture(scope="module")
def env(tiny_world, world_tasks):
    return WikiQAEnv(tiny_world, world_tasks)


def test_an_agent_a_factory_and_a_policy_play_the_same_episode(env, world_tasks):
    task = world_tasks[0]
    options = {"task_id": task["task_id"]}
    by_factory = play_episode(env, lambda record: ReferenceAgent(record), options=options)
    by_agent = play_episode(env, ReferenceAgent(task), options=options)
    agent = ReferenceAgent(task)
    by_policy = play_episode(env, policy=lambda observation, info: agent.act(observation), options=options)
    assert by_factory.actions == by_agent.actions == by_policy.actions
    assert by_factory.terminated and by_factory.info["outcome"] == 1.0
    assert run_episode(env, lambda record: ReferenceAgent(record), options=options) == by_factory.summary()


def test_a_policy_sees_the_whole_conversation(env, world_tasks):
    seen = []

    def policy(observation, info):
        seen.append(len(info["messages"]))
        return "<tool_call>{broken</tool_call>"

    played = play_episode(env, policy=policy, options={"task_id": world_tasks[0]["task_id"]})
    assert seen == [2, 4, 6] and played.info["termination_reason"] == "format_errors"
    assert [message["role"] for message in played.messages] == ["system", "user"] + ["assistant", "user"] * 3


def test_a_policy_failure_ends_the_episode(env):
    def policy(observation, info):
        if info["turn"] == 1:
            raise PolicyFailure("timeout: no reply")
        return '<tool_call>{"name": "search", "arguments": {"query": "Ostra"}}</tool_call>'

    played = play_episode(env, policy=policy, seed=0)
    assert (played.turns, played.failure, played.terminated, played.truncated) == (1, "timeout: no reply", False, False)


def test_give_an_agent_or_a_policy():
    with pytest.raises(ValueError, match="agent"):
        play_episode(None, None)


@pytest.mark.parametrize("path", CONSUMERS)
def test_no_consumer_writes_its_own_loop(path):
    tree = ast.parse((ROOT / path).read_text())
    steps = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute) and node.func.attr == "step"]
    assert steps == [], f"{path} calls .step() at lines {steps}: play episodes with stillweb.envs.play_episode"
