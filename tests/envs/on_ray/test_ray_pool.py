"""The Ray environment pool and its vector env: the same results as in-process environments
(episode by episode and as ``SyncVectorEnv``), an async form returning object refs,
and an actor killed mid-episode restarted and replayed without the caller noticing."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import stillweb.envs  # noqa: F401 - registers the environments
from stillweb.envs import RandomTextAgent, ReferenceAgent
from support.ray_env import ENV_ID, env_kwargs_for
from stillweb.corpora.canonical import canonical_json

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.extra("ray")

NUM_ENVS = 4


@pytest.fixture(scope="module")
def env_kwargs(small_snapshot):
    return env_kwargs_for(small_snapshot)


@pytest.fixture(scope="module")
def scripts(env_kwargs):
    """Per env: seed and the actions of a reference or random agent, recorded in-process."""
    scripts = []
    for index in range(NUM_ENVS):
        env = gym.make(ENV_ID, **env_kwargs)
        observation, info = env.reset(seed=index)
        task = env.unwrapped.tasks.by_id(info["task_id"])
        agent = ReferenceAgent(task) if index % 2 == 0 else RandomTextAgent(index)
        actions, done = [], False
        while not done:
            actions.append(agent.act(observation))
            observation, _reward, terminated, truncated, _info = env.step(actions[-1])
            done = terminated or truncated
        scripts.append((index, actions))
    return scripts


def in_process_results(env_kwargs, scripts) -> list[list[str]]:
    results = []
    for seed, actions in scripts:
        env = gym.make(ENV_ID, **env_kwargs)
        episode = [canonical_json(env.reset(seed=seed))]
        episode += [canonical_json(env.step(action)) for action in actions]
        results.append(episode)
    return results


def pool_results(pool, scripts) -> list[list[str]]:
    from stillweb.envs.ray import EnvPool

    assert isinstance(pool, EnvPool)
    results = [[canonical_json(result)] for result in pool.run([("reset", seed, None) for seed, _ in scripts])]
    for turn in range(max(len(actions) for _, actions in scripts)):
        batch = [("step", actions[turn]) if turn < len(actions) else None for _, actions in scripts]
        for index, result in enumerate(pool.run(batch)):
            if result is not None:
                results[index].append(canonical_json(result))
    return results


@pytest.mark.slow
def test_pool_gives_the_in_process_results(ray_runtime, env_kwargs, scripts):
    from stillweb.envs.ray import EnvPool

    pool = EnvPool(ENV_ID, NUM_ENVS, envs_per_actor=2, env_kwargs=env_kwargs)
    try:
        assert pool.actor_count == 2
        assert pool_results(pool, scripts) == in_process_results(env_kwargs, scripts)
        memory = pool.memory()
        assert [entry["envs"] for entry in memory] == [2, 2] and len({entry["pid"] for entry in memory}) == 2
    finally:
        pool.close()


@pytest.mark.slow
def test_async_form_returns_object_refs(ray_runtime, env_kwargs, scripts):
    from stillweb.envs.ray import EnvPool

    pool = EnvPool(ENV_ID, NUM_ENVS, envs_per_actor=3, env_kwargs=env_kwargs, info_exclude=("messages",))
    try:
        pending = pool.run_async([("reset", seed, None) for seed, _ in scripts])
        assert [item.envs for item in pending] == [[0, 1, 2], [3]]
        assert all(isinstance(item.ref, ray.ObjectRef) for item in pending)
        results = pool.wait(pending)
        assert all("messages" not in info and info["turn"] == 0 for _obs, info in results)
    finally:
        pool.close()


@pytest.mark.slow
def test_killed_actor_is_restarted_and_replayed(ray_runtime, env_kwargs, scripts):
    from stillweb.envs.ray import EnvPool

    expected = in_process_results(env_kwargs, scripts)
    pool = EnvPool(ENV_ID, NUM_ENVS, envs_per_actor=2, env_kwargs=env_kwargs)
    try:
        got = [[canonical_json(result)] for result in pool.run([("reset", seed, None) for seed, _ in scripts])]
        longest = max(len(actions) for _, actions in scripts)
        for turn in range(longest):
            if turn == 1:  # mid-episode: every env has stepped at least once
                ray.kill(pool.actors[0])
            batch = [("step", actions[turn]) if turn < len(actions) else None for _, actions in scripts]
            for index, result in enumerate(pool.run(batch)):
                if result is not None:
                    got[index].append(canonical_json(result))
        assert pool.restarts == 1
        assert got == expected
    finally:
        pool.close()


def test_bad_operations_name_the_env(ray_runtime, env_kwargs):
    from stillweb.envs.ray import EnvPool

    pool = EnvPool(ENV_ID, 2, envs_per_actor=2, env_kwargs=env_kwargs)
    try:
        with pytest.raises(ValueError, match="env 1"):
            pool.run([("reset", 0, None), ("jump", 3)])
        with pytest.raises(ValueError, match="one operation"):
            pool.run([("reset", 0, None)])
    finally:
        pool.close()


@pytest.mark.slow
def test_vector_env_matches_sync_vector_env(ray_runtime, env_kwargs, scripts):
    from stillweb.envs.ray import RayVectorEnv

    local = gym.make_vec(ENV_ID, num_envs=NUM_ENVS, vectorization_mode="sync", **env_kwargs)
    remote = RayVectorEnv(ENV_ID, NUM_ENVS, envs_per_actor=2, **env_kwargs)
    assert isinstance(remote, gym.vector.VectorEnv)
    assert remote.single_action_space == local.single_action_space
    try:
        assert _plain(remote.reset(seed=7)) == _plain(local.reset(seed=7))
        longest = max(len(actions) for _, actions in scripts)
        for turn in range(longest + 2):  # past the shortest episodes: autoreset happens
            actions = [script[turn % len(script)] for _, script in scripts]
            assert _plain(remote.step(actions)) == _plain(local.step(actions))
    finally:
        remote.close()
        local.close()


def _plain(value):
    """Vector results as canonical JSON (numpy arrays as lists)."""
    def convert(item):
        if isinstance(item, np.ndarray):
            return item.tolist()
        if isinstance(item, dict):
            return {key: convert(entry) for key, entry in item.items()}
        if isinstance(item, (tuple, list)):
            return [convert(entry) for entry in item]
        return item

    return canonical_json(convert(value))


# Modules that belong to an optional extra (they import its library) and the libraries of the extras.
EXTRA_MODULES = ("stillweb.envs.ray", "stillweb.envs.integrations.", "stillweb.server.mcp", "stillweb.corpora.search.shard_actors")
EXTRA_LIBRARIES = ("ray", "torch", "transformers", "trl", "verl", "openenv", "skyrl_gym", "verifiers", "mcp")


def test_mixture_on_the_vector_env_matches_in_process(ray_runtime, small_snapshot, env_kwargs):
    from stillweb.envs.ray import RayVectorEnv

    kwargs = {"envs": {ENV_ID: 2, "stillweb/Lookup-v0": 1}, "snapshot": str(small_snapshot), "max_turns": 6,
              "member_kwargs": {ENV_ID: {"tasks": env_kwargs["tasks"]}, "stillweb/Lookup-v0": {"max_tasks": 20}}}
    envs = RayVectorEnv("stillweb/Mixture-v0", NUM_ENVS, envs_per_actor=2, **kwargs)
    try:
        _observations, infos = envs.reset(seed=list(range(NUM_ENVS)))
        local = [gym.make("stillweb/Mixture-v0", **kwargs).reset(seed=seed)[1] for seed in range(NUM_ENVS)]
        assert list(infos["env_id"]) == [info["env_id"] for info in local]
        assert list(infos["task_id"]) == [info["task_id"] for info in local]
    finally:
        envs.close()


def test_the_core_never_imports_ray_or_the_trainer_libraries():
    """Importing every core layer (and building the CLI parser) leaves ``ray`` and the trainer libraries unimported."""
    code = (
        "import importlib, pkgutil, sys\n"
        "def walk(name, path):\n"
        "    for module in pkgutil.iter_modules(path, name + '.'):\n"
        f"        if module.name.startswith({EXTRA_MODULES!r}):\n"
        "            continue\n"
        "        imported = importlib.import_module(module.name)\n"
        "        if module.ispkg:\n"
        "            walk(module.name, imported.__path__)\n"
        "for layer in ('corpora', 'sandboxes', 'envs', 'server', 'cli'):\n"
        "    package = importlib.import_module('stillweb.' + layer)\n"
        "    walk(package.__name__, package.__path__)\n"
        "import stillweb.envs.integrations, stillweb.envs.integrations.episode, stillweb.envs.integrations.sft\n"
        "from stillweb.cli.main import make_parser\n"
        "make_parser()\n"
        f"print(len(sys.modules), sorted(set(m.split('.')[0] for m in sys.modules) & set({EXTRA_LIBRARIES!r})))\n"
    )
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    modules, imported = output.split(" ", 1)
    assert int(modules) > 100 and imported.strip() == "[]"
