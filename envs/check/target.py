"""What ``stillweb check`` checks: an environment made from a registered id or a ``module:Class`` entry
point with keyword arguments, the tasks it plays, and its reference agent (where it has one).

A user's environment gives a reference agent by a ``reference_agent(task)`` method returning an object
with ``act(observation) -> action``, and its tool schemas (for the random-call floor) by
``TextEnv.tool_schemas()`` (a ``registry``'s, or its own override) or a ``tool_schemas`` list; a
registered stillweb environment has them already.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path
from typing import Any

import gymnasium as gym

from stillweb.corpora.errors import UsageError
import stillweb.envs.registration  # noqa: F401 - the environments' ids, for gym.make

__all__ = ["EnvTarget", "Planned", "plan_episodes", "reference_factory", "tool_schemas", "ANSWER_SHOWN_BY_DESIGN"]

# Environments whose observation holds the answer by design (reading comprehension): no leak check.
ANSWER_SHOWN_BY_DESIGN = {"stillweb/Lookup-v0": "Lookup-v0 shows the passage that states the answer (reading, not search)"}


@dataclass(frozen=True)
class EnvTarget:
    """An environment to check: a registered ``env_id`` or an ``entry_point`` (``module:Class``), its
    keyword arguments, and the ``sys.path`` entries its module needs (for the check's subprocesses)."""

    env_id: str | None = None
    entry_point: str | None = None
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    paths: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if (self.env_id is None) == (self.entry_point is None):
            raise UsageError("check needs an env id or --entry-point module:Class (one of them)")
        if self.env_id is not None and self.env_id not in gym.registry:
            known = sorted(env_id for env_id in gym.registry if env_id.startswith("stillweb/"))
            raise UsageError(f"unknown environment {self.env_id!r}; registered: {known} (or pass --entry-point module:Class)")
        if self.entry_point is not None and ":" not in self.entry_point:
            raise UsageError(f"--entry-point must be module:Class, got {self.entry_point!r}")

    @property
    def name(self) -> str:
        """The id or the entry point."""
        return self.env_id or str(self.entry_point)

    def make(self) -> gym.Env:
        """A fresh environment (``UsageError`` naming the target when it cannot be made)."""
        for path in self.paths:
            if path not in sys.path:
                sys.path.insert(0, path)
        try:
            if self.env_id is not None:
                return gym.make(self.env_id, disable_env_checker=True, **dict(self.kwargs))
            module, _, name = str(self.entry_point).partition(":")
            return getattr(importlib.import_module(module), name)(**dict(self.kwargs))
        except (ImportError, AttributeError, TypeError) as error:
            raise UsageError(f"cannot make {self.name} with {json.dumps(dict(self.kwargs), default=str)[:300]}: "
                             f"{type(error).__name__}: {error}") from None

    def as_json(self) -> str:
        """The target as JSON (what the check's subprocesses read)."""
        return json.dumps({"env_id": self.env_id, "entry_point": self.entry_point, "kwargs": dict(self.kwargs),
                           "paths": list(self.paths)}, sort_keys=True, default=str)

    @classmethod
    def from_json(cls, text: str) -> "EnvTarget":
        """The target :meth:`as_json` wrote."""
        value = json.loads(text)
        return cls(value["env_id"], value["entry_point"], value["kwargs"], tuple(value["paths"]))

    @classmethod
    def with_cwd(cls, **fields: Any) -> "EnvTarget":
        """A target whose entry point may live in the working directory (as ``python -m`` would find it)."""
        return cls(**fields, paths=(str(Path.cwd()),))


@dataclass(frozen=True)
class Planned:
    """One episode the check plays: its ``label`` (the task id; ``<env_id>::<task_id>`` in a mixture), the
    task, the reset options, the environment that plays it (``member``: itself or a mixture's member, whose
    format, tools and reference agent apply) and that one's id."""

    label: str
    task: Any
    options: dict[str, Any]
    member: Any
    member_id: str | None


def plan_episodes(env: gym.Env, env_id: str | None, max_tasks: int | None = None) -> list[Planned]:
    """The first ``max_tasks`` episodes to check: one per task (a mixture's members taken in turn)."""
    base = env.unwrapped
    members = getattr(base, "members", None)
    if isinstance(members, Mapping):
        queues = [[Planned(f"{member_id}::{task.task_id}", task, {"env_id": member_id, "task_id": task.task_id},
                           members[member_id], member_id) for task in _tasks(members[member_id].unwrapped, member_id)]
                  for member_id in sorted(members)]
        plan = [item for row in zip_longest(*queues) for item in row if item is not None]
    else:
        plan = [Planned(task.task_id, task, {"task_id": task.task_id}, env, env_id) for task in _tasks(base, env_id)]
    return plan[:max_tasks] if max_tasks is not None else plan


def _tasks(base: Any, name: str | None) -> list[Any]:
    try:
        tasks = list(getattr(base, "tasks", None) or ())
    except RuntimeError:
        tasks = []
    if not tasks:
        raise UsageError(f"{name or type(base).__name__} has no tasks to check (it needs a 'tasks' sequence of task records)")
    return tasks


def reference_factory(env: gym.Env, env_id: str | None) -> Callable[[Any], Any] | None:
    """``task -> agent`` (an object with ``act``) of the environment's reference agent, or ``None``."""
    base = env.unwrapped
    own = getattr(base, "reference_agent", None)
    if callable(own):
        return own
    tool_format = getattr(getattr(base, "format", None), "name", "tongyi")
    if env_id == "stillweb/WikiQA-v0":
        from stillweb.envs.agents.scripted import ReferenceAgent

        return lambda task: ReferenceAgent(task, tool_format=tool_format)
    if env_id == "stillweb/Apps-v0":
        from stillweb.envs.apps.agents import AppReferenceAgent

        return lambda task: AppReferenceAgent(task, tool_format=tool_format)
    if env_id == "stillweb/BFCL-v0":
        from stillweb.envs.bfcl.agents import BfclReferenceAgent

        return lambda task: BfclReferenceAgent(task, tool_format=tool_format)
    if env_id == "stillweb/Lookup-v0":
        return lambda task: _Answers(task.answer)
    return None


def tool_schemas(env: gym.Env) -> list[dict[str, Any]]:
    """The environment's tool schemas (OpenAI function form or bare), for random valid calls; ``[]`` if none."""
    base = env.unwrapped
    schemas = getattr(base, "tool_schemas", None)
    if callable(schemas):  # TextEnv.tool_schemas(): the registry's, or the environment's own
        try:
            schemas = schemas()
        except (UsageError, RuntimeError, AttributeError):
            schemas = None
    if schemas is None and hasattr(getattr(base, "registry", None), "schemas"):
        schemas = base.registry.schemas()
    functions = [schema.get("function", schema) for schema in schemas or () if isinstance(schema, Mapping)]
    return [function for function in functions if function.get("name") not in (None, "answer")]


class _Answers:
    """Lookup-v0's reference: the gold answer, in answer tags."""

    def __init__(self, answer: str) -> None:
        self.answer = answer

    def act(self, observation: str) -> str:
        """The gold answer, whatever the observation."""
        return f"<answer>{self.answer}</answer>"
