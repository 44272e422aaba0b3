"""Search figures (issue 16): per-query cost against raw tantivy, batch throughput on every core, memory.

Examples (snapshots/syn-30k: ``stillweb build synthetic --articles 30000 --seed 0 --out snapshots/syn-30k``;
syn-100k likewise with 100000 articles):
  python scripts/bench_search.py latency --snapshot snapshots/syn-30k snapshots/syn-100k
  python scripts/bench_search.py batch --snapshot snapshots/syn-30k --batch 64 512 --rounds 20
  python scripts/bench_search.py memory --snapshot snapshots/syn-30k --envs 1000
  python scripts/bench_search.py dense --vectors 1000000 --dimensions 384 768

``latency``: for short (a title), keyword (title + relation word) and
question-length queries, ``Snapshot.search`` top 10 with titles and snippets
against raw tantivy top 10 on the same index (strict parse, search, doc ids
from the fast field), the two interleaved query by query, p50 over every
repetition. ``batch``: queries per second of batches of ``--batch`` queries,
one by one in this process (one core) against ``search_many`` on every core
(worker processes) and against a thread pool, rounds interleaved. ``memory``:
RSS growth of ``--envs`` environments on one snapshot (``bench_envs``). Each
appends its section to BENCHMARKS.md (``--no-append`` to only print) with the
load average at its start and end. ``dense``: exact int8 dense search
(:class:`stillweb.corpora.search.dense.DenseIndex`, issue 37) over ``--vectors`` random int8
vectors (seeded) on one core (BLAS limited to one thread), against the float32
matrix-vector product over the same vectors held as float32 (4x the memory; the
floor a float index pays), p50 over ``--queries`` queries.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import append_section, format_3_copy, load, percentile, timed_ms  # noqa: E402

RELATIONS = ("born", "founded", "capital", "director", "population", "university", "album", "award", "river", "city")
KINDS = ("short", "keyword", "question")
K = 10


def queries_of_kind(snapshot, kind: str, count: int) -> list[str]:
    """Deterministic agent-like queries of one kind, from keyed choices over the snapshot's titles."""
    from stillweb.corpora.keyed import KeyedRng

    queries = []
    for i in range(count):
        rng = KeyedRng(0, "bench-search", kind, i)
        title = snapshot.title_of(rng.integer(0, len(snapshot) - 1))
        if kind == "short":
            queries.append(title)
        elif kind == "keyword":
            queries.append(f"{title} {rng.choice(RELATIONS)}")
        else:
            other = snapshot.title_of(rng.integer(0, len(snapshot) - 1))
            queries.append(f"Which {rng.choice(RELATIONS)} is linked to {title}, and when was the "
                           f"{rng.choice(RELATIONS)} of {other} first recorded?")
    return queries


def raw_top10(snapshot):
    """Raw tantivy on the snapshot's own index: what a tantivy user writes to get the top 10 doc ids."""
    from stillweb.corpora.search.index import INDEX_PARAMETERS

    index, searcher = snapshot._index._index, snapshot._index._searcher
    fields, boosts = list(INDEX_PARAMETERS["fields"]), {"title": INDEX_PARAMETERS["title_boost"]}

    def raw(query: str):
        try:  # the lenient parser only for text that is not valid syntax
            parsed = index.parse_query(query, fields, field_boosts=boosts)
        except ValueError:
            parsed = index.parse_query_lenient(query, fields, field_boosts=boosts)[0]
        hits = searcher.search(parsed, K, count=False).hits
        return searcher.fast_field_values("doc_id", [address for _score, address in hits])

    return raw


def bench_latency(args) -> str:
    from stillweb.corpora.snapshot.reading import Snapshot

    rows, load_before = [], load()
    snapshots = [Snapshot.open(path) for path in args.snapshot]
    if args.format3:
        snapshots = [copy for snapshot in snapshots for copy in (snapshot, format_3_copy(snapshot))]
    for snapshot in snapshots:
        # raw: what a tantivy user writes for the top 10 ids; a format 4 index needs its page aggregation for that
        raw = (lambda q, index=snapshot._index: index.search_passages(q, K)) if snapshot._index.passages else raw_top10(snapshot)
        engine = snapshot._index.search  # parse + tantivy top 10 + doc ids, without titles or snippets
        name = f"{len(snapshot):,} (format {snapshot.manifest['format'].rsplit('/', 1)[-1]})"
        for kind in KINDS:
            queries = queries_of_kind(snapshot, kind, args.queries)
            for query in queries[:20]:  # warm the page cache for all three
                raw(query), snapshot.search(query, K)
            raw_ms, our_ms, engine_ms = ([], []), ([], []), ([], [])
            for _ in range(args.passes):
                for query in queries:
                    timed_ms(raw_ms, raw, query)
                    timed_ms(our_ms, snapshot.search, query, K)
                    timed_ms(engine_ms, engine, query, K)
            (raw_wall, raw_cpu), (our_wall, our_cpu), (_, engine_cpu) = (
                (percentile(wall, 50), percentile(cpu, 50)) for wall, cpu in (raw_ms, our_ms, engine_ms))
            paired = percentile([ours - theirs for ours, theirs in zip(our_ms[1], raw_ms[1])], 50) * 1e3
            rows.append(f"| {name} | {kind} | {raw_cpu:.3f} | {our_cpu:.3f} | **{our_cpu / raw_cpu:.2f}x** | "
                        f"{our_wall / raw_wall:.2f}x | {engine_cpu:.3f} | {(our_cpu - engine_cpu) * 1e3:.0f} | **{paired:.0f}** |")
    return (f"{args.queries} queries per kind x {args.passes} interleaved passes, k = {K}, p50 over every repetition; "
            f"{load_before} at the start, {load()} at the end, {os.cpu_count()} cores. Goal: stillweb <= 1.2x raw; "
            "titles, snippets and objects <= 40 us per query (issue 43: the median of the paired differences).\n\n"
            "p50 of thread CPU time per query; the wall-time ratio is shown beside it. Raw: tantivy's top 10 doc ids "
            "(strict parse, search, fast field); for a format 4 snapshot the ranking alone "
            "(`SearchIndex.search_passages`: the query, tantivy's top passages and their pages), since its top 10 "
            "page ids need the page step. Last column: the median over every (query, pass) of `Snapshot.search` "
            "minus raw on the same query in the same pass.\n\n"
            "| docs | queries | raw p50 ms | `Snapshot.search` p50 ms (titles + snippets) | ratio (CPU) | "
            "ratio (wall) | stillweb ranking alone p50 ms | p50 difference us | titles + snippets + objects us "
            "(median of paired differences) |\n|---|---|---|---|---|---|---|---|---|\n"
            + "\n".join(rows))


def bench_batch(args) -> str:
    from stillweb.corpora.search.pool import SearchPool
    from stillweb.corpora.snapshot.reading import Snapshot

    snapshot = Snapshot.open(args.snapshot[0])
    sections, load_before = [], load()
    for size in args.batch:
        queries = [q for kind in KINDS for q in queries_of_kind(snapshot, kind, size)]
        batches = [queries[start : start + size] for start in range(0, len(queries), size)]
        threads = ThreadPoolExecutor(max_workers=args.workers)
        relay = SearchPool(snapshot.path, args.workers, Snapshot.open)  # the pool as it was before issue 43
        start = time.perf_counter()
        snapshot.search_many(batches[0], K, workers=args.workers)  # start the worker processes
        relay.search_many(batches[0], K)
        startup = time.perf_counter() - start
        expected = [snapshot.search(q, K) for q in batches[0]]
        assert snapshot.search_many(batches[0], K, workers=args.workers) == expected == relay.search_many(batches[0], K)
        modes = {
            "one core (one by one, in-process)": lambda batch: [snapshot.search(q, K) for q in batch],
            f"search_many, {args.workers} cores (this process + {args.workers - 1} worker)":
                lambda batch: snapshot.search_many(batch, K, workers=args.workers),
            f"{args.workers} worker processes, this one relaying (before issue 43)": lambda batch: relay.search_many(batch, K),
            f"{args.workers} threads (tantivy releases the GIL)": lambda batch: list(threads.map(lambda q: snapshot.search(q, K), batch)),
        }
        workers = snapshot._pool.pids + relay.pids
        seconds, cpu = {mode: 0.0 for mode in modes}, {mode: 0.0 for mode in modes}
        for _round in range(args.rounds):
            for batch in batches:
                for mode, run in modes.items():
                    started, cpu_started = time.perf_counter(), process_cpu([os.getpid(), *workers])
                    run(batch)
                    seconds[mode] += time.perf_counter() - started
                    cpu[mode] += process_cpu([os.getpid(), *workers]) - cpu_started
        total = args.rounds * len(queries)
        base = total / seconds[next(iter(modes))]
        rows = [f"| {size} | {mode} | {total / spent:,.0f} | **{total / spent / base:.2f}x** | {cpu[mode] / total * 1e3:.2f} |"
                for mode, spent in seconds.items()]
        sections.append((size, startup, rows))
        relay.close()
        threads.shutdown()
    snapshot.close()
    return (f"Snapshot {Path(args.snapshot[0]).name} ({len(snapshot):,} docs, format "
            f"{snapshot.manifest['format'].rsplit('/', 1)[-1]}); batches of {', '.join(str(s) for s, _, _ in sections)} "
            f"queries (short, keyword and question-length), k = {K}, {args.rounds} rounds, the modes interleaved batch by "
            f"batch; results checked equal to one by one; worker start-up (once) "
            f"{', '.join(f'{startup:.1f} s' for _s, startup, _r in sections)}. {load_before} at the start, {load()} at "
            f"the end, {os.cpu_count()} cores (a figure above 1x needs idle cores). Goal: >= 1.8x one core.\n\n"
            "CPU ms per query counts this process and the worker processes (all modes run here, so each "
            "mode's CPU includes only its own work plus idle workers' near-zero time).\n\n"
            "| batch | mode | queries/s | vs one core | CPU ms per query |\n|---|---|---|---|---|\n"
            + "\n".join(row for _s, _startup, rows in sections for row in rows))


def process_cpu(pids: list[int]) -> float:
    """User + system CPU seconds of the given processes so far (``/proc/PID/stat``)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def bench_memory(args) -> str:
    from bench_envs import memory_per_env

    return f"Snapshot {Path(args.snapshot[0]).name}. " + memory_per_env(Path(args.snapshot[0]), args.envs)


def bench_dense(args) -> str:
    import numpy as np

    from stillweb.corpora.search.dense import DenseIndex, vector_norms

    rows, load_before = [], load()
    for dimensions in args.dimensions:
        rng = np.random.default_rng(dimensions)
        vectors = rng.integers(-127, 128, size=(args.vectors, dimensions), dtype=np.int8)
        index = DenseIndex.__new__(DenseIndex)
        index.info, index.vectors, index.norms = {"dimensions": dimensions}, vectors, vector_norms(vectors)
        as_float = vectors.astype(np.float32) if args.vectors * dimensions * 4 <= 2 << 30 else None
        queries = rng.standard_normal((args.queries, dimensions))
        ours, floor = ([], []), ([], [])
        for query in queries:
            timed_ms(ours, index.search, query, K)
            if as_float is not None:
                timed_ms(floor, lambda q: np.argpartition(as_float @ q, -K)[-K:], query.astype(np.float32))
        batched = ([], [])
        for start in range(0, len(queries), 32):
            timed_ms(batched, index.search_many, queries[start : start + 32], K)
        batch_cpu = sum(batched[1]) / len(queries)
        ours_cpu = percentile(ours[1], 50)
        floor_cpu = percentile(floor[1], 50) if as_float is not None else 0.0
        floor_text, ratio = (f"{floor_cpu:.1f}", f"{ours_cpu / floor_cpu:.2f}x") if as_float is not None else \
            ("- (a float32 copy would pass 2 GiB)", "-")
        rows.append(f"| {args.vectors:,} | {dimensions} | {vectors.nbytes / 2**20:,.0f} | **{ours_cpu:.1f}** | "
                    f"{batch_cpu:.1f} | {floor_text} | {ratio} |")
        del vectors, as_float, index
    return (f"{args.queries} random queries per row, k = {K}, BLAS on one thread; p50 of thread CPU time; "
            f"{load_before} at the start, {load()} at the end, {os.cpu_count()} cores. "
            "Goal: <= 50 ms per query per core at 1M vectors.\n\n"
            "| vectors | dimensions | int8 MiB | `DenseIndex.search` p50 ms (exact, int8) | in batches of 32 "
            "(`search_many`), mean ms per query | float32 matvec + argpartition p50 ms (same run) | ratio (one query) |"
            "\n|---|---|---|---|---|---|---|\n" + "\n".join(rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["latency", "batch", "memory", "dense"])
    parser.add_argument("--snapshot", nargs="+", help="snapshot directories (latency: one row group each; not dense)")
    parser.add_argument("--vectors", type=int, default=1_000_000, help="dense: random int8 vectors")
    parser.add_argument("--dimensions", type=int, nargs="+", default=[384, 768], help="dense: dimensions, one row each")
    parser.add_argument("--queries", type=int, default=300, help="latency: queries per kind")
    parser.add_argument("--passes", type=int, default=5, help="latency: interleaved passes over the queries")
    parser.add_argument("--batch", type=int, nargs="+", default=[64], help="batch: queries per batch (one table row group each)")
    parser.add_argument("--rounds", type=int, default=10, help="batch: rounds over the batches")
    parser.add_argument("--workers", type=int, default=2, help="batch: worker processes / threads")
    parser.add_argument("--envs", type=int, default=1000, help="memory: environments on one snapshot")
    parser.add_argument("--format3", action="store_true",
                        help="latency: also the same pages as format 3 indexed them (a copy beside each snapshot)")
    parser.add_argument("--no-append", action="store_true", help="print only, do not append to BENCHMARKS.md")
    args = parser.parse_args()
    if args.what != "dense" and not args.snapshot:
        parser.error(f"{args.what} needs --snapshot")
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # one core (before numpy loads)
        os.environ[variable] = "1"
    title, bench = {
        "latency": ("Search latency: per query vs raw tantivy, three query kinds (issues 16, 43)", bench_latency),
        "batch": ("Search latency: batch throughput on every core (issues 16, 43)", bench_batch),
        "memory": ("Environments: memory of 1,000 envs on one snapshot (issue 16)", bench_memory),
        "dense": ("Search latency: exact int8 dense search on one core (issue 37)", bench_dense),
    }[args.what]
    body = bench(args)
    if args.no_append:
        print(body)
    else:
        append_section(title, body)


if __name__ == "__main__":
    main()
