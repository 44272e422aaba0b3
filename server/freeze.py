"""The frozen-tool proxy: ``stillweb freeze record`` and ``stillweb freeze serve`` over HTTP.

An HTTP store gets a catch-all route: any method and path (but the plumbing's ``/health``,
``/stats``, ``/docs``) is made a canonical request and answered from the store with the
upstream's own status and body bytes. An MCP store is served as an MCP server (streamable
HTTP at ``/mcp``, or stdio) whose ``tools/list`` and ``tools/call`` come from the store.

A miss is never a made-up answer: HTTP 404 ``{"error": "not_recorded", "detail", "key"}``, or
an MCP tool error whose ``structuredContent`` is ``{"flag": "not_recorded", "key"}``. With
``on_miss="live"`` (recording is ``serve`` with ``on_miss="live"``) a miss is forwarded,
recorded and answered. Every answer says where it came from: the headers
``x-stillweb-frozen`` (``store``, ``live``, ``not_recorded``) and ``x-stillweb-on-miss``,
or the MCP result's ``_meta["stillweb/frozen"]``. ``/stats`` counts ``frozen_hits``,
``frozen_misses`` and ``frozen_live``; ``usage_log`` appends one JSON line per call
(``{"key", "source"}``) for ``stillweb freeze info|prune``.

>>> app = make_freeze_app(FrozenStore.open("frozen/"))               # doctest: +SKIP
>>> uvicorn.run(app, host="127.0.0.1", port=8010)                     # doctest: +SKIP
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from stillweb.corpora.errors import UsageError
from stillweb.corpora.version import PACKAGE_VERSION
from stillweb.sandboxes.frozen import (
    NOT_RECORDED, Answer, FrozenStore, HttpUpstream, McpUpstream, Replayer, UpstreamError, canonical_request, mcp_request,
)
from stillweb.server.plumbing import BUFFERED_BODY, ServerSettings, create_base_app, run_blocking

__all__ = ["make_freeze_app", "build_frozen_mcp_server", "UsageLog"]

METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]
FREEZE_DESCRIPTION = """A frozen live tool: every call is answered from the store; a call never recorded is an error
(`not_recorded`), unless the server goes live on a miss (then it is forwarded and recorded).
The header `x-stillweb-frozen` says where each answer came from."""


class UsageLog:
    """Appends ``{"key", "source"}`` per answered call to a JSON-lines file (thread-safe)."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path is not None else None
        self._lock = threading.Lock()

    def note(self, answer: Answer) -> None:
        """Record that ``answer`` was given (no-op without a path)."""
        if self.path is None:
            return
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"key": answer.key, "source": answer.source}, sort_keys=True) + "\n")


def make_freeze_app(store: FrozenStore, upstream: HttpUpstream | McpUpstream | None = None, on_miss: str = "error",
                    settings: ServerSettings | None = None, usage_log: str | Path | None = None) -> FastAPI:
    """The proxy app of ``store``; ``upstream`` is where ``on_miss="live"`` forwards a miss."""
    if on_miss == "live" and upstream is None:
        raise UsageError("on_miss 'live' needs an upstream to forward misses to")
    replayer = Replayer(store, on_miss)
    usage = UsageLog(usage_log)
    app = create_base_app(settings or ServerSettings(), title="stillweb frozen tool", description=FREEZE_DESCRIPTION)
    app.state.replayer = replayer
    if store.kind == "mcp":
        server = build_frozen_mcp_server(replayer, upstream, usage, app.state.counter)
        mcp_app = server.streamable_http_app(host="127.0.0.1")
        app.router.lifespan_context = mcp_app.router.lifespan_context
        app.mount("/", mcp_app)
        return app

    @app.api_route("/{path:path}", methods=METHODS, tags=["frozen"], summary="Any route of the frozen HTTP tool")
    async def frozen_route(path: str, request: Request) -> Response:
        """Answer from the store (or forward a miss when live)."""
        raw = request.scope.get(BUFFERED_BODY, b"")
        try:
            body = json.loads(raw) if raw else None
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            return _error(400, "bad_request", f"the request body of {request.method} /{path} is not JSON ({error}): "
                                              "a frozen tool records JSON calls only")
        query = request.query_params.multi_items()
        canonical = canonical_request(request.method, f"/{path}", query, body, request.headers, store.keep_headers,
                                      store.secret_fields)
        forward = None
        if isinstance(upstream, HttpUpstream):
            headers = dict(request.headers)
            forward = lambda: upstream.forward(request.method, f"/{path}", query, raw, headers)  # noqa: E731
        try:
            answer = await run_blocking(request, replayer.answer, canonical, forward)
        except UpstreamError as error:
            return _error(502, "upstream_error", str(error))
        usage.note(answer)
        app.state.counter.add(_COUNTER[answer.source])
        marks = {"x-stillweb-frozen": answer.source, "x-stillweb-frozen-key": answer.key, "x-stillweb-on-miss": on_miss}
        if answer.missed:
            detail = (f"{request.method} /{path} with this body was never recorded (key {answer.key}); "
                      "this server answers only recorded calls")
            return JSONResponse({"error": NOT_RECORDED, "detail": detail, "key": answer.key}, status_code=404, headers=marks)
        response = answer.response or {}
        return Response(response.get("body", "").encode("utf-8"), status_code=response.get("status", 200),
                        media_type=response.get("content_type", "application/json"), headers=marks)

    return app


_COUNTER = {"store": "frozen_hits", NOT_RECORDED: "frozen_misses", "live": "frozen_live"}


def build_frozen_mcp_server(replayer: Replayer, upstream: McpUpstream | None, usage: UsageLog | None = None,
                            counter: Any = None):
    """An MCP ``Server`` whose ``tools/list`` and ``tools/call`` are answered by ``replayer``."""
    import anyio
    from mcp import types
    from mcp.server import Server

    usage = usage or UsageLog(None)

    def answer(request: dict, forward) -> Answer:
        result = replayer.answer(request, forward if upstream is not None else None)
        usage.note(result)
        if counter is not None:
            counter.add(_COUNTER[result.source])
        return result

    async def list_tools(ctx, params) -> types.ListToolsResult:
        request = mcp_request("tools/list")
        result = await anyio.to_thread.run_sync(answer, request, lambda: upstream.list_tools())
        if result.missed:
            raise UsageError(f"tools/list was never recorded in this frozen store (key {result.key})")
        return types.ListToolsResult.model_validate(result.response)

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments if params.arguments is not None else {}
        request = mcp_request("tools/call", {"name": params.name, "arguments": arguments})
        try:
            result = await anyio.to_thread.run_sync(answer, request, lambda: upstream.call_tool(params.name, arguments))
        except UpstreamError as error:
            return types.CallToolResult(content=[types.TextContent(type="text", text=f"upstream_error: {error}")],
                                        structured_content={"flag": "tool_error"}, is_error=True)
        meta = {"stillweb/frozen": {"source": result.source, "key": result.key, "on_miss": replayer.on_miss}}
        if result.missed:
            text = (f"not_recorded: the call {params.name}({json.dumps(arguments)[:200]}) was never recorded; this "
                    "server answers only recorded calls")
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True, _meta=meta,
                                        structured_content={"flag": NOT_RECORDED, "key": result.key})
        return types.CallToolResult.model_validate({**result.response, "_meta": meta})

    return Server("stillweb-frozen", version=PACKAGE_VERSION, instructions="A frozen MCP tool server: recorded answers only",
                  on_list_tools=list_tools, on_call_tool=call_tool)


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": code, "detail": message}, status_code=status)
