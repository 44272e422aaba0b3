"""``stillweb eval retrieval``: recall@k, nDCG@10 and MRR@10 of a snapshot against qrels."""

from __future__ import annotations

import argparse
import json

from stillweb.corpora.search.baselines import BASELINES
from stillweb.corpora.search.dense import SEARCH_MODES
from stillweb.corpora.errors import UsageError

EXAMPLES = """examples:
  stillweb eval retrieval snapshots/scifact --beir beir/scifact --baseline bm25s
  stillweb eval retrieval snapshots/scifact --beir beir/scifact --baseline bm25s --baseline pyserini
  stillweb eval retrieval snapshots/wiki18 --queries nq-test.tsv --qrels nq-test.qrels --run runs/nq.trec
  stillweb eval retrieval snapshots/scifact --beir beir/scifact --retriever bm25 --retriever dense --retriever hybrid
      (a snapshot with a dense index: stillweb build dense --model default; with your own model new queries
      need STILLWEB_EMBEDDINGS_ENDPOINT)
  python scripts/multihop_passages.py ../shared/data/hotpotqa_train_100.json --out /tmp/mh \\
      && stillweb build corpus /tmp/mh --out /tmp/mh/snap && stillweb eval retrieval /tmp/mh/snap --beir /tmp/mh --baseline bm25s
"""


def register(subparsers) -> None:
    """Add ``eval retrieval``."""
    evaluate = subparsers.add_parser("eval", help="evaluate a snapshot (retrieval quality)", epilog=EXAMPLES,
                                     description="Measure a snapshot: retrieval quality against qrels (trec_eval's "
                                                 "measures via ir_measures; needs stillweb[eval]).",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    kinds = evaluate.add_subparsers(dest="kind", metavar="KIND", required=True)
    retrieval = kinds.add_parser(
        "retrieval", help="recall@10/100, nDCG@10, MRR@10 against qrels (BEIR or TREC)", epilog=EXAMPLES,
        description="Search every query, write a TREC run file and print ir_measures' scores. Documents are "
                    "matched to qrels by source_id (the corpus's own id). Needs the eval extra: "
                    "pip install 'stillweb[eval]'.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    retrieval.add_argument("snapshot", help="snapshot directory")
    retrieval.add_argument("--queries", help="BEIR queries.jsonl or qid<TAB>text TSV")
    retrieval.add_argument("--qrels", help="BEIR qrels TSV or TREC qrels")
    retrieval.add_argument("--beir", metavar="FOLDER", help="a BEIR folder: its queries.jsonl and qrels/SPLIT.tsv")
    retrieval.add_argument("--split", default="test", help="BEIR qrels split (default test)")
    retrieval.add_argument("--run", metavar="FILE", help="write stillweb's TREC run file here (the first --retriever's)")
    retrieval.add_argument("--k", type=int, default=100, help="documents retrieved per query (1..100, default 100)")
    retrieval.add_argument("--baseline", choices=tuple(BASELINES), action="append", default=[],
                           help="also run this engine on the same rows and compare (repeatable): bm25s (eval extra) "
                                "or pyserini (pyserini extra and a JDK 17: bash scripts/install_jdk.sh)")
    retrieval.add_argument("--retriever", choices=SEARCH_MODES, action="append",
                           help="stillweb's ranking to score (repeatable; default bm25; dense and hybrid need a dense "
                                "index); each beyond bm25 is reported as stillweb-MODE")
    retrieval.add_argument("--json", action="store_true", help="print the scores as JSON")
    retrieval.set_defaults(handler=_run_retrieval)


def _run_retrieval(args) -> int:
    from stillweb.corpora.search import evaluation as ev
    from stillweb.corpora.snapshot.reading import Snapshot

    if args.beir:
        queries_path, qrels_path = ev.beir_paths(args.beir, args.split)
        queries_path, qrels_path = args.queries or queries_path, args.qrels or qrels_path
    elif args.queries and args.qrels:
        queries_path, qrels_path = args.queries, args.qrels
    else:
        raise UsageError("give --queries and --qrels, or --beir FOLDER")
    if not 1 <= args.k <= 100:
        raise UsageError(f"--k must be in 1..100, got {args.k}")
    snapshot = Snapshot.open(args.snapshot)
    queries, qrels = ev.load_queries(queries_path), ev.load_qrels(qrels_path)
    runs = {"stillweb" if mode == "bm25" else f"stillweb-{mode}": ev.run_snapshot(snapshot, queries, args.k, mode)
            for mode in dict.fromkeys(args.retriever or ["bm25"])}
    for name in dict.fromkeys(args.baseline):
        runs[name] = ev.run_baseline(name, snapshot, queries, args.k)
    if args.run:
        ev.write_trec_run(next(iter(runs.values())), args.run)
    scores = {name: ev.evaluate(qrels, run) for name, run in runs.items()}
    if args.json:
        print(json.dumps({"queries": len(queries), "judged": len(qrels), "scores": scores}, indent=2, sort_keys=True))
        return 0
    print(f"{len(queries)} queries, {len(qrels)} with qrels, {len(snapshot)} documents")
    names = list(scores)
    print("measure   " + "".join(f"{name:>10}" for name in names))
    for measure in ev.MEASURES:
        print(f"{measure:<10}" + "".join(f"{scores[name][measure]:>10.4f}" for name in names))
    return 0
