"""Degenerate actions are flagged per step; over-long ones truncate; episodes end with their stats."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stillweb.envs import RandomTextAgent, ReferenceAgent, WikiQAEnv, run_episode
from stillweb.envs.agents.scripted import write_call
from stillweb.envs.core.degenerate import ACTION_FLAGS, ActionChecks

COLLAPSED = '{"action": "searchsearchAAPL stockAAAAA"'


def steps_of(env, actions, task_id="chain"):
    env.reset(options={"task_id": task_id})
    infos = []
    for action in actions:
        *_, terminated, truncated, info = env.step(action)
        infos.append(info)
        if terminated or truncated:
            break
    return infos


@pytest.mark.parametrize("tool_format", ["tongyi", "openai", "search_r1"])
def test_the_collapsed_action_raises_its_flags_in_every_format(tiny_world, world_tasks, tool_format):
    env = WikiQAEnv(snapshot=tiny_world, tasks=world_tasks, tool_format=tool_format)
    (info,) = steps_of(env, [COLLAPSED])
    assert info["action_flags"] == ["repeated_chars", "repeated_ngrams", "near_miss_call"]
    assert info["tool_flags"] == ["format_error"]


@pytest.mark.parametrize(
    ("action", "flag"),
    [
        ("<tool_call>" + "search " * 40 + "</tool_call>", "repeated_ngrams"),
        ("I will look it up now. " * 8, "repeated_ngrams"),
        ("Hmmmmm, the answer is " + "!" * 60, "repeated_chars"),
        ("\x00\x01\x02\ufffd\ufffd ok", "non_text"),
        ('<tool_call>{"name": "search", "arguments": {"query": "x"}</tool_call>', "near_miss_call"),
    ],
)
def test_scripted_degenerate_policies_raise_each_flag(tiny_world, world_tasks, action, flag):
    env = WikiQAEnv(snapshot=tiny_world, tasks=world_tasks, max_format_errors=None, max_turns=4)
    infos = steps_of(env, [action] * 4)
    assert all(flag in info["action_flags"] for info in infos)
    stats = infos[-1]["episode_stats"]
    assert stats["turns"] == 4 and stats["degenerate_steps"] == 4 and stats["flags"][flag] == 4
    assert stats["action_chars"] == 4 * len(action) and stats["longest_action"] == len(action)


def test_a_plain_answer_is_not_a_near_miss(tiny_world, world_tasks):
    env = WikiQAEnv(snapshot=tiny_world, tasks=world_tasks, max_format_errors=None)
    (info,) = steps_of(env, ["I think the answer is Ostra."])
    assert info["tool_flags"] == ["format_error"] and info["action_flags"] == []


@pytest.mark.parametrize("tool_format", ["tongyi", "openai", "search_r1"])
def test_the_reference_agent_raises_no_flag(tiny_world, world_tasks, tool_format):
    env = WikiQAEnv(snapshot=tiny_world, tasks=world_tasks, tool_format=tool_format)
    agent, done, flags = ReferenceAgent(world_tasks[0], tool_format), False, []
    observation = env.reset(options={"task_id": "chain"})[0]
    while not done:
        observation, _, terminated, truncated, info = env.step(agent.act(observation))
        flags.append(info["action_flags"])
        done = terminated or truncated
    assert terminated and all(step == [] for step in flags)
    stats = info["episode_stats"]
    assert stats["turns"] == len(flags) and stats["format_errors"] == 0 and stats["degenerate_steps"] == 0
    assert stats["tool_calls"] == len(flags) - 1 and stats["repeated_calls"] == 0


def test_an_over_long_action_truncates_with_its_reason_and_is_masked(tiny_world, world_tasks):
    env = WikiQAEnv(snapshot=tiny_world, tasks=world_tasks, actions={"max_action_chars": 1_000})
    search = write_call("tongyi", "search", {"query": "orchard"})
    infos = steps_of(env, [search, search + " " * 1_000, search])
    assert len(infos) == 2
    last = infos[-1]
    assert last["truncation_reason"] == "action_too_long" and last["mask_from_loss"] is True
    assert last["termination_reason"] is None and last["reward_parts"]["total"] == 0.0
    assert last["reward_parts"]["counts"]["format_error"] == 0 and last["tool_calls"] == 1
    assert "over_long" in last["action_flags"] and last["episode_stats"]["flags"]["over_long"] == 1


@pytest.mark.parametrize("action", ["a" * 3_000_000, "<tool_call>" + "[" * 200_000 + "</tool_call>"])
def test_megabytes_of_text_truncate_under_the_default_cap(tiny_world, world_tasks, action):
    env = WikiQAEnv(snapshot=tiny_world, tasks=world_tasks)
    (info,) = steps_of(env, [action])
    assert info["truncation_reason"] == "action_too_long" and "over_long" in info["action_flags"]
    assert env.observation_space.contains(info["messages"][-1]["content"])


def test_repeated_identical_calls_are_counted(tiny_world, world_tasks):
    env = WikiQAEnv(snapshot=tiny_world, tasks=world_tasks, max_turns=3)
    search = write_call("tongyi", "search", {"query": "orchard"})
    stats = steps_of(env, [search] * 3)[-1]["episode_stats"]
    assert stats["tool_calls"] == 3 and stats["repeated_calls"] == 2 and stats["degenerate_steps"] == 0


def test_random_text_agent_episodes_raise_flags_deterministically(tiny_world, world_tasks):
    def flags_of(seed):
        env = WikiQAEnv(snapshot=tiny_world, tasks=world_tasks, max_context_tokens=10**7)
        env.reset(seed=seed)
        agent, seen, done = RandomTextAgent(seed), [], False
        while not done:
            _, _, terminated, truncated, info = env.step(agent.act(""))
            assert set(info["action_flags"]) <= set(ACTION_FLAGS)
            seen.append((tuple(info["action_flags"]), info.get("truncation_reason")))
            done = terminated or truncated
        return seen, info["episode_stats"]

    runs = [flags_of(seed) for seed in range(6)]
    assert runs == [flags_of(seed) for seed in range(6)]
    raised = {flag for steps, _ in runs for step, _ in steps for flag in step}
    assert {"repeated_chars", "non_text", "near_miss_call"} <= raised
    for steps, stats in runs:
        assert stats["turns"] == len(steps) and stats["degenerate_steps"] == sum(1 for step, _ in steps if step)
        if steps[-1][1] == "action_too_long":
            assert "over_long" in steps[-1][0]


def test_bad_checks_config_is_a_developer_error():
    with pytest.raises(ValueError, match="no_such"):
        ActionChecks.from_value({"no_such": 1})
    with pytest.raises(ValueError, match="letter_run"):
        ActionChecks(letter_run=1)
    with pytest.raises(ValueError, match="max_non_text_share"):
        ActionChecks(max_non_text_share=2.0)


@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.sampled_from(list("abAB é1_ \n{}\"x") + ["ab", "abcde", "xxxxx", "search"]), max_size=60)
       .map("".join).map(lambda text: text * 2 if len(text) % 3 == 0 else text),
       sizes=st.tuples(st.integers(2, 8), st.integers(2, 45), st.integers(2, 7)))
def test_the_prefilter_never_hides_a_repeat(text, sizes):
    """The one-search prefilter gives the flags of the three repeat patterns searched every time."""
    checks = ActionChecks(letter_run=sizes[0], char_run=sizes[1], unit_chars=sizes[2])
    letters, chars, tandem = checks._patterns
    expected_chars = bool(letters.search(text) or chars.search(text))
    expected_ngrams = bool(tandem.search(text)) or checks._mostly_repeated_trigrams(text)
    flags = checks.flags(text, format_error=False)
    assert ("repeated_chars" in flags, "repeated_ngrams" in flags) == (expected_chars, expected_ngrams)
