"""``stillweb build synthetic|wikipedia|parquet``: make a corpus snapshot."""

from __future__ import annotations

import argparse
import os

from stillweb.corpora.build_from_source import build_parquet, build_synthetic, build_wikipedia

EXAMPLES = """examples:
  stillweb build synthetic --articles 20000 --seed 0 --out snapshots/syn-20k
  stillweb build wikipedia ../shared/data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2 --out snapshots/enwiki-sample
  stillweb build parquet wikipedia-en-00000.parquet --out snapshots/hf
"""


def _workers(value: str) -> int:
    workers = int(value)
    if workers < 1:
        raise argparse.ArgumentTypeError(f"--workers must be at least 1, got {value}")
    return workers


def register(subparsers) -> None:
    """Add ``build`` and its three sources."""
    build = subparsers.add_parser(
        "build", help="build a corpus snapshot", epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sources = build.add_subparsers(dest="source", metavar="SOURCE", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--out", required=True, help="snapshot directory to write (replaced atomically)")
    common.add_argument("--workers", type=_workers, default=os.cpu_count() or 1, help="parsing processes (default: all cores)")
    common.add_argument("--quiet", action="store_true", help="no progress bar")

    synthetic = sources.add_parser("synthetic", parents=[common], help="the seeded fictional encyclopedia (default corpus)",
                                   epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    synthetic.add_argument("--articles", type=int, default=20_000, help="number of articles (default 20000)")
    synthetic.add_argument("--seed", type=int, default=0, help="world seed (default 0)")
    synthetic.set_defaults(handler=_run_synthetic)

    wikipedia = sources.add_parser("wikipedia", parents=[common], help="a MediaWiki pages-articles XML dump (.xml or .xml.bz2)",
                                   epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    wikipedia.add_argument("path", help="the dump file")
    wikipedia.add_argument("--skip-bad", action="store_true", help="count and skip malformed pages instead of failing")
    wikipedia.set_defaults(handler=_run_wikipedia)

    parquet = sources.add_parser("parquet", parents=[common], help="Hugging Face wikimedia/wikipedia parquet or jsonl",
                                 epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parquet.add_argument("path", help="a .parquet or .jsonl file, or a directory of them")
    parquet.set_defaults(handler=_run_parquet)


def _report(result) -> int:
    manifest = result.manifest
    print(f"snapshot: {result.path}")
    print(f"fingerprint: {manifest['fingerprint']}")
    print("counts: " + ", ".join(f"{k}={v}" for k, v in manifest["counts"].items() if not isinstance(v, dict)))
    return 0


def _run_synthetic(args) -> int:
    if args.articles < 1:
        raise ValueError(f"--articles must be at least 1, got {args.articles}")
    return _report(build_synthetic(args.articles, args.seed, args.out, workers=args.workers, progress=not args.quiet))


def _run_wikipedia(args) -> int:
    return _report(build_wikipedia(args.path, args.out, workers=args.workers, skip_bad=args.skip_bad, progress=not args.quiet))


def _run_parquet(args) -> int:
    return _report(build_parquet(args.path, args.out, workers=args.workers, progress=not args.quiet))
