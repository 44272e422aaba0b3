"""``stillweb serve DIR [DIR ...]``: tools, Search-R1 retrieval and environment sessions over HTTP."""

from __future__ import annotations

import argparse
import json
import os

from stillweb.corpora.errors import UsageError

EXAMPLES = """examples:
  stillweb serve snapshots/syn                              loopback, port 8000
  stillweb serve snapshots/syn snapshots/wiki --port 9000   two snapshots (the first is the default)
  stillweb serve snapshots/syn --host 0.0.0.0 --token "$STILLWEB_TOKEN" --workers 4
  stillweb serve snapshots/syn --frozen-tool web_search.json   also offer a frozen live tool (docs/freeze.md)
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
        description="Serve the snapshots' tools (/tools), Search-R1 retrieval (/retrieve) and environment sessions "
                    "(/sessions) over HTTP; prints what it serves and where, and a line when it stops.",
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
    serve.add_argument("--max-batch", type=_positive, default=4096,
                       help="most queries one POST /retrieve may send (default 4096; more get 413). A batch's response "
                            "holds batch x topk passages: ~1 KB each for wiki-18 (4096 x 3 ~ 12 MB of JSON, ~3x that "
                            "in memory while it is built)")
    serve.add_argument("--threads", type=_positive, default=32, help="blocking calls run at once per worker (default 32)")
    serve.add_argument("--frozen-tool", action="append", default=[], metavar="SPEC.json",
                       help="a frozen live tool to offer (a JSON file of its spec: store, name, parameters, ...; "
                            "see docs/freeze.md); sessions use it with kwargs.frozen_tools=[name]")
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
        max_batch=args.max_batch,
    )
    frozen_tools = [_frozen_spec(path) for path in args.frozen_tool]
    if args.workers == 1:
        app = make_app(args.snapshots, settings, frozen_tools=frozen_tools)  # a bad snapshot fails here, in one line
        print(serving_line(args.host, args.port, args.snapshots), flush=True)
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning", **UVICORN_OPTIONS)
    else:
        os.environ[CONFIG_VARIABLE] = serve_config(args.snapshots, settings, frozen_tools)
        print(serving_line(args.host, args.port, args.snapshots), flush=True)
        uvicorn.run("stillweb.server.app:app_from_environment", factory=True, host=args.host, port=args.port,
                    workers=args.workers, log_level="warning", **UVICORN_OPTIONS)
    print(f"stopped serving on http://{args.host}:{args.port}", flush=True)
    return 0


def serving_line(host: str, port: int, snapshots: list[str], path: str = "") -> str:
    """``listening on http://HOST:PORT/PATH: snapshot ..., task sets ..., envs ...`` (what a server serves, where)."""
    from pathlib import Path

    from stillweb.envs.registration import SERVED_ENV_IDS

    names = ", ".join(str(Path(snapshot).resolve()) for snapshot in snapshots)
    task_sets = sorted({folder.name for snapshot in snapshots for folder in (Path(snapshot) / "tasks").glob("*") if folder.is_dir()})
    return (f"listening on http://{host}:{port}/{path}: snapshot {names}, task sets {', '.join(task_sets) or 'none'}, "
            f"envs {', '.join(SERVED_ENV_IDS)} (Ctrl-C stops it; API docs at /docs)")


def _frozen_spec(path: str) -> dict:
    """The frozen tool spec in JSON file ``path`` (its store path made absolute); ``ValueError`` naming the file."""
    from pathlib import Path

    from stillweb.sandboxes.frozen import FrozenToolSpec

    try:
        spec = json.loads(Path(path).read_text(encoding="utf-8"))
        FrozenToolSpec.from_value(spec)
    except (OSError, json.JSONDecodeError, TypeError, ValueError) as error:
        raise UsageError(f"--frozen-tool {path}: {error}") from None
    store = Path(spec["store"])
    return {**spec, "store": str(store if store.is_absolute() else (Path(path).parent / store).resolve())}
