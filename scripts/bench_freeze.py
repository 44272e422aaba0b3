"""Frozen tools: replay latency per call against a bare local HTTP round trip, and store size.

Starts, on loopback, a bare JSON search service (uvicorn, the same options as the proxy) and
records ``--calls`` distinct queries through ``stillweb freeze record``; then, in rounds that
interleave them, times one call (a) to the bare service directly (the baseline: what any local
HTTP tool costs), (b) replayed by ``stillweb freeze serve`` over HTTP, (c) replayed in-process
by a :class:`~stillweb.sandboxes.frozen.FrozenTool` (no HTTP at all). Last, the size on disk of
a store of 10,000 calls whose answers look like the service's (5 hits each).

    python scripts/bench_freeze.py            # appends a section to BENCHMARKS.md
    python scripts/bench_freeze.py --no-write --calls 100
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import append_section, free_port, percentile  # noqa: E402

from stillweb.sandboxes.frozen import FrozenStore, FrozenTool, canonical_request  # noqa: E402

SERVICE = """
import sys, hashlib
from fastapi import FastAPI, Request
import uvicorn
app = FastAPI()
@app.post("/search")
async def search(request: Request):
    body = await request.json()
    q = str(body.get("q", ""))
    return {"query": q, "results": [{"title": f"{q} {n}", "url": f"https://example.org/{hashlib.sha1(f'{q}{n}'.encode()).hexdigest()}",
            "snippet": (q + " is mentioned here. ") * 6} for n in range(5)]}
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", http="httptools", loop="uvloop")
"""
FREEZE = [sys.executable, "-c", "from stillweb.cli.main import main; raise SystemExit(main())", "freeze"]
SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"], "additionalProperties": False}


def wait_for(url: str, process: subprocess.Popen) -> None:
    while True:
        try:
            httpx.post(url, json={"q": "warm"}, timeout=2)
            return
        except httpx.TransportError:
            if process.poll() is not None:
                raise RuntimeError(f"{url}: the server exited with {process.returncode}") from None
            time.sleep(0.1)


def time_calls(call, queries: list[str]) -> list[float]:
    times = []
    for query in queries:
        start = time.perf_counter()
        call(query)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=300, help="distinct calls recorded and replayed per round")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved timing rounds")
    parser.add_argument("--no-write", action="store_true", help="print only, do not append to BENCHMARKS.md")
    args = parser.parse_args()
    load_before = os.getloadavg()
    queries = [f"query {n}" for n in range(args.calls)]
    work = Path(tempfile.mkdtemp(prefix="bench-freeze-"))
    bare_port, proxy_port = free_port(), free_port()
    bare = subprocess.Popen([sys.executable, "-c", SERVICE, str(bare_port)])
    processes = [bare]
    try:
        wait_for(f"http://127.0.0.1:{bare_port}/search", bare)
        recorder = subprocess.Popen([*FREEZE, "record", "--upstream", f"http://127.0.0.1:{bare_port}", "--out",
                                     str(work / "frozen"), "--port", str(proxy_port)])
        wait_for(f"http://127.0.0.1:{proxy_port}/search", recorder)
        with httpx.Client(base_url=f"http://127.0.0.1:{proxy_port}") as client:
            record_times = time_calls(lambda q: client.post("/search", json={"q": q}), queries)
        recorder.terminate()
        recorder.wait()
        server = subprocess.Popen([*FREEZE, "serve", str(work / "frozen"), "--port", str(proxy_port)])
        processes.append(server)
        wait_for(f"http://127.0.0.1:{proxy_port}/search", server)
        tool = FrozenTool.from_spec({"store": str(work / "frozen"), "name": "web_search", "path": "/search",
                                     "parameters": SCHEMA})
        timings: dict[str, list[float]] = {"bare": [], "proxy": [], "in_process": []}
        with httpx.Client(base_url=f"http://127.0.0.1:{bare_port}") as direct, \
                httpx.Client(base_url=f"http://127.0.0.1:{proxy_port}") as proxy:
            for _ in range(args.rounds):
                timings["bare"] += time_calls(lambda q: direct.post("/search", json={"q": q}), queries)
                timings["proxy"] += time_calls(lambda q: proxy.post("/search", json={"q": q}), queries)
                timings["in_process"] += time_calls(lambda q: tool.run({"q": q}), queries)
            sample = proxy.post("/search", json={"q": queries[0]})
            assert sample.headers["x-stillweb-frozen"] == "store" and sample.content == direct.post(
                "/search", json={"q": queries[0]}).content
        size = store_size(work / "size", sample.text, 10_000)
    finally:
        for process in processes:
            process.kill()
    report(args, timings, record_times, size, (load_before, os.getloadavg()))


def store_size(path: Path, body: str, calls: int) -> dict[str, float]:
    """Bytes on disk of a store of ``calls`` records with answers like ``body``."""
    store = FrozenStore.create(path, "http", "http://127.0.0.1")
    answers = [(canonical_request("POST", "/search", body={"q": f"query {n}"}),
                {"status": 200, "content_type": "application/json", "body": body.replace("query 0", f"query {n}")})
               for n in range(calls)]
    start = time.perf_counter()
    for first in range(0, calls, 1000):
        store.add_many(answers[first:first + 1000])
    seconds = time.perf_counter() - start
    store.write_manifest()
    on_disk = sum(file.stat().st_size for file in path.iterdir())
    payload = sum(len(answer["body"]) for _, answer in answers)
    start = time.perf_counter()
    reopened = FrozenStore.open(path)
    open_seconds = time.perf_counter() - start
    assert len(reopened) == calls
    return {"bytes": on_disk, "payload": payload, "append_s": seconds, "open_s": open_seconds}


def report(args, timings, record_times, size, load) -> None:
    bare = percentile(timings["bare"], 50)
    rows = [f"| {name} | {percentile(values, 50) * 1e3:.3f} | {percentile(values, 90) * 1e3:.3f} | "
            f"{percentile(values, 50) / bare:.2f}x |" for name, values in
            (("bare local HTTP round trip (baseline)", timings["bare"]), ("replay via `freeze serve` (HTTP)", timings["proxy"]),
             ("replay in-process (FrozenTool.run)", timings["in_process"]),
             ("record via `freeze record` (forward + fsync)", record_times))]
    body = "\n".join([
        f"{args.calls} distinct calls x {args.rounds} interleaved rounds, one client, keep-alive; "
        f"load average {load[0][0]:.1f} before, {load[1][0]:.1f} after, {os.cpu_count()} cores.", "",
        "| path | p50 ms | p90 ms | p50 vs bare |", "|---|---:|---:|---:|", *rows, "",
        "##### Store size per 10,000 calls (answers of ~1.2 KB: 5 hits)", "",
        "| records | bytes on disk | answer bytes | overhead | append (batches of 1000) | open |",
        "|---:|---:|---:|---:|---:|---:|",
        f"| 10,000 | {size['bytes'] / 2**20:.1f} MiB | {size['payload'] / 2**20:.1f} MiB | "
        f"{size['bytes'] / size['payload']:.2f}x | {size['append_s']:.2f} s | {size['open_s']:.2f} s |",
    ])
    print(body)
    if not args.no_write:
        append_section("Frozen tools: replay latency and store size", body)


if __name__ == "__main__":
    main()
