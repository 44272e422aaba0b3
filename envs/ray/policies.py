"""Policies for rollout workers: an HTTP endpoint, or scripted actions (tests, smoke runs).

A policy is any picklable callable ``policy(observation, info) -> action`` or
``-> {"action": str, "policy_version": int}``; a plain string reply takes its
version from the policy's ``policy_version`` attribute (default 0). ``info`` is
the environment's info (with the whole conversation in ``info["messages"]``, as the one episode loop,
:func:`~stillweb.envs.agents.loop.play_episode`, gives it)
plus ``info["episode_id"]``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx

from stillweb.corpora.errors import UsageError
from stillweb.corpora.canonical import canonical_json

__all__ = ["HttpPolicy", "Policy", "ScriptedPolicy"]

Policy = Callable[[str, Mapping[str, Any]], "str | Mapping[str, Any]"]


class HttpPolicy:
    """A policy behind HTTP: POSTs ``{"episode_id", "observation", "info"}`` to ``url`` and reads
    ``{"action": str, "policy_version": int}`` (the version is optional, default 0)."""

    def __init__(self, url: str, timeout_s: float = 60.0, headers: Mapping[str, str] | None = None) -> None:
        self.url, self.timeout_s, self.headers = url, timeout_s, dict(headers or {})

    def __call__(self, observation: str, info: Mapping[str, Any]) -> dict[str, Any]:
        body = canonical_json({"episode_id": info.get("episode_id"), "observation": observation, "info": info})
        response = httpx.post(self.url, content=body, headers={"Content-Type": "application/json", **self.headers},
                              timeout=self.timeout_s)
        response.raise_for_status()
        reply = response.json()
        if not isinstance(reply, dict) or not isinstance(reply.get("action"), str):
            raise UsageError(f"{self.url} answered {response.text[:200]!r}: expected {{\"action\": str, \"policy_version\": int}}")
        return reply


class ScriptedPolicy:
    """Plays fixed actions per task: ``actions[task_id][turn]``; past the script, ``fallback``.

    Stands in for a model where no weights are available (tests, benchmarks); with
    recorded actions it reproduces an episode exactly.
    """

    def __init__(self, actions: Mapping[str, Sequence[str]], fallback: str = "<answer>unknown</answer>",
                 policy_version: int = 0) -> None:
        self.actions = {task_id: list(script) for task_id, script in actions.items()}
        self.fallback = fallback
        self.policy_version = policy_version

    def __call__(self, observation: str, info: Mapping[str, Any]) -> dict[str, Any]:
        script = self.actions.get(info["task_id"], ())
        turn = info["turn"]
        return {"action": script[turn] if turn < len(script) else self.fallback, "policy_version": self.policy_version}
