"""Hostile actions (issue 33): the cost of one ``env.step`` of every hostile shape at 8k and 64k characters,
in every environment and call format, and of a 100k-character action.

Examples:
  python scripts/bench_hostile.py --dir /tmp/bench-snapshots
  python scripts/bench_hostile.py --dir /tmp/bench-snapshots --shapes quote_backslash_run,long_answer --no-append

The shapes are ``tests/support/hostile_actions.py``. Each (environment, shape, length) is stepped
``--repeats`` times on a fresh reset and the least CPU time of the step is kept (the machine is
shared: wall time would also count the waits for a core). The figure of merit is the ratio of the 64k step to
the 8k step, measured in the same run: linear handling is 8x, the bar is 10x (ratios below
``--floor-ms`` at 64k are reported as "flat", since they measure only the fixed cost of a step).
Also reported: the slowest 100k-character step (bar: under one second).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
from bench_common import append_section, load, machine, snapshot_path  # noqa: E402
from support.hostile_actions import SHAPES  # noqa: E402
from support.hostile_envs import fastest_step_ms, hostile_environments  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", default="/tmp/stillweb-bench", help="where the 300-article world is built once")
    parser.add_argument("--snapshot", help="use this snapshot instead of building one")
    parser.add_argument("--articles", type=int, default=300)
    parser.add_argument("--shapes", help="comma-separated shape names (default: all)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--floor-ms", type=float, default=5.0, help="64k steps under this are 'flat' (fixed cost)")
    parser.add_argument("--no-append", action="store_true", help="print only; do not append to BENCHMARKS.md")
    args = parser.parse_args(argv)
    names = args.shapes.split(",") if args.shapes else sorted(SHAPES)
    unknown = sorted(set(names) - set(SHAPES))
    if unknown:
        parser.error(f"unknown shapes {unknown}; known: {', '.join(sorted(SHAPES))}")
    environments = hostile_environments(snapshot_path(args), Path(args.dir))
    rows, worst_ratio, worst_100k, slowest = [], (0.0, ""), (0.0, ""), {}
    for env_name, env in environments.items():
        fastest_step_ms(env, SHAPES[names[0]](64_000), 2)  # warm up: the first steps of an env pay one-time costs
        for name in names:
            small = fastest_step_ms(env, SHAPES[name](8_000), args.repeats)
            large = fastest_step_ms(env, SHAPES[name](64_000), args.repeats)
            huge = fastest_step_ms(env, SHAPES[name](100_000), 1)
            ratio = large / small if small > 0 else float("inf")
            if large >= args.floor_ms and ratio > worst_ratio[0]:
                worst_ratio = (ratio, f"{env_name} {name}")
            worst_100k = max(worst_100k, (huge, f"{env_name} {name}"))
            shown = f"{ratio:.1f}x" if large >= args.floor_ms else "flat"
            row = f"| {env_name} | {name} | {small:.2f} | {large:.2f} | {shown} | {huge:.1f} |"
            print(row, flush=True)
            slowest[env_name] = max(slowest.get(env_name, (0.0, "")), (large, row))
    rows = [row for _, row in slowest.values()]  # BENCHMARKS.md keeps each environment's slowest shape at 64k
    summary = (f"worst 64k/8k ratio above {args.floor_ms:g} ms: {worst_ratio[0]:.1f}x ({worst_ratio[1] or 'none'}); "
               f"slowest 100k step: {worst_100k[0]:.1f} ms ({worst_100k[1]})")
    print(summary)
    body = "\n".join([
        f"Machine: {machine()}; {load()}. Date: {time.strftime('%Y-%m-%d')}.",
        f"Command: `python scripts/bench_hostile.py {' '.join(argv if argv is not None else sys.argv[1:])}`",
        "Baseline: the same shape at 8k characters, in the same run (linear = 8x; the bar is 10x, and a 100k step under 1 s).",
        "", summary, "",
        f"{len(names)} shapes x {len(environments)} environments; each environment's slowest shape at 64k:", "",
        "| env / format | shape | 8k step CPU ms | 64k step CPU ms | 64k/8k | 100k step CPU ms |",
        "|---|---|---|---|---|---|",
        *rows,
    ])
    if not args.no_append:
        append_section("Hostile actions: one step at 8k, 64k and 100k characters", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
