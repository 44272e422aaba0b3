"""``stillweb quickstart``: the main job on the embedded default corpus.

Builds (or reuses) the default snapshot, a synthetic world of 20,000 articles
with seed 0, in ``$STILLWEB_HOME/snapshots/`` (default ``~/.cache/stillweb``),
prints its fingerprint and a few example searches.
"""

from __future__ import annotations

import os
from pathlib import Path

from stillweb.corpora.builders import build_synthetic
from stillweb.corpora.manifest import SnapshotError, read_manifest
from stillweb.corpora.snapshot import Snapshot

DEFAULT_ARTICLES = 20_000
DEFAULT_SEED = 0
EXAMPLE_QUERIES = ("university founded", "film directed by", "capital city population")


def default_home() -> Path:
    """Where stillweb keeps its default snapshots: ``$STILLWEB_HOME`` or ``~/.cache/stillweb``."""
    return Path(os.environ.get("STILLWEB_HOME", "~/.cache/stillweb")).expanduser()


def register(subparsers) -> None:
    """Add ``quickstart``."""
    parser = subparsers.add_parser(
        "quickstart",
        help="build the default snapshot and try it",
        description="Build (or reuse) the default synthetic snapshot and run example searches.\n"
        "Example: stillweb quickstart --articles 2000 --out /tmp/syn",
    )
    parser.add_argument("--out", help="snapshot directory (default: $STILLWEB_HOME/snapshots/synthetic-<articles>-s<seed>)")
    parser.add_argument("--articles", type=int, default=DEFAULT_ARTICLES, help="articles in the world (default 20000)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="world seed (default 0)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="build processes (default: all cores)")
    parser.set_defaults(handler=run)


def ensure_snapshot(out: Path, articles: int, seed: int, workers: int) -> Snapshot:
    """Open the snapshot at ``out`` if it was built with these parameters, else build it."""
    try:
        manifest = read_manifest(out)
        if manifest.get("source") == {"kind": "synthetic", "articles": articles, "seed": seed}:
            return Snapshot.open(out)
    except SnapshotError:
        pass
    print(f"building the synthetic world ({articles} articles, seed {seed}) in {out} ...")
    build_synthetic(articles, seed, out, workers=workers)
    return Snapshot.open(out)


def run(args) -> int:
    """Build or reuse the default snapshot and show what it can do."""
    out = Path(args.out) if args.out else default_home() / "snapshots" / f"synthetic-{args.articles}-s{args.seed}"
    snapshot = ensure_snapshot(out, args.articles, args.seed, args.workers)
    counts = snapshot.manifest["counts"]
    print(f"snapshot:    {snapshot.path}")
    print(f"fingerprint: {snapshot.fingerprint}")
    print(f"documents:   {counts['docs']}  facts: {counts['facts']}  links: {counts['links']}  redirects: {counts['redirects']}")
    for query in EXAMPLE_QUERIES:
        print(f"\nsearch {query!r}:")
        for rank, result in enumerate(snapshot.search(query, k=3), 1):
            print(f"  {rank}. [doc {result.doc_id}] {result.title} ({result.score:.2f}): {result.snippet[:100]}")
    return 0
