"""Record/replay and two-process determinism of the environments."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import gymnasium as gym

import pytest

import stillweb.envs  # noqa: F401 - registers the environments
from stillweb.cli.replay import register
from stillweb.envs import RandomTextAgent, RecordEpisodes, ReferenceAgent, replay, run_episode

TESTS_DIR = Path(__file__).parent

# Records a reference episode of each task and two random-text episodes, with context
# management and citation rewards on, and prints the sha256 of the recording.
RECORD_SCRIPT = """
import hashlib, json, sys
sys.path.insert(0, {tests!r})
import gymnasium as gym
import stillweb.envs
from stillweb.envs import RandomTextAgent, RecordEpisodes, ReferenceAgent, run_episode
tasks = json.loads({tasks!r})
env = gym.make("stillweb/WikiQA-v0", snapshot={snapshot!r}, tasks=tasks, context={{"budget_tokens": 3000}},
               reward={{"citation_recall": 0.5, "rubric": 0.5}})
env = RecordEpisodes(env, {out!r})
for task in tasks:
    run_episode(env, lambda record: ReferenceAgent(record), options={{"task_id": task["task_id"]}})
for seed in (0, 1):
    run_episode(env, RandomTextAgent(seed), seed=seed)
env.close()
lookup = gym.make("stillweb/Lookup-v0", snapshot={snapshot!r})
observations = [lookup.reset(seed=seed)[0] + repr(lookup.step("Ostra")[1:4]) for seed in range(20)]
print(hashlib.sha256(open({out!r}, "rb").read() + "".join(observations).encode()).hexdigest())
"""


def record(snapshot: Path, tasks: list[dict], out: Path) -> str:
    script = RECORD_SCRIPT.format(tests=str(TESTS_DIR), tasks=json.dumps(tasks), snapshot=str(snapshot), out=str(out))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.mark.slow
def test_two_processes_record_identical_bytes(tiny_world, world_tasks, tmp_path):
    first = record(tiny_world, world_tasks, tmp_path / "one.jsonl")
    second = record(tiny_world, world_tasks, tmp_path / "two.jsonl")
    assert first == second and len(first) == 64
    assert replay(tmp_path / "one.jsonl").ok


def test_replay_names_the_first_differing_step(tiny_world, world_tasks, tmp_path):
    path = tmp_path / "episode.jsonl"
    env = RecordEpisodes(gym.make("stillweb/WikiQA-v0", snapshot=tiny_world, tasks=world_tasks), path)
    summary = run_episode(env, lambda task: ReferenceAgent(task), options={"task_id": "chain"})
    env.close()
    env.close()
    assert summary["outcome"] == 1.0
    result = replay(path)
    assert result.ok and result.checked == summary["turns"] + 1
    lines = path.read_text(encoding="utf-8").splitlines()
    step = json.loads(lines[4])
    step["observation"] = step["observation"].replace("Ada", "Ida", 1)
    lines[4] = json.dumps(step)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = replay(path)
    assert not result.ok and result.line == 5 and result.field == "observation"
    assert "line 5 differs in observation" in result.describe()


def test_an_episode_with_a_limits_override_replays_identically(tiny_world, world_tasks, tmp_path):
    path = tmp_path / "override.jsonl"
    env = RecordEpisodes(gym.make("stillweb/WikiQA-v0", snapshot=tiny_world, tasks=world_tasks), path)
    short = run_episode(env, lambda task: ReferenceAgent(task), options={"task_id": "chain", "limits": {"max_turns": 3}})
    full = run_episode(env, lambda task: ReferenceAgent(task), options={"task_id": "chain"})
    env.close()
    assert (short["truncation_reason"], short["turns"], full["outcome"]) == ("max_turns", 3, 1.0)
    resets = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if '"type":"reset"' in line]
    assert resets[0]["options"]["limits"] == {"max_turns": 3} and resets[0]["info"]["limits"]["source"] == "reset"
    assert "limits" not in resets[1]["options"]
    result = replay(path)
    assert result.ok and result.checked == short["turns"] + full["turns"] + 2, result.describe()
    tampered = tmp_path / "tampered.jsonl"  # the override is replayed, not ignored: another budget differs
    tampered.write_text(path.read_text(encoding="utf-8").replace('"max_turns":3}', '"max_turns":4}', 1), encoding="utf-8")
    assert tampered.read_text(encoding="utf-8") != path.read_text(encoding="utf-8") and not replay(tampered).ok


def test_replay_command_exit_status(tiny_world, world_tasks, tmp_path, capsys):
    import argparse

    path = tmp_path / "episode.jsonl"
    env = RecordEpisodes(gym.make("stillweb/WikiQA-v0", snapshot=tiny_world, tasks=world_tasks), path)
    run_episode(env, RandomTextAgent(3), seed=3)
    env.close()
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["replay", str(path), "--snapshot", str(tiny_world)])
    assert args.handler(args) == 0 and "identical" in capsys.readouterr().out
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"reward":0.0', '"reward":1.0', 1), encoding="utf-8")
    assert args.handler(args) == 1 and "differs in reward" in capsys.readouterr().out
    assert hashlib.sha256(text.encode()).hexdigest()  # the recording is plain UTF-8 JSONL
