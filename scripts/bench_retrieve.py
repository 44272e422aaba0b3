"""Benchmark ``POST /retrieve`` as Search-R1's rollout loop uses it: one POST per turn carrying every
active rollout's search (``generation.py``'s ``_batch_search``: ``{"queries", "topk": 3, "return_scores": true}``).

A one-worker server runs on loopback in its own process (:func:`start_server_process`, default settings:
``--max-batch`` 4,096). For batches of 1, 64, 512 and 4,096 queries it reports queries/s over HTTP and, as
the baseline measured in the same run, queries/s of :meth:`Snapshot.search_many` in this process on the
same batches (the ratio is what HTTP and JSON cost). Then 256 concurrent clients (one connection each) send
``--client-requests`` batches of ``--client-batch`` queries; every response must be 200 with one result list
per query. Work is bounded: ``--queries`` queries per batch size (at least 2 requests). The run is appended
to BENCHMARKS.md with the machine, the command and the load average before and after.

    python scripts/bench_retrieve.py --articles 20000
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

import httpx

from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.server.app import start_server_process

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script: its sibling modules
from bench_common import append_section, free_port, load, percentile, snapshot_path  # noqa: E402

BATCHES = (1, 64, 512, 4096)
TOPK = 3


def main() -> int:
    """Run the benchmark and append its section to BENCHMARKS.md."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--snapshot", help="snapshot directory (default: a synthetic world of --articles articles)")
    parser.add_argument("--articles", type=int, default=20_000)
    parser.add_argument("--dir", default="/tmp/stillweb-bench")
    parser.add_argument("--queries", type=int, default=8192, help="queries sent per batch size (default 8192)")
    parser.add_argument("--clients", type=int, default=256)
    parser.add_argument("--client-batch", type=int, default=16)
    parser.add_argument("--client-requests", type=int, default=4)
    parser.add_argument("--no-append", action="store_true", help="print the figures only")
    args = parser.parse_args()
    path = snapshot_path(args)
    snapshot = Snapshot.open(path)
    queries = make_queries(snapshot, max(BATCHES))
    snapshot.search_many(queries[:1024], TOPK)  # warm this process's search pool (the baseline's)
    load_before = load()
    port = free_port()
    server = start_server_process([path], port)
    try:
        rows = []
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600) as client:
            client.post("/retrieve", json={"queries": queries[:64], "topk": TOPK})  # warm the server's search pool
            for batch in BATCHES:
                requests = max(2, args.queries // batch)
                http = _rate(lambda b=batch, r=requests: _http(client, queries, b, r), batch * requests)
                local = _rate(lambda b=batch, r=requests: _local(snapshot, queries, b, r), batch * requests)
                rows.append(f"| {batch} | {requests} | {http:,.0f} | {local:,.0f} | {http / local:.2f} |")
        concurrent = asyncio.run(_clients(port, queries, args.clients, args.client_batch, args.client_requests))
    finally:
        server.kill()
        server.wait()
    body = "\n".join([
        f"Snapshot: {path.name} ({len(snapshot):,} documents), topk {TOPK}, return_scores true; "
        f"{load_before} before, {load()} after.", "",
        "| batch | requests | HTTP queries/s | in-process search_many queries/s (baseline, same run) | ratio |",
        "|---|---|---|---|---|", *rows, "",
        f"{args.clients} concurrent clients x {args.client_requests} requests of {args.client_batch} queries: "
        f"{concurrent['ok']} of {concurrent['sent']} answered 200 with every result list, {concurrent['errors']} errors; "
        f"{concurrent['qps']:,.0f} queries/s, latency p50 {concurrent['p50']:.0f} ms, p99 {concurrent['p99']:.0f} ms.",
    ])
    if args.no_append:
        print(body)
    else:
        append_section(f"Search-R1 /retrieve batches: {path.name} (issue 41 item 1)", body)
    return 0 if concurrent["errors"] == 0 else 1


def make_queries(snapshot: Snapshot, count: int) -> list[str]:
    """``count`` queries of two title words each, from titles spread over the snapshot."""
    step = max(1, len(snapshot) // count)
    titles = [snapshot.title_of((number * step) % len(snapshot)) for number in range(count)]
    return [" ".join(title.split()[:2]) + f" {number % 13}" for number, title in enumerate(titles)]


def _http(client: httpx.Client, queries: list[str], batch: int, requests: int) -> None:
    for number in range(requests):
        start = (number * batch) % len(queries)
        chunk = (queries[start:] + queries)[:batch]
        response = client.post("/retrieve", json={"queries": chunk, "topk": TOPK, "return_scores": True})
        if response.status_code != 200 or len(response.json()["result"]) != batch:
            raise RuntimeError(f"batch {batch}: HTTP {response.status_code} {response.text[:200]}")


def _local(snapshot: Snapshot, queries: list[str], batch: int, requests: int) -> None:
    for number in range(requests):
        start = (number * batch) % len(queries)
        snapshot.search_many((queries[start:] + queries)[:batch], TOPK)


def _rate(run, queries: int) -> float:
    started = time.perf_counter()
    run()
    return queries / (time.perf_counter() - started)


async def _clients(port: int, queries: list[str], clients: int, batch: int, requests: int) -> dict:
    latencies: list[float] = []
    outcome = {"sent": 0, "ok": 0, "errors": 0}

    async def one(number: int) -> None:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=600) as client:
            for request in range(requests):
                start = ((number * requests + request) * batch) % len(queries)
                chunk = (queries[start:] + queries)[:batch]
                outcome["sent"] += 1
                began = time.perf_counter()
                try:
                    response = await client.post("/retrieve", json={"queries": chunk, "topk": TOPK, "return_scores": True})
                    good = response.status_code == 200 and len(response.json()["result"]) == batch
                except httpx.HTTPError:
                    good = False
                latencies.append((time.perf_counter() - began) * 1e3)
                outcome["ok" if good else "errors"] += 1

    started = time.perf_counter()
    await asyncio.gather(*(one(number) for number in range(clients)))
    elapsed = time.perf_counter() - started
    return {**outcome, "qps": clients * requests * batch / elapsed, "p50": percentile(latencies, 50),
            "p99": percentile(latencies, 99)}


if __name__ == "__main__":
    raise SystemExit(main())
