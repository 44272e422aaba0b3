"""Benchmark the stillweb server against in-process steps and a plain FastAPI search endpoint.

This process is the load generator; each server runs in its own process on
loopback, both with the same uvicorn options (httptools, uvloop). The load
generator is lean on purpose (asyncio streams, a few lines of HTTP/1.1 with
keep-alive, uvloop), and its own CPU per request is reported, so the latency
shows what part is the client. For concurrency 1, 16 and 64 it measures
search-step latency (p50/p99), throughput and, from the server's own accounting
(``os.times`` via a stats route), the server CPU time per request: on a small
machine the load generator competes for the cores, so CPU per request is the
reliable capacity figure. It also times :class:`~stillweb.envs.remote.RemoteEnv`
(what a trainer uses) step by step. A soak run (64 sessions x N steps) counts
errors and samples the server's resident memory every tenth of the run. The
results are appended to ``BENCHMARKS.md``.

    python scripts/bench_server.py --snapshot /tmp/stillweb-bench/search-syn-100000 --soak-steps 1000
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import functools
import os
import platform
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import uvloop

import stillweb.envs  # noqa: F401 - registers the environments
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.envs.remote import RemoteEnv
from stillweb.server.app import UVICORN_OPTIONS, start_server_process
from stillweb.sandboxes import ToolCall

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script: its sibling modules
from server_load import (ENV_KWARGS, SEARCH_K, PlainClient, SessionClient, run_load, search_action,  # noqa: E402
                         server_stats, summary)

REPO = Path(__file__).resolve().parent.parent

PLAIN_SERVER = '''
import os, sys
from fastapi import FastAPI
from pydantic import BaseModel
from stillweb.corpora.snapshot.reading import Snapshot

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
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning", access_log=False, http=sys.argv[3], loop=sys.argv[4])
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
    load_before = os.getloadavg()

    results = {"in_process": in_process(snapshot_path, tasks, queries, args.requests)}
    plain_port, ours_port = free_port(), free_port()
    plain = start_plain_server(snapshot_path, plain_port)
    try:
        results["plain"] = {c: run_load(plain_port, c, args.requests, queries, PlainClient.open) for c in levels}
    finally:
        plain.kill()
        plain.wait()
    ours = start_server_process([snapshot_path], ours_port)
    try:
        open_session = functools.partial(SessionClient.open, tasks=tasks)
        results["stillweb"] = {c: run_load(ours_port, c, args.requests, queries, open_session) for c in levels}
        results["remote_env"] = remote_env_steps(ours_port, tasks, queries, args.requests)
        if args.soak_steps:
            results["soak"] = soak(ours_port, args.soak_sessions, args.soak_steps, queries, tasks)
    finally:
        ours.kill()
        ours.wait()
    results["load"] = (load_before, os.getloadavg())
    section = report(results, snapshot_path, levels, " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]))
    with open(args.out, "a", encoding="utf-8") as out:
        out.write(section)
    print(section)
    return 0


# -- setup -----------------------------------------------------------------------------------


def build_snapshot() -> Path:
    from stillweb.corpora.build.from_source import build_synthetic

    out = Path(tempfile.mkdtemp(prefix="bench-server-")) / "synthetic-2000-s0"
    build_synthetic(2000, 0, out, workers=1, progress=False)
    return out


def make_queries(snapshot: Snapshot, count: int = 500) -> list[str]:
    """Deterministic agent-like queries: an article's title and ten words of its text, for
    ``count`` articles spread over the snapshot (on 100,000 articles such a search costs
    about 1.4 ms, the issue's figure; two-word title queries cost a tenth of that)."""
    step = max(1, len(snapshot) // count)
    queries = []
    for doc_id in range(0, len(snapshot), step)[:count]:
        document = snapshot.get(doc_id)
        queries.append(" ".join([document.title, *re.findall(r"[^\W\d]+", document.text)[10:20]]).strip() or "river")
    return queries


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_plain_server(snapshot_path: Path, port: int) -> subprocess.Popen:
    script = Path(tempfile.mkdtemp(prefix="bench-plain-")) / "plain_server.py"
    script.write_text(PLAIN_SERVER)
    command = [sys.executable, str(script), str(snapshot_path), str(port), UVICORN_OPTIONS["http"], UVICORN_OPTIONS["loop"]]
    process = subprocess.Popen(command)
    for _ in range(600):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return process
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("the plain server did not start")


# -- in-process and RemoteEnv ----------------------------------------------------------------


def in_process(snapshot_path: Path, tasks: list[dict], queries: list[str], count: int) -> dict:
    """In-process env steps, the search tool's calls and bare searches, timed in this process."""
    env = gym.make("stillweb/WikiQA-v0", snapshot=str(snapshot_path), tasks=tasks, **ENV_KWARGS)
    snapshot, registry = env.unwrapped.snapshot, env.unwrapped.registry
    for query in queries:  # warm the index and the page cache as the servers' warm-ups do
        snapshot.search(query, SEARCH_K)
    latencies, cpu = timed_search_steps(env, queries, count)
    search_cpu = time.process_time()
    for index in range(count):
        snapshot.search(queries[index % len(queries)], SEARCH_K)
    search_cpu = (time.process_time() - search_cpu) / count
    tool_cpu = time.process_time()
    for index in range(count):
        registry.call(ToolCall(name="search", arguments={"query": queries[index % len(queries)]}))
    tool_cpu = (time.process_time() - tool_cpu) / count
    env.close()
    return {**summary(latencies, sum(latencies)), "cpu_ms": 1000 * cpu / count, "search_cpu_ms": 1000 * search_cpu,
            "tool_cpu_ms": 1000 * tool_cpu}


def timed_search_steps(env, queries: list[str], count: int) -> tuple[list[float], float]:
    """Step ``env`` with ``count`` search actions (resetting when an episode ends): latencies and CPU seconds."""
    env.reset(seed=0)
    latencies, cpu = [], 0.0
    for index in range(count):
        cpu_start, start = time.process_time(), time.perf_counter()
        _, _, terminated, truncated, _ = env.step(search_action(queries[index % len(queries)]))
        latencies.append(time.perf_counter() - start)
        cpu += time.process_time() - cpu_start
        if terminated or truncated:
            env.reset()
    return latencies, cpu


def remote_env_steps(port: int, tasks: list[dict], queries: list[str], count: int) -> dict:
    """Sequential steps through RemoteEnv (what a trainer uses): latency and client CPU per step."""
    env = RemoteEnv(f"http://127.0.0.1:{port}", env_id="stillweb/WikiQA-v0", tasks=tasks, **ENV_KWARGS)
    latencies, cpu = timed_search_steps(env, queries, count)
    env.close()
    return {**summary(latencies, sum(latencies)), "client_cpu_ms": 1000 * cpu / count}


# -- soak ------------------------------------------------------------------------------------


def soak(port: int, sessions: int, steps: int, queries: list[str], tasks: list[dict]) -> dict:
    """``sessions`` sessions x ``steps`` steps, in ten rounds of a tenth of the steps each, all sessions at
    once; errors and the server's resident memory after each round."""
    return uvloop.run(_soak(port, sessions, steps, queries, tasks))


async def _soak(port: int, sessions: int, steps: int, queries: list[str], tasks: list[dict]) -> dict:
    rss_start = (await server_stats(port))["rss_bytes"] / 2**20
    clients = [await SessionClient.open(port, number, tasks) for number in range(sessions)]
    rss_mb, errors = [], 0
    start = time.perf_counter()
    for _ in range(10):  # a tenth of every session's steps, then a memory sample
        errors += sum(await asyncio.gather(*(client.run(steps // 10, queries, []) for client in clients)))
        rss_mb.append((await server_stats(port))["rss_bytes"] / 2**20)
    elapsed = time.perf_counter() - start
    for client in clients:
        await client.close()
    total = sum(client.steps for client in clients)
    return {"sessions": sessions, "steps": steps, "total_steps": total, "errors": errors, "rss_start_mb": rss_start,
            "rss_mb": rss_mb, "steps_per_s": total / elapsed}


# -- report -------------------------------------------------------------------------------


def report(results: dict, snapshot_path: Path, levels: list[int], command: str) -> str:
    local = results["in_process"]
    search = local["search_cpu_ms"]
    (before, after) = results["load"]
    lines = [
        "",
        f"## Server: remote steps vs in-process vs a plain FastAPI search ({datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC)",
        "",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()} {platform.release()}; "
        f"load average {before[0]:.2f} at the start, {after[0]:.2f} at the end",
        f"- command: `python scripts/{command}` (snapshot `{snapshot_path.name}`, {len(Snapshot.open(snapshot_path))} docs; "
        f"both servers: uvicorn --http {UVICORN_OPTIONS['http']} --loop {UVICORN_OPTIONS['loop']}, one worker; the load generator in "
        "its own process on loopback: asyncio streams + uvloop, one keep-alive connection per worker)",
        "- a stillweb step is a whole WikiQA-v0 step (parse the tool call, search k=5, render, bookkeeping, info with the new "
        "messages, JSON), resets (every 16 steps) included in the server CPU; the plain baseline is a `def` FastAPI route "
        "returning the same tantivy search",
        f"- in-process step: p50 {local['p50_ms']:.2f} ms, p99 {local['p99_ms']:.2f} ms, {local['per_s']:.0f} steps/s, "
        f"CPU {local['cpu_ms']:.2f} ms/step, of which the search tool's call {local['tool_cpu_ms']:.2f} ms and in that the "
        f"search itself {search:.2f} ms",
        "",
        "| concurrency | server | p50 ms | p99 ms | req/s | server CPU ms/req | server CPU beyond the search | client CPU ms/req | errors |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for level in levels:
        for name in ("plain", "stillweb"):
            row = results[name][level]
            lines.append(
                f"| {level} | {name} | {row['p50_ms']:.2f} | {row['p99_ms']:.2f} | {row['per_s']:.0f} | {row['server_cpu_ms']:.2f} "
                f"| {row['server_cpu_ms'] - search:.2f} | {row['client_cpu_ms']:.2f} | {row['errors']} |"
            )
    first = levels[0]
    ours, plain, remote = results["stillweb"][first], results["plain"][first], results["remote_env"]
    lines += [
        "",
        f"- remote step p50 / in-process step p50 at concurrency {first}: {ours['p50_ms'] / local['p50_ms']:.2f}x (goal <= 1.3x); "
        f"plain search endpoint p50 / in-process step p50: {plain['p50_ms'] / local['p50_ms']:.2f}x",
        f"- server CPU at concurrency {first} beyond the tool's own time (the search tool's call for stillweb, the search "
        f"for plain): stillweb {ours['server_cpu_ms'] - local['tool_cpu_ms']:.2f} ms/step (a whole step; beyond the whole "
        f"in-process step {ours['server_cpu_ms'] - local['cpu_ms']:.2f} ms), plain {plain['server_cpu_ms'] - search:.2f} ms/request "
        "(goal: stillweb <= plain)",
        f"- RemoteEnv (the trainer's client, one http.client keep-alive connection), sequential: p50 {remote['p50_ms']:.2f} ms, "
        f"p99 {remote['p99_ms']:.2f} ms ({remote['p50_ms'] / local['p50_ms']:.2f}x in-process), client CPU {remote['client_cpu_ms']:.2f} ms/step",
    ]
    soak_result = results.get("soak")
    if soak_result:
        rss = soak_result["rss_mb"]
        lines.append(
            f"- soak: {soak_result['sessions']} sessions x {soak_result['steps']} steps = {soak_result['total_steps']} steps, "
            f"{soak_result['errors']} errors, {soak_result['steps_per_s']:.0f} steps/s; server RSS {soak_result['rss_start_mb']:.0f} MiB "
            f"before, then at every tenth of the run: {', '.join(f'{value:.0f}' for value in rss)} MiB "
            f"(after warm-up (10%) {rss[0]:.0f} MiB, at the end {rss[-1]:.0f} MiB)"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
