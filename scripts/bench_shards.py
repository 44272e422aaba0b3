"""Sharded snapshot bench (issue 48 item 4): a generated wiki-18-like corpus built as one snapshot and as
``--shards`` shards, the shards' rankings against the one index's, and search through the shards against
the one index, in this process and on Ray shard actors; with the load average beside every figure.

Corpus and queries: scripts/bench_scale.py's (100-word passages whose words follow a Zipf-Mandelbrot law,
titles shared by runs of passages; 3- and 8-word queries from the same law). Figures:

1. build wall time and peak RSS of the process tree: ``stillweb build corpus`` of the corpus, and the
   same with ``--shards S`` (one after another here; with ``--ray-build``, also ``--shards S --ray`` on a
   local Ray runtime of ``--cpus`` CPUs), and the counting pass a Ray build makes first (one core);
2. rankings: the share of queries whose top 10 (doc ids, scores, titles, snippets) is identical, and the
   mean overlap@10 of doc ids, sharded against one index;
3. ``Snapshot.search`` p50/p90 (titles and snippets included): one index, the sharded snapshot in this
   process (one tantivy index over the shards' segments), and through ``--actors`` shard actors on the
   local runtime (each query to every actor, hits merged by score); interleaved rounds, so load drifts
   fall on all sides alike; the merge's own cost per query;
4. batches of 512 queries: queries/s through the actors against ``search_many`` of one index on the
   same cores; resident memory of each actor.

Heavy sizes share the machine: wrap them in ``flock /tmp/heavy.lock`` (TEAM.md)::

    python scripts/bench_shards.py --passages 100000 --shards 4 --dir /tmp/shards
    flock /tmp/heavy.lock python scripts/bench_shards.py --passages 1000000 --shards 4 --ray-build --dir /tmp/shards --append
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import append_section, load, percentile  # noqa: E402
from bench_scale import make_corpus, make_queries, stillweb_command, timed_tree  # noqa: E402

from stillweb.corpora.build.in_shards import count_run, unit_runs  # noqa: E402
from stillweb.corpora.search.shards import merge_hits  # noqa: E402
from stillweb.corpora.sources.corpus_formats import CorpusSpec  # noqa: E402
from stillweb.corpora.snapshot.reading import Snapshot  # noqa: E402


def build(corpus: Path, out: Path, workers: int, *extra: str) -> dict:
    """``stillweb build corpus`` timed (bench_scale.timed_tree's figures)."""
    return timed_tree([*stillweb_command(sys.executable), "build", "corpus", str(corpus), "--out", str(out),
                       "--workers", str(workers), "--language", "en", "--quiet", *extra])


def rankings(one: Snapshot, sharded: Snapshot, queries: list[str]) -> tuple[float, float]:
    """(share of queries with an identical top 10, mean overlap@10 of doc ids)."""
    identical, overlap = 0, 0.0
    for query in queries:
        a, b = one.search(query, 10), sharded.search(query, 10)
        identical += a == b
        overlap += len({hit.doc_id for hit in a} & {hit.doc_id for hit in b}) / max(1, len(a))
    return identical / len(queries), overlap / len(queries)


def latencies(sides: dict[str, Snapshot], queries: list[str], rounds: int) -> dict[str, list[float]]:
    """Milliseconds per ``search(query, 10)`` on each side, the sides interleaved query by query."""
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(rounds):
        for query in queries:
            for name, snapshot in sides.items():
                start = time.perf_counter()
                snapshot.search(query, 10)
                times[name].append((time.perf_counter() - start) * 1e3)
    return times


def merge_cost(snapshot: Snapshot, queries: list[str]) -> float:
    """Microseconds per query of merging the actors' hit lists alone (merge_hits over what they answered)."""
    index = snapshot._index
    answers = [group.result(group.submit(queries, 10, None, index.passages)) for group in index.groups]
    start = time.perf_counter()
    for position in range(len(queries)):
        merge_hits([answer[position] for answer in answers], 10)
    return (time.perf_counter() - start) / len(queries) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passages", type=int, default=100_000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--actors", type=int, default=2, help="shard actors on the local Ray runtime")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray runtime")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--queries", type=int, default=300, help="queries of each length (3 and 8 words)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ray-build", action="store_true", help="also build the shards as Ray tasks (--ray)")
    parser.add_argument("--dir", type=Path, required=True, help="work folder (corpus and snapshots, removed after)")
    parser.add_argument("--keep", action="store_true", help="keep the corpus and snapshots")
    parser.add_argument("--append", action="store_true", help="append the figures to BENCHMARKS.md")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    corpus = args.dir / f"zipf-{args.passages}-s{args.seed}.jsonl"
    made = make_corpus(corpus, args.passages, seed=args.seed)
    one_path, sharded_path = args.dir / "one", args.dir / f"x{args.shards}"
    body = [f"Machine load at the start: {load()}; corpus {args.passages:,} passages ({made['articles']:,} articles, "
            f"{made['bytes'] / 2**20:,.0f} MiB, sha256 {made['sha256'][:16]}), {args.shards} shards, {args.workers} workers.",
            "", "| build | wall s | passages/s | CPU s | peak RSS, process tree MiB | load before |", "|---|---:|---:|---:|---:|---:|"]
    builds = [("one snapshot", build(corpus, one_path, args.workers)),
              (f"{args.shards} shards, one after another", build(corpus, sharded_path, args.workers, "--shards", str(args.shards)))]
    if args.ray_build:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        builds.append((f"{args.shards} shards as Ray tasks ({args.cpus} CPUs)",
                       build(corpus, args.dir / "ray", args.workers, "--shards", str(args.shards), "--ray")))
    for name, f in builds:
        body.append(f"| {name} | {f['wall']:.1f} | {args.passages / f['wall']:,.0f} | {f['cpu']:.0f} | {f['tree_mib']:,.0f} | {f['load']:.1f} |")
    start = time.perf_counter()
    spec = CorpusSpec.detect([str(corpus)])
    counted = sum(count_run([str(corpus)], run, {"format": spec.format, "language": "en"})[0]
                  for run in unit_runs(spec, args.shards))
    count_seconds = time.perf_counter() - start
    body.append(f"| counting pass of a Ray build (every run, one core here) | {count_seconds:.1f} | "
                f"{counted / count_seconds:,.0f} | - | - | {os.getloadavg()[0]:.1f} |")
    one, sharded = Snapshot.open(one_path), Snapshot.open(sharded_path)
    body.append(f"\nFingerprints: one {one.fingerprint[:12]}, sharded {sharded.fingerprint[:12]}"
                + (f", Ray-built {Snapshot.open(args.dir / 'ray').fingerprint[:12]}" if args.ray_build else "") + ".")
    import ray

    from stillweb.corpora.search.shard_actors import serve_shards, stop_shards

    ray.init(address="local", num_cpus=args.cpus, include_dashboard=False, _node_ip_address="127.0.0.1",
             log_to_driver=False, configure_logging=False)
    actors = serve_shards(sharded_path, actors=args.actors, actor_options={"num_cpus": args.cpus / args.actors})
    remote = Snapshot(sharded.path, sharded.manifest)  # opened after the actors started: searches through them
    body += ["", "| queries | identical top 10 | overlap@10 | one index p50 / p90 ms | shards here p50 / p90 ms | "
             f"{args.actors} actors p50 / p90 ms | merge µs/query | load |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for words in (3, 8):
        queries = make_queries(args.queries, words, seed=args.seed)
        identical, overlap = rankings(one, sharded, queries)
        times = latencies({"one": one, "here": sharded, "actors": remote}, queries, args.rounds)
        cells = " | ".join(f"{percentile(times[name], 50):.2f} / {percentile(times[name], 90):.2f}" for name in times)
        body.append(f"| {words}-word | {identical:.3f} | {overlap:.4f} | {cells} | {merge_cost(remote, queries):.1f} | "
                    f"{os.getloadavg()[0]:.1f} |")
    batch = make_queries(512, 3, seed=args.seed + 1)
    figures = []
    for name, run in (("one index, search_many(workers=%d)" % args.cpus, lambda: one.search_many(batch, 10, workers=args.cpus)),
                      (f"{args.actors} shard actors", lambda: remote.search_many(batch, 10))):
        run()  # warm: worker processes started, pages cached
        start = time.perf_counter()
        run()
        figures.append(f"{name}: {len(batch) / (time.perf_counter() - start):,.0f} queries/s")
    memory = [f"{entry['resident_mib']:,.0f}" for entry in ray.get([actor.describe.remote() for actor in actors])]
    body += ["", f"- batches of 512 (3-word): {'; '.join(figures)} (load {os.getloadavg()[0]:.1f})",
             f"- resident memory per shard actor: {', '.join(memory)} MiB",
             f"- disk: one snapshot {_mib(one_path):,.0f} MiB, sharded {_mib(sharded_path):,.0f} MiB"]
    one.close()
    stop_shards(sharded_path)
    ray.shutdown()
    if not args.keep:
        shutil.rmtree(args.dir)
    body.append(f"\nMachine load at the end: {load()}.")
    text = "\n".join(body)
    if args.append:
        append_section("Scale: sharded snapshots (issue 48 item 4)", text)
    else:
        print(text)


def _mib(folder: Path) -> float:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file() and not path.is_symlink()) / 2**20


if __name__ == "__main__":
    main()
