"""Benchmark the stillweb server against in-process steps and a plain FastAPI search endpoint.

This process is the load generator (asyncio + httpx on loopback); each server
runs in its own process. For concurrency 1, 16 and 64 it measures search-step
latency (p50/p99) and throughput, and from the server's own accounting
(``os.times`` via a stats route) the server CPU time per request: on a small
machine the load generator competes for the cores, so CPU per request is the
reliable capacity figure. A soak run (64 sessions x N steps) counts errors and
samples the server's resident memory after warm-up and at the end. The results
are appended to ``BENCHMARKS.md``.

    python scripts/bench_server.py --snapshot snapshots/syn --requests 2000 --soak-steps 1000
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import httpx

import stillweb.envs  # noqa: F401 - registers the environments
from stillweb.corpora.snapshot import Snapshot
from stillweb.envs.serve import start_server_process

REPO = Path(__file__).resolve().parent.parent
SEARCH_K = 5  # the search tool's default k
ENV_KWARGS = {"tool_format": "tongyi", "max_turns": 16, "max_tool_calls": 64, "max_format_errors": None}

PLAIN_SERVER = '''
import os, sys
from fastapi import FastAPI
from pydantic import BaseModel
from stillweb.corpora.snapshot import Snapshot

snapshot = Snapshot.open(sys.argv[1])
app = FastAPI()

class SearchRequest(BaseModel):
    query: str
    k: int = 5

@app.post("/search")
def search(body: SearchRequest):
    return [{"doc_id": h.doc_id, "title": h.title, "score": h.score, "snippet": h.snippet} for h in snapshot.search(body.query, body.k)]

@app.get("/stats")
def stats():
    times = os.times()
    return {"cpu_user_s": times.user, "cpu_system_s": times.system}

@app.get("/health")
def health():
    return {"status": "ok"}

if __name__ == "__main__":
    import uvicorn
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning", access_log=False)
'''


def main() -> int:
    """Run the benchmark and append its section to BENCHMARKS.md."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--snapshot", help="snapshot directory (default: build a 2,000-article synthetic one in a temp dir)")
    parser.add_argument("--requests", type=int, default=2000, help="requests per concurrency level (default 2000)")
    parser.add_argument("--concurrency", default="1,16,64", help="comma-separated levels (default 1,16,64)")
    parser.add_argument("--soak-sessions", type=int, default=64)
    parser.add_argument("--soak-steps", type=int, default=1000, help="steps per session in the soak run (0: skip)")
    parser.add_argument("--out", default=str(REPO / "BENCHMARKS.md"))
    args = parser.parse_args()
    levels = [int(level) for level in args.concurrency.split(",")]
    snapshot_path = Path(args.snapshot) if args.snapshot else build_snapshot()
    queries = make_queries(Snapshot.open(snapshot_path))
    tasks = [{"task_id": f"q{index}", "question": query, "answer": "none"} for index, query in enumerate(queries[:50])]

    results = {"in_process": in_process(snapshot_path, tasks, queries, args.requests)}
    plain_port, ours_port = free_port(), free_port()
    plain = start_plain_server(snapshot_path, plain_port)
    try:
        results["plain"] = {c: run_load(plain_port, c, args.requests, queries, plain_worker) for c in levels}
    finally:
        plain.kill()
        plain.wait()
    ours = start_server_process([snapshot_path], ours_port)
    try:
        results["stillweb"] = {c: run_load(ours_port, c, args.requests, queries, session_worker(tasks)) for c in levels}
        if args.soak_steps:
            results["soak"] = soak(ours_port, args.soak_sessions, args.soak_steps, queries, tasks)
    finally:
        ours.kill()
        ours.wait()
    section = report(results, snapshot_path, levels, " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]))
    with open(args.out, "a", encoding="utf-8") as out:
        out.write(section)
    print(section)
    return 0


# -- setup -----------------------------------------------------------------------------------


def build_snapshot() -> Path:
    from stillweb.corpora.builders import build_synthetic

    out = Path(tempfile.mkdtemp(prefix="bench-server-")) / "synthetic-2000-s0"
    build_synthetic(2000, 0, out, workers=1, progress=False)
    return out


def make_queries(snapshot: Snapshot, count: int = 500) -> list[str]:
    """Deterministic queries: two words of each of the first titles."""
    return [" ".join(snapshot.title_of(doc).split()[:2]) or "river" for doc in range(min(count, len(snapshot)))]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_plain_server(snapshot_path: Path, port: int) -> subprocess.Popen:
    script = Path(tempfile.mkdtemp(prefix="bench-plain-")) / "plain_server.py"
    script.write_text(PLAIN_SERVER)
    process = subprocess.Popen([sys.executable, str(script), str(snapshot_path), str(port)])
    for _ in range(600):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return process
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("the plain server did not start")


def search_action(query: str) -> str:
    return '<tool_call>{"name": "search", "arguments": {"query": %s}}</tool_call>' % json.dumps(query)


# -- measurements ----------------------------------------------------------------------------


def in_process(snapshot_path: Path, tasks: list[dict], queries: list[str], count: int) -> dict:
    """In-process env steps and bare searches, timed in this process."""
    env = gym.make("stillweb/WikiQA-v0", snapshot=str(snapshot_path), tasks=tasks, **ENV_KWARGS)
    snapshot = env.unwrapped.snapshot
    latencies, cpu = [], 0.0
    env.reset(seed=0)
    for index in range(count):
        cpu_start, start = time.process_time(), time.perf_counter()
        _, _, terminated, truncated, _ = env.step(search_action(queries[index % len(queries)]))
        latencies.append(time.perf_counter() - start)
        cpu += time.process_time() - cpu_start
        if terminated or truncated:
            env.reset()
    search_cpu = time.process_time()
    for index in range(count):
        snapshot.search(queries[index % len(queries)], SEARCH_K)
    search_cpu = (time.process_time() - search_cpu) / count
    env.close()
    return {**summary(latencies, sum(latencies)), "cpu_ms": 1000 * cpu / count, "search_cpu_ms": 1000 * search_cpu}


async def plain_worker(client: httpx.AsyncClient, worker: int, count: int, queries: list[str], latencies: list[float]) -> int:
    for index in range(count):
        start = time.perf_counter()
        response = await client.post("/search", json={"query": queries[(worker * 7 + index) % len(queries)], "k": SEARCH_K})
        response.raise_for_status()
        latencies.append(time.perf_counter() - start)
    return 0


def session_worker(tasks: list[dict]):
    """A load worker that owns one environment session and steps it with searches."""

    async def worker(client: httpx.AsyncClient, number: int, count: int, queries: list[str], latencies: list[float]) -> int:
        created = await client.post("/sessions", json={"env_id": "stillweb/WikiQA-v0", "kwargs": {"tasks": tasks, **ENV_KWARGS}})
        created.raise_for_status()
        session = created.json()["session_id"]
        (await client.post(f"/sessions/{session}/reset", json={"seed": number})).raise_for_status()
        errors = 0
        for index in range(count):
            start = time.perf_counter()
            body = {"action": search_action(queries[(number * 7 + index) % len(queries)]), "request_id": f"{number}-{index}"}
            response = await client.post(f"/sessions/{session}/step", json=body)
            latencies.append(time.perf_counter() - start)
            if response.status_code != 200:
                errors += 1
                continue
            step = response.json()
            if step["terminated"] or step["truncated"]:
                (await client.post(f"/sessions/{session}/reset", json={})).raise_for_status()
        await client.delete(f"/sessions/{session}")
        return errors

    return worker


def run_load(port: int, concurrency: int, total: int, queries: list[str], worker) -> dict:
    """``concurrency`` workers share ``total`` requests; returns latency, throughput and server CPU per request."""
    return asyncio.run(_run_load(port, concurrency, total, queries, worker))


async def _run_load(port: int, concurrency: int, total: int, queries: list[str], worker) -> dict:
    limits = httpx.Limits(max_connections=concurrency + 4, max_keepalive_connections=concurrency + 4)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", limits=limits, timeout=120) as client:
        before = (await client.get("/stats")).json()
        latencies: list[float] = []
        start = time.perf_counter()
        per_worker = max(1, total // concurrency)
        errors = await asyncio.gather(*(worker(client, number, per_worker, queries, latencies) for number in range(concurrency)))
        elapsed = time.perf_counter() - start
        after = (await client.get("/stats")).json()
    cpu = (after["cpu_user_s"] + after["cpu_system_s"]) - (before["cpu_user_s"] + before["cpu_system_s"])
    return {**summary(latencies, elapsed), "server_cpu_ms": 1000 * cpu / len(latencies), "errors": sum(errors)}


def soak(port: int, sessions: int, steps: int, queries: list[str], tasks: list[dict]) -> dict:
    """``sessions`` sessions x ``steps`` steps; errors and resident memory after warm-up and at the end."""
    return asyncio.run(_soak(port, sessions, steps, queries, tasks))


async def _soak(port: int, sessions: int, steps: int, queries: list[str], tasks: list[dict]) -> dict:
    worker = session_worker(tasks)
    limits = httpx.Limits(max_connections=sessions + 4, max_keepalive_connections=sessions + 4)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", limits=limits, timeout=120) as client:
        warmup = max(1, steps // 10)
        latencies: list[float] = []
        errors = list(await asyncio.gather(*(worker(client, n, warmup, queries, latencies) for n in range(sessions))))
        rss_warm = (await client.get("/stats")).json()["rss_bytes"]
        start = time.perf_counter()
        errors += await asyncio.gather(*(worker(client, n, steps - warmup, queries, latencies) for n in range(sessions)))
        elapsed = time.perf_counter() - start
        rss_end = (await client.get("/stats")).json()["rss_bytes"]
    return {"sessions": sessions, "steps": steps, "total_steps": len(latencies), "errors": sum(errors),
            "rss_warm_mb": rss_warm / 2**20, "rss_end_mb": rss_end / 2**20, "steps_per_s": (sessions * (steps - warmup)) / elapsed}


def summary(latencies: list[float], elapsed: float) -> dict:
    ordered = sorted(latencies)
    return {
        "p50_ms": 1000 * statistics.median(ordered),
        "p99_ms": 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))],
        "per_s": len(ordered) / elapsed,
    }


# -- report -------------------------------------------------------------------------------


def report(results: dict, snapshot_path: Path, levels: list[int], command: str) -> str:
    local = results["in_process"]
    lines = [
        "",
        f"## Server: remote steps vs in-process vs a plain FastAPI search ({datetime.date.today().isoformat()})",
        "",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()} {platform.release()}",
        f"- command: `python scripts/{command}` (snapshot `{snapshot_path.name}`, {len(Snapshot.open(snapshot_path))} docs; "
        "load generator in its own process on loopback, asyncio + httpx)",
        "- a stillweb step is a whole WikiQA-v0 step (parse the tool call, search k=5, render, bookkeeping, info with the "
        "message history, JSON); the plain baseline is a `def` FastAPI route returning the same tantivy search",
        f"- in-process step: p50 {local['p50_ms']:.2f} ms, p99 {local['p99_ms']:.2f} ms, {local['per_s']:.0f} steps/s, "
        f"CPU {local['cpu_ms']:.2f} ms/step, of which the search itself {local['search_cpu_ms']:.2f} ms",
        "",
        "| concurrency | server | p50 ms | p99 ms | req/s | server CPU ms/req | beyond the search | beyond an in-process step | errors |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for level in levels:
        for name in ("plain", "stillweb"):
            row = results[name][level]
            beyond_step = f"{row['server_cpu_ms'] - local['cpu_ms']:.2f}" if name == "stillweb" else "-"
            lines.append(
                f"| {level} | {name} | {row['p50_ms']:.2f} | {row['p99_ms']:.2f} | {row['per_s']:.0f} | {row['server_cpu_ms']:.2f} "
                f"| {row['server_cpu_ms'] - local['search_cpu_ms']:.2f} | {beyond_step} | {row['errors']} |"
            )
    ratio = results["stillweb"][levels[0]]["p50_ms"] / local["p50_ms"]
    lines += ["", f"- remote step p50 / in-process step p50 at concurrency {levels[0]}: {ratio:.2f}x (goal <= 1.3x)"]
    plain_ratio = results["plain"][levels[0]]["p50_ms"] / local["p50_ms"]
    lines.append(f"- plain search endpoint p50 / in-process step p50: {plain_ratio:.2f}x")
    soak_result = results.get("soak")
    if soak_result:
        lines.append(
            f"- soak: {soak_result['sessions']} sessions x {soak_result['steps']} steps = {soak_result['total_steps']} steps, "
            f"{soak_result['errors']} errors, {soak_result['steps_per_s']:.0f} steps/s; server RSS {soak_result['rss_warm_mb']:.0f} MiB "
            f"after warm-up (10%), {soak_result['rss_end_mb']:.0f} MiB at the end"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
