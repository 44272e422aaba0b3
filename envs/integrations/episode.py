"""One WikiQA episode driven by tool calls (a name and JSON arguments) instead of policy text.

Trainers that parse the model's tool calls themselves (TRL, verl, verifiers, MCP
clients) hand an adapter ``(name, arguments)``, not text. :class:`ToolEpisode`
turns each call into one step of a :class:`~stillweb.envs.wikiqa.env.WikiQAEnv` in
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

from stillweb.corpora.errors import UsageError
from stillweb.envs.agents.scripted import write_call
from stillweb.envs.core.task_loader import TaskSource
from stillweb.envs.wikiqa.env import WikiQAEnv

__all__ = ["DEFAULT_TOOLS", "INSTRUCTIONS", "TEXT_ENV_IDS", "ToolEpisode", "ToolStep", "text_env", "tool_content"]

# The environments the adapters can run (``env_id``).
TEXT_ENV_IDS = ("stillweb/WikiQA-v0", "stillweb/Apps-v0", "stillweb/BFCL-v0")


def text_env(snapshot: str | Path, tasks: TaskSource | None = None, split: str = "train",
             env_id: str = "stillweb/WikiQA-v0", **env_kwargs: Any):
    """The text environment ``env_id`` (one of :data:`TEXT_ENV_IDS`) the adapters drive.

    ``Apps-v0`` takes an app task set (default ``"core"``) and no ``tools`` whitelist; ``BFCL-v0``
    takes no snapshot, ``tasks`` as task ids, its own splits (``"default"`` for any other) and ``category``.
    """
    if env_id == "stillweb/BFCL-v0":
        from stillweb.envs.bfcl.env import BfclEnv
        from stillweb.envs.bfcl.splits import BFCL_SPLITS

        env_kwargs.pop("tools", None)
        return BfclEnv(split=split if split in BFCL_SPLITS else "default", tasks=tasks, **env_kwargs)
    if env_id == "stillweb/Apps-v0":
        from stillweb.envs.apps.env import AppsEnv

        env_kwargs.pop("tools", None)
        return AppsEnv(snapshot, "core" if tasks is None else tasks, split, **env_kwargs)
    if env_id == "stillweb/WikiQA-v0":
        return WikiQAEnv(snapshot, tasks, split, **env_kwargs)
    raise UsageError(f"the adapters run {' or '.join(TEXT_ENV_IDS)}, not {env_id!r}")

# The research tools an adapter offers by default: python needs bubblewrap on the trainer's machine,
# so it is opt-in (``tools=[..., "python"]``).
DEFAULT_TOOLS = ("search", "open", "find", "calculator", "answer")

INSTRUCTIONS = (
    "You are a research assistant. Use the tools to search the document collection, open and read "
    "documents, and answer only when the evidence supports the answer. Finish by calling the answer "
    "tool with the answer text and the doc ids you cite."
)
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
    """A :class:`WikiQAEnv` (``tool_format="openai"``) stepped one tool call at a time.

    Args:
        snapshot: the snapshot directory.
        tasks, split: the task source and split, as for :class:`WikiQAEnv`.
        tools: the offered tools (default :data:`DEFAULT_TOOLS`; not used by ``Apps-v0``, which offers its endpoints).
        env_id: ``"stillweb/WikiQA-v0"`` (default) or ``"stillweb/Apps-v0"`` (the app world's endpoints;
            ``tasks`` is an app task set; after an answer the next call's text is the next user turn).
        **env_kwargs: any other argument of the env (``max_turns``, ``reward``, ``error_rate``...);
            ``max_calls_per_turn`` is 1: each tool call is one step.
    """

    def __init__(self, snapshot: str | Path, tasks: TaskSource | None = None, split: str = "train",
                 tools: tuple[str, ...] | list[str] | None = DEFAULT_TOOLS, env_id: str = "stillweb/WikiQA-v0",
                 **env_kwargs: Any) -> None:
        if "tool_format" in env_kwargs:
            raise UsageError("ToolEpisode always steps its env in the 'openai' format; do not pass tool_format")
        self.apps = env_id in ("stillweb/Apps-v0", "stillweb/BFCL-v0")  # user turns, functions of their own
        self.env = text_env(snapshot, tasks, split, env_id, tool_format="openai", tools=None if tools is None else list(tools),
                            max_calls_per_turn=1, **env_kwargs)
        self.last: ToolStep | None = None
        self.info: dict[str, Any] = {}

    @property
    def registry(self):
        """The env's :class:`~stillweb.sandboxes.ToolRegistry` (schemas, names)."""
        return self.env.registry

    def schemas(self) -> list[dict]:
        """OpenAI function definitions of every call the episode accepts (the app world's
        endpoints and its ``answer``, or the registry's tools, ``answer`` among them)."""
        from stillweb.envs.apps.prompt import ANSWER_SCHEMA

        if hasattr(self.env, "tool_schemas"):  # BFCL-v0: the functions its task offers now
            return self.env.tool_schemas()
        return self.env.registry.schemas() + ([ANSWER_SCHEMA] if self.apps else [])

    @property
    def done(self) -> bool:
        """True once the episode answered or hit a limit."""
        return self.last is not None and self.last.done

    @property
    def reward(self) -> float:
        """The episode's reward: the env's final reward once done, else 0."""
        return self.last.reward if self.last is not None and self.last.done else 0.0

    def reset(self, task_id: str | None = None, seed: int | None = None) -> str:
        """Start the episode of ``task_id`` (or the seed's task); returns the question.

        Raises ``ValueError`` for an unknown task id.
        """
        options = {"task_id": task_id} if task_id is not None else None
        _, self.info = self.env.reset(seed=seed, options=options)
        self.last = None
        if self.apps:  # the first user turn, with whose apps the agent operates
            return self.info["messages"][-1]["content"]
        return self.env.unwrapped.tasks.by_id(self.info["task_id"]).question

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
