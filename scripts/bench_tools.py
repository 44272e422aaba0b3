"""Tool figures (issue 3): per-call latency of each tool, and the search tool's overhead over Snapshot.search.

Examples:
  python scripts/bench_tools.py --articles 20000 --dir /tmp/bench-snapshots
  python scripts/bench_tools.py --snapshot /path/to/snapshot --calls 500

Every call goes through ``ToolRegistry.call`` (validation, dispatch, rendering),
on a deterministic workload: documents picked by ``KeyedRng(seed, "bench-tools", i)``,
queries made of their title words. The overhead baseline is ``Snapshot.search``
on the same queries with the same k, timed interleaved with the tool in the same
run (goal: tool p50 <= 1.1x baseline p50). Appends a section to BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import append_section, percentile  # noqa: E402

from stillweb.corpora.keyed import KeyedRng  # noqa: E402
from stillweb.corpora.snapshot.reading import Snapshot  # noqa: E402
from stillweb.sandboxes import ToolCall, ToolRegistry, get_format  # noqa: E402

SEARCH_K = 5
EXPRESSIONS = ["(1914 - 1867) * 12 / 5", "0.1 + 0.2", "sqrt(2) * 3", "2 ** 64 // 7", "round(22 / 7, 3)"]


def workload(snapshot: Snapshot, calls: int, seed: int) -> list[tuple[int, str]]:
    """(doc id, title) pairs picked deterministically."""
    picks = []
    for i in range(calls):
        doc_id = KeyedRng(seed, "bench-tools", i).integer(0, len(snapshot) - 1)
        picks.append((doc_id, snapshot.title_of(doc_id)))
    return picks


def timed(function: Callable[[], object]) -> float:
    """Milliseconds one call of ``function`` takes."""
    start = time.perf_counter()
    function()
    return (time.perf_counter() - start) * 1000


def tool_latencies(registry: ToolRegistry, picks: list[tuple[int, str]], python_calls: int) -> dict[str, list[float]]:
    """Per-call milliseconds of each tool over the workload."""
    tongyi = get_format("tongyi")
    calls: dict[str, list[ToolCall]] = {
        "search": [ToolCall("search", {"query": title, "k": SEARCH_K}) for _, title in picks],
        "open (page 1)": [ToolCall("open", {"doc": doc_id}) for doc_id, _ in picks],
        "open (by title)": [ToolCall("open", {"doc": title}) for _, title in picks],
        "find": [ToolCall("find", {"doc": doc_id, "pattern": title.split()[0]}) for doc_id, title in picks],
        "calculator": [ToolCall("calculator", {"expression": EXPRESSIONS[i % len(EXPRESSIONS)]}) for i in range(len(picks))],
        "answer": [ToolCall("answer", {"text": title, "citations": [doc_id, title]}) for doc_id, title in picks],
        "bad_arguments": [ToolCall("search", {"query": title, "k": 99}) for _, title in picks],
        "python": [ToolCall("python", {"code": f"print({i} * 7)"}) for i in range(python_calls)],
    }
    latencies = {name: [timed(lambda c=c: registry.call(c)) for c in batch] for name, batch in calls.items()}
    texts = [f'<think>t</think><tool_call>{{"name": "search", "arguments": {{"query": "{title}"}}}}</tool_call>' for _, title in picks]
    latencies["tongyi parse"] = [timed(lambda t=t: tongyi.parse(t)) for t in texts]
    return latencies


def search_overhead(snapshot: Snapshot, registry: ToolRegistry, picks: list[tuple[int, str]], rounds: int) -> tuple[list[float], list[float]]:
    """Interleaved per-call milliseconds of Snapshot.search (baseline) and the search tool, same queries."""
    baseline, tool = [], []
    for _ in range(rounds):
        for _, title in picks:
            baseline.append(timed(lambda: snapshot.search(title, SEARCH_K)))
            tool.append(timed(lambda: registry.call(ToolCall("search", {"query": title, "k": SEARCH_K}))))
    return baseline, tool


def table(latencies: dict[str, list[float]]) -> str:
    rows = ["| call | n | p50 ms | p99 ms | mean ms |", "|---|---:|---:|---:|---:|"]
    for name, values in latencies.items():
        if values:
            rows.append(f"| {name} | {len(values)} | {percentile(values, 50):.3f} | {percentile(values, 99):.3f} "
                        f"| {statistics.fmean(values):.3f} |")
    return "\n".join(rows)


def open_snapshot(args: argparse.Namespace) -> Snapshot:
    if args.snapshot:
        return Snapshot.open(args.snapshot)
    out = Path(args.dir) / f"synthetic-{args.articles}-s0"
    if not (out / "manifest.json").exists():
        subprocess.run(["stillweb", "build", "synthetic", "--articles", str(args.articles), "--seed", "0",
                        "--out", str(out), "--quiet"], check=True)
    return Snapshot.open(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshot", help="an existing snapshot (else a synthetic one is built)")
    parser.add_argument("--articles", type=int, default=20000)
    parser.add_argument("--dir", default="/tmp/bench-snapshots")
    parser.add_argument("--calls", type=int, default=300, help="calls per tool")
    parser.add_argument("--rounds", type=int, default=3, help="passes over the queries for the overhead figure")
    parser.add_argument("--python-calls", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-append", action="store_true", help="print only, do not write BENCHMARKS.md")
    args = parser.parse_args()

    snapshot = open_snapshot(args)
    registry = ToolRegistry(snapshot)
    picks = workload(snapshot, args.calls, args.seed)
    search_overhead(snapshot, registry, picks[:50], 1)  # warm caches (page cache, title maps)
    latencies = tool_latencies(registry, picks, args.python_calls)
    baseline, tool = search_overhead(snapshot, registry, picks, args.rounds)
    ratio_p50 = percentile(tool, 50) / percentile(baseline, 50)
    ratio_mean = statistics.fmean(tool) / statistics.fmean(baseline)
    python_note = latencies["python"] and registry.call(ToolCall("python", {"code": "print(1)"})).flag
    body = (
        f"Snapshot: {snapshot.manifest.get('name')} ({len(snapshot)} docs, fingerprint {snapshot.fingerprint[:12]}); "
        f"{args.calls} calls per tool through `ToolRegistry.call`, queries = titles of docs picked by "
        f"KeyedRng(seed={args.seed}).\n\n{table(latencies)}\n\n"
        f"Search tool vs `Snapshot.search` (baseline, same {len(picks)} queries x {args.rounds} rounds, k={SEARCH_K}, "
        f"interleaved): baseline p50 {percentile(baseline, 50):.3f} ms / p99 {percentile(baseline, 99):.3f} ms; "
        f"tool p50 {percentile(tool, 50):.3f} ms / p99 {percentile(tool, 99):.3f} ms; "
        f"**overhead ratio p50 {ratio_p50:.3f}x, mean {ratio_mean:.3f}x** (goal <= 1.1x)."
    )
    if python_note:
        body += f"\n\nNote: the python tool returned flag {python_note!r} here (sandbox unavailable), so its row is not a sandbox figure."
    if args.no_append:
        print(body)
    else:
        append_section("Tools: per-call latency and search-tool overhead (issue 3)", body)


if __name__ == "__main__":
    main()
