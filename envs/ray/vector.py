"""A ``gymnasium.vector.VectorEnv`` whose environments live on an :class:`~stillweb.envs.ray.pool.EnvPool`.

It behaves like ``gym.make_vec(env_id, num_envs, vectorization_mode="sync")``
(next-step autoreset, infos merged per key with ``_key`` masks, observations a
tuple of strings), so code written for ``make_vec`` runs unchanged on a
cluster; only where the environments run differs. ``step_async`` /
``step_wait`` overlap the actors' work with the caller's.

>>> envs = RayVectorEnv("stillweb/WikiQA-v0", 64, envs_per_actor=16, snapshot="snap/")  # doctest: +SKIP
>>> observations, infos = envs.reset(seed=0)                                            # doctest: +SKIP
>>> observations, rewards, terminations, truncations, infos = envs.step(actions)        # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from stillweb.corpora.errors import UsageError
from stillweb.envs.ray.pool import EnvPool, Pending
from stillweb.envs.core.limits import EpisodeLimits
import stillweb.envs.registration  # noqa: F401 - the environments' ids, for gym.make

__all__ = ["RayVectorEnv"]


class RayVectorEnv(VectorEnv):
    """``num_envs`` copies of ``env_id`` on Ray actors, ``envs_per_actor`` per actor.

    Extra keyword arguments go to ``gym.make`` in each actor; ``actor_options``
    and ``info_exclude`` to :class:`EnvPool`. Requires ``ray.init()`` first.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        env_id: str,
        num_envs: int,
        *,
        envs_per_actor: int = 16,
        actor_options: Mapping[str, Any] | None = None,
        info_exclude: Sequence[str] = (),
        **env_kwargs: Any,
    ) -> None:
        self.pool = EnvPool(env_id, num_envs, envs_per_actor=envs_per_actor, env_kwargs=env_kwargs,
                            actor_options=actor_options, info_exclude=info_exclude)
        self.num_envs = num_envs
        self.spec = gym.spec(env_id)
        self.single_observation_space, self.single_action_space = _spaces(env_id)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._autoreset = np.zeros(num_envs, dtype=np.bool_)
        self._pending: list[Pending] | None = None

    def reset(self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None):
        """Reset every environment: ``seed`` an int (``seed + i``), a list, or ``None``."""
        seeds = _seeds(seed, self.num_envs)
        results = self.pool.run([("reset", env_seed, options) for env_seed in seeds])
        self._autoreset[:] = False
        infos: dict[str, Any] = {}
        for index, (_observation, info) in enumerate(results):
            infos = self._add_info(infos, info, index)
        return tuple(observation for observation, _info in results), infos

    def step_async(self, actions: Sequence[str]) -> None:
        """Send one action per environment (an ended episode resets instead, as in ``SyncVectorEnv``)."""
        if self._pending is not None:
            raise RuntimeError("step_async called twice: call step_wait first")
        actions = list(actions)
        if len(actions) != self.num_envs:
            raise UsageError(f"expected {self.num_envs} actions, got {len(actions)}")
        operations = [("reset", None, None) if self._autoreset[i] else ("step", action) for i, action in enumerate(actions)]
        self._pending = self.pool.run_async(operations)

    def step_wait(self):
        """The results of :meth:`step_async`: observations, rewards, terminations, truncations, infos."""
        if self._pending is None:
            raise RuntimeError("step_wait called without step_async")
        results, self._pending = self.pool.wait(self._pending), None
        observations, infos = [], {}
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminations = np.zeros(self.num_envs, dtype=np.bool_)
        truncations = np.zeros(self.num_envs, dtype=np.bool_)
        for index, result in enumerate(results):
            if len(result) == 2:  # autoreset
                observation, info = result
            else:
                observation, rewards[index], terminations[index], truncations[index], info = result
            observations.append(observation)
            infos = self._add_info(infos, info, index)
        self._autoreset = terminations | truncations
        return tuple(observations), rewards, terminations, truncations, infos

    def step(self, actions: Sequence[str]):
        """``step_async`` then ``step_wait``."""
        self.step_async(actions)
        return self.step_wait()

    def close_extras(self, **kwargs: Any) -> None:
        """Kill the pool's actors."""
        self.pool.close()


def _spaces(env_id: str) -> tuple[gym.Space, gym.Space]:
    """The observation and action spaces of ``env_id`` (stillweb environments: unicode text)."""
    if not env_id.startswith("stillweb/"):
        raise UsageError(f"RayVectorEnv serves stillweb environments, got {env_id!r}")
    return EpisodeLimits().observation_space(), EpisodeLimits().action_space()


def _seeds(seed: int | Sequence[int | None] | None, count: int) -> list[int | None]:
    if seed is None:
        return [None] * count
    if isinstance(seed, int):
        return [seed + index for index in range(count)]
    seeds = list(seed)
    if len(seeds) != count:
        raise UsageError(f"a list of seeds needs one per environment: {count}, got {len(seeds)}")
    return seeds
