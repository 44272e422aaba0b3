"""MCP: the snapshot's tools for any MCP client, over stdio or streamable HTTP (``stillweb mcp SNAPSHOT``).

Built on the official ``mcp`` SDK's low-level ``Server`` (``stillweb[mcp]``), so
``tools/list`` returns the tool registry's own schemas
(:meth:`~stillweb.sandboxes.ToolRegistry.mcp_tools`) and ``tools/call`` runs
:meth:`~stillweb.sandboxes.ToolRegistry.call`: the same validation and error
observations as in-process and over HTTP (``POST /tools/call``). A result's
``content`` is its text, ``structured_content`` the same JSON object that
``/tools/call`` answers (``name, text, data, flag, terminal, call_id``), and a
flagged result (``bad_arguments``, ``unknown_tool``, ``not_found``, ...) is an MCP
tool error (``is_error``) whose text names the problem and shows a correct call.

With ``tasks`` (``--tasks NAME``) the server also offers ``start_task``: it starts an
episode of that task set for the calling session only (each MCP session has its
own), and from then on that session's tool calls step the episode
(:class:`~stillweb.envs.integrations.episode.ToolEpisode`), so ``answer`` returns
the environment's reward.

>>> server = build_server("snap/")                      # doctest: +SKIP
>>> anyio.run(serve_stdio, server)                       # doctest: +SKIP
>>> app = build_server("snap/").streamable_http_app()    # doctest: +SKIP
>>> uvicorn.run(app, port=8000)                          # doctest: +SKIP
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

import anyio
from mcp import types
from mcp.server import Server

from stillweb.corpora.errors import UsageError
from stillweb.corpora.version import PACKAGE_VERSION
from stillweb.envs.integrations.episode import ToolEpisode
from stillweb.corpora.snapshot.shared import shared_snapshot
from stillweb.sandboxes import ToolCall, ToolRegistry

__all__ = ["START_TASK", "build_server", "serve_stdio"]

MAX_EPISODES = 1024  # live per-session episodes kept by one server

START_TASK = {
    "name": "start_task",
    "description": "Start an episode of a task for this session: returns the question. Afterwards your tool calls "
                   "step that episode, and the answer tool scores it.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "task_id": {"type": "string", "description": "The task's id; omit it to let the seed choose."},
            "seed": {"type": "integer", "description": "Picks the task when no task_id is given."},
        },
        "additionalProperties": False,
    },
}


def build_server(snapshot: str | Path, tools: list[str] | None = None, tasks: str | None = None, split: str = "train",
                 **env_kwargs: Any) -> Server:
    """The MCP server of ``snapshot``'s tools (``tools``: a whitelist); ``tasks`` adds per-session episodes.

    ``env_id="stillweb/Apps-v0"`` serves the app world's endpoints instead (``tasks``: an app task set,
    required: an endpoint acts on the state of the session's episode); ``env_id="stillweb/BFCL-v0"``
    BFCL's functions (``snapshot`` unused, ``tasks``: task ids or ``None`` for the whole category)."""
    bfcl = env_kwargs.get("env_id") == "stillweb/BFCL-v0"
    apps = bfcl or env_kwargs.get("env_id") == "stillweb/Apps-v0"  # functions that act on an episode's state
    if apps and tasks is None and not bfcl:
        raise UsageError("the app world's endpoints act on an episode's state: pass tasks=<an app task set>")
    episodic = tasks is not None or bfcl
    probe = ToolEpisode(snapshot, tasks, split, tools=tools, **env_kwargs) if episodic else None  # fail now
    registry = None if apps else ToolRegistry(shared_snapshot(snapshot), tools=tools)  # apps: the episode calls
    listed = ([{"name": item["function"]["name"], "description": item["function"]["description"],
                "inputSchema": item["function"]["parameters"]} for item in probe.schemas()] if apps else registry.mcp_tools())
    listed += [START_TASK] if episodic else []
    episodes: OrderedDict[str | None, ToolEpisode] = OrderedDict()  # by MCP session id (None: stdio's one client)

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name=item["name"], description=item["description"],
                                                       input_schema=item["inputSchema"]) for item in listed])

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments if params.arguments is not None else {}
        if episodic and params.name == START_TASK["name"]:
            return await anyio.to_thread.run_sync(_start_task, episodes, _session_key(ctx), arguments,
                                                  lambda: ToolEpisode(snapshot, tasks, split, tools=tools, **env_kwargs))
        episode = episodes.get(_session_key(ctx))
        if episode is not None:
            return await anyio.to_thread.run_sync(_episode_call, episode, params.name, arguments)
        if apps:
            return _error(f"No episode yet: call start_task first; then {params.name[:100]} acts on its state.")
        result = await anyio.to_thread.run_sync(registry.call, ToolCall(params.name, arguments))
        return types.CallToolResult(content=[types.TextContent(type="text", text=result.text)],
                                    structured_content=result.to_dict(), is_error=result.flag is not None)

    about = "BFCL's multi-turn functions (stillweb/BFCL-v0)" if bfcl else f"Tools over the stillweb snapshot {Path(snapshot).name}"
    return Server("stillweb", version=PACKAGE_VERSION, instructions=about,
                  on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(server: Server) -> None:
    """Serve ``server`` over this process's stdin and stdout until the client closes them."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _session_key(ctx) -> str | None:
    """The client's MCP session id (the ``mcp-session-id`` header of streamable HTTP); None on stdio."""
    headers = getattr(getattr(ctx, "request", None), "headers", None)
    return headers.get("mcp-session-id") if headers is not None else None


def _start_task(episodes, session, arguments: dict[str, Any], make_episode) -> types.CallToolResult:
    task_id, seed = arguments.get("task_id"), arguments.get("seed")
    if set(arguments) - {"task_id", "seed"} or not isinstance(task_id, (str, type(None))) or not isinstance(seed, (int, type(None))):
        return _error(f"Invalid arguments for start_task: {arguments!r:.200}. Expected start_task(task_id?: string, "
                      'seed?: integer). Example: start_task({"seed": 0})')
    episode = episodes.get(session) or make_episode()
    try:
        question = episode.reset(task_id=task_id, seed=seed)
    except ValueError as error:
        return _error(f"start_task: {error}")
    episodes[session] = episode
    episodes.move_to_end(session)
    while len(episodes) > MAX_EPISODES:  # forget the least recently started episodes first
        episodes.popitem(last=False)
    return types.CallToolResult(content=[types.TextContent(type="text", text=question)],
                                structured_content={"task_id": episode.info["task_id"], "question": question})


def _episode_call(episode: ToolEpisode, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    step = episode.call(name, arguments)
    flags = step.info.get("tool_flags") or [None]
    structured = {"text": step.text, "reward": step.reward, "terminated": step.terminated, "truncated": step.truncated,
                  "flag": flags[0], "task_id": step.info["task_id"], "reward_parts": step.info.get("reward_parts")}
    return types.CallToolResult(content=[types.TextContent(type="text", text=step.text)], structured_content=structured,
                                is_error=flags[0] is not None)


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
