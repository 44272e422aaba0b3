"""TRL: an ``environment_factory`` for ``GRPOTrainer`` and the matching ``datasets`` dataset.

TRL (``GRPOTrainer(environment_factory=...)``, TRL 1.x) builds one environment per
rollout, exposes its public methods as tools (their schemas come from the type
hints and Google-style docstrings, via ``transformers.utils.get_json_schema``),
calls ``reset(**row)`` with the dataset row before generating, runs the model's
tool calls against the methods, and, when the environment has ``get_reward()``,
uses it as a reward. :func:`environment_factory` makes such a class whose
methods are the snapshot's tools (generated from the tool registry's JSON
schemas, so nothing is restated), each call stepping a
:class:`~stillweb.envs.integrations.episode.ToolEpisode`; the episode's reward is
the environment's reward. :func:`task_dataset` gives the prompts.

>>> from trl import GRPOConfig, GRPOTrainer                               # doctest: +SKIP
>>> from stillweb.envs.integrations.trl import environment_factory, task_dataset  # doctest: +SKIP
>>> trainer = GRPOTrainer(model=model, args=GRPOConfig(...), processing_class=tokenizer,
...                       train_dataset=task_dataset("snap/", "default"),
...                       environment_factory=environment_factory("snap/", "default"))  # doctest: +SKIP
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stillweb.corpora.errors import UsageError
from stillweb.envs.integrations.episode import DEFAULT_TOOLS, ToolEpisode
from stillweb.envs.core.task_loader import TaskSource

__all__ = ["StillwebToolEnv", "environment_factory", "task_dataset", "python_type"]


class StillwebToolEnv:
    """Base of the generated environment classes: ``reset`` and ``get_reward`` (tools are added per class)."""

    _settings: dict[str, Any] = {}

    def __init__(self) -> None:
        self.episode = ToolEpisode(**self._settings)

    def reset(self, **row: Any) -> None:
        """Start the episode of the row's ``task_id`` (TRL passes every dataset column).

        Returns ``None``: the question is already in the row's prompt.
        """
        if "task_id" not in row:
            raise UsageError(f"the dataset row has no 'task_id' column (columns: {sorted(row)}); build it with task_dataset()")
        self.episode.reset(task_id=row["task_id"])
        return None

    def get_reward(self) -> float:
        """The environment's reward for the episode (0 until the answer tool was called)."""
        return self.episode.reward


def environment_factory(snapshot: str | Path, tasks: TaskSource | None = None, split: str = "train",
                        tools: tuple[str, ...] | list[str] = DEFAULT_TOOLS, **env_kwargs: Any) -> Callable[[], StillwebToolEnv]:
    """A class (a zero-argument callable) for ``GRPOTrainer(environment_factory=...)``.

    Its public methods are the tools named in ``tools``; ``env_kwargs`` go to the
    :class:`~stillweb.envs.wikiqa.env.WikiQAEnv` behind each instance.
    """
    settings = dict(snapshot=snapshot, tasks=tasks, split=split, tools=tuple(tools), **env_kwargs)
    probe = ToolEpisode(**settings)  # fails here, naming the problem, rather than inside the trainer
    members: dict[str, Any] = {"_settings": settings, "__doc__": "stillweb tools over one snapshot (one episode per instance)."}
    for schema in probe.schemas():
        function = schema["function"]
        members[function["name"]] = _tool_method(function["name"], function["description"], function["parameters"])
    return type("StillwebEnv", (StillwebToolEnv,), members)


def task_dataset(snapshot: str | Path, tasks: TaskSource | None = None, split: str = "train", system: str | None = None,
                 env_id: str = "stillweb/WikiQA-v0", **env_kwargs: Any):
    """A ``datasets.Dataset`` of the task set: ``prompt`` (system and user messages), ``task_id``, ``answer``.

    Each prompt is the environment's own: the user message is what ``env_id`` shows at the task's reset (for
    ``Apps-v0`` and ``BFCL-v0`` the first user turn, after the line saying whose apps the agent operates);
    the system message is ``system``, else the environment's own instructions
    (:meth:`~stillweb.envs.core.episode.TextEnv.instructions`: its system prompt without the tool list, which
    TRL passes as functions; ``WikiQA-v0``'s research instructions).
    ``tasks`` and ``env_kwargs`` are resolved as the environment does (``None``: the snapshot's first set).
    """
    from datasets import Dataset

    episode = ToolEpisode(snapshot, tasks, split, env_id=env_id, **env_kwargs)  # the env's own task loading
    rows = []
    for task in episode.env.unwrapped.tasks:
        user = episode.reset(task_id=task.task_id)
        preamble = system or episode.env.unwrapped.instructions()
        rows.append({"prompt": [{"role": "system", "content": preamble}, {"role": "user", "content": user}],
                     "task_id": task.task_id, "answer": task.answer})
    return Dataset.from_list(rows)


def _tool_method(name: str, description: str, parameters: dict[str, Any]) -> Callable[..., str]:
    """A method ``name(self, **arguments) -> str`` whose signature and docstring state ``parameters``.

    The body takes any keyword arguments, so a wrong or unexpected argument reaches
    the tool registry, which answers with its own error observation.
    """

    def method(self: StillwebToolEnv, **arguments: Any) -> str:
        return self.episode.call(name, arguments).text

    required = set(parameters.get("required", ()))
    signature = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    lines = [description.replace("\n", " "), "", "Args:"]
    for argument, schema in parameters.get("properties", {}).items():
        annotations[argument] = python_type(schema)
        default = inspect.Parameter.empty if argument in required else schema.get("default")
        signature.append(inspect.Parameter(argument, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotations[argument]))
        lines.append(f"    {argument}: {schema.get('description', argument).replace(chr(10), ' ')}")
    lines += ["", "Returns:", "    The tool's result as text."]
    annotations["return"] = str
    method.__name__ = method.__qualname__ = name
    method.__doc__ = "\n".join(lines)
    method.__annotations__ = annotations
    method.__signature__ = inspect.Signature(signature, return_annotation=str)  # type: ignore[attr-defined]
    return method


_JSON_TYPES = {"string": str, "integer": int, "number": float, "boolean": bool, "object": dict}


def python_type(schema: dict[str, Any]) -> Any:
    """The Python type hint of a JSON schema (``anyOf`` -> a union, arrays -> ``list[...]``).

    >>> python_type({"anyOf": [{"type": "integer"}, {"type": "string"}]})
    typing.Union[int, str]
    """
    if "anyOf" in schema:
        return typing.Union[tuple(python_type(option) for option in schema["anyOf"])]
    kind = schema.get("type")
    if kind == "array":
        return list[python_type(schema.get("items", {}))] if schema.get("items") else list
    if kind not in _JSON_TYPES:
        raise UsageError(f"no Python type for the JSON schema {schema!r}")
    return _JSON_TYPES[kind]
