"""The live curriculum (envs/curriculum.py): draws move toward the tasks a scripted policy passes about
half the time, in a Mixture-v0; no task starves; a restored state gives the same next draws; the draws
are the same in two processes; the Ray specs and dataset indices carry the draws."""

from __future__ import annotations

import json
import subprocess
import sys

import gymnasium as gym
import pytest

import stillweb.envs  # noqa: F401 - the ids
from stillweb.corpora.errors import UsageError
from stillweb.corpora.keyed import KeyedRng
from stillweb.envs.curriculum import CurriculumSampler

TASKS = [{"task_id": f"t{n}", "question": f"What is word {n}?", "answer": f"answer{n}",
          "passage": f"Word {n} is answer{n}."} for n in range(10)]
SKILL = {f"t{n}": n / 9 for n in range(10)}  # the scripted policy passes task tN with probability N/9


def scripted(task_id: str, attempt: int) -> str:
    """The right answer with the task's probability (keyed, so every run is the same), else a wrong one."""
    right = KeyedRng(7, task_id, attempt).random() < SKILL[task_id]
    return f"<answer>answer{task_id[1:]}</answer>" if right else "<answer>no idea</answer>"


def play(sampler, env, episodes):
    """Play ``episodes`` drawn by ``sampler`` in ``env``; the keys drawn, in order."""
    drawn, attempts = [], {}
    for _ in range(episodes):
        key = sampler.draw()
        options = sampler.reset_options(key)
        env.reset(seed=0, options=options)
        attempts[key] = attempts.get(key, 0) + 1
        _, reward, terminated, _, info = env.step(scripted(options["task_id"], attempts[key]))
        assert terminated and sampler.update_from_info(info, reward) == key
        drawn.append(key)
    return drawn


def test_draws_move_toward_the_tasks_near_the_target_in_a_mixture():
    env = gym.make("stillweb/Mixture-v0", envs={"stillweb/Lookup-v0": 1}, member_kwargs={"stillweb/Lookup-v0": {"tasks": TASKS}})
    sampler = CurriculumSampler.for_env(env, seed=3, target=0.5, temperature=0.1, floor=0.1)
    assert sampler.keys[0] == "stillweb/Lookup-v0::t0" and len(sampler.keys) == 10
    drawn = play(sampler, env, 1200)
    late = drawn[600:]
    middle = {f"stillweb/Lookup-v0::t{n}" for n in (3, 4, 5, 6)}  # pass rates 0.33 .. 0.67
    share = sum(key in middle for key in late) / len(late)
    flat = CurriculumSampler.for_env(env, seed=3, temperature=1e6)  # no preference: the uniform baseline
    flat_late = play(flat, env, 1200)[600:]
    assert share > 0.65 and sum(key in middle for key in flat_late) / len(flat_late) < 0.5  # uniform: 0.4
    for edge in ("t0", "t9"):  # always failed, always passed: drawn rarely, never starved
        count = late.count(f"stillweb/Lookup-v0::{edge}")
        assert 0 < count < 0.06 * len(late)
    weights = sampler.weights()
    assert min(weights.values()) >= 0.1 / 10 and abs(sum(weights.values()) - 1.0) < 1e-9
    assert abs(sampler.pass_rate("stillweb/Lookup-v0::t9") - 1.0) < 0.1


def test_a_restored_state_gives_the_same_next_draws():
    sampler = CurriculumSampler([f"t{n}" for n in range(10)], seed=11, temperature=0.2)
    env = gym.make("stillweb/Lookup-v0", tasks=TASKS)
    play(sampler, env, 100)
    state = json.loads(json.dumps(sampler.state_dict()))
    restored = CurriculumSampler.from_state_dict(state)
    again = CurriculumSampler([f"t{n}" for n in range(10)])
    again.load_state_dict(state)
    assert play(restored, env, 50) == play(sampler, env, 50)
    assert again.draws(30) == CurriculumSampler.from_state_dict(state).draws(30)
    with pytest.raises(UsageError, match="other tasks"):
        CurriculumSampler(["x"]).load_state_dict(state)


def test_bad_settings_and_keys_are_usage_errors():
    for bad in ({"target": 1.5}, {"temperature": 0}, {"floor": -0.1}, {"decay": 0.0}, {"temperature": float("inf")}):
        with pytest.raises(UsageError):
            CurriculumSampler(["a"], **bad)
    with pytest.raises(UsageError):
        CurriculumSampler(["a", "a"])
    sampler = CurriculumSampler(["a", "b"])
    with pytest.raises(UsageError, match="not in the curriculum"):
        sampler.update("c", 1)
    with pytest.raises(UsageError, match="success"):
        sampler.update("a", 2)


def test_dataset_indices_follow_the_draws():
    sampler = CurriculumSampler(["t2", "t0", "t1"], seed=5)
    twin = CurriculumSampler.from_state_dict(sampler.state_dict())
    rows = ["t0", "t1", "t2"]  # a dataset's task_id column
    assert [rows[index] for index in sampler.indices(rows, 12)] == twin.draws(12)
    with pytest.raises(UsageError, match="no row"):
        next(CurriculumSampler(["t9"]).indices(rows))


@pytest.mark.extra("ray")
def test_ray_episode_specs_carry_the_draws():
    sampler = CurriculumSampler(["stillweb/Lookup-v0::a", "stillweb/WikiQA-v0::b"], seed=1)
    twin = CurriculumSampler.from_state_dict(sampler.state_dict())
    specs = sampler.episode_specs(4, prefix="step7")
    assert [spec.episode_id for spec in specs] == ["step7-0", "step7-1", "step7-2", "step7-3"]
    assert [spec.options for spec in specs] == [twin.reset_options(key) for key in twin.draws(4)]
    assert sampler.drawn == 4


DRAWS = """
import json, sys
from stillweb.envs.curriculum import CurriculumSampler
sampler = CurriculumSampler([f"t{n}" for n in range(30)], seed=9, temperature=0.05)
for n in range(300):
    key = sampler.draw()
    sampler.update(key, (n * 7 + int(key[1:])) % 3 == 0)
sys.stdout.write(json.dumps([sampler.draws(50), sampler.state_dict()]))
"""


def test_the_draws_are_the_same_in_two_processes():
    outputs = [subprocess.run([sys.executable, "-c", DRAWS], capture_output=True, check=True,
                              env={"PYTHONHASHSEED": seed, "TZ": tz, "PATH": "/usr/bin:/bin"}).stdout
               for seed, tz in (("1", "UTC"), ("2", "America/Lima"))]
    assert outputs[0] == outputs[1] and len(set(json.loads(outputs[0])[0])) > 3


def test_a_trl_dataset_is_drawn_by_the_curriculum(tasks_snapshot):
    from stillweb.envs.integrations.trl import task_dataset

    dataset = task_dataset(tasks_snapshot, "hard")
    sampler = CurriculumSampler(dataset["task_id"], seed=2, temperature=0.05, floor=0.0)
    hard, easy = dataset["task_id"][0], dataset["task_id"][1]
    for _ in range(10):
        sampler.update(hard, 0.0)
        sampler.update(easy, 1.0)
    rows = [dataset[index]["task_id"] for index in sampler.indices(dataset["task_id"], 200)]
    assert hard not in rows and easy not in rows and len(set(rows)) > 3  # the solved and the hopeless wait
