"""The values that cross the agent boundary: a tool call in, a tool result out,
and the small base class every tool implements.

A :class:`ToolCall` is what a format parser extracts from the policy's text; a
:class:`ToolResult` is what the model sees next (``text``) plus structured
``data`` for trainers and rewards. Errors are results with a ``flag``, never
exceptions: inside a tool, raise :class:`ToolInputError` and the registry turns
it into a flagged result.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from stillweb.corpora.errors import PolicyInputError, UsageError

__all__ = [
    "FLAGS",
    "ToolCall",
    "ToolResult",
    "ToolInputError",
    "Tool",
    "preview",
    "example_call",
]

# Every value ``ToolResult.flag`` may take; ``None`` means the call succeeded.
# The last four are the typed errors of stateful APIs (sandboxes/apps): another user's data,
# a state that forbids the call (HTTP 409), and the transient 429 and 503 answers.
# ``not_recorded``: a frozen tool (:mod:`stillweb.sandboxes.frozen`) has no recorded answer.
# ``budget_exhausted``: the call was not run, the episode's tool-call budget is spent.
FLAGS = (None, "unknown_tool", "bad_arguments", "not_found", "format_error", "tool_error", "timeout",
         "permission_denied", "conflict", "rate_limited", "unavailable", "not_recorded", "budget_exhausted")

# How much of a policy-supplied value an error message echoes back.
PREVIEW_CHARS = 80


@dataclass(frozen=True)
class ToolCall:
    """A request to run tool ``name`` with JSON ``arguments``.

    ``call_id`` is the id a format assigned to the call (OpenAI ``tool_calls[i].id``),
    echoed on the result so a trainer can pair them; ``None`` when the format has none.
    """

    name: str
    arguments: dict = field(default_factory=dict)
    call_id: str | None = None

    def to_dict(self) -> dict:
        """A JSON-serialisable dict: ``{"name", "arguments", "call_id"}``."""
        return {"name": self.name, "arguments": self.arguments, "call_id": self.call_id}

    @classmethod
    def from_dict(cls, payload: dict) -> ToolCall:
        """Inverse of :meth:`to_dict`; missing ``arguments`` mean ``{}``."""
        return cls(name=payload["name"], arguments=payload.get("arguments", {}), call_id=payload.get("call_id"))


@dataclass(frozen=True)
class ToolResult:
    """The outcome of one tool call.

    ``text`` is what the model sees; ``data`` is the same content, structured and
    JSON-serialisable; ``flag`` is ``None`` on success or one of :data:`FLAGS`;
    ``terminal`` is true for the ``answer`` tool; ``call_id`` echoes the call's id.
    ``shown_docs`` are the doc ids the result names, in order (search hits, the
    document of ``open``/``find``, also when an out-of-range page is flagged);
    ``opened_doc`` is the document whose page ``open`` returned. Environments
    track what an episode saw and read from these two fields, never from ``text``
    or ``data``.
    """

    name: str
    text: str
    data: Any = None
    flag: str | None = None
    terminal: bool = False
    call_id: str | None = None
    shown_docs: tuple[int, ...] = ()
    opened_doc: int | None = None

    def __post_init__(self) -> None:
        if self.flag not in FLAGS:
            raise UsageError(f"ToolResult.flag must be one of {FLAGS}, got {self.flag!r}")

    @property
    def ok(self) -> bool:
        """True when the call succeeded (no flag)."""
        return self.flag is None

    def to_dict(self) -> dict:
        """A JSON-serialisable dict with every field."""
        return {
            "name": self.name,
            "text": self.text,
            "data": self.data,
            "flag": self.flag,
            "terminal": self.terminal,
            "call_id": self.call_id,
            "shown_docs": list(self.shown_docs),
            "opened_doc": self.opened_doc,
        }

    @classmethod
    def from_dict(cls, payload: dict) -> ToolResult:
        """Inverse of :meth:`to_dict`."""
        return cls(
            name=payload["name"],
            text=payload["text"],
            data=payload.get("data"),
            flag=payload.get("flag"),
            terminal=bool(payload.get("terminal", False)),
            call_id=payload.get("call_id"),
            shown_docs=tuple(payload.get("shown_docs") or ()),
            opened_doc=payload.get("opened_doc"),
        )


class ToolInputError(PolicyInputError):
    """Raised inside a tool when the policy's input cannot be served.

    The registry converts it into ``ToolResult(text=message, flag=flag, data=data,
    shown_docs=shown_docs)``; ``message`` must say what was wrong and how to call
    the tool correctly.
    """

    def __init__(self, flag: str, message: str, data: Any = None, shown_docs: tuple[int, ...] = ()) -> None:
        if flag not in FLAGS or flag is None:
            raise UsageError(f"ToolInputError flag must be one of {FLAGS[1:]}, got {flag!r}")
        super().__init__(message)
        self.flag = flag
        self.message = message
        self.data = data
        self.shown_docs = shown_docs


class Tool(ABC):
    """One tool an agent can call.

    Subclasses set ``name``, ``description`` (what the model reads), ``parameters``
    (a JSON schema of an object with ``additionalProperties: false``) and
    ``example`` (valid arguments, shown in error messages), and implement
    :meth:`run`, which receives arguments already validated against
    ``parameters`` and returns a :class:`ToolResult` or raises
    :class:`ToolInputError`. ``aliases`` are other names the registry accepts.
    """

    name: str = ""
    description: str = ""
    parameters: dict = {}
    example: dict = {}
    aliases: tuple[str, ...] = ()

    @abstractmethod
    def run(self, arguments: dict) -> ToolResult:
        """Execute the tool on validated ``arguments``."""

    def result(
        self, text: str, data: Any = None, terminal: bool = False,
        shown_docs: tuple[int, ...] = (), opened_doc: int | None = None,
    ) -> ToolResult:
        """A successful result of this tool."""
        return ToolResult(name=self.name, text=text, data=data, terminal=terminal,
                          shown_docs=shown_docs, opened_doc=opened_doc)


def preview(value: Any, limit: int = PREVIEW_CHARS) -> str:
    """A short, single-line JSON rendering of a policy-supplied value for error messages."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def example_call(name: str, arguments: dict) -> str:
    """How a correct call looks, e.g. ``search({"query": "Marie Curie", "k": 5})``."""
    return f"{name}({json.dumps(arguments, ensure_ascii=False)})"
