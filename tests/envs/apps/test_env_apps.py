"""``stillweb/Apps-v0``: the Gymnasium contract, soundness of the tasks (reference 100%,
baselines 0%), flags, state diff, state files and two-process determinism."""

from __future__ import annotations

import json
import subprocess
import sys

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import stillweb.envs  # noqa: F401 - registers the environments
from stillweb.envs import ReferenceAgent, run_episode
from stillweb.envs.agents.scripted import write_answer, write_call
from stillweb.envs.apps.env import AppsEnv
from stillweb.envs.apps.agents import RandomCallAgent, ReadOnlyAgent
from stillweb.sandboxes.apps import WRITE_ENDPOINTS
from support.apps import AnswerAtOnce, all_app_tasks


def needs_write(task) -> bool:
    return any(call["name"] in WRITE_ENDPOINTS for turn in task.extra["program"] for call in turn)


def test_gym_make_and_check_env(apps_snapshot):
    env = gym.make("stillweb/Apps-v0", snapshot=apps_snapshot, tasks="core")
    check_env(env.unwrapped, skip_render_check=True)
    observation, info = env.reset(seed=0)
    assert "list_contacts" in observation and info["state_fingerprint"] and info["world_time"].startswith("2025-03-03")


@pytest.mark.parametrize("tool_format", ["tongyi", "openai"])
def test_the_reference_agent_passes_every_task(apps_snapshot, tool_format):
    for split in ("train", "dev", "test"):
        env = AppsEnv(apps_snapshot, "core", split=split, tool_format=tool_format)
        for task in env.tasks:
            summary = run_episode(env, lambda task: ReferenceAgent(task, tool_format=tool_format), options={"task_id": task.task_id})
            assert summary["outcome"] == 1.0 and summary["terminated"], (task.extra["template"], summary)


def test_the_reference_agent_recovers_from_seeded_errors(apps_snapshot):
    env = AppsEnv(apps_snapshot, "core", error_rate=0.25)
    for task in env.tasks:
        summary = run_episode(env, ReferenceAgent(task), seed=7, options={"task_id": task.task_id})
        assert summary["outcome"] == 1.0, task.extra["template"]
    env = AppsEnv(apps_snapshot, "core", error_rate=0.5)
    observation, info = env.reset(seed=7, options={"task_id": env.tasks[0].task_id})
    flags = [env.step(write_call("tongyi", "get_time", {}))[4]["tool_flags"][0] for _ in range(12)]
    assert any(flag in ("rate_limited", "unavailable", "timeout") for flag in flags)
    env.reset(seed=7, options={"task_id": env.tasks[0].task_id})
    assert flags == [env.step(write_call("tongyi", "get_time", {}))[4]["tool_flags"][0] for _ in range(12)]


def test_baselines_fail_the_tasks_that_need_a_write_and_random_fails_nearly_all(apps_snapshot):
    tasks = all_app_tasks(apps_snapshot)
    envs = {split: AppsEnv(apps_snapshot, "core", split=split) for split in ("train", "dev", "test")}
    passed = {"at_once": 0, "read_only": 0, "random": 0}
    for index, task in enumerate(tasks):
        env = envs[task.split]
        for name, agent in (("at_once", AnswerAtOnce()), ("read_only", ReadOnlyAgent()), ("random", RandomCallAgent(index))):
            outcome = run_episode(env, agent, options={"task_id": task.task_id})["outcome"]
            if name == "random" or needs_write(task):
                passed[name] += outcome
    assert passed["at_once"] == passed["read_only"] == 0
    assert passed["random"] / len(tasks) < 0.01


def test_flags_state_diff_and_fingerprint(apps_snapshot):
    env = AppsEnv(apps_snapshot, "core")
    task = next(task for task in env.tasks if task.extra["template"] == "pay_then_balance")
    _, info = env.reset(options={"task_id": task.task_id})
    start = info["state_fingerprint"]
    info = env.step(write_call("tongyi", "no_such_endpoint", {}))[4]
    info = env.step(write_call("tongyi", "get_contact", {"id": "seven"}))[4]
    info = env.step(write_call("tongyi", "get_order", {"id": 999_999}))[4]
    assert {key: info["hallucination_counts"][key] for key in ("unknown_tool", "bad_arguments", "fabricated_id")} == \
        {"unknown_tool": 1, "bad_arguments": 1, "fabricated_id": 1}
    assert info["state_fingerprint"] == start and info["state_diff"] == []
    info = env.step(write_call("tongyi", "create_contact_group", {"name": "Extra"}))[4]
    assert info["state_fingerprint"] != start
    assert info["state_diff"][0]["table"] == "contact_groups" and info["state_diff"][0]["before"] is None
    observation, reward, terminated, truncated, info = env.step(write_answer("tongyi", "Done.", []))
    assert not terminated and observation == task.extra["turns"][1]  # the scripted follow-up
    info = env.step(write_call("tongyi", "create_contact_group", {"name": "Later"}))[4]
    assert info["hallucination_counts"]["write_after_answer"] == 1  # the follow-up asked for no change
    observation, reward, terminated, truncated, info = env.step(write_answer("tongyi", "Nothing.", []))
    assert terminated and reward == 0.0 and info["reward_parts"]["no_collateral"] == 0.0


def test_limits_truncate_and_mask(apps_snapshot):
    env = AppsEnv(apps_snapshot, "core", max_turns=2)
    env.reset(seed=0)
    env.step(write_call("tongyi", "get_time", {}))
    _, reward, terminated, truncated, info = env.step(write_call("tongyi", "get_time", {}))
    assert truncated and not terminated and info["mask_from_loss"] and info["truncation_reason"] == "max_turns"
    with pytest.raises(RuntimeError):
        env.step("x")


def test_bad_configuration_and_state_files_name_the_problem(apps_snapshot, tmp_path):
    with pytest.raises(ValueError, match="search_r1"):
        AppsEnv(apps_snapshot, "core", tool_format="search_r1")
    with pytest.raises(FileNotFoundError, match="apps generate"):
        AppsEnv(apps_snapshot, "missing")
    with pytest.raises(ValueError, match="not app tasks"):
        AppsEnv(apps_snapshot, [{"question": "q", "answer": "a"}])
    env = AppsEnv(apps_snapshot, "core")
    env.reset(seed=1)
    env.step(write_call("tongyi", "create_contact_group", {"name": "Kept"}))
    saved = env.save_state(tmp_path / "state.db")
    fingerprint = env.session.fingerprint()
    assert env.reset(seed=1, options={"state_file": str(saved)})[1]["state_fingerprint"] == fingerprint
    (tmp_path / "corrupt.db").write_bytes(b"not a database")
    with pytest.raises(ValueError, match="corrupt.db"):
        env.reset(options={"state_file": str(tmp_path / "corrupt.db")})
    foreign = tmp_path / "foreign.db"
    other = AppsEnv(apps_snapshot, make_tasks_of_another_world(apps_snapshot))
    other.reset(seed=0)
    other.save_state(foreign)
    with pytest.raises(ValueError, match="foreign.db.*another world"):
        env.reset(options={"state_file": str(foreign)})


def make_tasks_of_another_world(snapshot) -> list[dict]:
    from stillweb.corpora.apps.tasks import make_app_tasks

    return make_app_tasks(snapshot, 8, seed=1, users=9)


_EPISODES = """
import hashlib, json, sys
from stillweb.envs import ReferenceAgent, run_episode
from stillweb.envs.apps.env import AppsEnv
from stillweb.envs.apps.agents import RandomCallAgent
env = AppsEnv(sys.argv[1], "core", error_rate=0.2)
out = []
for index, task in enumerate(env.tasks):
    for agent in (ReferenceAgent(task), RandomCallAgent(index)):
        summary = run_episode(env, agent, seed=index, options={"task_id": task.task_id})
        out.append([summary["reward"], hashlib.sha256(env.session.state_bytes()).hexdigest()])
print(json.dumps(out))
"""


@pytest.mark.slow
def test_two_processes_give_identical_state_bytes_and_rewards(apps_snapshot):
    runs = [subprocess.run([sys.executable, "-c", _EPISODES, str(apps_snapshot)], capture_output=True, text=True, check=True).stdout
            for _ in range(2)]
    assert runs[0] == runs[1] and len(json.loads(runs[0])) > 20


def test_recorded_episodes_replay_identically(apps_snapshot, tmp_path):
    from stillweb.envs import RecordEpisodes, replay

    path = tmp_path / "apps.jsonl"
    env = RecordEpisodes(gym.make("stillweb/Apps-v0", snapshot=str(apps_snapshot), tasks="core", error_rate=0.2), path)
    for number, task in enumerate(env.unwrapped.tasks[:4]):
        run_episode(env, ReferenceAgent(task), seed=number, options={"task_id": task.task_id})
        run_episode(env, RandomCallAgent(number), seed=number, options={"task_id": task.task_id})
    env.close()
    result = replay(path)
    assert result.ok and result.checked > 20, result.describe()
    lines = path.read_text().splitlines()
    lines[2] = lines[2].replace('"observation":"', '"observation":"changed ', 1)
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("\n".join(lines) + "\n")
    assert "changed" in lines[2] and replay(tampered).field == "observation"


def test_tool_call_adapters_base_runs_app_tasks(apps_snapshot):
    from stillweb.envs.integrations.episode import ToolEpisode

    episode = ToolEpisode(apps_snapshot, "core", env_id="stillweb/Apps-v0")
    assert {"list_contacts", "answer"} <= {schema["function"]["name"] for schema in episode.schemas()}
    task = next(task for task in episode.env.tasks if task.extra["category"] == "multi_turn")
    assert task.extra["turns"][0] in episode.reset(task_id=task.task_id)
    for turn, (calls, facts) in enumerate(zip(task.extra["program"], task.extra["facts"])):
        for call in calls:
            assert not episode.call(call["name"], call["arguments"]).done
        step = episode.call("answer", {"text": "; ".join(facts) or "Done."})
    assert step.done and step.reward == 1.0
    with pytest.raises(ValueError, match="LookupEnv takes no tool_format"):  # a TextEnv without tools to call
        ToolEpisode(apps_snapshot, "core", env_id="stillweb/Lookup-v0")
    with pytest.raises(ValueError, match="registered TextEnv.*stillweb/Apps-v0"):
        ToolEpisode(apps_snapshot, "core", env_id="stillweb/Remote-v0")


def test_a_spent_call_budget_is_flagged_budget_exhausted(apps_snapshot):
    env = AppsEnv(apps_snapshot, "core", max_tool_calls=1)
    env.reset(options={"task_id": next(task.task_id for task in env.tasks if not task.extra["errors"])})  # no scripted 429
    call = write_call("tongyi", "list_contacts", {})
    observation, _, _, truncated, info = env.step(call + call)
    assert info["tool_flags"] == [None, "budget_exhausted"] and "budget of 1 calls is spent" in observation
    assert (info["tool_calls"], info["refused_calls"], info["hallucination_counts"]["bad_arguments"]) == (1, 1, 0)
    assert truncated and info["truncation_reason"] == "max_tool_calls"


def test_a_reset_limits_override_lasts_one_episode(apps_snapshot):
    env = AppsEnv(apps_snapshot, "core", max_turns=12, max_tool_calls=24)
    task = next(task for task in env.tasks if sum(len(turn) for turn in task.extra["program"]) >= 2)
    short = run_episode(env, ReferenceAgent(task), seed=0, options={"task_id": task.task_id, "limits": {"max_turns": 1}})
    assert short["truncated"] and short["truncation_reason"] == "max_turns" and short["turns"] == 1
    full = run_episode(env, ReferenceAgent(task), seed=0, options={"task_id": task.task_id})
    assert full["outcome"] == 1.0 and env.limits is env.env_limits and env.limits.max_turns == 12
