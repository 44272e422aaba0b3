"""Many environments on Ray actors, stepped in batches, restarted and replayed after faults.

An :class:`EnvPool` spreads ``num_envs`` environments over actors of
``envs_per_actor`` each (``scheduling_strategy="SPREAD"``, so a cluster's
nodes share them). An actor makes its environments with ``gym.make`` from the
env id and kwargs, so the snapshot travels by *path*: every environment of the
actor's process shares one opened snapshot (:func:`~stillweb.corpora.snapshot.shared.shared_snapshot`),
and the actors of one node share its memory-mapped files through the page
cache; nothing of the corpus goes through the object store.

A batch is a list of operations, one per environment: ``("reset", seed,
options)`` or ``("step", action)``. :meth:`EnvPool.run` sends each actor its
part and waits; :meth:`EnvPool.run_async` returns the object refs (one per
actor) and :meth:`EnvPool.wait` collects them.

Faults lose nothing. The pool keeps every environment's operations since its
last seeded reset (an episode is a pure function of snapshot, task, seed and
actions). When an actor dies (``ray.kill``, a lost node), the pool starts a
replacement, replays the log of each of its environments to the same state,
and resends the batch, so the caller sees the results it would have seen.

>>> pool = EnvPool("stillweb/WikiQA-v0", 64, envs_per_actor=16, env_kwargs={"snapshot": "snap/"})  # doctest: +SKIP
>>> results = pool.run([("reset", seed, None) for seed in range(64)])                              # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import ray

from stillweb.corpora.errors import UsageError
from stillweb.corpora.arguments import check_positive_int
import stillweb.envs.registration  # noqa: F401 - the environments' ids, for gym.make

__all__ = ["EnvPool", "EnvPoolActor", "Operation"]

Operation = tuple  # ("reset", seed, options) | ("step", action)
ACTOR_LOST = (ray.exceptions.RayActorError,)


class EnvPoolActor:
    """The environments of one actor process (used through ``ray.remote`` by :class:`EnvPool`).

    ``info_exclude``: info keys not sent back (e.g. ``"messages"``, the whole
    conversation, which the caller can rebuild from the observations).
    """

    def __init__(self, env_id: str, env_kwargs: Mapping[str, Any], count: int, info_exclude: Sequence[str] = ()) -> None:
        self.envs = [gym.make(env_id, **dict(env_kwargs)) for _ in range(count)]
        self.info_exclude = tuple(info_exclude)

    def run(self, batch: Sequence[tuple[int, Operation]]) -> list[tuple]:
        """Apply ``(local index, operation)`` pairs in order; a reset gives (obs, info), a step its 5-tuple."""
        return [self._apply(index, operation) for index, operation in batch]

    def replay(self, logs: Mapping[int, Sequence[Operation]]) -> int:
        """Re-apply each environment's logged operations (after a restart); the count applied."""
        applied = 0
        for index, operations in sorted(logs.items()):
            for operation in operations:
                self._apply(index, operation)
                applied += 1
        return applied

    def memory(self) -> dict[str, Any]:
        """This process's resident memory (bytes), environment count, pid and Ray node id."""
        with open("/proc/self/statm", encoding="ascii") as statm:
            resident_pages = int(statm.read().split()[1])
        return {"rss_bytes": resident_pages * os.sysconf("SC_PAGE_SIZE"), "envs": len(self.envs), "pid": os.getpid(),
                "node_id": ray.get_runtime_context().get_node_id()}

    def _apply(self, index: int, operation: Operation) -> tuple:
        env = self.envs[index]
        if operation[0] == "reset":
            observation, info = env.reset(seed=operation[1], options=operation[2])
            return observation, self._trim(info)
        if operation[0] == "step":
            observation, reward, terminated, truncated, info = env.step(operation[1])
            return observation, reward, terminated, truncated, self._trim(info)
        raise UsageError(f"unknown operation {operation[0]!r}: expected 'reset' or 'step'")

    def _trim(self, info: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in info.items() if key not in self.info_exclude} if self.info_exclude else info


class EnvPool:
    """``num_envs`` environments of ``env_id`` on ``ceil(num_envs / envs_per_actor)`` Ray actors.

    Args:
        env_id: a registered environment (``stillweb/WikiQA-v0``, ``stillweb/Lookup-v0``...).
        num_envs: how many environments.
        envs_per_actor: environments per actor process (``--envs-per-actor``).
        env_kwargs: ``gym.make`` kwargs; ``snapshot`` is a path each actor opens itself.
        actor_options: Ray actor options (``num_cpus``, ``resources``, ``memory``...);
            default ``num_cpus=0`` plus ``scheduling_strategy="SPREAD"``.
        info_exclude: info keys the actors leave out of results (default none).

    Requires ``ray.init()`` (or a running cluster) first.
    """

    def __init__(
        self,
        env_id: str,
        num_envs: int,
        *,
        envs_per_actor: int = 16,
        env_kwargs: Mapping[str, Any] | None = None,
        actor_options: Mapping[str, Any] | None = None,
        info_exclude: Sequence[str] = (),
    ) -> None:
        check_positive_int("num_envs", num_envs)
        check_positive_int("envs_per_actor", envs_per_actor)
        self.env_id = env_id
        self.num_envs = num_envs
        self.envs_per_actor = envs_per_actor
        self.env_kwargs = dict(env_kwargs or {})
        self.info_exclude = tuple(info_exclude)
        self._options = {"num_cpus": 0, "scheduling_strategy": "SPREAD", **dict(actor_options or {})}
        self._remote = ray.remote(EnvPoolActor)
        self._logs: list[list[Operation]] = [[] for _ in range(num_envs)]
        self.restarts = 0
        self.actors = [self._start(actor) for actor in range(self.actor_count)]
        ray.get([actor.memory.remote() for actor in self.actors])  # fail here, not at the first step, if envs cannot be made

    @property
    def actor_count(self) -> int:
        """How many actors hold the environments."""
        return -(-self.num_envs // self.envs_per_actor)

    def actor_of(self, env_index: int) -> tuple[int, int]:
        """(actor number, index inside the actor) of environment ``env_index``."""
        return divmod(env_index, self.envs_per_actor)

    def run(self, operations: Sequence[Operation | None]) -> list[tuple | None]:
        """Apply one operation per environment (``None``: leave it alone); results in env order."""
        return self.wait(self.run_async(operations))

    def run_async(self, operations: Sequence[Operation | None]) -> list["Pending"]:
        """Send the batch without waiting: one :class:`Pending` (its ``ref`` an ObjectRef) per actor used.

        One batch is in flight at a time: :meth:`wait` for it before sending the next.
        """
        if len(operations) != self.num_envs:
            raise UsageError(f"a batch needs one operation (or None) per environment: {self.num_envs}, got {len(operations)}")
        parts: dict[int, list[tuple[int, int, Operation]]] = {}
        for env_index, operation in enumerate(operations):
            if operation is not None:
                _check(operation, env_index)
                actor, local = self.actor_of(env_index)
                parts.setdefault(actor, []).append((env_index, local, tuple(operation)))
        pending = []
        for actor, part in sorted(parts.items()):
            for env_index, _local, operation in part:
                self._log(env_index, operation)
            batch = [(local, operation) for _env, local, operation in part]
            pending.append((actor, [env for env, _local, _op in part], self.actors[actor].run.remote(batch), batch))
        return [Pending(*item) for item in pending]

    def wait(self, pending: Sequence["Pending"]) -> list[tuple | None]:
        """Collect :meth:`run_async`'s results in env order, restarting and replaying lost actors."""
        results: list[tuple | None] = [None] * self.num_envs
        for item in pending:
            try:
                outcome = ray.get(item.ref)
            except ACTOR_LOST:
                outcome = self._recover(item)
            for env_index, result in zip(item.envs, outcome):
                results[env_index] = result
        return results

    def memory(self) -> list[dict[str, Any]]:
        """Each actor's resident memory, environment count, pid and node id."""
        return ray.get([actor.memory.remote() for actor in self.actors])

    def close(self) -> None:
        """Kill the actors (idempotent)."""
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []

    # -- faults -----------------------------------------------------------------------------

    def _start(self, actor: int) -> Any:
        count = min(self.envs_per_actor, self.num_envs - actor * self.envs_per_actor)
        return self._remote.options(**self._options).remote(self.env_id, self.env_kwargs, count, self.info_exclude)

    def _recover(self, item: "Pending") -> list[tuple]:
        """Replace a dead actor, replay its environments' logs up to the lost batch, resend it."""
        self.restarts += 1
        ray.kill(self.actors[item.actor], no_restart=True)
        self.actors[item.actor] = replacement = self._start(item.actor)
        first = item.actor * self.envs_per_actor
        in_batch = set(item.envs)
        logs = {env - first: self._logs[env][:-1] if env in in_batch else self._logs[env]
                for env in range(first, min(first + self.envs_per_actor, self.num_envs))}
        ray.get(replacement.replay.remote({local: ops for local, ops in logs.items() if ops}))
        return ray.get(replacement.run.remote(item.batch))

    def _log(self, env_index: int, operation: Operation) -> None:
        if operation[0] == "reset" and operation[1] is not None:
            self._logs[env_index] = []  # a seeded reset makes the past irrelevant
        self._logs[env_index].append(operation)


class Pending:
    """One actor's part of a batch in flight: ``ref`` resolves to its results."""

    __slots__ = ("actor", "envs", "ref", "batch")

    def __init__(self, actor: int, envs: list[int], ref: ray.ObjectRef, batch: list[tuple[int, Operation]]) -> None:
        self.actor, self.envs, self.ref, self.batch = actor, envs, ref, batch


def _check(operation: Operation, env_index: int) -> None:
    if not isinstance(operation, (tuple, list)) or not operation or operation[0] not in ("reset", "step"):
        raise UsageError(f"env {env_index}: an operation is ('reset', seed, options) or ('step', action), got {operation!r}")
    if operation[0] == "reset" and len(operation) != 3 or operation[0] == "step" and len(operation) != 2:
        raise UsageError(f"env {env_index}: ('reset', seed, options) or ('step', action), got {operation!r}")
