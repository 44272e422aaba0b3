"""One episode's budget from its reset: ``reset(options={"limits": {...}})`` sets max_turns,
max_tool_calls and max_format_errors for that episode alone (the ending ladder, the budget note,
``info["limits"]``); the text caps cannot change; a bad key or value is a UsageError naming it; the
same override gives the same bytes in two processes."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from stillweb.corpora.errors import UsageError
from stillweb.envs import ReferenceAgent, WikiQAEnv, run_episode
from stillweb.envs.agents.scripted import write_call
from stillweb.envs.core.limits import RESET_LIMITS, EpisodeLimits

SEARCH = write_call("tongyi", "search", {"query": "Ada Quill"})
TWO_SEARCHES = SEARCH + write_call("tongyi", "search", {"query": "Marrow Bay"})


@pytest.fixture()
def env(tiny_world, world_tasks):
    return WikiQAEnv(tiny_world, world_tasks, max_turns=20, max_tool_calls=40)


def play(env, actions, options):
    """The (truncated, reason, info) of the step that ended the episode, and the steps taken."""
    _, info = env.reset(seed=0, options={"task_id": "born", **options})
    for number, action in enumerate(actions, 1):
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return number, truncated, info.get("truncation_reason"), info
    return None


def test_the_episode_truncates_at_its_own_turns_and_the_next_one_at_the_envs(env):
    steps, truncated, reason, info = play(env, [SEARCH] * 20, {"limits": {"max_turns": 3}})
    assert (steps, truncated, reason) == (3, True, "max_turns")
    assert info["limits"]["max_turns"] == 3 and info["limits"]["source"] == "reset"
    assert env.limits.max_turns == 3 and env.env_limits.max_turns == 20
    steps, truncated, reason, info = play(env, [SEARCH] * 20, {})  # no override: the env's budget again
    assert (steps, reason) == (20, "max_turns") and info["limits"]["max_turns"] == 20
    assert info["limits"]["source"] == "explicit" and env.limits is env.env_limits


def test_the_call_budget_refuses_with_the_episodes_number(env):
    _, info = env.reset(seed=0, options={"task_id": "born", "limits": {"max_tool_calls": 3, "max_turns": 9}})
    assert (info["limits"]["max_tool_calls"], info["limits"]["max_turns"]) == (3, 9)
    observation, _, _, _, info = env.step(TWO_SEARCHES)
    assert "budget_exhausted" not in info["tool_flags"] and len(info["tool_flags"]) == 2
    observation, _, _, truncated, info = env.step(TWO_SEARCHES)  # the 4th call is refused, then the budget ends it
    assert info["tool_flags"][-1] == "budget_exhausted" and info["refused_calls"] == 1
    assert "budget of 3 tool calls" in observation
    assert truncated and info["truncation_reason"] == "max_tool_calls"
    _, info = env.reset(seed=0, options={"task_id": "born"})
    assert info["limits"]["max_tool_calls"] == 40 and info["refused_calls"] == 0


def test_format_errors_may_be_overridden_or_unlimited(env):
    steps, truncated, reason, info = play(env, ["no call at all"] * 10, {"limits": {"max_format_errors": 1}})
    assert (steps, truncated, info["termination_reason"]) == (1, False, "format_errors")
    steps, _, reason, _ = play(env, ["no call at all"] * 10, {"limits": {"max_format_errors": None, "max_turns": 5}})
    assert (steps, reason) == (5, "max_turns")


@pytest.mark.parametrize("limits, named", [
    ({"max_action_chars": 10}, "'max_action_chars'"),
    ({"max_calls_per_turn": 1}, "'max_calls_per_turn'"),
    ({"max_turn": 3}, "'max_turn'"),
    ({"max_turns": 0}, re.escape('["max_turns"] must be a positive integer, got 0')),
    ({"max_tool_calls": "4"}, "got '4'"),
    ({"max_turns": True}, "got True"),
    ({"max_turns": None}, "got None"),
    ([("max_turns", 3)], "must be a dict"),
])
def test_a_bad_key_or_value_names_it(env, limits, named):
    env.reset(seed=0)
    before = env._episode
    with pytest.raises(UsageError, match=named) as raised:
        env.reset(seed=0, options={"limits": limits})
    if isinstance(limits, dict) and set(limits) - set(RESET_LIMITS):  # an unknown key: the allowed ones are named
        assert "max_turns, max_tool_calls, max_format_errors" in str(raised.value)
    assert env._episode is before and env.limits is env.env_limits  # nothing changed


def test_for_episode_keeps_the_caps_and_returns_itself_without_overrides():
    limits = EpisodeLimits(max_turns=8, max_action_chars=500)
    assert limits.for_episode(None) is limits and limits.for_episode({}) is limits
    episode = limits.for_episode({"max_tool_calls": 2})
    assert (episode.max_turns, episode.max_tool_calls, episode.max_action_chars) == (8, 2, 500)


def test_the_reference_agent_is_truncated_by_a_short_budget(env, world_tasks):
    chain = world_tasks[0]
    full = run_episode(env, ReferenceAgent(chain), seed=0, options={"task_id": "chain"})
    short = run_episode(env, ReferenceAgent(chain), seed=0, options={"task_id": "chain", "limits": {"max_turns": 2}})
    again = run_episode(env, ReferenceAgent(chain), seed=0, options={"task_id": "chain"})
    assert full["outcome"] == 1.0 and full["termination_reason"] == "answered"
    assert short["truncation_reason"] == "max_turns" and short["turns"] == 2
    assert again == full


_EPISODES = """
import json, sys
from stillweb.envs import WikiQAEnv
from stillweb.envs.agents.scripted import write_call
tasks = json.loads(sys.argv[2])
env = WikiQAEnv(sys.argv[1], tasks, max_turns=10, max_tool_calls=20)
search = write_call("tongyi", "search", {"query": "Ada Quill"}) * 2
out = []
for limits in ({"max_turns": 3, "max_tool_calls": 3}, None, {"max_format_errors": 1}):
    out.append(env.reset(seed=4, options={"limits": limits} if limits else None))
    for action in (search, "not a call", search, search):
        step = env.step(action)
        out.append(step)
        if step[2] or step[3]:
            break
print(json.dumps(out, sort_keys=True, default=repr))
"""


def test_two_processes_give_identical_episodes_with_an_override(tiny_world, world_tasks):
    runs = [subprocess.run([sys.executable, "-c", _EPISODES, str(tiny_world), json.dumps(world_tasks)],
                           capture_output=True, text=True, check=True).stdout for _ in range(2)]
    assert runs[0] == runs[1]
    first = json.loads(runs[0])
    assert first[0][1]["limits"]["max_turns"] == 3 and '"max_turns": 10' in json.dumps(first[4:])


def test_a_reset_that_fails_leaves_the_episode_and_its_budget(env):
    env.reset(seed=0, options={"task_id": "born", "limits": {"max_turns": 3}})
    env.step(SEARCH)
    with pytest.raises(ValueError, match="nope"):  # a valid budget, an unknown task: nothing starts
        env.reset(seed=0, options={"task_id": "nope", "limits": {"max_turns": 9}})
    assert env.limits.max_turns == 3
    _, _, _, truncated, info = env.step(SEARCH)
    assert not truncated
    _, _, _, truncated, info = env.step(SEARCH)
    assert truncated and info["truncation_reason"] == "max_turns"  # at the episode's own 3 turns


@pytest.mark.parametrize("record", ["x", [1], 3])
def test_a_task_option_that_is_not_a_record_is_named(env, record):
    with pytest.raises(UsageError, match=r'options\["task"\] must be a task record'):
        env.reset(seed=0, options={"task": record})
