"""The tool registry: which tools an environment offers, their schemas, and safe dispatch.

>>> registry = ToolRegistry(snapshot, tools=["search", "open", "answer"])   # doctest: +SKIP
>>> registry.call(ToolCall("search", {"query": "Marie Curie"})).text        # doctest: +SKIP

:meth:`ToolRegistry.call` is the agent boundary: whatever the call holds, it
returns a :class:`ToolResult` (flagged ``unknown_tool``, ``bad_arguments``,
``not_found``, ``tool_error`` or ``timeout`` when something is wrong) and never
raises. Arguments are validated against the tool's JSON schema (compiled once)
before the tool runs (a flat schema by plain Python first). Developer mistakes (an unknown tool in the whitelist)
raise ``ValueError``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from stillweb.corpora.errors import UsageError
from stillweb.sandboxes.tools.types import Tool, ToolCall, ToolInputError, ToolResult, example_call, preview
from stillweb.sandboxes.tools.answer import AnswerTool
from stillweb.sandboxes.tools.python_and_calculator import CalculatorTool, PythonTool
from stillweb.sandboxes.tools.documents import FindTool, OpenTool
from stillweb.sandboxes.tools.search import SearchTool
from stillweb.sandboxes.tools.validation import ArgumentValidator

if TYPE_CHECKING:
    from stillweb.corpora.snapshot.reading import Snapshot

__all__ = ["ToolRegistry", "TOOL_NAMES"]

_FACTORIES: dict[str, Callable[[Any, Any], Tool]] = {
    "search": lambda snapshot, python: SearchTool(snapshot),
    "open": lambda snapshot, python: OpenTool(snapshot),
    "find": lambda snapshot, python: FindTool(snapshot),
    "python": lambda snapshot, python: PythonTool(python),
    "calculator": lambda snapshot, python: CalculatorTool(),
    "answer": lambda snapshot, python: AnswerTool(snapshot),
}
# Every tool, in the order schemas are listed.
TOOL_NAMES: tuple[str, ...] = tuple(_FACTORIES)


class ToolRegistry:
    """The tools offered to an agent over one snapshot.

    ``tools`` is a whitelist of tool names (``None``: all of :data:`TOOL_NAMES`);
    ``python`` is the :class:`~stillweb.sandboxes.python.sandbox.PythonSandboxConfig`
    of the ``python`` tool (``None``: its defaults). ``extra`` mounts more tool objects
    (a :class:`~stillweb.sandboxes.frozen.tool.FrozenTool`, say): offered beside the
    built-in ones, or instead of the built-in tool of the same name. Aliases (``visit`` for
    ``open``) are accepted in calls whenever their tool is offered.
    """

    def __init__(self, snapshot: Snapshot, tools: Iterable[str] | None = None, python: Any = None,
                 extra: Iterable[Tool] = ()) -> None:
        mounted = {tool.name: tool for tool in extra}
        available = list(dict.fromkeys([*TOOL_NAMES, *mounted]))
        requested = list(available if tools is None else tools)
        unknown = [name for name in requested if name not in available]
        if unknown:
            raise UsageError(f"unknown tool name(s) {unknown} in the whitelist; available: {available}")
        self.snapshot = snapshot
        self._install([mounted[name] if name in mounted else _FACTORIES[name](snapshot, python)
                       for name in dict.fromkeys(requested)])

    @classmethod
    def from_tools(cls, tools: Iterable[Tool]) -> ToolRegistry:
        """A registry offering exactly ``tools`` (another family than the snapshot's, e.g. the
        app world's endpoints); ``ValueError`` for an empty list or a repeated name."""
        tools = list(tools)
        names = [tool.name for tool in tools]
        if not tools or len(set(names)) != len(names):
            raise UsageError(f"from_tools needs tools with distinct names, got {names[:10]}")
        registry = cls.__new__(cls)
        registry.snapshot = None
        registry._install(tools)
        return registry

    def _install(self, tools: list[Tool]) -> None:
        self._tools: dict[str, Tool] = {tool.name: tool for tool in tools}
        self._validators = {name: ArgumentValidator(tool.parameters) for name, tool in self._tools.items()}
        self._by_call_name = dict(self._tools)
        for tool in self._tools.values():
            self._by_call_name.update({alias: tool for alias in tool.aliases})

    @property
    def names(self) -> tuple[str, ...]:
        """The offered tool names, in whitelist order (aliases not included)."""
        return tuple(self._tools)

    def tool(self, name: str) -> Tool:
        """The tool object offered under ``name`` (or an alias); ``KeyError`` if not offered."""
        return self._by_call_name[name]

    def fingerprints(self) -> dict[str, str]:
        """The content fingerprints of offered tools that have their own data (frozen tools), by name."""
        return {name: tool.fingerprint for name, tool in self._tools.items() if isinstance(getattr(tool, "fingerprint", None), str)}

    def schemas(self) -> list[dict]:
        """OpenAI function definitions: ``{"type": "function", "function": {name, description, parameters}}``."""
        return [
            {
                "type": "function",
                "function": {"name": tool.name, "description": tool.description, "parameters": copy.deepcopy(tool.parameters)},
            }
            for tool in self._tools.values()
        ]

    def mcp_tools(self) -> list[dict]:
        """The tools in MCP ``tools/list`` shape: ``{name, description, inputSchema}``."""
        return [
            {"name": tool.name, "description": tool.description, "inputSchema": copy.deepcopy(tool.parameters)}
            for tool in self._tools.values()
        ]

    def call(self, call: ToolCall, presearched: dict | None = None) -> ToolResult:
        """Validate and run one call; always returns a result, never raises.

        ``presearched``: search results already computed for this call (from :meth:`call_many`).
        """
        call_id = getattr(call, "call_id", None)
        call_id = call_id if isinstance(call_id, str) else None
        name = getattr(call, "name", None)
        try:
            result = self._dispatch(name, getattr(call, "arguments", None), presearched)
        except ToolInputError as error:
            result = ToolResult(name=str(name), text=error.message, data=error.data, flag=error.flag,
                                shown_docs=error.shown_docs)
        except Exception as error:  # the agent boundary: no policy input may crash the environment
            message = f"The {preview(name, 40)} tool failed: {type(error).__name__}: {str(error)[:200]}"
            result = ToolResult(name=str(name)[:100], text=message, flag="tool_error")
        return replace(result, call_id=call_id) if call_id is not None else result

    def call_many(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """:meth:`call` for each call, in order; the queries of all valid ``search`` calls are
        searched first as one batch over every core (the results are the same as one by one)."""
        presearched = None
        search = self._tools.get("search")
        if isinstance(search, SearchTool):
            batch = [call.arguments for call in calls if self._is_valid_search(call)]
            if len(batch) > 1:
                presearched = search.search_many(batch)
        return [self.call(call, presearched) for call in calls]

    def _is_valid_search(self, call: ToolCall) -> bool:
        name = getattr(call, "name", None)
        tool = self._by_call_name.get(name) if isinstance(name, str) else None
        return isinstance(tool, SearchTool) and not self._validators[tool.name].problems(getattr(call, "arguments", None))

    def _dispatch(self, name: Any, arguments: Any, presearched: dict | None = None) -> ToolResult:
        tool = self._by_call_name.get(name) if isinstance(name, str) else None
        if tool is None:
            available = ", ".join(self.names)
            first = next(iter(self._tools.values()))
            message = (
                f"Unknown tool {preview(name, 60)}. Available tools: {available}. "
                f"Example: {example_call(first.name, first.example)}"
            )
            raise ToolInputError("unknown_tool", message, {"available": list(self.names)})
        problems = self._validators[tool.name].problems(arguments)
        if problems:
            message = (
                f"Invalid arguments for {name}: {'; '.join(problems)}. "
                f"Expected {signature(tool)}. Example: {example_call(name, tool.example)}"
            )
            raise ToolInputError("bad_arguments", message, {"problems": problems})
        result = tool.run(arguments, presearched) if presearched is not None and isinstance(tool, SearchTool) else tool.run(arguments)
        return result if result.name == name else replace(result, name=name)


def signature(tool: Tool) -> str:
    """A compact call signature, e.g. ``search(query: string or array, k?: integer 1..10)``."""
    required = set(tool.parameters.get("required", ()))
    parts = []
    for field, schema in tool.parameters.get("properties", {}).items():
        parts.append(f"{field}{'' if field in required else '?'}: {_describe_type(schema)}")
    return f"{tool.name}({', '.join(parts)})"


def _describe_type(schema: dict) -> str:
    if "anyOf" in schema:
        return " or ".join(_describe_type(option) for option in schema["anyOf"])
    kind = schema.get("type", "any")
    if kind == "integer" and "minimum" in schema and "maximum" in schema:
        return f"integer {schema['minimum']}..{schema['maximum']}"
    if kind == "array":
        return f"array of {_describe_type(schema.get('items', {}))}"
    return str(kind)
