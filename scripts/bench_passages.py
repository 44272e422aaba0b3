"""Passage corpora at scale: build rate and peak RSS for wiki-18 format passages, search
latency against raw tantivy on the same index, and the multi-hop recall table (issue 10).

1. Passages: the synthetic world's article texts (a synthetic snapshot's ``docs.parquet``)
   cut into 100-word windows and written as FlashRAG / Search-R1 ``wiki-18`` JSON lines
   (``{"id", "contents": "\\"Title\\"\\ntext"}``). When the world has fewer passages than
   ``--passages``, it is repeated in editions (edition e > 0 titles its pages ``"<title> (e)"``)
   with fresh ids until the count is reached; the report says how many distinct passages.
2. Build: ``stillweb build corpus`` in a child process, ``--workers 1``; passages/s per core =
   passages / the child's CPU seconds (user + sys), peak RSS of the largest process.
3. Search: ``Snapshot.search`` (k=10) against raw tantivy on the same index (parse, search,
   doc-id fast field), the same queries interleaved: 6 words of KeyedRng-picked passages.
4. Recall: HotpotQA + 2WikiMultihopQA passages (scripts/multihop_passages.py), stillweb vs
   bm25s on the same rows, for 1, 2 and 3 sentences per passage.

    stillweb build synthetic --articles 30000 --seed 0 --out snapshots/syn-30k
    nice -n 10 python scripts/bench_passages.py --source snapshots/syn-30k \\
        --dir "$(mktemp -d)" --passages 1000000 --append
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import append_section, load, percentile  # noqa: E402

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def write_wiki18(source: Path, out: Path, passages: int, words: int = 100) -> tuple[int, int]:
    """Write ``passages`` wiki-18 lines from the snapshot at ``source``; returns (written, distinct)."""
    written, distinct, edition = 0, None, 0
    with out.open("w", encoding="utf-8") as handle:
        while written < passages:
            parquet = pq.ParquetFile(source / "docs.parquet")
            for batch in parquet.iter_batches(batch_size=4096, columns=["title", "text"]):
                for title, text in zip(batch.column("title").to_pylist(), batch.column("text").to_pylist()):
                    tokens = text.split()
                    name = title if edition == 0 else f"{title} ({edition})"
                    for start in range(0, len(tokens), words):
                        contents = f'"{name}"\n' + " ".join(tokens[start : start + words])
                        handle.write(json.dumps({"id": str(written), "contents": contents}, ensure_ascii=False) + "\n")
                        written += 1
                        if written == passages:
                            return written, distinct or written
            distinct = distinct or written
            edition += 1
    return written, distinct or written


def timed_child(command: list[str]) -> dict:
    """Run ``command``; wall and CPU seconds and the peak RSS (MiB) of the child."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        raise SystemExit(f"failed ({status}): {' '.join(command)}")
    return {"wall": time.perf_counter() - start, "cpu": usage.ru_utime + usage.ru_stime,
            "rss": max(usage.ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024}


def search_latency(snapshot_path: Path, queries: int) -> dict:
    """p50/p99 ms of ``Snapshot.search`` and of raw tantivy on the same index and queries."""
    from stillweb.corpora.keyed import KeyedRng
    from stillweb.corpora.snapshot.reading import Snapshot

    snap = Snapshot.open(snapshot_path)
    rng = KeyedRng(0, "bench-passages-queries")
    texts = [snap.get(rng.integer(0, len(snap) - 1)).text.split() for _ in range(queries)]
    picked = [" ".join(words[len(words) // 3 : len(words) // 3 + 6]) for words in texts]
    index = snap._index  # the same tantivy index, used raw for the baseline
    raw_index, searcher, fields = index._index, index._searcher, list(index.fields)

    def raw(query: str):
        try:
            parsed = raw_index.parse_query(query, fields)
        except ValueError:
            parsed = raw_index.parse_query_lenient(query, fields)[0]
        hits = searcher.search(parsed, 10, count=False).hits
        return searcher.fast_field_values("doc_id", [address for _score, address in hits])

    for query in picked[:20]:
        raw(query), snap.search(query, 10)
    timings: dict[str, list[float]] = {"raw": [], "stillweb": []}
    for _round in range(3):
        for query in picked:
            for name, function in (("raw", raw), ("stillweb", lambda q: snap.search(q, 10))):
                start = time.perf_counter()
                function(query)
                timings[name].append((time.perf_counter() - start) * 1e3)
    return {name: (percentile(values, 50), percentile(values, 99)) for name, values in timings.items()}


def recall_table() -> list[tuple[int, dict, dict]]:
    """(sentences per passage, stillweb scores, bm25s scores) on the multi-hop passages."""
    from stillweb.corpora.search import evaluation as ev
    from stillweb.corpora.build.from_source import build_rows
    from stillweb.corpora.snapshot.reading import Snapshot

    rows = []
    script = Path(__file__).resolve().parent / "multihop_passages.py"
    for sentences in (1, 2, 3):
        with tempfile.TemporaryDirectory() as work:
            folder = Path(work)
            subprocess.run([sys.executable, str(script), str(SHARED / "hotpotqa_train_100.json"),
                            str(SHARED / "2wikimultihopqa_dev_2.json"), "--out", str(folder), "--sentences", str(sentences)],
                           check=True, capture_output=True)
            snap = Snapshot.open(build_rows([folder], folder / "snap", progress=False).path)
            queries_path, qrels_path = ev.beir_paths(folder)
            queries, qrels = ev.load_queries(queries_path), ev.load_qrels(qrels_path)
            rows.append((sentences, ev.evaluate(qrels, ev.run_snapshot(snap, queries)),
                         ev.evaluate(qrels, ev.run_bm25s(snap, queries))))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, required=True, help="a synthetic snapshot whose texts become passages")
    parser.add_argument("--dir", type=Path, required=True, help="work folder for the jsonl and the snapshot")
    parser.add_argument("--passages", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--append", action="store_true", help="append the figures to BENCHMARKS.md")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    corpus, snapshot = args.dir / "wiki18.jsonl", args.dir / "wiki18-snap"
    written, distinct = write_wiki18(args.source, corpus, args.passages)
    build = timed_child(["stillweb", "build", "corpus", str(corpus), "--out", str(snapshot), "--workers", "1"])
    latency = search_latency(snapshot, args.queries)
    recall = recall_table()
    body = [
        f"Passages: {written:,} wiki-18 lines (100 words) from `{args.source.name}` ({distinct:,} distinct, the rest "
        f"in editions), {corpus.stat().st_size / 2**20:,.0f} MiB of JSON lines. At the end of the run: {load()}, "
        f"{os.cpu_count()} cores.",
        "",
        "| build (`stillweb build corpus --workers 1`) | value |",
        "|---|---:|",
        f"| wall seconds | {build['wall']:,.0f} |",
        f"| CPU seconds (user + sys) | {build['cpu']:,.0f} |",
        f"| **passages/s per core** (passages / CPU s) | **{written / build['cpu']:,.0f}** |",
        f"| passages/s wall | {written / build['wall']:,.0f} |",
        f"| peak RSS MiB | {build['rss']:,.0f} |",
        "",
        f"| search, k=10, {args.queries} queries x 3 rounds, interleaved | p50 ms | p99 ms |",
        "|---|---:|---:|",
        f"| raw tantivy (parse, search, doc-id fast field) | {latency['raw'][0]:.3f} | {latency['raw'][1]:.3f} |",
        f"| `Snapshot.search` (+ tie-safe order, titles, snippets, source ids) | {latency['stillweb'][0]:.3f} | {latency['stillweb'][1]:.3f} |",
        "",
        "Recall on HotpotQA (100) + 2WikiMultihopQA (2) questions, passages of N sentences of their context "
        "paragraphs, qrels = passages holding a supporting fact (question text as the query; ir_measures):",
        "",
        "| sentences per passage | measure | stillweb | bm25s |",
        "|---:|---|---:|---:|",
    ]
    for sentences, ours, baseline in recall:
        for measure in ours:
            body.append(f"| {sentences} | {measure} | {ours[measure]:.4f} | {baseline[measure]:.4f} |")
    text = "\n".join(body)
    if args.append:
        append_section("Passage corpora: 1M wiki-18 passages build, search vs raw tantivy, multi-hop recall (issue 10)", text)
    else:
        print(text)


if __name__ == "__main__":
    main()
