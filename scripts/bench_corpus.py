"""Corpus figures (issue 2): build throughput, index size, search latency against raw tantivy and bm25s.

Examples:
  python scripts/bench_corpus.py build --articles 20000 --workers 1 2
  python scripts/bench_corpus.py build-real --workers 1 2
  python scripts/bench_corpus.py search --articles 100000 --dir /tmp/bench-snapshots
  python scripts/bench_corpus.py search --articles 1000000 --no-bm25

Each run appends a section to BENCHMARKS.md. Builds run in a child process so
their wall time and peak memory (largest resident set of the builder or any of
its workers) are measured from outside. Search latency is compared, in the same
run, with raw tantivy on the same index (parse, search, read doc ids: no titles
or snippets) and with bm25s on the same documents (latency and top-10 overlap).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import append_section, percentile  # noqa: E402
from bench_search import raw_top10  # noqa: E402

REAL_SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "data" / (
    "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
)


def timed_build(command: list[str]) -> tuple[float, float]:
    """Run a build command; return (seconds, peak RSS in MiB of the largest process)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"build failed ({status}): {' '.join(command)}")
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(usage.ru_maxrss, children) / 1024


def directory_mib(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def bench_build(args) -> None:
    rows = []
    for workers in args.workers:
        out = Path(args.dir) / f"build-syn-{args.articles}-w{workers}"
        seconds, peak = timed_build(["stillweb", "build", "synthetic", "--articles", str(args.articles), "--seed", "0",
                                     "--out", str(out), "--workers", str(workers), "--quiet"])
        from stillweb.corpora.snapshot.reading import Snapshot

        snap = Snapshot.open(out)
        docs = snap.manifest["counts"]["docs"]
        index_mib = directory_mib(out / "index")
        rows.append(f"| {workers} | {args.articles:,} | {docs:,} | {seconds:.1f} | {args.articles / seconds:,.0f} | "
                    f"{peak:,.0f} | {index_mib / docs * 1000:.2f} | {directory_mib(out):,.1f} | {snap.fingerprint[:12]} |")
        if not args.keep:
            shutil.rmtree(out)
    body = ("Synthetic world, end to end (generate, write XML dump, read it back, parse wikitext, index, write "
            "tables, fingerprint). Bar: >= 1,000 articles/s with 2 workers.\n\n"
            "| workers | articles | docs | seconds | articles/s | peak RSS MiB | index MiB per 1,000 docs | snapshot MiB | fingerprint |\n"
            "|---|---|---|---|---|---|---|---|---|\n" + "\n".join(rows))
    append_section(f"Corpus build: synthetic {args.articles:,} articles", body)


def bench_build_real(args) -> None:
    if not REAL_SAMPLE.is_file():
        raise SystemExit(f"real sample not found: {REAL_SAMPLE}")
    import bz2

    plain_mb = len(bz2.decompress(REAL_SAMPLE.read_bytes())) / 1e6
    rows = []
    for workers in args.workers:
        out = Path(args.dir) / f"build-real-w{workers}"
        seconds, peak = timed_build(["stillweb", "build", "wikipedia", str(REAL_SAMPLE), "--out", str(out),
                                     "--workers", str(workers), "--quiet"])
        rows.append(f"| {workers} | {plain_mb:.1f} | {seconds:.2f} | {plain_mb / seconds:.2f} | "
                    f"{plain_mb / seconds / workers:.2f} | {peak:,.0f} |")
        shutil.rmtree(out)
    parse_rate, articles_rate = parse_rate_per_core()
    body = ("Real 2016 English Wikipedia sample (106 articles, 100 redirects; MB of uncompressed XML), end to end "
            "including process start-up (about a second of it), then the per-worker parse rate alone. Bar: >= 1 MB/s "
            "of wikitext per worker.\n\n"
            "| workers | MB | seconds | MB/s | MB/s per worker | peak RSS MiB |\n|---|---|---|---|---|---|\n" + "\n".join(rows)
            + f"\n\nParsing alone (`parse_page`, one process, CPU time, 3 passes over the sample's articles): "
              f"**{parse_rate:.2f} MB/s of wikitext per worker** ({articles_rate:.0f} articles/s).\n")
    append_section("Corpus build: real Wikipedia sample", body)


def parse_rate_per_core() -> tuple[float, float]:
    """MB/s and articles/s of ``parse_page`` over the real sample's articles (CPU time, one process)."""
    from stillweb.corpora.sources.wikipedia_xml import read_dump
    from stillweb.corpora.wikitext import parse_page

    articles = [page for page in read_dump(REAL_SAMPLE) if page.redirect is None]
    megabytes = sum(len(page.text.encode("utf-8")) for page in articles) / 1e6
    start = time.process_time()
    for _ in range(3):
        for page in articles:
            parse_page(page.title, page.text)
    seconds = (time.process_time() - start) / 3
    return megabytes / seconds, len(articles) / seconds


def make_queries(snapshot, count: int) -> list[str]:
    """Deterministic agent-like queries: a title's words plus a relation word, from keyed choices."""
    from stillweb.corpora.keyed import KeyedRng

    words = ("born", "founded", "capital", "director", "population", "university", "album", "award", "river", "city")
    queries = []
    for i in range(count):
        rng = KeyedRng(0, "bench-query", i)
        title = snapshot.title_of(rng.integer(0, len(snapshot) - 1))
        queries.append(f"{title} {rng.choice(words)}")
    return queries


def latencies(function, queries: list[str], repeat: int = 3) -> list[float]:
    out = []
    for _ in range(repeat):
        for query in queries:
            start = time.perf_counter()
            function(query)
            out.append((time.perf_counter() - start) * 1e3)
    return out


def bench_search(args) -> None:
    from stillweb.corpora.snapshot.reading import Snapshot

    out = Path(args.dir) / f"search-syn-{args.articles}"
    build_note = "reused"
    try:
        snap = Snapshot.open(out)
        assert snap.manifest["counts"]["docs"] > 0
    except Exception:
        seconds, peak = timed_build(["stillweb", "build", "synthetic", "--articles", str(args.articles), "--seed", "0",
                                     "--out", str(out), "--workers", str(args.build_workers), "--quiet"])
        build_note = f"built in {seconds:,.0f} s ({args.articles / seconds:,.0f} articles/s), peak RSS {peak:,.0f} MiB, {args.build_workers} workers"
        snap = Snapshot.open(out)
    queries = make_queries(snap, args.queries)
    k = 10

    raw = raw_top10(snap)  # the same tantivy index, used raw for the baseline

    def ours(query: str):
        return snap.search(query, k=k)

    for query in queries[:20]:  # warm caches for both
        raw(query), ours(query)
    # interleave to share any machine noise fairly
    raw_ms, our_ms = [], []
    for _ in range(3):
        raw_ms += latencies(raw, queries, 1)
        our_ms += latencies(ours, queries, 1)
    rows = [
        f"| stillweb `Snapshot.search` (titles + snippets) | {percentile(our_ms, 50):.3f} | {percentile(our_ms, 99):.3f} | "
        f"{percentile(our_ms, 50) / percentile(raw_ms, 50):.2f}x |",
        f"| raw tantivy (strict parse, search, doc ids; no ties, titles or snippets) | {percentile(raw_ms, 50):.3f} | {percentile(raw_ms, 99):.3f} | 1.00x |",
    ]
    overlap_note = "bm25s: skipped (--no-bm25)"
    if not args.no_bm25:
        import bm25s
        import numpy as np

        texts = snap._docs.column("text")
        titles = snap._docs.column("title").to_pylist()
        corpus = [f"{titles[i]} {texts[i].as_py()}" for i in range(len(snap))]
        start = time.perf_counter()
        retriever = bm25s.BM25()
        retriever.index(bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False)
        index_seconds = time.perf_counter() - start
        del corpus

        def bm25(query: str):
            tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
            return retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)[0][0]

        bm_ms = latencies(bm25, queries, 3)
        overlaps = []
        for query in queries:
            a = {r.doc_id for r in ours(query)}
            b = set(int(x) for x in np.asarray(bm25(query)).tolist())
            overlaps.append(len(a & b) / k)
        rows.append(f"| bm25s (same docs, no stemming, 1 thread) | {percentile(bm_ms, 50):.3f} | {percentile(bm_ms, 99):.3f} | "
                    f"{percentile(bm_ms, 50) / percentile(raw_ms, 50):.2f}x |")
        overlap_note = (f"top-10 overlap with bm25s: mean {sum(overlaps) / len(overlaps):.2f} "
                        f"(bm25s indexed in {index_seconds:.1f} s; it tokenises without stemming, stillweb stems, drops stop words "
                        f"and boosts titles, so overlap is not expected to be 1)")
    body = (f"Synthetic snapshot of {args.articles:,} articles ({len(snap):,} docs; {build_note}); {len(queries)} "
            f"queries (title words + a relation word), k = {k}, 3 interleaved passes. Bar: stillweb median <= 1.2x raw tantivy.\n\n"
            "| engine | p50 ms | p99 ms | p50 vs raw tantivy |\n|---|---|---|---|\n" + "\n".join(rows) + f"\n\n{overlap_note}\n")
    append_section(f"Search latency: synthetic {args.articles:,} articles", body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["build", "build-real", "search"])
    parser.add_argument("--articles", type=int, default=20_000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--build-workers", type=int, default=2)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--dir", default="/tmp/stillweb-bench")
    parser.add_argument("--keep", action="store_true", help="keep built snapshots")
    parser.add_argument("--no-bm25", action="store_true")
    args = parser.parse_args()
    Path(args.dir).mkdir(parents=True, exist_ok=True)
    {"build": bench_build, "build-real": bench_build_real, "search": bench_search}[args.what](args)


if __name__ == "__main__":
    main()
