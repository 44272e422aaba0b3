"""``stillweb info``, ``stillweb verify`` and ``stillweb graph stats``: read and check a snapshot."""

from __future__ import annotations

import argparse
import json
import sys

from stillweb.corpora.snapshot.manifest import read_manifest, verify_snapshot


def register(subparsers) -> None:
    """Add ``info`` and ``verify``."""
    info = subparsers.add_parser("info", help="print a snapshot's manifest",
                                 description="Print a snapshot's manifest. Example: stillweb info snapshots/syn --json")
    info.add_argument("snapshot", help="snapshot directory")
    info.add_argument("--json", action="store_true", help="the whole manifest as JSON (keys include fingerprint and counts)")
    info.set_defaults(handler=_run_info)

    verify = subparsers.add_parser("verify", help="recheck every file hash of a snapshot",
                                   description="Recheck every file's sha256. Exits 1 naming each damaged file. "
                                               "Example: stillweb verify snapshots/syn")
    verify.add_argument("snapshot", help="snapshot directory")
    verify.set_defaults(handler=_run_verify)

    graph = subparsers.add_parser("graph", help="inspect a snapshot's knowledge graph",
                                  description="Inspect a snapshot's knowledge graph (facts.parquet).",
                                  epilog="examples:\n  stillweb graph stats snapshots/enwiki-sample\n"
                                         "  stillweb graph stats snapshots/syn-20k --json",
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = graph.add_subparsers(dest="graph_command", metavar="ACTION")
    graph.set_defaults(handler=lambda args: graph.print_help() or 2)
    stats = actions.add_parser("stats", help="mapped share of infobox fields, top unmapped keys, facts per relation",
                               description="Mapped share of infobox fields, the top unmapped keys and facts per "
                                           "relation. Example: stillweb graph stats snapshots/enwiki-sample")
    stats.add_argument("snapshot", help="snapshot directory")
    stats.add_argument("--json", action="store_true", help="print the figures as JSON")
    stats.set_defaults(handler=_run_graph_stats)


def _run_info(args) -> int:
    manifest = read_manifest(args.snapshot)
    if args.json:
        print(json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False))
        return 0
    print(f"name:         {manifest.get('name')}")
    print(f"fingerprint:  {manifest['fingerprint']}")
    print(f"source:       {json.dumps(manifest.get('source'), sort_keys=True)}")
    print(f"parameters:   {json.dumps(manifest.get('parameters'), sort_keys=True)}")
    print(f"version:      {manifest.get('package_version')}")
    analyzer = (manifest.get("index") or {}).get("analyzer")
    print(f"language:     {analyzer['language']} ({analyzer['name']} version {analyzer['version']})" if analyzer else
          "language:     en (tantivy's English stemmer and stop words)")
    for key, value in manifest.get("counts", {}).items():
        print(f"  {key}: {json.dumps(value, sort_keys=True)}")
    print(f"files:        {len(manifest.get('files', {}))}")
    dense = manifest.get("dense")
    print(f"dense:        {dense['model']} ({dense['dimensions']} dimensions, from the {dense['from']})" if dense else
          "dense:        none (add one: stillweb build dense SNAPSHOT --endpoint URL --model NAME)")
    return 0


def _run_verify(args) -> int:
    problems = verify_snapshot(args.snapshot)
    for problem in problems:
        print(f"{args.snapshot}: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"{args.snapshot}: all files match the manifest")
    return 0


def _run_graph_stats(args) -> int:
    from stillweb.corpora.graph.stats import format_graph_stats, graph_stats

    read_manifest(args.snapshot)  # a clear error for a directory that is not a snapshot
    stats = graph_stats(args.snapshot)
    print(json.dumps(stats, indent=2, sort_keys=True) if args.json else format_graph_stats(stats))
    return 0
