"""The one episode loop: :func:`play_episode` plays an agent (or a policy) in an environment.

Every place that plays an episode calls it: :func:`run_episode`, ``tasks profile``
(:mod:`stillweb.envs.profiles.runner`), the SFT export (:mod:`stillweb.envs.integrations.sft`),
the solvability proof and the viewer's reference trace (:mod:`stillweb.envs.wikiqa.solvability`)
and the Ray rollout workers (:mod:`stillweb.envs.ray.rollouts`).

What plays is one of:

- an **agent**: anything with ``act(observation) -> action``;
- a **policy**: ``policy(observation, info) -> action`` (or ``{"action": ..., ...}``), passed as
  ``policy=``. It is given each step's ``info`` with ``info["messages"]`` the whole conversation
  so far (the environment's info carries only the step's new messages: see
  :class:`~stillweb.envs.core.messages.Conversation`);
- a **factory** ``factory(task) -> agent or policy``, called with the episode's task after ``reset``.

An agent or policy that raises :class:`PolicyFailure` ends the
episode there: ``failure`` holds the reason (neither terminated nor truncated by the environment).

>>> from stillweb.envs import LookupEnv
>>> env = LookupEnv(tasks=[{"question": "Who?", "answer": "Ann", "passage": "Ann did."}])
>>> played = play_episode(env, policy=lambda observation, info: "<answer>Ann</answer>", seed=0)
>>> played.turns, played.reward, played.terminated, played.failure
(1, 1.0, True, None)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import gymnasium as gym

from stillweb.corpora.errors import UpstreamError, UsageError
from stillweb.envs.core.messages import Conversation
from stillweb.corpora.tasks.store.record import TaskRecord

__all__ = ["Agent", "Policy", "PlayedEpisode", "Step", "play_episode", "play_episodes", "run_episode", "PolicyFailure"]


class Agent(Protocol):
    """Anything with ``act(observation) -> action text``."""

    def act(self, observation: str) -> str: ...


Policy = Callable[[str, Mapping[str, Any]], "str | Mapping[str, Any]"]
OnStep = Callable[["Step", Mapping[str, Any]], None]


class PolicyFailure(UpstreamError):
    """The policy gave no action (after its retries, a timeout...): the episode ends there; ``reason`` says
    why (kept with the failed episode)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Step:
    """One step as the loop saw it: the action sent, what the environment returned (its info apart),
    and the reply's extra fields (e.g. a policy's ``policy_version``)."""

    action: str
    observation: str
    reward: float
    terminated: bool
    truncated: bool
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class PlayedEpisode:
    """A played episode: its task, seed, steps, the reward summed, how it ended, the last info and the
    conversation at the end (``messages``, rebuilt from the infos)."""

    task_id: str
    seed: int | None
    reset_observation: str
    reset_info: dict[str, Any]
    steps: list[Step] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    terminated: bool = False
    truncated: bool = False
    reward: float = 0.0
    failure: str | None = None
    messages: list[Any] = field(default_factory=list)

    @property
    def turns(self) -> int:
        """Steps taken."""
        return len(self.steps)

    @property
    def actions(self) -> list[str]:
        """The actions sent, in order."""
        return [step.action for step in self.steps]

    def summary(self) -> dict[str, Any]:
        """The summary :func:`run_episode` returns (task id, turns, endings, reward, outcome, answer, parts)."""
        info = self.info
        return {
            "task_id": info.get("task_id", self.task_id),
            "turns": self.turns,
            "terminated": self.terminated,
            "truncated": self.truncated,
            "reward": self.reward,
            "outcome": info.get("outcome", 0.0),
            "answer": info.get("answer"),
            "termination_reason": info.get("termination_reason"),
            "truncation_reason": info.get("truncation_reason"),
            "reward_parts": info.get("reward_parts"),
        }


def play_episode(env: gym.Env, agent: Agent | Callable[[TaskRecord], Any] | None = None, seed: int | None = None,
                 options: dict[str, Any] | None = None, *, policy: Policy | None = None,
                 on_step: OnStep | None = None, policy_info: Mapping[str, Any] | None = None) -> PlayedEpisode:
    """Reset ``env`` and play until the episode ends (or the agent stops); the :class:`PlayedEpisode`.

    Give ``agent`` (an agent or a factory of one per task) or ``policy`` (see the module docstring).
    ``on_step(step, info)`` is called after every step; ``policy_info`` is added to the info a policy sees.
    """
    if (agent is None) == (policy is None):
        raise UsageError("play_episode needs an agent (or a factory of one) or a policy=, not both")
    observation, info = env.reset(seed=seed, options=options)
    played = PlayedEpisode(str(info.get("task_id")), seed, observation, info, info=info)
    choose = _chooser(env, agent, policy, info, dict(policy_info or {}))
    conversation = Conversation()
    conversation.update(info)
    while not (played.terminated or played.truncated):
        try:
            reply = choose(observation, {**info, "messages": list(conversation.messages)}, played.turns)
        except PolicyFailure as stop:
            played.failure = stop.reason
            break
        action, extra = (reply, {}) if isinstance(reply, str) else (reply["action"], {k: v for k, v in reply.items() if k != "action"})
        observation, reward, terminated, truncated, info = env.step(action)
        conversation.update(info)
        step = Step(action, observation, float(reward), bool(terminated), bool(truncated), extra)
        played.steps.append(step)
        played.reward += float(reward)
        played.terminated, played.truncated, played.info = bool(terminated), bool(truncated), info
        if on_step is not None:
            on_step(step, info)
    played.messages = conversation.messages
    return played


def play_episodes(env: gym.Env, agent: Agent | Callable[[TaskRecord], Any] | None = None,
                  episodes: Iterable[tuple[int | None, dict[str, Any] | None]] = (), *,
                  policy: Policy | None = None) -> Iterator[PlayedEpisode]:
    """The batched form: each ``(seed, options)`` of ``episodes`` played in turn in ``env``."""
    for seed, options in episodes:
        yield play_episode(env, agent, seed, options, policy=policy)


def run_episode(env: gym.Env, agent: Agent | Callable[[TaskRecord], Agent], seed: int | None = None,
                options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Play one episode; return a summary (task id, turns, endings, outcome, reward parts).

    ``agent`` is an agent, or a factory called with the episode's :class:`TaskRecord`
    (e.g. ``lambda task: ReferenceAgent(task)``).

    >>> # summary = run_episode(env, lambda task: ReferenceAgent(task), seed=0)
    """
    return play_episode(env, agent, seed, options).summary()


def _chooser(env: gym.Env, agent: Any, policy: Policy | None, info: Mapping[str, Any],
             policy_info: dict[str, Any]) -> Callable[[str, Mapping[str, Any], int], Any]:
    """``choose(observation, info, turn) -> reply`` for an agent, a factory's product or a policy."""
    if agent is not None and not hasattr(agent, "act"):
        made = agent(env.unwrapped.tasks.by_id(info["task_id"]))
        agent, policy = (made, None) if hasattr(made, "act") else (None, made)
    if agent is not None:
        return lambda observation, _info, _turn: agent.act(observation)
    return lambda observation, step_info, _turn: policy(observation, {**step_info, **policy_info})
