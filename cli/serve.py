"""``stillweb serve DIR [DIR ...]``: tools, Search-R1 retrieval and environment sessions over HTTP."""

from __future__ import annotations

import argparse
import os

EXAMPLES = """examples:
  stillweb serve snapshots/syn                              loopback, port 8000
  stillweb serve snapshots/syn snapshots/wiki --port 9000   two snapshots (the first is the default)
  stillweb serve snapshots/syn --host 0.0.0.0 --token "$STILLWEB_TOKEN" --workers 4
then: http://127.0.0.1:8000/docs (every route, with examples); POST /retrieve for Search-R1 trainers
"""


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return number


def register(subparsers) -> None:
    """Add ``serve``."""
    serve = subparsers.add_parser(
        "serve", help="serve tools, retrieval and environments over HTTP", epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument("snapshots", nargs="+", metavar="DIR", help="snapshot directories (the first is the default)")
    serve.add_argument("--host", default="127.0.0.1", help="interface to bind (default: loopback only)")
    serve.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    serve.add_argument("--workers", type=_positive, default=1, help="uvicorn worker processes (default 1)")
    serve.add_argument("--token", default=os.environ.get("STILLWEB_TOKEN"),
                       help="bearer token required on every route but /health (default: $STILLWEB_TOKEN, else none)")
    serve.add_argument("--max-sessions", type=_positive, default=256, help="live environment sessions per worker (default 256)")
    serve.add_argument("--idle-timeout", type=float, default=900.0, help="seconds before an idle session is closed (default 900)")
    serve.add_argument("--max-body-mb", type=_positive, default=16, help="largest request body in MiB (default 16)")
    serve.add_argument("--threads", type=_positive, default=32, help="blocking calls run at once per worker (default 32)")
    serve.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    import uvicorn

    from stillweb.server.app import CONFIG_VARIABLE, UVICORN_OPTIONS, make_app, serve_config
    from stillweb.server.plumbing import ServerSettings

    settings = ServerSettings(
        token=args.token or None,
        max_body_bytes=args.max_body_mb * 1024 * 1024,
        worker_threads=args.threads,
        max_sessions=args.max_sessions,
        idle_timeout_s=args.idle_timeout,
    )
    if args.workers == 1:
        uvicorn.run(make_app(args.snapshots, settings), host=args.host, port=args.port, log_level="warning", **UVICORN_OPTIONS)
        return 0
    os.environ[CONFIG_VARIABLE] = serve_config(args.snapshots, settings)
    uvicorn.run("stillweb.server.app:app_from_environment", factory=True, host=args.host, port=args.port,
                workers=args.workers, log_level="warning", **UVICORN_OPTIONS)
    return 0
