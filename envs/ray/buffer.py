"""Finished trajectories and the buffer actor a trainer drains (the rLLM design).

A :class:`Trajectory` is one episode in the recorded format that
:func:`~stillweb.envs.runs.recording.replay` re-runs (``lines``: the header, the reset
and every step as canonical JSON) plus what a trainer filters on: the final
reward and ending, the reason a limit or the policy cut it short, and the
policy version that produced each step (``policy_version`` is the first,
i.e. oldest, so ``current - policy_version`` is the off-policy lag).

:class:`TrajectoryBuffer` (a Ray async actor) holds at most ``capacity``
trajectories: a ``put`` into a full buffer waits, so rollout workers slow down
to the trainer's pace (backpressure). It accepts each episode id once (a
replayed episode after a fault cannot be stored twice) and keeps, per episode
in progress, the journal of its actions, from which a restarted worker
replays the episode to the state it had reached.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from stillweb.corpora.arguments import check_positive_int

__all__ = ["Trajectory", "TrajectoryBuffer"]


@dataclass(frozen=True)
class Trajectory:
    """One finished episode: recorded lines (replayable), ending, reward and policy versions."""

    episode_id: str
    lines: tuple[str, ...]
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any] = field(default_factory=dict)
    policy_versions: tuple[int, ...] = ()

    @property
    def policy_version(self) -> int | None:
        """The version of the policy that acted first (the oldest); ``None`` for no steps."""
        return min(self.policy_versions) if self.policy_versions else None

    @property
    def steps(self) -> int:
        """How many steps were recorded."""
        return len(self.lines) - 2

class TrajectoryBuffer:
    """A bounded buffer of :class:`Trajectory`, used as a Ray actor (``ray.remote(TrajectoryBuffer)``)."""

    def __init__(self, capacity: int = 256) -> None:
        check_positive_int("capacity", capacity)
        self.capacity = capacity
        self._items: deque[Trajectory] = deque()
        self._accepted: set[str] = set()
        self._journals: dict[str, list[tuple[str, int]]] = {}
        self._changed = asyncio.Condition()
        self._counts = {"stored": 0, "duplicates": 0, "taken": 0, "stale_dropped": 0, "waited_full": 0}

    async def put(self, trajectory: Trajectory) -> str:
        """Store ``trajectory``, waiting while the buffer is full: ``"stored"`` or ``"duplicate"``."""
        if trajectory.episode_id in self._accepted:
            self._counts["duplicates"] += 1
            return "duplicate"
        self._accepted.add(trajectory.episode_id)
        async with self._changed:
            if len(self._items) >= self.capacity:
                self._counts["waited_full"] += 1
            await self._changed.wait_for(lambda: len(self._items) < self.capacity)
            self._items.append(trajectory)
            self._journals.pop(trajectory.episode_id, None)
            self._counts["stored"] += 1
            self._changed.notify_all()
        return "stored"

    async def take(self, count: int, timeout_s: float | None = None, min_policy_version: int | None = None) -> list[Trajectory]:
        """Up to ``count`` trajectories, oldest first, waiting up to ``timeout_s`` (``None``: forever) for ``count``.

        Trajectories whose ``policy_version`` is below ``min_policy_version`` are
        dropped (and counted as ``stale_dropped``) instead of returned.
        """
        async with self._changed:
            try:
                await asyncio.wait_for(self._changed.wait_for(lambda: len(self._items) >= count), timeout_s)
            except asyncio.TimeoutError:
                pass
            taken = [self._items.popleft() for _ in range(min(count, len(self._items)))]
            self._changed.notify_all()
        fresh = [item for item in taken if min_policy_version is None or (item.policy_version or 0) >= min_policy_version]
        self._counts["stale_dropped"] += len(taken) - len(fresh)
        self._counts["taken"] += len(fresh)
        return fresh

    def has(self, episode_id: str) -> bool:
        """Whether the episode's trajectory was already accepted."""
        return episode_id in self._accepted

    def note_step(self, episode_id: str, index: int, action: str, policy_version: int) -> None:
        """Journal step ``index`` of an episode in progress (ignored once its trajectory is in)."""
        if episode_id in self._accepted:
            return
        journal = self._journals.setdefault(episode_id, [])
        if index == len(journal):
            journal.append((action, policy_version))

    def journal(self, episode_id: str) -> list[tuple[str, int]]:
        """The (action, policy version) steps journaled for an episode in progress."""
        return list(self._journals.get(episode_id, ()))

    def stats(self) -> dict[str, int]:
        """Size, capacity and the counts of stored, duplicate, taken and stale-dropped trajectories."""
        return {"size": len(self._items), "capacity": self.capacity, **self._counts}
