"""verifiers (``v1``) without an OpenEnv server: a native ``Taskset``, ``Env`` and ``Toolset``.

- :class:`StillwebTaskset` yields one verifiers task per stillweb task of a snapshot's task set
  (the question as the prompt, ``WikiQA-v0``'s system prompt describing the tools in the
  configured call format, the task id as the durable ``id``).
- :class:`StillwebEnv` plays a task the way verifiers' TextArena env plays a game: its
  ``run(task, agents)`` steps a :class:`~stillweb.envs.wikiqa.env.WikiQAEnv` in-process as the run's
  user (each assistant reply is the action, the observation comes back as the next user
  turn) and records the environment's own reward as ``stillweb_reward`` (its parts in
  ``trace.info``): observations and rewards are ``WikiQA-v0``'s for the same replies.
- :class:`StillwebToolset` exposes the snapshot's ``search``, ``open`` and ``find`` as MCP tools
  (``@vf.tool`` methods) for harnesses that call tools natively; each returns the text the
  tool returns inside ``WikiQA-v0``.

>>> taskset = StillwebTaskset(StillwebTasksetConfig(id="stillweb", snapshot="snap/", tasks="default"))  # doctest: +SKIP
>>> env = StillwebEnv(StillwebEnvConfig(taskset=...))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import verifiers.v1 as vf

from stillweb.corpora.errors import UsageError
from stillweb.envs.wikiqa.env import WikiQAEnv
from stillweb.sandboxes import ToolCall, ToolRegistry
from stillweb.corpora.snapshot.shared import shared_snapshot

__all__ = ["StillwebData", "StillwebEnv", "StillwebEnvConfig", "StillwebTask", "StillwebTaskset",
           "StillwebTasksetConfig", "StillwebToolset", "StillwebToolsetConfig"]


class StillwebTasksetConfig(vf.TasksetConfig):
    """Which tasks and environment settings: a snapshot, a task set (name or file), a split,
    and further :class:`WikiQAEnv` arguments in ``env_kwargs`` (``tool_format``, ``max_turns``...)."""

    snapshot: str = ""  # a default, so that vf-eval can build the config before reading --env.taskset.snapshot
    tasks: str | None = None
    split: str = "train"
    env_kwargs: dict[str, Any] = {}


class StillwebData(vf.TaskData):
    """One stillweb task: its id and where the environment that plays it comes from."""

    task_id: str
    snapshot: str
    tasks: str | None
    split: str
    env_kwargs: dict[str, Any]


class StillwebTask(vf.Task[StillwebData]):
    """A stillweb task; its key is the task id (stable across task-set files)."""

    @property
    def key(self) -> str:
        return self.data.task_id


class StillwebTaskset(vf.Taskset[StillwebTask, StillwebTasksetConfig]):
    """The tasks of a snapshot's task set, in the set's order."""

    def load(self) -> Iterator[StillwebTask]:
        config = self.config
        if not config.snapshot:
            raise UsageError("StillwebTasksetConfig needs a snapshot directory: --env.taskset.snapshot PATH "
                             "(a snapshot built with `stillweb build`)")
        env = make_env(config.snapshot, config.tasks, config.split, config.env_kwargs)
        for task in env.tasks:
            yield StillwebTask(StillwebData(
                id=task.task_id, name=task.task_id, prompt=task.question, system_prompt=env.system_prompt,
                task_id=task.task_id, snapshot=config.snapshot, tasks=config.tasks, split=config.split,
                env_kwargs=dict(config.env_kwargs)), config.task)


class StillwebEnvConfig(vf.EnvConfig):
    """The one seat: the policy that answers."""

    player: vf.AgentConfig = vf.AgentConfig()


class StillwebEnv(vf.Env[StillwebEnvConfig]):
    """Steps ``WikiQA-v0`` in-process with the player's replies (see the module docstring)."""

    async def run(self, task: StillwebTask, agents: Any) -> None:
        data = task.data
        env = make_env(data.snapshot, data.tasks, data.split, data.env_kwargs)
        env.reset(options={"task_id": data.task_id})
        reward, info = 0.0, {}
        async with agents.player.interaction(task) as interaction:
            segment = await interaction.turn()  # the prompt is the question: the model speaks first
            while not segment.terminated:
                observation, reward, terminated, truncated, info = env.step(segment.last_reply)
                if terminated or truncated:
                    break
                segment = await interaction.turn(observation)
        trace = interaction.trace
        trace.record_reward("stillweb_reward", float(reward))
        trace.info["stillweb"] = {key: info.get(key) for key in
                                  ("task_id", "reward_parts", "termination_reason", "truncation_reason")}


def make_env(snapshot: str, tasks: str | None, split: str, env_kwargs: dict[str, Any]) -> WikiQAEnv:
    """The ``WikiQA-v0`` environment a task is played in."""
    return WikiQAEnv(snapshot, tasks, split, **env_kwargs)


class StillwebToolsetConfig(vf.ToolsetConfig):
    """The snapshot whose tools the toolset serves."""

    snapshot: str = ""


class StillwebToolset(vf.Toolset[StillwebToolsetConfig, vf.State]):
    """The snapshot's search, open and find as MCP tools (texts as in ``WikiQA-v0``)."""

    TOOL_PREFIX = None  # the tools keep their stillweb names

    def __init__(self, config: StillwebToolsetConfig) -> None:
        super().__init__(config)
        self.registry = ToolRegistry(shared_snapshot(config.snapshot), tools=["search", "open", "find"])

    @vf.tool
    def search(self, query: str, k: int | None = None) -> str:
        """Search the document collection (BM25); returns doc ids, titles and snippets."""
        return self._call("search", {"query": query, **({"k": k} if k is not None else {})})

    @vf.tool
    def open(self, doc: int | str, page: int | None = None) -> str:
        """Open a document by doc id or exact title and read one page of it."""
        return self._call("open", {"doc": doc, **({"page": page} if page is not None else {})})

    @vf.tool
    def find(self, doc: int | str, pattern: str) -> str:
        """Find where a phrase occurs in a document (case-insensitive); at most 10 lines."""
        return self._call("find", {"doc": doc, "pattern": pattern})

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        return self.registry.call(ToolCall(name=name, arguments=arguments)).text
