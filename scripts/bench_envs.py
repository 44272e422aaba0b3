"""Benchmark the environments: per-step overhead, vector-env throughput, memory per env.

Figures (appended to BENCHMARKS.md with ``--append``):

1. env overhead per step excluding the tool call: ``WikiQAEnv.step`` with a stub
   registry that returns a canned search result (parse + render + bookkeeping),
   next to the real step and the real ``ToolRegistry.call`` time (goal <= 50 us);
2. steps/s of ``SyncVectorEnv`` and ``AsyncVectorEnv`` made with ``gym.make_vec``
   for n envs on one snapshot, each stepping search calls;
3. memory per additional env: RSS growth while 1,000 envs on one snapshot are
   created and reset (goal: < 200 MB in total).

Example:
    python scripts/bench_envs.py --snapshot /tmp/bench-snapshots/synthetic-20000-s0 --append
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

import gymnasium as gym

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import append_section, percentile  # noqa: E402

import stillweb.envs  # noqa: E402,F401 - registers the environments
from stillweb.corpora.keyed import KeyedRng  # noqa: E402
from stillweb.envs import WikiQAEnv  # noqa: E402
from stillweb.envs.agents.scripted import write_call  # noqa: E402
from stillweb.sandboxes import ToolCall, ToolResult  # noqa: E402

BASELINE_TASKS = [{"task_id": "bench", "question": "Which town is the bench mark?", "answer": "Nowhere"}]


class StubRegistry:
    """Returns one precomputed result for every call: isolates the env's own cost."""

    def __init__(self, result: ToolResult) -> None:
        self.result = result

    def call(self, call: ToolCall) -> ToolResult:
        return self.result


def search_actions(snapshot: Path, count: int) -> list[str]:
    """Tongyi search calls for the titles of keyed-random documents."""
    env = WikiQAEnv(snapshot, tasks=BASELINE_TASKS)
    rng = KeyedRng(0, "bench_envs", "queries")
    titles = [env.snapshot.title_of(rng.integer(0, len(env.snapshot) - 1)) for _ in range(count)]
    return [write_call("tongyi", "search", {"query": title}) for title in titles]


def step_overhead(snapshot: Path, actions: list[str]) -> str:
    """Per-step times: stub registry (env overhead), real step, and real tool call alone."""
    env = WikiQAEnv(snapshot, tasks=BASELINE_TASKS, max_turns=10**6, max_tool_calls=10**6, max_context_tokens=10**12)
    real = env.registry
    canned = real.call(env.format.parse(actions[0]).calls[0])
    timings: dict[str, list[float]] = {"stub step (env overhead)": [], "real step": [], "ToolRegistry.call alone": []}
    env.reset(seed=0)
    for action in actions:
        env.registry = StubRegistry(canned)
        start = time.perf_counter()
        env.step(action)
        timings["stub step (env overhead)"].append(time.perf_counter() - start)
        env.registry = real
        start = time.perf_counter()
        env.step(action)
        timings["real step"].append(time.perf_counter() - start)
        call = env.format.parse(action).calls[0]
        start = time.perf_counter()
        real.call(call)
        timings["ToolRegistry.call alone"].append(time.perf_counter() - start)
    rows = ["| measure | n | p50 us | p99 us | mean us |", "|---|---:|---:|---:|---:|"]
    for name, values in timings.items():
        rows.append(
            f"| {name} | {len(values)} | {percentile(values, 50) * 1e6:.1f} | {percentile(values, 99) * 1e6:.1f} "
            f"| {sum(values) / len(values) * 1e6:.1f} |"
        )
    real_minus_tool = (sum(timings["real step"]) - sum(timings["ToolRegistry.call alone"])) / len(actions)
    return "\n".join(rows) + f"\n\nReal step minus tool call (mean): {real_minus_tool * 1e6:.1f} us."


def vector_throughput(snapshot: Path, actions: list[str], sizes: list[int], async_sizes: list[int], steps: int) -> str:
    """Steps per second (env steps, summed over the batch) for sync and async vector envs."""
    rows = ["| mode | n envs | batch steps | env steps/s |", "|---|---:|---:|---:|"]
    for mode, counts in (("sync", sizes), ("async", async_sizes)):
        for count in counts:
            envs = gym.make_vec(
                "stillweb/WikiQA-v0", num_envs=count, vectorization_mode=mode, snapshot=str(snapshot),
                tasks=BASELINE_TASKS, max_turns=10**6, max_tool_calls=10**6, max_context_tokens=10**12,
            )
            envs.reset(seed=list(range(count)))
            batches = [[actions[(step * count + i) % len(actions)] for i in range(count)] for step in range(steps)]
            envs.step(batches[0])
            start = time.perf_counter()
            for batch in batches:
                envs.step(batch)
            elapsed = time.perf_counter() - start
            envs.close()
            rows.append(f"| {mode} | {count} | {steps} | {steps * count / elapsed:,.0f} |")
    return "\n".join(rows)


def memory_per_env(snapshot: Path, count: int) -> str:
    """RSS growth per env while ``count`` envs on one snapshot are created and reset."""
    first = WikiQAEnv(snapshot, tasks=BASELINE_TASKS)
    first.reset(seed=0)
    gc.collect()
    before = _rss_mb()
    envs = [WikiQAEnv(snapshot, tasks=BASELINE_TASKS) for _ in range(count)]
    for index, env in enumerate(envs):
        env.reset(seed=index)
    gc.collect()
    grown = _rss_mb() - before
    return f"{count} more envs on one snapshot: +{grown:.1f} MB RSS ({grown * 1024 / count:.1f} KB per env; goal < 200 MB)."


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise OSError("no VmRSS in /proc/self/status")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--snapshot", required=True, type=Path, help="snapshot directory")
    parser.add_argument("--steps", type=int, default=500, help="single-env steps for the overhead figure")
    parser.add_argument("--vector-steps", type=int, default=20, help="batch steps per vector env")
    parser.add_argument("--sizes", default="1,8,64", help="sync vector env sizes")
    parser.add_argument("--async-sizes", default="1,8,64", help="async vector env sizes (one process per env)")
    parser.add_argument("--memory-envs", type=int, default=1000)
    parser.add_argument("--append", action="store_true", help="append the figures to BENCHMARKS.md")
    args = parser.parse_args()
    actions = search_actions(args.snapshot, max(args.steps, 64))
    sizes = [int(size) for size in args.sizes.split(",") if size]
    async_sizes = [int(size) for size in args.async_sizes.split(",") if size]
    body = "\n\n".join(
        [
            f"Snapshot: {args.snapshot.name}; actions: tongyi search calls for titles of KeyedRng(0)-picked docs.",
            "### Step overhead (WikiQA-v0, one env)\n\n" + step_overhead(args.snapshot, actions[: args.steps]),
            "### Vector envs (gym.make_vec, default vector kwargs)\n\n"
            + vector_throughput(args.snapshot, actions, sizes, async_sizes, args.vector_steps),
            "### Memory\n\n" + memory_per_env(args.snapshot, args.memory_envs),
        ]
    )
    if args.append:
        append_section("Environments: step overhead, vector throughput, memory per env (issue 4)", body)
    else:
        print(body)


if __name__ == "__main__":
    main()
