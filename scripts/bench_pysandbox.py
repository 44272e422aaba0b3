"""Latency of the python sandbox: ``print(1)`` from start to result.

Three ways, interleaved round-robin so machine load hits them alike:

- ``bare subprocess``: ``python -I -S -c 'print(1)'`` with ``subprocess.run`` (the baseline);
- ``run_python none-unsafe``: our bootstrap (limits, frozen clock, seeded randomness),
  no isolation: its excess over the baseline is the bootstrap's cost;
- ``run_python bwrap``: the full sandbox: its excess over ``none-unsafe`` is the cost
  of isolation (namespaces, mounts, id-map handshake, waiting for the pid namespace).

Prints a markdown table and appends it to BENCHMARKS.md (``--no-append`` to skip).
Usage: ``python scripts/bench_pysandbox.py --runs 50``
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from bench_common import append_section, percentile

from stillweb.sandboxes.python.sandbox import PythonSandboxConfig, isolation_available, run_python

CODE = "print(1)"


def bare_subprocess() -> None:
    """The baseline: a bare interpreter without site, isolated mode."""
    done = subprocess.run([sys.executable, "-I", "-S", "-c", CODE], capture_output=True, check=True)
    assert done.stdout == b"1\n"


def sandbox(isolation: str) -> Callable[[], None]:
    """A ``run_python`` call with the given isolation."""
    config = PythonSandboxConfig(isolation=isolation)

    def call() -> None:
        result = run_python(CODE, config)
        assert (result.reason, result.stdout) == ("ok", "1\n"), result

    return call


def measure(runs: int, ways: dict[str, Callable[[], None]]) -> dict[str, list[float]]:
    """Milliseconds per call for each way, after one warm-up call each."""
    for call in ways.values():
        call()
    timings: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(runs):
        for name, call in ways.items():
            start = time.perf_counter()
            call()
            timings[name].append((time.perf_counter() - start) * 1000)
    return timings


def table(timings: dict[str, list[float]], baseline: str) -> str:
    """A markdown table: median, p90, mean and the median's excess over ``baseline``."""
    base = statistics.median(timings[baseline])
    rows = ["| way | n | median ms | p90 ms | mean ms | median - baseline ms |", "|---|---:|---:|---:|---:|---:|"]
    for name, values in timings.items():
        median = statistics.median(values)
        rows.append(
            f"| {name} | {len(values)} | {median:.1f} | {percentile(values, 90):.1f} | "
            f"{statistics.fmean(values):.1f} | {median - base:+.1f} |"
        )
    return "\n".join(rows)


def main() -> None:
    """Measure, print, and append to BENCHMARKS.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50, help="calls per way (default 50)")
    parser.add_argument("--no-append", action="store_true", help="print only, do not append to BENCHMARKS.md")
    args = parser.parse_args()
    available, why = isolation_available()
    if not available:
        sys.exit(f"bubblewrap cannot run here: {why}")
    ways = {
        "bare subprocess (baseline)": bare_subprocess,
        "run_python none-unsafe": sandbox("none-unsafe"),
        "run_python bwrap": sandbox("bwrap"),
    }
    timings = measure(args.runs, ways)
    medians = {name: statistics.median(values) for name, values in timings.items()}
    body = (
        f"`uname -a`: {subprocess.run(['uname', '-a'], capture_output=True, text=True).stdout.strip()}\n\n"
        f"`{CODE}` start to result, {args.runs} calls per way, interleaved round-robin after one warm-up each; "
        "baseline: `subprocess.run([python, '-I', '-S', '-c', 'print(1)'])`.\n\n"
        f"{table(timings, 'bare subprocess (baseline)')}\n\n"
        f"Bootstrap cost (none-unsafe - baseline): {medians['run_python none-unsafe'] - medians['bare subprocess (baseline)']:+.1f} ms; "
        f"isolation cost (bwrap - none-unsafe): {medians['run_python bwrap'] - medians['run_python none-unsafe']:+.1f} ms "
        "(median). Goal: bwrap median < 100 ms.\n"
    )
    if args.no_append:
        print(body)
    else:
        append_section("Python sandbox: start-to-result latency (issue 3, part 4)", body)


if __name__ == "__main__":
    main()
