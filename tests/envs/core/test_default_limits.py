"""Default episode limits come from the task set: the reference agent solves every task with them,
in-process and over HTTP (``run_episode`` on ``Remote-v0``); an explicit short ``max_turns`` warns once.
The trainer paths (OpenEnv, verifiers, TRL, SkyRL, verl) run every task with defaults in their own modules."""

from __future__ import annotations

import logging
import math

import gymnasium as gym
import pytest

import stillweb.envs  # noqa: F401 - registers the environments
from stillweb.envs import ReferenceAgent, WikiQAEnv, load_tasks, run_episode
from stillweb.envs.core.turn_budget import MIN_TURNS, reference_steps, turn_budget
from support.network import served


@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_reference_agent_solves_every_task_in_process_with_defaults(tasks_snapshot, split):
    env = WikiQAEnv(tasks_snapshot, "hard", split)
    steps = sorted(reference_steps(task) for task in env.tasks)
    assert env.limits.max_turns == max(MIN_TURNS, math.ceil(1.5 * steps[-1]))  # p99 of a dozen tasks is the max
    assert env.limits.max_tool_calls == env.limits.max_turns * env.limits.max_calls_per_turn
    for task in env.tasks:
        summary = run_episode(env, lambda task: ReferenceAgent(task), options={"task_id": task.task_id})
        assert (summary["terminated"], summary["outcome"]) == (True, 1.0), summary
    _, info = env.reset(seed=0)
    assert info["limits"] == {"max_turns": env.limits.max_turns, "max_tool_calls": env.limits.max_tool_calls,
                              "p99_reference_steps": steps[-1], "source": "task set"}


def test_recorded_oracle_steps_set_the_budget():
    tasks = [{"question": f"q{n}", "answer": "a", "oracle_steps": n} for n in range(1, 101)]
    budget = turn_budget(load_tasks(tasks))
    assert (budget.p99_reference_steps, budget.max_turns, budget.most_reference_steps) == (99, 149, 100)


def test_explicit_short_max_turns_warns_once_naming_both_numbers(tasks_snapshot, caplog):
    longest = max(reference_steps(task) for task in WikiQAEnv(tasks_snapshot, "hard").tasks)
    with caplog.at_level(logging.WARNING, logger="stillweb.envs"):
        env = WikiQAEnv(tasks_snapshot, "hard", max_turns=4)
        env.reset(seed=0)
    warnings = [record.getMessage() for record in caplog.records if record.name == "stillweb.envs"]
    assert len(warnings) == 1 and "max_turns=4" in warnings[0] and f"the {longest} steps" in warnings[0]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="stillweb.envs"):
        WikiQAEnv(tasks_snapshot, "hard", max_turns=longest)
    assert not caplog.records


@pytest.fixture(scope="module")
def served_tasks_snapshot(tasks_snapshot):
    with served([tasks_snapshot]) as url:
        yield url


@pytest.mark.slow
def test_run_episode_on_remote_env_solves_every_task_with_defaults(served_tasks_snapshot, tasks_snapshot):
    local = WikiQAEnv(tasks_snapshot, "hard")
    remote = gym.make("stillweb/Remote-v0", url=served_tasks_snapshot, env_id="stillweb/WikiQA-v0", tasks="hard")
    try:
        for task in local.tasks:
            summary = run_episode(remote, lambda task: ReferenceAgent(task), options={"task_id": task.task_id})
            assert (summary["task_id"], summary["outcome"]) == (task.task_id, 1.0), summary
        assert remote.unwrapped.tasks.by_id(local.tasks[0].task_id) == local.tasks[0]
        with pytest.raises(ValueError, match="unknown task_id 'sw-nope'"):
            remote.unwrapped.tasks.by_id("sw-nope")
    finally:
        remote.close()
