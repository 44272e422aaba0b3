"""Who plays a profile's episodes: a chat endpoint, the reference agent or the random-text agent.

A :class:`PolicySpec` is the picklable description of the policy (sent to every
worker process or Ray task); :func:`make_player` turns it into a
``player(observation, info) -> action`` for one episode. Every episode has a
sample seed keyed by (task id, sample index), passed to the endpoint as the
OpenAI ``seed`` and used as the random agent's seed, so a re-run asks the same
questions with the same seeds.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from stillweb.corpora.errors import UsageError
from stillweb.corpora.keyed import KeyedRng
from stillweb.envs.agents.scripted import RandomTextAgent, ReferenceAgent
from stillweb.envs.agents.chat_policy import ChatPolicy, Sampling
from stillweb.corpora.tasks.store.record import TaskRecord

__all__ = ["AGENTS", "PolicySpec", "Player", "make_player", "sample_seed"]

AGENTS = ("reference", "random")
Player = Callable[[str, Mapping[str, Any]], str]
_PLAYER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


@dataclass(frozen=True)
class PolicySpec:
    """The policy of a profile: ``kind`` ``"chat"`` (an endpoint) or an agent (``"reference"``, ``"random"``).

    ``name`` names the profile file (``profile/<name>.parquet``); ``model`` is the
    endpoint's model id (``None`` for agents); the rest configure :class:`ChatPolicy`.
    """

    kind: str
    name: str
    base_url: str | None = None
    model: str | None = None
    sampling: Sampling = field(default_factory=Sampling)
    timeout_s: float = 60.0
    retries: int = 3
    backoff_s: float = 0.5

    def __post_init__(self) -> None:
        if self.kind not in ("chat", *AGENTS):
            raise UsageError(f"unknown policy kind {self.kind!r}; use 'chat' (an endpoint) or one of {AGENTS}")
        if self.kind == "chat" and not (self.base_url and self.model):
            raise UsageError("a chat policy needs base_url and model")
        if not _PLAYER_NAME.match(self.name):
            raise UsageError(f"bad policy name {self.name!r}: letters, digits, '.', '_' and '-' only (it names a file)")

    @classmethod
    def for_endpoint(cls, base_url: str, model: str | None = None, name: str | None = None,
                     sampling: Sampling | None = None, **options: Any) -> "PolicySpec":
        """A chat policy; without ``model`` the endpoint is asked for its model id (``PolicyFailure`` if down)."""
        policy = ChatPolicy(base_url, model, sampling, **options)
        model_id = policy.model
        return cls("chat", name or policy_file_name(model_id), base_url, model_id, policy.sampling, **options)

    def record(self) -> dict[str, Any]:
        """What a profile records about its policy (never the API key: there is none here)."""
        return {"kind": self.kind, "name": self.name, "base_url": self.base_url, "model": self.model,
                "sampling": asdict(self.sampling) if self.kind == "chat" else None}


def policy_file_name(model_id: str) -> str:
    """A file-safe policy name from a model id (``Qwen/Qwen3-8B`` -> ``Qwen_Qwen3-8B``)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id).strip("._-")
    return name[:128] or "policy"


def sample_seed(task_id: str, sample: int) -> int:
    """The seed of sample ``sample`` of ``task_id`` (31 bits, fits every server's seed field)."""
    return KeyedRng(0, "profile", task_id, sample).integer(0, 2**31 - 1)


def make_player(spec: PolicySpec, task: TaskRecord, seed: int, tool_format: str) -> Player:
    """A ``player(observation, info) -> action`` for one episode of ``task``."""
    if spec.kind == "reference":
        agent = ReferenceAgent(task, tool_format=tool_format)
        return lambda observation, info: agent.act(observation)
    if spec.kind == "random":
        random_agent = RandomTextAgent(seed)
        return lambda observation, info: random_agent.act(observation)
    policy = _chat_policy(spec, os.getpid())
    return lambda observation, info: policy(observation, {**info, "sample_seed": seed})


@functools.lru_cache(maxsize=8)
def _chat_policy(spec: PolicySpec, pid: int) -> ChatPolicy:
    """One :class:`ChatPolicy` (one connection pool) per spec and process: forked workers get their own."""
    return ChatPolicy(spec.base_url or "", spec.model, spec.sampling, timeout_s=spec.timeout_s,
                      retries=spec.retries, backoff_s=spec.backoff_s)
