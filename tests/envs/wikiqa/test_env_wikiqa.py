"""WikiQA-v0: episodes, endings, rewards in info, bad input, Gymnasium conventions, vectorisation."""

from __future__ import annotations

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stillweb.envs  # noqa: F401 - registers the environments
from stillweb.envs import RandomTextAgent, ReferenceAgent, WikiQAEnv, run_episode
from stillweb.envs.agents.scripted import write_answer, write_call


@pytest.fixture
def env(tiny_world, world_tasks):
    environment = WikiQAEnv(snapshot=tiny_world, tasks=world_tasks)
    yield environment
    environment.close()


@pytest.mark.parametrize("tool_format", ["tongyi", "openai", "search_r1"])
def test_reference_agent_solves_the_chain_task(tiny_world, world_tasks, tool_format):
    env = gym.make("stillweb/WikiQA-v0", snapshot=tiny_world, tasks=world_tasks, tool_format=tool_format)
    summary = run_episode(env, lambda task: ReferenceAgent(task, tool_format), options={"task_id": "chain"})
    assert summary["terminated"] and not summary["truncated"]
    assert summary["outcome"] == 1.0 and summary["reward"] == 1.0 and summary["answer"] == "Ostra"
    if tool_format != "search_r1":
        parts = summary["reward_parts"]
        assert parts["citation_recall"] == 1.0 and parts["citation_precision"] == 1.0 and parts["rubric"] == 1.0
        assert parts["counts"] == {"unknown_tool": 0, "bad_arguments": 0, "format_error": 0, "bad_citation": 0, "unsupported_answer": 0}


def test_reset_prompt_info_and_task_choice(env, world_tasks):
    observation, info = env.reset(seed=3)
    assert observation.startswith(env.system_prompt) and observation.endswith(env.tasks.by_id(info["task_id"]).question)
    assert info["snapshot_fingerprint"] == env.snapshot.fingerprint and info["package_version"]
    assert [m["role"] for m in info["messages"]] == ["system", "user"]
    picks = [env.reset(seed=seed)[1]["task_id"] for seed in range(12)]
    assert picks == [env.reset(seed=seed)[1]["task_id"] for seed in range(12)]
    assert set(picks) == {task["task_id"] for task in world_tasks}
    env.reset(seed=5)
    unseeded = [env.reset()[1]["task_id"] for _ in range(5)]
    env.reset(seed=5)
    assert unseeded == [env.reset()[1]["task_id"] for _ in range(5)]
    assert env.reset(options={"task_id": "pop"})[1]["task_id"] == "pop"
    with pytest.raises(ValueError, match="no-such-task"):
        env.reset(options={"task_id": "no-such-task"})


def test_step_outside_an_episode_is_a_developer_error(env):
    with pytest.raises(RuntimeError, match="reset"):
        env.step("<answer>x</answer>")
    env.reset(seed=0)
    env.step("<answer>x</answer>")
    with pytest.raises(RuntimeError, match="reset"):
        env.step("<answer>x</answer>")
    with pytest.raises(TypeError, match="bytes"):
        env.reset(seed=0) and env.step(b"bytes")  # type: ignore[arg-type]


NASTY_ACTIONS = [
    "",
    " \n\t",
    "\ud800\udfff broken surrogates \udc80",
    "<tool_call>" + "[" * 90_000 + "</tool_call>",  # longer actions truncate (tests/envs/core/test_degenerate.py)
    '<tool_call>{"name": "search", "arguments": ' + '{"a":' * 15_000 + "1" + "}" * 15_000 + "}</tool_call>",
    "<answer>" + write_call("tongyi", "search", {"query": "x"}) + "</answer>",
    "<tool_call>{not json}</tool_call>",
    '<tool_call>{"name": "rm -rf", "arguments": {}}</tool_call>',
    '<tool_call>{"name": "open", "arguments": {"doc": -5}}</tool_call>',
    "<tool_response>fake</tool_response>",
    "\x00\x01\x02",
]


@pytest.mark.parametrize("action", NASTY_ACTIONS, ids=range(len(NASTY_ACTIONS)))
def test_nasty_actions_give_error_observations(tiny_world, world_tasks, action):
    env = WikiQAEnv(snapshot=tiny_world, tasks=world_tasks, max_format_errors=None, max_context_tokens=10**7)
    env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step(action)
    assert isinstance(observation, str) and env.observation_space.contains(observation)
    assert not truncated and reward == 0.0
    assert terminated is False
    assert info["tool_flags"][0] in ("format_error", "unknown_tool", "bad_arguments")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=400) | st.from_regex(r"<(tool_call|answer|think|citations)>.{0,80}(</tool_call>)?", fullmatch=True))
def test_random_text_never_raises(env, text):
    env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step(text)
    assert env.observation_space.contains(observation)
    assert isinstance(reward, float)


def test_random_text_agent_episodes_end_cleanly(env):
    """Adversarial text ends each episode by one of the environment's own rules, within its turn budget, with the
    reason its counts show and no reward; the same environment then plays the next episode."""
    reasons = set()
    for seed in range(8):
        agent = RandomTextAgent(seed)
        observation, info = env.reset(seed=seed)
        for _turn in range(env.limits.max_turns):
            action = agent.act(observation)
            observation, reward, terminated, truncated, info = env.step(action)
            assert env.observation_space.contains(observation)
            if terminated or truncated:
                break
        else:
            pytest.fail(f"seed {seed}: no ending after max_turns={env.limits.max_turns} steps")
        assert terminated != truncated and reward == 0.0 and info["outcome"] == 0.0
        reason = info["termination_reason"] if terminated else info["truncation_reason"]
        counts = info["reward_parts"]["counts"]
        if reason == "format_errors":
            assert counts["format_error"] == env.limits.max_format_errors
        elif reason == "action_too_long":
            assert len(action) > env.limits.max_action_chars
        else:
            assert (reason, terminated) in (("answered", True), ("max_turns", False)), reason
        reasons.add(reason)
    assert {"format_errors", "action_too_long", "answered"} <= reasons  # the agent's mix reaches each ending


def test_truncation_reasons_and_mask(tiny_world, world_tasks):
    search = write_call("tongyi", "search", {"query": "orchard"})
    cases = [
        ({"max_turns": 2}, "max_turns"),
        ({"max_tool_calls": 2, "max_calls_per_turn": 2}, "max_tool_calls"),
        ({"max_context_tokens": 1500}, "context_tokens"),
    ]
    for kwargs, reason in cases:
        env = WikiQAEnv(snapshot=tiny_world, tasks=world_tasks, **kwargs)
        env.reset(seed=0)
        action = search if kwargs.get("max_calls_per_turn", 1) == 1 else search + "\n" + search
        truncated, steps = False, 0
        while not truncated:
            _, reward, terminated, truncated, info = env.step(action)
            steps += 1
            assert not terminated and steps < 20
        assert info["truncation_reason"] == reason and info["mask_from_loss"] is True
        assert reward == 0.0 and info["reward_parts"]["outcome"] == 0.0
    env = WikiQAEnv(snapshot=tiny_world, tasks=world_tasks, max_turns=1, mask_truncated=False)
    env.reset(seed=0)
    assert env.step(search)[4]["mask_from_loss"] is False


def test_repeated_format_errors_terminate_without_masking(env):
    env.reset(seed=0)
    for _ in range(2):
        assert env.step("garbage")[2:4] == (False, False)
    _, reward, terminated, truncated, info = env.step("garbage")
    assert terminated and not truncated and reward == 0.0
    assert info["termination_reason"] == "format_errors" and info["mask_from_loss"] is False
    assert info["reward_parts"]["counts"]["format_error"] == 3


def test_hallucination_counters_and_penalties(tiny_world, world_tasks):
    env = WikiQAEnv(snapshot=tiny_world, tasks=world_tasks, reward={"penalty_unknown_tool": 0.5, "penalty_bad_citation": 0.25})
    env.reset(options={"task_id": "chain"})
    env.step(write_call("tongyi", "teleport", {}))
    env.step(write_call("tongyi", "open", {"doc": 10**6}))
    _, reward, terminated, _, info = env.step(write_answer("tongyi", "Ostra", [0, 999999]))
    counts = info["reward_parts"]["counts"]
    assert terminated and counts["unknown_tool"] == 1 and counts["bad_citation"] == 2 and counts["unsupported_answer"] == 1
    assert info["outcome"] == 1.0 and reward == pytest.approx(1.0 - 0.5 - 0.5)


def test_gamma_decay_reward_in_info(tiny_world, world_tasks):
    env = WikiQAEnv(snapshot=tiny_world, tasks=world_tasks, reward={"outcome": 0.0, "gamma_decay": 1.0, "gamma": 0.5})
    env.reset(options={"task_id": "chain"})
    env.step(write_call("tongyi", "search", {"query": "Velland capital"}))
    _, reward, _, _, info = env.step(write_answer("tongyi", "Ostra", []))
    assert reward == 0.5 and info["reward_parts"]["gamma_credits"] == [0.5, 1.0]


def test_context_management_reports_tokens_and_drops(tiny_world, world_tasks):
    env = WikiQAEnv(snapshot=tiny_world, tasks=world_tasks, context={"budget_tokens": 4000})
    agent = ReferenceAgent(env.tasks.by_id("chain"))
    observation, info = env.reset(options={"task_id": "chain"})
    dropped = []
    while True:
        observation, reward, terminated, truncated, info = env.step(agent.act(observation))
        dropped = info["context_dropped"]
        if terminated or truncated:
            break
    assert reward == 1.0
    assert {item["reason"] for item in dropped} >= {"page_condensed"}
    assert info["context_tokens"] <= 4000 and env.messages[1]["content"] == env.tasks.by_id("chain").question


@pytest.mark.parametrize("env_id", ["stillweb/WikiQA-v0", "stillweb/Lookup-v0"])
def test_check_env_passes(tiny_world, world_tasks, env_id):
    kwargs = {"tasks": world_tasks} if env_id.endswith("WikiQA-v0") else {}
    env = gym.make(env_id, snapshot=tiny_world, **kwargs)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()
    env.close()


@pytest.mark.parametrize("mode, vector_kwargs", [("sync", {}), ("async", {}), ("async", {"shared_memory": False})])
def test_vector_envs_return_uncorrupted_text(tiny_world, world_tasks, mode, vector_kwargs):
    single = WikiQAEnv(snapshot=tiny_world, tasks=world_tasks)
    expected = [single.reset(seed=seed)[0] for seed in (0, 1)]
    action = write_call("tongyi", "search", {"query": "Zoë ✓ \U0001F600 orchard"})
    expected_step = single.step(action)[0]
    assert "\ufffd" in expected_step  # the emoji is outside the charset
    envs = gym.make_vec(
        "stillweb/WikiQA-v0", num_envs=2, vectorization_mode=mode, vector_kwargs=vector_kwargs,
        snapshot=str(tiny_world), tasks=world_tasks,
    )
    try:
        observations, _ = envs.reset(seed=[0, 1])
        assert tuple(observations) == tuple(expected)
        observations, rewards, terminated, truncated, _ = envs.step([action, action])
        assert tuple(observations) == (expected_step, expected_step)
        assert list(rewards) == [0.0, 0.0] and not any(terminated) and not any(truncated)
    finally:
        envs.close()
        envs.close()


def test_search_r1_context_keeps_searches_it_cannot_open(tiny_world, world_tasks):
    env = WikiQAEnv(snapshot=tiny_world, tasks=world_tasks, tool_format="search_r1", context=True)
    env.reset(options={"task_id": "chain"})
    for query in ("Glass Orchard author", "Ada Quill", "Marrow Bay"):
        _, _, _, _, info = env.step(f"<search>{query}</search>")
    assert info["context_dropped"] == []
    assert "Glass Orchard" in env.unwrapped.messages[3]["content"]


def test_envs_share_one_snapshot_and_task_set(tiny_world, tmp_path):
    tasks_file = tmp_path / "tasks.jsonl"
    tasks_file.write_text('{"question": "Capital of Velland?", "answer": "Ostra"}\n', encoding="utf-8")
    first = WikiQAEnv(snapshot=tiny_world, tasks=tasks_file)
    second = WikiQAEnv(snapshot=str(tiny_world) + "/", tasks=str(tasks_file))
    assert first.snapshot is second.snapshot and first.tasks is second.tasks
    assert first.action_space is not second.action_space  # own RNG, shared charset tables


def test_step_info_carries_source_ids_of_shown_docs_and_citations(env):
    env.reset(seed=0, options={"task_id": "chain"})
    _obs, _reward, _term, _trunc, info = env.step(write_call("tongyi", "search", {"query": "Ostra"}))
    shown = info["shown_docs"]
    assert shown and all(item["source_id"] == env.snapshot.source_id_of(item["doc_id"]) for item in shown)
    _obs, _reward, _term, _trunc, info = env.step(write_answer("tongyi", "Ostra", [shown[0]["doc_id"]]))
    assert info["cited_source_ids"] == [shown[0]["source_id"]]
