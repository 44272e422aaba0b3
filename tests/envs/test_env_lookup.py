"""Lookup-v0: the single-turn sanity task, from a snapshot's facts or from a list."""

from __future__ import annotations

import gymnasium as gym
import pytest

import stillweb.envs  # noqa: F401 - registers the environments
from stillweb.envs.lookup import LookupEnv, lookup_tasks_from_facts
from stillweb.corpora.snapshot.reading import Snapshot


def test_tasks_from_facts_quote_the_sentence_stating_the_value(tiny_world):
    tasks = lookup_tasks_from_facts(Snapshot.open(tiny_world))
    assert tasks and all(task["answer"] in task["passage"] for task in tasks)
    capital = [task for task in tasks if task["question"] == "What is the capital of Velland?"]
    assert capital and capital[0]["answer"] == "Ostra"


def test_exact_match_reward_after_normalization(tiny_world):
    env = gym.make("stillweb/Lookup-v0", snapshot=tiny_world)
    for seed in range(5):
        observation, info = env.reset(seed=seed)
        task = env.unwrapped.tasks.by_id(info["task_id"])
        assert task.question in observation and task.extra["passage"] in observation
        _, reward, terminated, truncated, info = env.step(f"<answer>{task.answer.upper()}</answer>")
        assert (reward, terminated, truncated, info["outcome"]) == (1.0, True, False, 1.0)
        env.reset(seed=seed)
        assert env.step("certainly not the answer")[1] == 0.0


def test_list_tasks_bad_input_and_developer_errors():
    env = LookupEnv(tasks=[{"task_id": "t", "question": "When?", "answer": "1 March 1900", "passage": "It began on 1 March 1900."}])
    env.reset(seed=0)
    assert env.step("March 1, 1900")[1] == 1.0
    for action in ["", "\ud800", "x" * 2_000_000, "<answer>" * 1000]:
        env.reset(seed=0)
        assert env.step(action)[1] == 0.0
    with pytest.raises(RuntimeError, match="reset"):
        env.step("again")
    with pytest.raises(ValueError, match="nope"):
        env.reset(options={"task_id": "nope"})
    with pytest.raises(ValueError, match="passage"):
        LookupEnv(tasks=[{"question": "q", "answer": "a"}])
    with pytest.raises(ValueError, match="tasks"):
        LookupEnv()


def test_task_sets_are_taken_like_every_environment_takes_them(tasks_snapshot, tmp_path):
    """A task-set name (the passage from an evidence document), a file, records; else a UsageError saying what it takes."""
    import json

    from stillweb.corpora.errors import UsageError
    from stillweb.envs.core.episode import TextEnv

    env = gym.make("stillweb/Lookup-v0", snapshot=tasks_snapshot, tasks="hard", split="train")
    assert isinstance(env.unwrapped, TextEnv) and len(env.unwrapped.tasks) > 0
    for task in list(env.unwrapped.tasks)[:3]:
        observation, info = env.reset(options={"task_id": task.task_id})
        assert any(form in task.extra["passage"] for form in (task.answer, *task.aliases))  # as the page writes it
        assert task.extra["passage"] in observation
        assert info["snapshot_fingerprint"] == env.unwrapped.snapshot.fingerprint
        _, reward, terminated, _, info = env.step(f"<answer>{task.answer}</answer>")
        assert (reward, terminated, info["reward_parts"]["outcome"]) == (1.0, True, 1.0)
    path = tmp_path / "lookup.jsonl"
    path.write_text(json.dumps({"task_id": "f1", "question": "Who?", "answer": "Ann", "passage": "Ann did."}) + "\n")
    from_file = LookupEnv(tasks=str(path))
    from_file.reset(options={"task_id": "f1"})
    assert from_file.step("ann")[1] == 1.0
    with pytest.raises(UsageError, match="Lookup-v0 takes tasks with a passage.*needs snapshot="):
        gym.make("stillweb/Lookup-v0", tasks="t")
    with pytest.raises(UsageError, match="Lookup-v0 takes tasks with a passage"):
        LookupEnv(tasks={"question": "q", "answer": "a"})
