"""One episode of any registered text environment driven by tool calls (a name and JSON arguments)
instead of policy text.

Trainers that parse the model's tool calls themselves (TRL, verl, verifiers, MCP
clients) hand an adapter ``(name, arguments)``, not text. :class:`ToolEpisode`
turns each call into one step of the :class:`~stillweb.envs.core.episode.TextEnv` registered as
``env_id`` (:func:`text_env`: ``WikiQA-v0`` by default, any other registered one alike) in
the ``openai`` format (the call written as ``{"name": ..., "arguments": ...}``),
so limits, validation, error observations and rewards are the environment's
own: the text a tool call returns is the ``content`` of the tool message that
the in-process environment renders for the same action.

>>> episode = ToolEpisode("snap/", tasks="default")            # doctest: +SKIP
>>> question = episode.reset(task_id="sw-...")                  # doctest: +SKIP
>>> episode.call("search", {"query": "river city"}).text        # doctest: +SKIP
>>> episode.call("answer", {"text": "Oslo", "citations": [3]}).reward  # doctest: +SKIP
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import load_env_creator

from stillweb.envs.registration import ENV_IDS
from stillweb.corpora.errors import UsageError
from stillweb.envs.agents.scripted import write_call
from stillweb.envs.core.episode import TextEnv
from stillweb.envs.core.task_loader import TaskSource

__all__ = ["DEFAULT_TOOLS", "ToolEpisode", "ToolStep", "text_env", "text_env_ids", "tool_content"]


def text_env(snapshot: str | Path | None, tasks: TaskSource | None = None, split: str = "train",
             env_id: str = "stillweb/WikiQA-v0", **env_kwargs: Any) -> TextEnv:
    """The text environment registered as ``env_id`` (any Gymnasium id whose entry point is a
    :class:`~stillweb.envs.core.episode.TextEnv`), made by its :meth:`~stillweb.envs.core.episode.TextEnv.for_adapters`
    with the registration's kwargs under ``env_kwargs``; ``UsageError`` naming the text environments otherwise."""
    env_class = _text_env_class(env_id)
    if env_class is None:
        raise UsageError(f"the adapters run a registered TextEnv ({', '.join(text_env_ids())}), not {env_id!r}")
    return env_class.for_adapters(snapshot, tasks, split, **{**gym.spec(env_id).kwargs, **env_kwargs})


def text_env_ids() -> tuple[str, ...]:
    """The registered ids whose environment is a ``TextEnv``, sorted: stillweb's (:mod:`stillweb.envs.registration`)
    and those registered with the class itself (another package's, registered by a module path, is not imported
    to find out; :func:`text_env` takes it all the same)."""
    candidates = [env_id for env_id, spec in gym.registry.items()
                  if env_id in ENV_IDS or not isinstance(spec.entry_point, str)]
    return tuple(sorted(env_id for env_id in candidates if _text_env_class(env_id) is not None))


def _text_env_class(env_id: str) -> type[TextEnv] | None:
    spec = gym.registry.get(env_id) if isinstance(env_id, str) else None
    if spec is None or spec.entry_point is None:
        return None
    try:
        creator = load_env_creator(spec.entry_point) if isinstance(spec.entry_point, str) else spec.entry_point
    except (ImportError, AttributeError, gym.error.Error):  # an optional extra that is not installed
        return None
    return creator if isinstance(creator, type) and issubclass(creator, TextEnv) else None


# The research tools an adapter offers by default: python needs bubblewrap on the trainer's machine,
# so it is opt-in (``tools=[..., "python"]``).
DEFAULT_TOOLS = ("search", "open", "find", "calculator", "answer")

ENDED = "The episode has ended ({reason}): no more tool calls are run."


@dataclass(frozen=True)
class ToolStep:
    """What one tool call did: the text to show the model, and the environment step's outcome."""

    text: str
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any] = field(repr=False)

    @property
    def done(self) -> bool:
        """The episode is over (answered, or stopped by a limit)."""
        return self.terminated or self.truncated


class ToolEpisode:
    """A registered :class:`~stillweb.envs.core.episode.TextEnv` (``tool_format="openai"``) stepped one tool
    call at a time.

    Args:
        snapshot: the snapshot directory.
        tasks, split: the task source and split, as the environment takes them.
        tools: the offered tools (default :data:`DEFAULT_TOOLS`; not used by ``Apps-v0``, which offers its endpoints).
        env_id: ``"stillweb/WikiQA-v0"`` (default) or any registered text environment (:func:`text_env_ids`;
            ``Apps-v0``: ``tasks`` is an app task set; after an answer the next call's text is the next user turn).
        **env_kwargs: any other argument of the env (``max_turns``, ``reward``, ``error_rate``...);
            ``max_calls_per_turn`` is 1: each tool call is one step.
    """

    def __init__(self, snapshot: str | Path, tasks: TaskSource | None = None, split: str = "train",
                 tools: tuple[str, ...] | list[str] | None = DEFAULT_TOOLS, env_id: str = "stillweb/WikiQA-v0",
                 **env_kwargs: Any) -> None:
        if "tool_format" in env_kwargs:
            raise UsageError("ToolEpisode always steps its env in the 'openai' format; do not pass tool_format")
        self.env = text_env(snapshot, tasks, split, env_id, tool_format="openai", tools=None if tools is None else list(tools),
                            max_calls_per_turn=1, **env_kwargs)
        self.last: ToolStep | None = None
        self.info: dict[str, Any] = {}

    @property
    def registry(self):
        """The env's :class:`~stillweb.sandboxes.ToolRegistry` (schemas, names)."""
        return self.env.registry

    def schemas(self) -> list[dict]:
        """OpenAI function definitions of every call the episode accepts, ``answer`` among them
        (the environment's :meth:`~stillweb.envs.core.episode.TextEnv.tool_schemas`)."""
        return self.env.tool_schemas()

    @property
    def done(self) -> bool:
        """True once the episode answered or hit a limit."""
        return self.last is not None and self.last.done

    @property
    def reward(self) -> float:
        """The episode's reward: the env's final reward once done, else 0."""
        return self.last.reward if self.last is not None and self.last.done else 0.0

    def reset(self, task_id: str | None = None, seed: int | None = None) -> str:
        """Start the episode of ``task_id`` (or the seed's task); returns the reset's user message (the question,
        or an app environment's first user turn).

        Raises ``ValueError`` for an unknown task id.
        """
        options = {"task_id": task_id} if task_id is not None else None
        _, self.info = self.env.reset(seed=seed, options=options)
        self.last = None
        return self.info["messages"][-1]["content"]  # the reset's user message: the question, or the first user turn

    def call(self, name: str, arguments: Any) -> ToolStep:
        """Run one tool call as one env step; never raises on the policy's name or arguments."""
        if not self.info:
            raise RuntimeError("call() before reset(): start an episode first")
        if self.last is not None and self.last.done:
            reason = self.last.info.get("termination_reason") or self.last.info.get("truncation_reason")
            return ToolStep(ENDED.format(reason=reason), 0.0, self.last.terminated, self.last.truncated, self.last.info)
        action = _action_text(name, arguments)
        observation, reward, terminated, truncated, info = self.env.step(action)
        self.info = info
        text = tool_content(observation) if observation else _ended_text(info)
        self.last = ToolStep(text, float(reward), bool(terminated), bool(truncated), info)
        return self.last


def tool_content(observation: str) -> str:
    """The ``content`` of the tool message an ``openai``-format observation holds (one call per step)."""
    try:
        message = json.loads(observation)
    except ValueError:  # clipped past OBSERVATION_MAX_CHARS: show the text as it is
        return observation
    return message["content"] if isinstance(message, dict) and isinstance(message.get("content"), str) else observation


def _action_text(name: Any, arguments: Any) -> str:
    """The openai-format action for a call (any arguments: the env reports what is wrong with them)."""
    if not isinstance(arguments, dict):
        return json.dumps({"name": str(name), "arguments": arguments}, ensure_ascii=False, default=str)
    return write_call("openai", str(name), json.loads(json.dumps(arguments, ensure_ascii=False, default=str)))


def _ended_text(info: dict[str, Any]) -> str:
    """What the answer call returns: the episode is over, and how it was scored."""
    return f"Answer recorded; the episode is over (outcome {info.get('outcome', 0.0)})."
