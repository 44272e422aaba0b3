"""Live services that answer the same call differently every time (random results, time stamps),
for the frozen-tool tests: an HTTP JSON search API and an MCP server built with the ``mcp`` SDK.

Run one in a child process: ``python tests/support/live_services.py http PORT``,
``... mcp-stdio`` or ``... mcp-http PORT``. Deliberately non-deterministic: that is what freezing fixes.
"""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse

HERE = Path(__file__).resolve()
SEARCH_SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}, "k": {"type": "integer", "minimum": 1}},
                 "required": ["q"], "additionalProperties": False}


def _hits(query: str, k: int) -> dict:
    return {"query": query, "served_at": time.time(), "nonce": random.random(),
            "results": [f"{query} result {random.randrange(10**6)}" for _ in range(k)]}


def http_app():
    """The changing HTTP search API: POST /search, GET /page, GET /html (not JSON), GET /fail (500)."""
    app = FastAPI()

    @app.post("/search")
    async def search(request: Request):
        body = await request.json()
        return _hits(str(body.get("q", "")), int(body.get("k", 3)))

    @app.get("/page")
    async def page(url: str):
        return {"url": url, "fetched_at": time.time(), "text": f"page {random.random()}"}

    @app.get("/html")
    async def html():
        return HTMLResponse("<html>not json</html>")

    @app.get("/fail")
    async def fail():
        return JSONResponse({"error": "overloaded"}, status_code=500)

    return app


def mcp_server():
    """The changing MCP server: tools ``web_search(q, k?)`` and ``clock()``."""
    from mcp import types
    from mcp.server import Server

    tools = [types.Tool(name="web_search", description="Search the live web.", input_schema=SEARCH_SCHEMA),
             types.Tool(name="clock", description="The time now.",
                        input_schema={"type": "object", "properties": {}, "additionalProperties": False})]

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        payload = _hits(str(arguments.get("q", "")), int(arguments.get("k", 3))) if params.name == "web_search" \
            else {"now": time.time()}
        return types.CallToolResult(content=[types.TextContent(type="text", text=repr(payload))], structured_content=payload)

    return Server("changing-live-tool", on_list_tools=list_tools, on_call_tool=call_tool)


def start(kind: str, port: int | None = None) -> subprocess.Popen:
    """Start ``kind`` (``http`` or ``mcp-http``) on 127.0.0.1:``port`` and return once it accepts connections."""
    import socket

    process = subprocess.Popen([sys.executable, str(HERE), kind, str(port)])
    for _ in range(600):
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return process
        if process.poll() is not None:
            raise RuntimeError(f"the {kind} service exited with {process.returncode}")
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"the {kind} service did not start on port {port}")


def stdio_command() -> list[str]:
    """The command that runs the changing MCP server over stdio."""
    return [sys.executable, str(HERE), "mcp-stdio"]


if __name__ == "__main__":
    import anyio
    import uvicorn

    kind = sys.argv[1]
    if kind == "http":
        uvicorn.run(http_app(), host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
    elif kind == "mcp-http":
        uvicorn.run(mcp_server().streamable_http_app(host="127.0.0.1"), host="127.0.0.1", port=int(sys.argv[2]),
                    log_level="warning")
    else:
        from mcp.server.stdio import stdio_server

        async def main() -> None:
            server = mcp_server()
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(main)
