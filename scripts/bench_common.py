"""Helpers shared by the benchmark scripts: machine description, percentiles, appending to BENCHMARKS.md."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "BENCHMARKS.md"


def machine() -> str:
    """One line describing this machine (CPU model, cores, memory, Python)."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem_kb = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f"{mem_kb / 2**20:.0f} GiB"
    except OSError:
        memory = "?"
    return f"{cpu}, {os.cpu_count()} cores, {memory}, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) by nearest rank."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[rank]


def append_section(title: str, body: str) -> None:
    """Append a dated section (machine, command) to BENCHMARKS.md and echo it."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=BENCHMARKS.parent).stdout.strip()
    except OSError:
        commit = "?"
    command = " ".join(["python"] + [os.path.relpath(sys.argv[0], BENCHMARKS.parent)] + sys.argv[1:])
    section = (f"\n## {title}\n\n- date: {now}\n- machine: {machine()}\n- commit: {commit}\n"
               f"- command: `{command}`\n\n{body.strip()}\n")
    if not BENCHMARKS.exists():
        BENCHMARKS.write_text("# Benchmarks\n\nFigures appended by the scripts in `scripts/`; each section says "
                              "its machine, date, command and the baseline it compares with.\n")
    with BENCHMARKS.open("a", encoding="utf-8") as handle:
        handle.write(section)
    print(section)
