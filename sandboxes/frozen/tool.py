"""A frozen tool: a tool like ``search`` whose answers come from a frozen store.

Mount it in a :class:`~stillweb.sandboxes.ToolRegistry` with ``extra=[FrozenTool...]`` (a
frozen tool named ``search`` takes the snapshot search's place; under another name it sits
beside it). Its schema is the MCP server's own (recorded from ``tools/list``) or the one the
user gives. A call the store holds is answered from disk; a call it does not hold is a
``not_recorded`` error observation, never a made-up answer, unless the spec says
``on_miss: "live"``: then it is forwarded to ``upstream``, recorded and marked ``live``.

Every result's ``data["frozen"]`` says ``{"key", "source"}`` (``store``, ``live`` or
``not_recorded``), so an environment can tell from an episode whether anything went live.

>>> tool = FrozenTool.from_spec({"store": "frozen/", "name": "web_search", "path": "/search",
...     "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}})  # doctest: +SKIP
>>> ToolRegistry(snapshot, extra=[tool]).call(ToolCall("web_search", {"q": "river"})).text  # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from stillweb.corpora.errors import UsageError
from stillweb.corpora.snapshot.shared import shared_open
from stillweb.sandboxes.frozen.replay import NOT_RECORDED, Replayer
from stillweb.corpora.canonical import canonical_json
from stillweb.sandboxes.frozen.store import FrozenStore, canonical_request, request_key
from stillweb.sandboxes.frozen.upstream import HttpUpstream, McpUpstream
from stillweb.corpora.errors import UpstreamError
from stillweb.sandboxes.tools.types import Tool, ToolInputError, ToolResult, preview

__all__ = ["FrozenTool", "FrozenToolSpec", "mcp_request", "shared_store"]

def shared_store(path: str | Path) -> FrozenStore:
    """The process-wide open :class:`FrozenStore` of ``path`` (one per resolved path: :func:`~stillweb.corpora.snapshot.shared.shared_open`)."""
    return shared_open(FrozenStore.open, path)


def mcp_request(method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The canonical request of an MCP call: ``tools/list`` (no params) or ``tools/call`` ({name, arguments})."""
    return canonical_request("MCP", method, body=dict(params) if params is not None else None)


@dataclass(frozen=True)
class FrozenToolSpec:
    """How to mount a store as a tool (JSON-friendly, so it can be an environment kwarg).

    ``store``: the store directory; ``name``: the tool's name for the agent; ``tool``: the MCP
    server's tool name (default ``name``); ``description`` and ``parameters`` (a JSON schema):
    default, for MCP stores, the recorded ``tools/list`` entry; ``method`` and ``path``: the HTTP
    route (``GET`` sends the arguments as query parameters, other methods as a JSON body);
    ``on_miss``: ``"error"`` or ``"live"``; ``upstream`` (a URL) or ``command`` (an MCP stdio
    server): where ``live`` forwards a miss.
    """

    store: str
    name: str
    tool: str | None = None
    description: str = ""
    parameters: dict | None = None
    method: str = "POST"
    path: str = "/"
    on_miss: str = "error"
    upstream: str | None = None
    command: list[str] | None = None
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_value(cls, value: FrozenToolSpec | Mapping[str, Any]) -> FrozenToolSpec:
        """A spec from itself or a dict of its fields (``ValueError`` naming unknown fields)."""
        if isinstance(value, cls):
            return value
        known = {item.name for item in fields(cls)}
        unknown = sorted(set(value) - known)
        if unknown:
            raise UsageError(f"unknown frozen tool field(s) {unknown}; known: {sorted(known)}")
        return cls(**dict(value))


class FrozenTool(Tool):
    """A tool answered from a frozen store (see the module doc)."""

    def __init__(self, spec: FrozenToolSpec, store: FrozenStore) -> None:
        self.spec = spec
        self.store = store
        self.name = spec.name
        listed = _listed_tool(store, spec.tool or spec.name) if store.kind == "mcp" else {}
        self.description = spec.description or listed.get("description") or f"The frozen {store.kind} tool {spec.name}."
        parameters = spec.parameters if spec.parameters is not None else listed.get("inputSchema")
        if parameters is None:
            raise UsageError(f"frozen tool {spec.name!r}: give its JSON schema as 'parameters' (an HTTP store records none)")
        self.parameters = json.loads(canonical_json(parameters))  # keys sorted: the prompt never depends on their order
        self.example = {}
        self.replayer = Replayer(store, spec.on_miss)
        self._upstream = None
        if spec.on_miss == "live":
            self._upstream = _live_upstream(spec, store.kind)

    @classmethod
    def from_spec(cls, spec: FrozenToolSpec | Mapping[str, Any]) -> FrozenTool:
        """Open (once per process) the spec's store and mount it."""
        spec = FrozenToolSpec.from_value(spec)
        return cls(spec, shared_store(spec.store))

    @property
    def fingerprint(self) -> str:
        """The store's content fingerprint (it joins the episode's fingerprints)."""
        return self.store.fingerprint

    def request(self, arguments: dict) -> dict[str, Any]:
        """The canonical request a call with ``arguments`` makes."""
        if self.store.kind == "mcp":
            return mcp_request("tools/call", {"name": self.spec.tool or self.spec.name, "arguments": arguments})
        if self.spec.method.upper() == "GET":
            return canonical_request("GET", self.spec.path, query=_query(arguments), secret_fields=self.store.secret_fields)
        return canonical_request(self.spec.method, self.spec.path, body=arguments, secret_fields=self.store.secret_fields)

    def run(self, arguments: dict) -> ToolResult:
        """Answer from the store (or live, when allowed); a miss raises ``not_recorded``."""
        try:
            answer = self.replayer.answer(self.request(arguments), self._forwarder(arguments))
        except UpstreamError as error:
            raise ToolInputError("tool_error", f"The {self.name} tool's live service failed: {error}") from None
        frozen = {"key": answer.key, "source": answer.source}
        if answer.source == NOT_RECORDED:
            message = (f"Not recorded: this {self.name} call {preview(arguments)} was never recorded, and this run "
                       f"answers only recorded calls (offline replay). Try another query or tool.")
            raise ToolInputError(NOT_RECORDED, message, {"frozen": frozen})
        response = answer.response or {}
        if self.store.kind == "mcp":
            text = "\n".join(item.get("text", "") for item in response.get("content", []) if item.get("type") == "text")
            data = {"frozen": frozen, "structured_content": response.get("structuredContent")}
            failed = bool(response.get("isError"))
        else:
            text, status = response.get("body", ""), response.get("status", 200)
            data = {"frozen": frozen, "status": status, "body": json.loads(text) if text else None}
            failed = status >= 400
            text = text if not failed else f"The {self.name} service answered {status}: {text}"
        return ToolResult(name=self.name, text=text, data=data, flag="tool_error" if failed else None)

    def _forwarder(self, arguments: dict):
        upstream = self._upstream
        if upstream is None:
            return None
        if isinstance(upstream, McpUpstream):
            return lambda: upstream.call_tool(self.spec.tool or self.spec.name, arguments)
        request = self.request(arguments)
        body = b"" if request["body"] is None else json.dumps(arguments).encode()
        content_type = {} if not body else {"content-type": "application/json"}
        query = _query(arguments) if self.spec.method.upper() == "GET" else []
        return lambda: upstream.forward(request["method"], request["path"], query, body, content_type)


def _query(arguments: dict) -> list[tuple[str, str]]:
    """GET arguments as query parameters (non-strings as JSON)."""
    return [(name, value if isinstance(value, str) else json.dumps(value)) for name, value in arguments.items()]


def _listed_tool(store: FrozenStore, name: str) -> dict[str, Any]:
    """The recorded ``tools/list`` entry of ``name`` ({} when the list or the tool was not recorded)."""
    record = store.get(request_key(mcp_request("tools/list")))
    tools = (record or {}).get("response", {}).get("tools", [])
    return next((item for item in tools if item.get("name") == name), {})


def _live_upstream(spec: FrozenToolSpec, kind: str) -> HttpUpstream | McpUpstream:
    if kind == "http":
        if spec.upstream is None:
            raise UsageError(f"frozen tool {spec.name!r}: on_miss 'live' needs an 'upstream' URL")
        return HttpUpstream(spec.upstream, headers=spec.headers)
    if (spec.upstream is None) == (spec.command is None):
        raise UsageError(f"frozen tool {spec.name!r}: on_miss 'live' needs an MCP 'upstream' URL or a stdio 'command'")
    return McpUpstream(command=spec.command, url=spec.upstream)
