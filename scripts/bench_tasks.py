"""Benchmark the hard-query generator and append the figures to BENCHMARKS.md.

Measures verified tasks per second per core (composition, uniqueness proof,
evidence check, rendering and the shortcut search included; one worker), then
the distributions of hops, shapes and levels, the uniqueness discards and
shortcut rejections, and, separately, the reference agent's pass rate and mean
steps per level on a sample.

    python scripts/bench_tasks.py --articles 100000 --count 10000 --oracle-sample 200
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import append_section  # noqa: E402

from stillweb.corpora.builders import build_synthetic  # noqa: E402
from stillweb.corpora.tasks.card import question_word_median  # noqa: E402
from stillweb.corpora.tasks.compose import ComposeParams  # noqa: E402
from stillweb.corpora.tasks.formal import formalization_stats  # noqa: E402
from stillweb.corpora.tasks.generate import GenerationParams, generate_task_list  # noqa: E402
from stillweb.envs.solvability import solve_with_reference  # noqa: E402


def main() -> None:
    """Parse arguments, run the benchmark, append the section."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=100_000)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-hops", type=int, default=6)
    parser.add_argument("--oracle-sample", type=int, default=200)
    parser.add_argument("--snapshot", type=Path, default=None, help="reuse this snapshot instead of building one")
    args = parser.parse_args()

    snapshot = args.snapshot or Path(f"/tmp/stillweb-bench-tasks/syn-{args.articles}-s{args.seed}")
    if not (snapshot / "manifest.json").exists():
        build_synthetic(args.articles, args.seed, snapshot, workers=1, progress=True)
    params = GenerationParams(count=args.count, seed=args.seed, compose=ComposeParams(min_hops=2, max_hops=args.max_hops))
    started = time.perf_counter()
    result = generate_task_list(snapshot, params, workers=1, progress=True)
    elapsed = time.perf_counter() - started
    tasks = result.tasks

    oracle: dict[int, list[int]] = defaultdict(list)
    failures = 0
    sample = tasks[: args.oracle_sample]
    oracle_started = time.perf_counter()
    for task in sample:
        solved = solve_with_reference(snapshot, task)
        if solved.solved:
            oracle[task["level"]].append(solved.steps)
        else:
            failures += 1
    oracle_elapsed = time.perf_counter() - oracle_started

    stats = formalization_stats(t["formalization"] for t in tasks)
    hard = [t for t in tasks if t["level"] == 3]
    hard_stats = formalization_stats(t["formalization"] for t in hard)
    shortcut = sum(v for k, v in result.rejections.items() if k.startswith("shortcut"))
    shapes = Counter(t["shape"] for t in tasks)
    body = "\n".join([
        f"World: synthetic, {args.articles} articles, seed {args.seed}; {args.count} tasks requested, hops 2..{args.max_hops}.",
        "Baseline: the goal of issue 5 (>= 200 verified tasks/s per core); no earlier measurement.",
        "",
        f"- generated {len(tasks)} tasks from {result.attempts} attempts in {elapsed:.1f} s on 1 worker "
        f"(graph build and proofs included): **{len(tasks) / elapsed:.0f} tasks/s per core**, "
        f"{result.attempts / elapsed:.0f} attempts/s",
        f"- uniqueness discards (not_unique): {result.rejections.get('not_unique', 0)} "
        f"({100 * result.rejections.get('not_unique', 0) / result.attempts:.1f}% of attempts)",
        f"- shortcut rejections: {shortcut} ({100 * shortcut / result.attempts:.1f}% of attempts); "
        f"all reasons: {dict(sorted(result.rejections.items()))}",
        f"- hops: {dict(sorted(Counter(t['hops'] for t in tasks).items()))}",
        f"- levels: {dict(sorted(Counter(t['level'] for t in tasks).items()))}",
        f"- distinct shapes: {len(shapes)}; top 10: {shapes.most_common(10)}",
        f"- formalization: mean {stats.mean_triples} triples (median {stats.median_triples}, max {stats.max_triples}), "
        f"{stats.mean_variables} variables, {stats.mean_constants} constants, {stats.malformed_tasks} malformed; "
        f"level 3: mean {hard_stats.mean_triples} triples (median {hard_stats.median_triples}), "
        f"{hard_stats.mean_variables} variables, {hard_stats.mean_constants} constants "
        "(WebShaper 500: 12.16 / 11 / 4.33 / 7.06, 47 malformed)",
        f"- median question words: {question_word_median([t['question'] for t in tasks])} "
        f"(level 3: {question_word_median([t['question'] for t in hard])}; WebShaper: 59)",
        f"- oracle (reference agent, separately): {len(sample) - failures}/{len(sample)} solved in {oracle_elapsed:.1f} s; "
        "mean steps per level: "
        + ", ".join(f"L{level}: {sum(s) / len(s):.1f}" for level, s in sorted(oracle.items())),
    ])
    append_section("Task generator (scripts/bench_tasks.py)", body)


if __name__ == "__main__":
    main()
