"""Helpers shared by the Ray tests: tasks, recorded agent scripts, in-process recordings."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym

import stillweb.envs  # noqa: F401 - registers the environments
from stillweb.envs import RandomTextAgent, RecordEpisodes, ReferenceAgent
from test_remote import fact_tasks

ENV_ID = "stillweb/WikiQA-v0"


def env_kwargs_for(snapshot: Path, tasks: int = 6) -> dict:
    """Kwargs of a short-episode WikiQA env over ``snapshot`` with one-hop fact tasks."""
    return {"snapshot": str(snapshot), "tasks": fact_tasks(snapshot, tasks), "max_turns": 6}


def agent_scripts(env_kwargs: dict, count: int) -> list[tuple[str, int, list[str]]]:
    """(task id, seed, actions) for the first ``count`` tasks: a reference agent on even, random text on odd."""
    scripts = []
    for index, task in enumerate(env_kwargs["tasks"][:count]):
        env = gym.make(ENV_ID, **env_kwargs)
        observation, _info = env.reset(seed=index, options={"task_id": task["task_id"]})
        agent = ReferenceAgent(env.unwrapped.tasks.by_id(task["task_id"])) if index % 2 == 0 else RandomTextAgent(index)
        actions, done = [], False
        while not done:
            actions.append(agent.act(observation))
            observation, _reward, terminated, truncated, _info = env.step(actions[-1])
            done = terminated or truncated
        scripts.append((task["task_id"], index, actions))
    return scripts


def recorded_lines(env: gym.Env, path: Path, seed: int, task_id: str, actions: list[str]) -> list[str]:
    """The recording (JSONL lines) of one scripted episode of ``env``."""
    recorder = RecordEpisodes(env, path)
    recorder.reset(seed=seed, options={"task_id": task_id})
    for action in actions:
        recorder.step(action)
    recorder.close()
    return path.read_text(encoding="utf-8").splitlines()
