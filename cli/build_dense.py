"""``stillweb build dense SNAPSHOT``: add a dense index (the shipped model or your own embeddings) to a built snapshot."""

from __future__ import annotations

import argparse

EXAMPLES = """examples:
  stillweb build dense snapshots/scifact --model default   (the shipped multilingual-e5-small: pip install 'stillweb[dense]')
  stillweb build dense snapshots/wiki18 --model default --workers 8   (8 processes of 2 threads: 16 cores)
  stillweb build dense snapshots/syn-20k --endpoint http://127.0.0.1:8000/v1 --model BAAI/bge-small-en-v1.5
  stillweb build dense snapshots/wiki18 --endpoint http://127.0.0.1:8000/v1 --model intfloat/e5-base-v2 \\
      --query-prefix 'query: ' --document-prefix 'passage: '
  stillweb build dense snapshots/wiki18 --vectors e5.npz --model intfloat/e5-base-v2   (arrays 'ids', 'vectors')
  stillweb build dense snapshots/wiki18 --vectors e5.npy --ids e5-ids.txt --model intfloat/e5-base-v2
  stillweb build dense snapshots/wiki18 --vectors e5.parquet --model intfloat/e5-base-v2   (columns id, vector)

Then search it: Snapshot.search(query, k, mode="dense" or "hybrid"), the search tool's 'retriever'
argument, /retrieve's 'retriever'. With --model default, queries are embedded in-process by the same model.
With your own model, queries are embedded once and recorded beside the snapshot
(SNAPSHOT.query-embeddings.log): set STILLWEB_EMBEDDINGS_ENDPOINT=URL where new queries may be embedded.
"""


def register(sources) -> None:
    """Add ``dense`` to ``stillweb build``'s sources."""
    dense = sources.add_parser(
        "dense", help="add a dense index (the shipped model, your embeddings server or precomputed vectors) to a "
                      "built snapshot",
        description="Embed every document of a built snapshot with the shipped model (--model default: "
                    "multilingual-e5-small, the 'dense' extra) or an OpenAI-compatible /v1/embeddings server, or "
                    "read precomputed vectors keyed by the corpus's source ids, and add them to the snapshot as an "
                    "int8 dense index (exact, identical rankings on every machine). The snapshot is replaced "
                    "atomically: a failure leaves it as it was; its fingerprint does not change.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    dense.add_argument("snapshot", help="the built snapshot directory")
    dense.add_argument("--model", required=True, help="'default' (with neither --endpoint nor --vectors): the shipped "
                                                      "model; else the embedding model's name (sent to the server; "
                                                      "recorded)")
    source = dense.add_mutually_exclusive_group()
    source.add_argument("--endpoint", metavar="URL", help="an OpenAI-compatible embeddings API, e.g. http://127.0.0.1:8000/v1")
    source.add_argument("--vectors", metavar="FILE", help="precomputed vectors: .npz (ids, vectors), .npy (with --ids) "
                                                          "or .parquet (id, vector)")
    dense.add_argument("--ids", metavar="FILE", help="with a .npy --vectors: the source id of each row, one a line")
    dense.add_argument("--ignore-unknown", action="store_true", help="skip vectors whose id is no document's")
    dense.add_argument("--batch-size", type=int, default=64, help="texts per request (default 64)")
    dense.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for each request (default 60)")
    dense.add_argument("--max-chars", type=int, default=2000, help="characters of each document sent (default 2000)")
    dense.add_argument("--query-prefix", default="", help="text put before each query (e5, bge: 'query: ')")
    dense.add_argument("--document-prefix", default="", help="text put before each document (e5: 'passage: ')")
    dense.add_argument("--workers", type=int, default=1, help="with --model default: processes embedding (default 1; "
                                                              "each runs 2 threads; the vectors are the same)")
    dense.add_argument("--quiet", action="store_true", help="no progress output")
    dense.set_defaults(handler=_run)


def _run(args) -> int:
    from stillweb.corpora.search.dense_build import add_dense_index

    info = add_dense_index(args.snapshot, model=args.model, endpoint=args.endpoint, vectors_file=args.vectors,
                           ids_file=args.ids, batch_size=args.batch_size, timeout=args.timeout,
                           max_chars=args.max_chars, query_prefix=args.query_prefix,
                           document_prefix=args.document_prefix, ignore_unknown=args.ignore_unknown,
                           progress=not args.quiet, workers=args.workers)
    print(f"dense index: {info['docs']} vectors of {info['dimensions']} dimensions, model {info['model']!r} "
          f"(from the {info['from']}), added to {args.snapshot}")
    return 0
