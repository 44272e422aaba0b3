"""``stillweb/Apps-v0`` in a Ray environment pool: the same results as in-process environments."""

from __future__ import annotations

import gymnasium as gym
import pytest

import stillweb.envs  # noqa: F401 - registers the environments
from stillweb.envs import ReferenceAgent
from stillweb.envs.apps.agents import RandomCallAgent
from stillweb.corpora.canonical import canonical_json

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.extra("ray")


def test_pool_of_app_envs_gives_the_in_process_results(ray_runtime, apps_snapshot):
    from stillweb.envs.ray import EnvPool

    kwargs = {"snapshot": str(apps_snapshot), "tasks": "core", "error_rate": 0.2}
    scripts, expected = [], []
    for seed in range(4):
        env = gym.make("stillweb/Apps-v0", **kwargs)
        observation, info = env.reset(seed=seed)
        episode = [canonical_json((observation, info))]
        task = env.unwrapped.tasks.by_id(info["task_id"])
        agent = ReferenceAgent(task) if seed % 2 == 0 else RandomCallAgent(seed)
        actions, done = [], False
        while not done:
            actions.append(agent.act(observation))
            result = env.step(actions[-1])
            observation, done = result[0], result[2] or result[3]
            episode.append(canonical_json(result))
        scripts.append(actions)
        expected.append(episode)
    pool = EnvPool("stillweb/Apps-v0", 4, envs_per_actor=2, env_kwargs=kwargs)
    try:
        got = [[canonical_json(result)] for result in pool.run([("reset", seed, None) for seed in range(4)])]
        for turn in range(max(map(len, scripts))):
            batch = [("step", actions[turn]) if turn < len(actions) else None for actions in scripts]
            for index, result in enumerate(pool.run(batch)):
                if result is not None:
                    got[index].append(canonical_json(result))
        assert got == expected
    finally:
        pool.close()
