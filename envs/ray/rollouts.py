"""Async rollouts on Ray: workers play episodes with a policy and fill a trajectory buffer.

The rLLM design: a :class:`RolloutService` hands episodes (:class:`EpisodeSpec`:
id, seed, reset options) from its queue to ``workers`` rollout actors, one
episode in flight per worker; each worker asks the policy for every action and
puts the finished :class:`~stillweb.envs.ray.buffer.Trajectory` into the
:class:`~stillweb.envs.ray.buffer.TrajectoryBuffer`, which the trainer drains
in batches with :meth:`RolloutService.take` (a full buffer makes workers wait).

The policy is any picklable callable ``policy(observation, info) -> action``
(or ``-> {"action": ..., "policy_version": n}``), or :class:`~stillweb.envs.ray.policies.HttpPolicy` for an
endpoint that returns the next action. A call that takes longer than
``policy_timeout_s`` (or raises) ends the episode as *truncated*, with
``info["truncation_reason"]`` ``"policy_timeout"`` (or ``"policy_error"``) and
``info["mask_from_loss"] = True``: the trainer masks it; it is never scored
as a failure.

Faults lose nothing: every action is journaled in the buffer as it is taken.
When a worker dies (``ray.kill``, a lost node) the service starts another and
resends the episode; the new worker replays the journaled actions to the same
state (episodes are deterministic) and carries on. The buffer takes each
episode id once, so no trajectory is lost or stored twice.

Each step line of a trajectory is the :class:`~stillweb.envs.RecordEpisodes` record plus
a top-level ``policy_version`` (the version that chose the action), which ``stillweb
replay`` ignores and the run-health plots (``stillweb health --plot``, ``/view/health``)
mark on their x axis.

>>> service = RolloutService("stillweb/WikiQA-v0", {"snapshot": "snap/"}, policy, workers=2)  # doctest: +SKIP
>>> service.submit(EpisodeSpec(f"ep{i}", seed=i) for i in range(1000))                        # doctest: +SKIP
>>> batch = service.take(32)                                                                     # doctest: +SKIP
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import ray

from stillweb.corpora.arguments import check_positive_int
from stillweb.envs.ray.buffer import Trajectory, TrajectoryBuffer
from stillweb.envs.ray.policies import Policy
from stillweb.corpora.canonical import canonical_json

from stillweb.envs.agents.loop import PolicyFailure, Step, play_episode
from stillweb.envs.runs.recording import UNRECORDED_INFO_KEYS, header_record, reset_record, step_record
import stillweb.envs.registration  # noqa: F401 - the environments' ids, for gym.make

__all__ = ["EpisodeSpec", "RolloutService", "RolloutWorker"]


@dataclass(frozen=True)
class EpisodeSpec:
    """One episode to play: a unique id, the reset seed and options (e.g. ``{"task_id": ...}``)."""

    episode_id: str
    seed: int | None = None
    options: dict[str, Any] | None = None


class RolloutWorker:
    """Plays episodes in one environment and puts their trajectories in the buffer (a Ray actor)."""

    def __init__(self, env_id: str, env_kwargs: Mapping[str, Any], policy: Policy, buffer: Any,
                 policy_timeout_s: float = 60.0) -> None:
        self.env = gym.make(env_id, **dict(env_kwargs))
        self.header = canonical_json(header_record(self.env.spec, self.env))
        self.policy = policy
        self.buffer = buffer
        self.policy_timeout_s = policy_timeout_s
        self._calls = concurrent.futures.ThreadPoolExecutor(1)

    def run_episode(self, spec: EpisodeSpec) -> str:
        """Play (or, after a fault, resume) ``spec``'s episode; ``"stored"`` or ``"duplicate"``.

        The one episode loop (:func:`~stillweb.envs.agents.loop.play_episode`) plays it: the journaled
        actions first, then the policy's; a policy that fails or times out ends it as truncated."""
        if ray.get(self.buffer.has.remote(spec.episode_id)):
            return "duplicate"
        journal = ray.get(self.buffer.journal.remote(spec.episode_id))
        lines: list[str] = []
        versions: list[int] = []

        def choose(observation: str, info: Mapping[str, Any]) -> dict[str, Any]:
            index = len(versions)
            if index < len(journal):
                action, version = journal[index]
            else:
                reply = self._ask(observation, dict(info))
                if isinstance(reply, str):  # the policy failed: the episode is truncated, with the reason
                    raise PolicyFailure(reply)
                action, version = reply
                self.buffer.note_step.remote(spec.episode_id, index, action, version)
            return {"action": action, "policy_version": version}

        def on_step(step: Step, info: Mapping[str, Any]) -> None:
            version = step.extra["policy_version"]
            record = step_record(step.action, step.observation, step.reward, step.terminated, step.truncated, info)
            lines.append(canonical_json({**record, "policy_version": version}))  # replay and rerun compare the env's fields only
            versions.append(version)

        played = play_episode(self.env, policy=choose, seed=spec.seed, options=spec.options, on_step=on_step,
                              policy_info={"episode_id": spec.episode_id})
        reset = canonical_json(reset_record(spec.seed, spec.options, played.reset_observation, played.reset_info))
        info, truncated = played.info, played.truncated
        if played.failure is not None:
            info, truncated = {**info, "truncation_reason": played.failure, "mask_from_loss": True}, True
        final = {key: value for key, value in info.items() if key not in UNRECORDED_INFO_KEYS}
        reward = played.steps[-1].reward if played.steps else 0.0
        trajectory = Trajectory(spec.episode_id, (self.header, reset, *lines), float(reward), played.terminated, truncated,
                                final, tuple(versions))
        return ray.get(self.buffer.put.remote(trajectory))

    def _ask(self, observation: str, info: dict[str, Any]) -> tuple[str, int] | str:
        """(action, policy version), or the reason the policy gave none."""
        future = self._calls.submit(self.policy, observation, info)
        try:
            reply = future.result(timeout=self.policy_timeout_s)
        except concurrent.futures.TimeoutError:
            self._calls.shutdown(wait=False)  # the stuck call keeps its thread; later calls get a new one
            self._calls = concurrent.futures.ThreadPoolExecutor(1)
            return "policy_timeout"
        except Exception:  # noqa: BLE001 - any failure of the policy ends the episode as truncated
            return "policy_error"
        if isinstance(reply, str):
            return reply, int(getattr(self.policy, "policy_version", 0))
        if isinstance(reply, Mapping) and isinstance(reply.get("action"), str):
            return reply["action"], int(reply.get("policy_version", 0))
        return "policy_error"


class RolloutService:
    """Rollout workers on Ray, a trajectory buffer, and a dispatcher thread that survives worker loss.

    Args:
        env_id, env_kwargs: the environment each worker makes (``snapshot`` by path).
        policy: a callable, :class:`~stillweb.envs.ray.policies.HttpPolicy` or :class:`~stillweb.envs.ray.policies.ScriptedPolicy` (pickled to every worker).
        workers: rollout actors (each plays one episode at a time).
        buffer_capacity: trajectories the buffer holds before puts wait.
        policy_timeout_s: longest wait for one action.
        worker_options: Ray actor options for the workers (default ``num_cpus=1``, SPREAD).
    """

    def __init__(self, env_id: str, env_kwargs: Mapping[str, Any], policy: Policy, *, workers: int = 2,
                 buffer_capacity: int = 256, policy_timeout_s: float = 60.0,
                 worker_options: Mapping[str, Any] | None = None) -> None:
        check_positive_int("workers", workers)
        self.buffer = ray.remote(TrajectoryBuffer).options(num_cpus=0).remote(buffer_capacity)
        self._worker_args = (env_id, dict(env_kwargs), policy, self.buffer, policy_timeout_s)
        self._worker_options = {"num_cpus": 1, "scheduling_strategy": "SPREAD", **dict(worker_options or {})}
        self.workers = [self._start_worker() for _ in range(workers)]
        self.restarts = 0
        self._queue: deque[EpisodeSpec] = deque()
        self._in_flight: dict[int, tuple[EpisodeSpec, ray.ObjectRef]] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self._errors: list[BaseException] = []
        self._dispatcher = threading.Thread(target=self._dispatch, name="stillweb-rollouts", daemon=True)
        self._dispatcher.start()

    def submit(self, specs: Iterable[EpisodeSpec]) -> None:
        """Queue episodes (played in queue order as workers free up)."""
        with self._lock:
            self._queue.extend(specs)
        self._wake.set()

    def take(self, count: int, timeout_s: float | None = None, min_policy_version: int | None = None) -> list[Trajectory]:
        """Up to ``count`` finished trajectories (waits up to ``timeout_s`` for ``count``)."""
        self._raise_dispatch_error()
        return ray.get(self.buffer.take.remote(count, timeout_s, min_policy_version))

    def run(self, specs: Iterable[EpisodeSpec], batch: int = 16) -> list[Trajectory]:
        """Play ``specs`` and return their trajectories in spec order (drains as it goes)."""
        specs = list(specs)
        self.submit(specs)
        collected: dict[str, Trajectory] = {}
        while len(collected) < len(specs):
            for trajectory in self.take(min(batch, len(specs) - len(collected)), timeout_s=1.0):
                collected[trajectory.episode_id] = trajectory
        return [collected[spec.episode_id] for spec in specs]

    def in_flight(self) -> dict[int, str]:
        """Worker number -> episode id it is playing."""
        with self._lock:
            return {worker: spec.episode_id for worker, (spec, _ref) in self._in_flight.items()}

    def stats(self) -> dict[str, int]:
        """The buffer's counts plus queued episodes and worker restarts."""
        with self._lock:
            queued = len(self._queue)
        return {**ray.get(self.buffer.stats.remote()), "queued": queued, "restarts": self.restarts}

    def close(self) -> None:
        """Stop dispatching and kill the workers and the buffer (idempotent)."""
        self._closed = True
        self._wake.set()
        self._dispatcher.join(timeout=10)
        for worker in self.workers:
            ray.kill(worker)
        ray.kill(self.buffer)
        self.workers = []

    # -- the dispatcher ---------------------------------------------------------------------

    def _start_worker(self) -> Any:
        return ray.remote(RolloutWorker).options(**self._worker_options).remote(*self._worker_args)

    def _dispatch(self) -> None:
        try:
            while not self._closed:
                self._fill_idle_workers()
                with self._lock:
                    refs = {ref: worker for worker, (_spec, ref) in self._in_flight.items()}
                if not refs:
                    self._wake.wait(0.2)
                    self._wake.clear()
                    continue
                done, _ = ray.wait(list(refs), num_returns=1, timeout=0.2)
                for ref in done:
                    self._finish(refs[ref], ref)
        except BaseException as error:  # noqa: BLE001 - reported to the caller by take()
            self._errors.append(error)

    def _fill_idle_workers(self) -> None:
        with self._lock:
            for worker, handle in enumerate(self.workers):
                if worker not in self._in_flight and self._queue:
                    spec = self._queue.popleft()
                    self._in_flight[worker] = (spec, handle.run_episode.remote(spec))

    def _finish(self, worker: int, ref: ray.ObjectRef) -> None:
        try:
            ray.get(ref)
        except ray.exceptions.RayActorError:
            with self._lock:
                spec, _ref = self._in_flight[worker]
                ray.kill(self.workers[worker], no_restart=True)
                self.workers[worker] = self._start_worker()
                self.restarts += 1
                self._queue.appendleft(spec)  # resumed from its journal by the new worker
        with self._lock:
            self._in_flight.pop(worker, None)

    def _raise_dispatch_error(self) -> None:
        if self._errors:
            raise RuntimeError(f"the rollout dispatcher stopped: {self._errors[0]!r}") from self._errors[0]
