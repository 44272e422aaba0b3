"""``stillweb/Mixture-v0``: a seeded, weighted mixture of stillweb environments.

Curricula and sanity tasks are mixed into a run the way verifiers' ``EnvGroup``
composes environments: each ``reset`` picks one member environment, with
probability proportional to its weight, from a generator keyed by the seed (the
n-th reset since the last seeded one draws ``KeyedRng(seed, "mixture", "episode", n)``),
then resets that member with the same seed. The same seeds give the same sequence
of environments and tasks, in-process, over HTTP sessions or on a Ray pool.
``info["env_id"]`` names the member that plays the episode and ``info["task_id"]``
its task; ``options={"env_id": ...}`` forces a member (other options go to it).

Members are any registered ``stillweb/`` environments except ``Remote-v0`` (it would
let a session's kwargs reach other servers) and the mixture itself. The shared
keyword arguments go to every member that accepts them (by its constructor's
signature); ``member_kwargs={env_id: {...}}`` adds or overrides per member.

>>> import gymnasium as gym, stillweb.envs  # doctest: +SKIP
>>> env = gym.make("stillweb/Mixture-v0", envs={"stillweb/WikiQA-v0": 3, "stillweb/Lookup-v0": 1},
...                snapshot="snap/", member_kwargs={"stillweb/WikiQA-v0": {"tasks": "hard"}})  # doctest: +SKIP
>>> observation, info = env.reset(seed=0); info["env_id"]  # doctest: +SKIP
'stillweb/WikiQA-v0'
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping
from typing import Any

import gymnasium as gym

from stillweb.envs.registration import MIXTURE_ENV_ID, REMOTE_ENV_ID
from stillweb.corpora.errors import UsageError
from stillweb.corpora.keyed import KeyedRng
from stillweb.envs.core.limits import EpisodeLimits

__all__ = ["MixtureEnv", "mixable_env_ids"]

_NOT_MIXABLE = (REMOTE_ENV_ID, MIXTURE_ENV_ID)


def mixable_env_ids() -> list[str]:
    """The registered stillweb environments a mixture may hold, sorted."""
    return sorted(env_id for env_id in gym.registry if env_id.startswith("stillweb/") and env_id not in _NOT_MIXABLE)


class MixtureEnv(gym.Env[str, str]):
    """Picks a member environment per reset from the seed (see the module docstring).

    Args:
        envs: ``{env_id: weight}`` (positive, finite weights).
        member_kwargs: per-member keyword arguments, added to (and overriding) the shared ones.
        **shared_kwargs: keyword arguments for every member whose constructor accepts them.
    """

    metadata = {"render_modes": []}

    def __init__(self, envs: Mapping[str, float], member_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
                 **shared_kwargs: Any) -> None:
        if not isinstance(envs, Mapping) or not envs:
            raise UsageError(f"envs must be a non-empty {{env_id: weight}} dict, got {envs!r:.200}; "
                             f"registered: {mixable_env_ids()}")
        member_kwargs = dict(member_kwargs or {})
        for env_id, weight in envs.items():
            _check_member(env_id, weight)
        stray = sorted(set(member_kwargs) - set(envs))
        if stray:
            raise UsageError(f"member_kwargs names environments not in the mixture: {stray}; mixture: {sorted(envs)}")
        self.env_ids = sorted(envs)
        self.weights = [float(envs[env_id]) for env_id in self.env_ids]
        self.members = {env_id: _make_member(env_id, shared_kwargs, member_kwargs.get(env_id, {}))
                        for env_id in self.env_ids}
        self.observation_space = EpisodeLimits().observation_space()
        self.action_space = EpisodeLimits().action_space()
        self.active: str | None = None
        self._seed_base, self._episode_number = 0, -1

    @property
    def tasks(self):
        """The task set of the member playing now (what :func:`~stillweb.envs.agents.scripted.run_episode` reads)."""
        if self.active is None:
            raise RuntimeError("no episode yet: call reset() first")
        return self.members[self.active].unwrapped.tasks

    @property
    def max_turns(self) -> int:
        """The longest episode any member allows (1 for single-turn members)."""
        return max(getattr(getattr(env.unwrapped, "limits", None), "max_turns", 1) for env in self.members.values())

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Pick the member (``options["env_id"]`` or, keyed, from the seed) and reset it with ``seed``.

        ``ValueError`` for an ``env_id`` that is not in the mixture.
        """
        super().reset(seed=seed)
        if seed is not None:
            self._seed_base, self._episode_number = int(seed), -1
        self._episode_number += 1
        options = dict(options or {})
        forced = options.pop("env_id", None)
        if forced is not None and forced not in self.members:
            raise UsageError(f"env_id {forced!r} is not in this mixture; mixture: {self.env_ids}")
        rng = KeyedRng(self._seed_base, "mixture", "episode", self._episode_number)
        self.active = forced or rng.weighted_choice(self.env_ids, self.weights)
        observation, info = self.members[self.active].reset(seed=seed, options=options or None)
        return observation, self._info(info)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Step the member playing now (``RuntimeError`` before the first reset)."""
        if self.active is None:
            raise RuntimeError("step() called before reset(): call reset() first")
        observation, reward, terminated, truncated, info = self.members[self.active].step(action)
        return observation, reward, terminated, truncated, self._info(info)

    def close(self) -> None:
        """Close every member (idempotent)."""
        for env in self.members.values():
            env.close()
        self.active = None

    def _info(self, info: dict[str, Any]) -> dict[str, Any]:
        return {**info, "env_id": self.active, "task_id": info.get("task_id")}


def _check_member(env_id: Any, weight: Any) -> None:
    if env_id not in mixable_env_ids():
        raise UsageError(f"unknown environment {env_id!r} in the mixture; registered: {mixable_env_ids()}")
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) or weight <= 0:
        raise UsageError(f"the weight of {env_id} must be a positive finite number, got {weight!r}")


def _make_member(env_id: str, shared: Mapping[str, Any], own: Mapping[str, Any]) -> gym.Env:
    """``gym.make(env_id, ...)`` with the shared kwargs its constructor accepts, then its own."""
    return gym.make(env_id, disable_env_checker=True, **{**accepted_kwargs(env_id, shared), **dict(own)})


def accepted_kwargs(env_id: str, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The ``kwargs`` the constructor registered as ``env_id`` accepts (all of them if it takes ``**kwargs``)."""
    spec = gym.spec(env_id)
    entry = spec.entry_point if callable(spec.entry_point) else gym.envs.registration.load_env_creator(spec.entry_point)
    parameters = inspect.signature(entry).parameters
    takes_any = any(parameter.kind is inspect.Parameter.VAR_KEYWORD for parameter in parameters.values())
    return {key: value for key, value in kwargs.items() if takes_any or key in parameters}
