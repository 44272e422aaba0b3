"""``stillweb freeze record|serve|info|verify|merge|prune``: freeze a live HTTP or MCP tool into a store."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys

from stillweb.corpora.errors import UsageError
from stillweb.sandboxes.frozen.replay import ON_MISS

EXAMPLES = """examples:
  stillweb freeze record --upstream https://api.example.com --out frozen/search --port 8010
        proxy a live HTTP JSON tool on 127.0.0.1:8010; point your client there; Ctrl-C ends it
  stillweb freeze record --mcp-command "python my_server.py" --out frozen/tools --port 8011
        proxy an MCP server (also --mcp-url URL); MCP clients connect to http://127.0.0.1:8011/mcp
  stillweb freeze serve frozen/search --port 8010 --usage-log usage.jsonl
        answer from the store only; a call never recorded is an error flagged not_recorded
  stillweb freeze serve frozen/search --on-miss live --upstream https://api.example.com
        forward and record misses (every answer is marked x-stillweb-frozen: live)
  stillweb freeze info frozen/search --usage usage.jsonl     counts, fingerprint, hit/miss rates
  stillweb freeze verify frozen/search                        file hashes and every record's checksum
  stillweb freeze merge frozen/a frozen/b --out frozen/ab     union, with a report of conflicts
  stillweb freeze prune frozen/search --used run.jsonl --out frozen/small
"""


def register(subparsers) -> None:
    """Add ``freeze`` and its subcommands."""
    freeze = subparsers.add_parser("freeze", help="record a live HTTP or MCP tool once, replay it forever",
                                   description="Record a live HTTP JSON tool or MCP server into a frozen store, "
                                               "then serve it offline: a call never recorded is an error, never "
                                               "a made-up answer.",
                                   epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = freeze.add_subparsers(dest="freeze_command", metavar="SUBCOMMAND", required=True)

    record = commands.add_parser("record", help="proxy a live tool and record every call",
                                 epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    record.add_argument("--out", required=True, metavar="FROZEN", help="store directory (created, or added to)")
    _upstream_options(record)
    record.add_argument("--keep-header", action="append", default=[], metavar="NAME",
                        help="a request header that changes the answer (e.g. accept-language); credentials refused")
    _serving_options(record)
    record.set_defaults(handler=_record)

    serve = commands.add_parser("serve", help="answer from the store only (or --on-miss live)",
                                epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    serve.add_argument("store", metavar="FROZEN", help="store directory")
    serve.add_argument("--on-miss", choices=ON_MISS, default="error",
                       help="error (default): answer not_recorded; live: forward to the upstream and record")
    _upstream_options(serve)
    _serving_options(serve)
    serve.set_defaults(handler=_serve)

    info = commands.add_parser("info", help="counts, fingerprint and hit/miss rates of a store")
    info.add_argument("store", metavar="FROZEN", help="store directory")
    info.add_argument("--usage", nargs="+", default=None, metavar="FILE",
                      help="usage logs (serve --usage-log) or episode recordings: report their hit/miss/live rates")
    info.add_argument("--json", action="store_true", help="print JSON")
    info.set_defaults(handler=_info)

    verify = commands.add_parser("verify", help="check the log's hash and every record's checksum")
    verify.add_argument("store", metavar="FROZEN", help="store directory")
    verify.set_defaults(handler=_verify)

    merge = commands.add_parser("merge", help="write the union of two stores, reporting conflicting answers")
    merge.add_argument("first", metavar="FROZEN_A", help="a store (its answer wins a conflict)")
    merge.add_argument("second", metavar="FROZEN_B", help="another store of the same kind")
    merge.add_argument("--out", required=True, help="new store directory for the union")
    merge.add_argument("--fail-on-conflict", action="store_true", help="exit 1 when the stores answered a call differently")
    merge.set_defaults(handler=_merge)

    prune = commands.add_parser("prune", help="write a copy keeping only the records some run used")
    prune.add_argument("store", metavar="FROZEN", help="store directory")
    prune.add_argument("--used", nargs="+", required=True, metavar="FILE",
                       help="episode recordings and usage logs: records none of them used are dropped")
    prune.add_argument("--out", required=True, help="new store directory for the kept records")
    prune.set_defaults(handler=_prune)


def _upstream_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--upstream", metavar="URL", help="the live HTTP JSON tool's base URL")
    parser.add_argument("--mcp-url", metavar="URL", help="the live MCP server's streamable HTTP URL")
    parser.add_argument("--mcp-command", metavar="COMMAND", help='the live MCP server\'s stdio command, e.g. "python server.py"')
    parser.add_argument("--upstream-header", action="append", default=[], metavar="'NAME: VALUE'",
                        help="a header added to every forwarded HTTP call (an API key): forwarded, never stored")


def _serving_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default: loopback only)")
    parser.add_argument("--port", type=int, default=8010, help="TCP port (default 8010)")
    parser.add_argument("--stdio", action="store_true", help="MCP stores: speak MCP over stdin/stdout instead of HTTP")
    parser.add_argument("--usage-log", metavar="FILE", help="append {key, source} per call (for info --usage and prune)")
    parser.add_argument("--token", default=os.environ.get("STILLWEB_TOKEN"),
                        help="bearer token required on every route but /health (default: $STILLWEB_TOKEN, else none)")
    parser.add_argument("--max-body-kb", type=int, default=1024, help="largest request body in KiB (default 1024)")


def _upstream(args: argparse.Namespace, kind: str | None):
    from stillweb.sandboxes.frozen import HttpUpstream, McpUpstream

    given = [name for name in ("upstream", "mcp_url", "mcp_command") if getattr(args, name)]
    if len(given) > 1:
        raise UsageError("give one upstream: --upstream, --mcp-url or --mcp-command")
    if not given:
        return None
    if kind is not None and (kind == "http") != (given[0] == "upstream"):
        raise UsageError(f"this is a frozen {kind} store: its upstream is " + ("--upstream URL" if kind == "http" else
                                                                            "--mcp-url or --mcp-command"))
    if args.upstream:
        headers = dict(_header(item) for item in args.upstream_header)
        return HttpUpstream(args.upstream, headers=headers)
    if args.mcp_url:
        return McpUpstream(url=args.mcp_url)
    return McpUpstream(command=shlex.split(args.mcp_command))


def _header(text: str) -> tuple[str, str]:
    name, colon, value = text.partition(":")
    if not colon or not name.strip():
        raise UsageError(f"--upstream-header must look like 'Name: value', got {text!r}")
    return name.strip(), value.strip()


def _record(args: argparse.Namespace) -> int:
    from stillweb.sandboxes.frozen import FrozenStore, HttpUpstream

    upstream = _upstream(args, None)
    if upstream is None:
        raise UsageError("record needs the live tool: --upstream URL, --mcp-url URL or --mcp-command COMMAND")
    kind = "http" if isinstance(upstream, HttpUpstream) else "mcp"
    label = upstream.base_url.split("?")[0] if kind == "http" else upstream.label
    store = FrozenStore.create(args.out, kind, label, args.keep_header)
    return _run_server(args, store, upstream, "live")


def _serve(args: argparse.Namespace) -> int:
    from stillweb.sandboxes.frozen import FrozenStore

    store = FrozenStore.open(args.store)
    upstream = _upstream(args, store.kind)
    if args.on_miss == "live" and upstream is None:
        raise UsageError("--on-miss live needs the live tool: --upstream URL, --mcp-url URL or --mcp-command COMMAND")
    return _run_server(args, store, upstream, args.on_miss)


def _run_server(args: argparse.Namespace, store, upstream, on_miss: str) -> int:
    from stillweb.server.freeze import UsageLog, build_frozen_mcp_server, make_freeze_app
    from stillweb.server.plumbing import ServerSettings

    try:
        if args.stdio:
            if store.kind != "mcp":
                raise UsageError("--stdio serves MCP stores only; an HTTP store is served over HTTP")
            import anyio

            from stillweb.sandboxes.frozen import Replayer
            from stillweb.server.mcp import serve_stdio

            anyio.run(serve_stdio, build_frozen_mcp_server(Replayer(store, on_miss), upstream, UsageLog(args.usage_log)))
            return 0
        import uvicorn

        settings = ServerSettings(token=args.token or None, max_body_bytes=args.max_body_kb * 1024)
        app = make_freeze_app(store, upstream, on_miss, settings, args.usage_log)
        where = f"http://{args.host}:{args.port}" + ("/mcp" if store.kind == "mcp" else "")
        print(f"frozen {store.kind} tool {store.path} ({len(store)} records, on a miss: {on_miss}) at {where}",
              file=sys.stderr, flush=True)
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
        return 0
    finally:
        if on_miss == "live":
            store.write_manifest()
        if upstream is not None:
            upstream.close()


def _info(args: argparse.Namespace) -> int:
    from stillweb.sandboxes.frozen import FrozenStore
    from stillweb.sandboxes.frozen.upkeep import read_usage, store_info

    info = store_info(FrozenStore.open(args.store), read_usage(args.usage) if args.usage else None)
    if args.json:
        print(json.dumps(info, indent=2, sort_keys=True))
        return 0
    for name, value in info.items():
        if isinstance(value, dict):
            print(f"{name}:")
            for inner, item in value.items():
                print(f"  {inner}: {item}")
        else:
            print(f"{name}: {value}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from stillweb.sandboxes.frozen.upkeep import verify_store

    problems = verify_store(args.store)
    for problem in problems:
        print(problem)
    print(f"{args.store}: " + (f"{len(problems)} problem(s)" if problems else "ok"))
    return 1 if problems else 0


def _merge(args: argparse.Namespace) -> int:
    from stillweb.sandboxes.frozen.upkeep import merge_stores

    report = merge_stores(args.first, args.second, args.out)
    for conflict in report["conflicts"]:
        print(f"conflict: {conflict['method']} {conflict['path']} (key {conflict['key']}): kept {args.first}'s answer")
    print(f"{args.out}: {report['records']} records ({report['from_first']} from {args.first}, {report['from_second']} "
          f"from {args.second}), {len(report['conflicts'])} conflict(s), fingerprint {report['fingerprint']}")
    return 1 if report["conflicts"] and args.fail_on_conflict else 0


def _prune(args: argparse.Namespace) -> int:
    from stillweb.sandboxes.frozen.upkeep import prune_store, read_usage

    report = prune_store(args.store, [key for key, _ in read_usage(args.used)], args.out)
    print(f"{args.out}: kept {report['records']} records, dropped {report['dropped']}, fingerprint {report['fingerprint']}")
    return 0
