"""A live curriculum: draw tasks with weights from their running pass rates during training.

OpenEnv's curriculum sampler aims at a pass rate of 0.5 and reasoning-gym's curricula raise the
difficulty as a policy improves: a task the policy always or never solves teaches nothing (DAPO's
dynamic sampling drops such groups). :class:`CurriculumSampler` keeps each task's running pass rate
(passes and tries decayed by ``decay`` at each of the task's updates, with one pseudo-try at the
target rate, so an untried task looks ideal and is tried early) and draws with weights

    ``p(task) = floor / N + (1 - floor) * softmax(-|rate - target| / temperature)``

so no task starves (each keeps at least ``floor / N``). Draws come from blake2b keyed by
(seed, draw number) (:class:`~stillweb.corpora.keyed.KeyedRng`), never a library generator;
:meth:`CurriculumSampler.state_dict` and :meth:`CurriculumSampler.load_state_dict` carry the
counts, the draw number and the config, so a restored sampler makes the same next draws.

One sampler serves every way stillweb trains:

- ``reset(options=sampler.reset_options(sampler.draw()))`` for any environment, and for
  ``Mixture-v0`` with keys ``"<env_id>::<task_id>"`` (:meth:`CurriculumSampler.for_env`);
- :meth:`CurriculumSampler.episode_specs` for the Ray rollout service, and
  :meth:`CurriculumSampler.update_from_info` with each trajectory's last ``info``;
- :meth:`CurriculumSampler.indices` as the sampler of a TRL or verl dataset (``task_dataset``,
  ``export_verl``'s rows): an iterator of row indices (``RayPPOTrainer(train_sampler=...)``).

>>> sampler = CurriculumSampler(["easy", "hard", "middle"], seed=0, temperature=0.1, floor=0.1)
>>> for _ in range(20):
...     sampler.update("easy", 1.0); sampler.update("hard", 0.0); sampler.update("middle", 0.5)
>>> max(sampler.weights().items(), key=lambda item: item[1])[0]
'middle'
>>> restored = CurriculumSampler.from_state_dict(sampler.state_dict())
>>> restored.draws(5) == sampler.draws(5)
True
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from stillweb.corpora.errors import UsageError
from stillweb.corpora.keyed import KeyedRng

__all__ = ["CurriculumConfig", "CurriculumSampler", "MEMBER_SEPARATOR"]

MEMBER_SEPARATOR = "::"  # a Mixture-v0 key: "<env_id>::<task_id>"
STATE_VERSION = 1


@dataclass(frozen=True)
class CurriculumConfig:
    """``target``: the pass rate aimed at; ``temperature``: how sharply draws favour tasks near it;
    ``floor``: the share of draws spread evenly over every task; ``decay``: how much of a task's past
    counts each of its updates keeps (1: plain counts)."""

    target: float = 0.5
    temperature: float = 0.1
    floor: float = 0.05
    decay: float = 0.95

    def __post_init__(self) -> None:
        for name, low, high in (("target", 0.0, 1.0), ("floor", 0.0, 1.0), ("decay", 0.0, 1.0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
                raise UsageError(f"curriculum {name} must be in [{low}, {high}], got {value!r}")
        if isinstance(self.temperature, bool) or not isinstance(self.temperature, (int, float)) \
                or not 0.0 < self.temperature < math.inf:
            raise UsageError(f"curriculum temperature must be positive and finite, got {self.temperature!r}")
        if self.decay == 0.0:
            raise UsageError("curriculum decay must be above 0 (0 would forget every try)")


class CurriculumSampler:
    """Draws task keys by their running pass rates (see the module docstring).

    ``keys``: the task ids (or ``"<env_id>::<task_id>"`` keys of a mixture), distinct; ``seed`` keys the
    draws; ``config`` a :class:`CurriculumConfig` or a dict of its fields.
    """

    def __init__(self, keys: Sequence[str], seed: int = 0, config: CurriculumConfig | Mapping[str, Any] | None = None,
                 **fields: Any) -> None:
        keys = list(keys)
        if not keys or any(not isinstance(key, str) for key in keys) or len(set(keys)) != len(keys):
            raise UsageError(f"a curriculum needs distinct task ids (strings), got {keys[:10]!r}")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise UsageError(f"seed must be an integer, got {seed!r}")
        base = config if isinstance(config, CurriculumConfig) else CurriculumConfig(**dict(config or {}))
        self.config = CurriculumConfig(**{**asdict(base), **fields})
        self.keys = tuple(keys)
        self.seed = seed
        self.drawn = 0  # draws made so far (the next draw's number)
        self._passes = dict.fromkeys(keys, 0.0)
        self._tries = dict.fromkeys(keys, 0.0)

    @classmethod
    def for_env(cls, env: Any, seed: int = 0, **config: Any) -> "CurriculumSampler":
        """A sampler over the tasks of ``env`` (its ``tasks``), or of every member of a ``Mixture-v0``
        (keys ``"<env_id>::<task_id>"``)."""
        env = getattr(env, "unwrapped", env)
        members = getattr(env, "members", None)
        if members is not None:
            keys = [f"{env_id}{MEMBER_SEPARATOR}{task.task_id}" for env_id in sorted(members)
                    for task in members[env_id].unwrapped.tasks]
        else:
            keys = [task.task_id for task in env.tasks]
        return cls(keys, seed, **config)

    # -- rates and weights -----------------------------------------------------------------

    def pass_rate(self, key: str) -> float:
        """The running pass rate of ``key`` (with one pseudo-try at the target)."""
        self._check_key(key)
        return (self._passes[key] + self.config.target) / (self._tries[key] + 1.0)

    def weights(self) -> dict[str, float]:
        """Each key's draw probability, in key order (they sum to 1)."""
        config = self.config
        scores = [-abs(self.pass_rate(key) - config.target) / config.temperature for key in self.keys]
        top = max(scores)
        exps = [math.exp(score - top) for score in scores]
        total = sum(exps)
        even = config.floor / len(self.keys)
        return {key: even + (1.0 - config.floor) * value / total for key, value in zip(self.keys, exps)}

    # -- drawing ---------------------------------------------------------------------------

    def draw(self) -> str:
        """The next task key."""
        key = KeyedRng(self.seed, "curriculum", self.drawn).weighted_choice(self.keys, list(self.weights().values()))
        self.drawn += 1
        return key

    def draws(self, count: int) -> list[str]:
        """The next ``count`` keys (under the current rates: a batch drawn before its results come back)."""
        weights = list(self.weights().values())
        keys = [KeyedRng(self.seed, "curriculum", self.drawn + number).weighted_choice(self.keys, weights)
                for number in range(count)]
        self.drawn += count
        return keys

    def reset_options(self, key: str) -> dict[str, str]:
        """The reset ``options`` that play ``key``: ``{"task_id"}``, plus ``{"env_id"}`` for a mixture key."""
        self._check_key(key)
        env_id, separator, task_id = key.rpartition(MEMBER_SEPARATOR)
        return {"env_id": env_id, "task_id": task_id} if separator else {"task_id": key}

    def episode_specs(self, count: int, prefix: str = "curriculum") -> list[Any]:
        """``count`` :class:`~stillweb.envs.ray.rollouts.EpisodeSpec` of the next draws for the Ray rollout
        service (ids ``<prefix>-<draw number>``, seeds the draw numbers)."""
        from stillweb.envs.ray.rollouts import EpisodeSpec

        first = self.drawn
        return [EpisodeSpec(f"{prefix}-{first + number}", first + number, self.reset_options(key))
                for number, key in enumerate(self.draws(count))]

    def indices(self, task_ids: Sequence[str], count: int | None = None) -> Iterator[int]:
        """Row indices of a dataset whose rows carry ``task_ids`` (a TRL ``task_dataset``, verl's exported
        rows), drawn by the curriculum: ``count`` of them, or endlessly. The rates are read at each draw, so
        updates made while training steer the next rows."""
        rows: dict[str, int] = {}
        for index, task_id in enumerate(task_ids):
            rows.setdefault(task_id, index)
        missing = [key for key in self.keys if key.rpartition(MEMBER_SEPARATOR)[2] not in rows]
        if missing:
            raise UsageError(f"the dataset has no row for {len(missing)} curriculum tasks (e.g. {missing[0]!r})")
        made = 0
        while count is None or made < count:
            yield rows[self.draw().rpartition(MEMBER_SEPARATOR)[2]]
            made += 1

    # -- results ---------------------------------------------------------------------------

    def update(self, key: str, success: float | bool) -> None:
        """Count one finished episode of ``key``: ``success`` 1/True (passed), 0/False, or a graded value in [0, 1]."""
        self._check_key(key)
        if not isinstance(success, (bool, int, float)) or not 0.0 <= float(success) <= 1.0:
            raise UsageError(f"success must be a bool or a number in [0, 1], got {success!r}")
        decay = self.config.decay
        self._passes[key] = self._passes[key] * decay + float(success)
        self._tries[key] = self._tries[key] * decay + 1.0

    def update_from_info(self, info: Mapping[str, Any], reward: float | None = None) -> str:
        """Count an episode from its last ``info`` (``task_id``, ``env_id`` for a mixture): it passed when its
        ``outcome`` (else ``reward``) is 1. Returns the key counted."""
        task_id, env_id = info.get("task_id"), info.get("env_id")
        key = f"{env_id}{MEMBER_SEPARATOR}{task_id}" if env_id is not None and \
            f"{env_id}{MEMBER_SEPARATOR}{task_id}" in self._tries else str(task_id)
        value = info.get("outcome", reward)
        self.update(key, 1.0 if value is not None and float(value) >= 1.0 else 0.0)
        return key

    # -- checkpoints -----------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Everything the next draws depend on, JSON-ready."""
        return {"version": STATE_VERSION, "seed": self.seed, "drawn": self.drawn, "config": asdict(self.config),
                "keys": list(self.keys), "passes": [self._passes[key] for key in self.keys],
                "tries": [self._tries[key] for key in self.keys]}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore :meth:`state_dict`'s output (``UsageError`` when it is of other tasks or another version)."""
        if not isinstance(state, Mapping) or state.get("version") != STATE_VERSION:
            raise UsageError(f"not a curriculum state of version {STATE_VERSION}")
        if list(state.get("keys", ())) != list(self.keys):
            raise UsageError("the curriculum state is of other tasks than this sampler's")
        self.seed, self.drawn = int(state["seed"]), int(state["drawn"])
        self.config = CurriculumConfig(**state["config"])
        self._passes = dict(zip(self.keys, map(float, state["passes"])))
        self._tries = dict(zip(self.keys, map(float, state["tries"])))

    @classmethod
    def from_state_dict(cls, state: Mapping[str, Any]) -> "CurriculumSampler":
        """A sampler restored from :meth:`state_dict`'s output."""
        sampler = cls(list(state.get("keys", ())), int(state.get("seed", 0)))
        sampler.load_state_dict(state)
        return sampler

    def _check_key(self, key: str) -> None:
        if key not in self._tries:
            raise UsageError(f"task {key!r} is not in the curriculum ({len(self.keys)} tasks, e.g. {self.keys[0]!r})")
