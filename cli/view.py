"""``stillweb view SNAPSHOT``: web pages to look at what an agent sees.

Search the snapshot with the agent's own tool, open documents with their facts
and links, inspect a task set (question, answers, formalization graph,
evidence, the reference agent's calls), replay recorded trajectories step by
step or side by side, and play a task by hand through the session API.
"""

from __future__ import annotations

import argparse

from stillweb.cli.help_text import plain

EXAMPLES = """examples:
  stillweb view snapshots/syn                                   http://127.0.0.1:8000/view/
  stillweb view snapshots/syn --tasks default --episodes runs/  replay runs/*.jsonl; hand-played episodes are saved there
  stillweb view snapshots/syn --episodes a.jsonl --episodes b.jsonl --port 8100
The pages bind to 127.0.0.1 unless --host says otherwise; the tool and session API is served beside them (/docs).
"""


def register(subparsers) -> None:
    """Add ``view``."""
    view = subparsers.add_parser(
        "view", help="web pages to browse a snapshot, inspect tasks, replay and play episodes",
        description=plain(__doc__), epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    view.add_argument("snapshot", metavar="SNAPSHOT", help="snapshot directory")
    view.add_argument("--tasks", metavar="NAME", help="task set inside the snapshot (default: the first one)")
    view.add_argument("--episodes", metavar="PATH", action="append", default=[],
                      help="a recording (.jsonl) or a directory of them; repeatable (hand-played episodes are saved "
                           "into the first directory)")
    view.add_argument("--host", default="127.0.0.1", help="interface to bind (default: loopback only)")
    view.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    view.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    import uvicorn

    from stillweb.cli.serve import serving_line
    from stillweb.server.app import UVICORN_OPTIONS
    from stillweb.server.viewer import ViewerConfig, make_viewer_app

    app = make_viewer_app(ViewerConfig(snapshot=args.snapshot, tasks=args.tasks, episodes=tuple(args.episodes)))
    print(serving_line(args.host, args.port, [args.snapshot], "view/"), flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", **UVICORN_OPTIONS)
    print(f"stopped serving on http://{args.host}:{args.port}/view/", flush=True)
    return 0
