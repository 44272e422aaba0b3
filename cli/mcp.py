"""``stillweb mcp DIR``: the snapshot's tools for MCP clients, over stdio (default) or streamable HTTP."""

from __future__ import annotations

import argparse

from stillweb.corpora.errors import UsageError

EXAMPLES = """examples:
  stillweb mcp snapshots/syn                                 stdio (for a client that starts the server)
  stillweb mcp snapshots/syn --http --port 8001              streamable HTTP at http://127.0.0.1:8001/mcp
  stillweb mcp snapshots/syn --tasks default                 adds start_task: an episode per MCP session
  stillweb mcp --bfcl multi_turn_base                        BFCL's functions (stillweb/BFCL-v0), start_task per session
client config (stdio): {"command": "stillweb", "args": ["mcp", "snapshots/syn"]}
"""


def register(subparsers) -> None:
    """Add ``mcp``."""
    mcp = subparsers.add_parser("mcp", help="serve the tools over MCP (stdio or streamable HTTP)", epilog=EXAMPLES,
                                description="Serve the snapshot's tools to MCP clients over stdio (default) or "
                                            "streamable HTTP; with --tasks, one episode per MCP session.",
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    mcp.add_argument("snapshot", metavar="DIR", nargs="?", default=None, help="snapshot directory (not with --bfcl)")
    mcp.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    mcp.add_argument("--host", default="127.0.0.1", help="interface for --http (default: loopback only)")
    mcp.add_argument("--port", type=int, default=8001, help="TCP port for --http (default 8001)")
    mcp.add_argument("--tools", nargs="+", metavar="NAME", default=None, help="offer only these tools")
    mcp.add_argument("--tasks", metavar="NAME", default=None, help="task set for per-session episodes (start_task)")
    mcp.add_argument("--split", default="train", help="split of --tasks (default train)")
    mcp.add_argument("--apps", action="store_true",
                     help="serve the app world's endpoints (stillweb/Apps-v0); --tasks names an app task set")
    mcp.add_argument("--bfcl", metavar="CATEGORY", default=None,
                     help="serve BFCL's multi-turn functions (stillweb/BFCL-v0, the bfcl extra) for this category, "
                          "e.g. multi_turn_base; start_task picks the task")
    mcp.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    try:
        from stillweb.server.mcp import build_server, serve_stdio
    except ImportError as error:
        raise SystemExit(f"stillweb mcp needs the mcp extra: pip install 'stillweb[mcp]' ({error})") from None
    if args.bfcl is not None:
        if args.apps or args.tasks or args.snapshot:
            raise UsageError("stillweb mcp --bfcl CATEGORY takes no snapshot, --apps or --tasks (start_task picks a BFCL task)")
        server = build_server(None, env_id="stillweb/BFCL-v0", category=args.bfcl, split="default")
    elif args.snapshot is None:
        raise UsageError("stillweb mcp needs a snapshot directory (or --bfcl CATEGORY)")
    else:
        extra = {"env_id": "stillweb/Apps-v0"} if args.apps else {}
        server = build_server(args.snapshot, tools=args.tools, tasks=args.tasks, split=args.split, **extra)
    if not args.http:
        import anyio

        anyio.run(serve_stdio, server)
        return 0
    import uvicorn

    uvicorn.run(server.streamable_http_app(host=args.host), host=args.host, port=args.port, log_level="warning")
    return 0
