"""BFCL-v0 figures (issue 36): reset and step p50 of stillweb/BFCL-v0 against a bare call of the
same BFCL API code in the same run, BFCL's checker time per episode, and the reference agent's
pass rate per category.

Examples:
  python scripts/bench_bfcl.py
  python scripts/bench_bfcl.py --repeats 400 --no-append

Timings are interleaved (bare call, then env, in turn) in one process, so load hits both alike.
Reset's baseline is making the task's API instances and loading its initial configuration
(what any harness must do); step's baseline is the bare method call (``GorillaFileSystem.ls``
and ``cd``, ``MathAPI.add``) on an instance; step's second baseline is BFCL's own executor
(``execute_multi_turn_func_call``: the call string ``eval``-ed on its cached instances), what BFCL's
harness pays per call. Goal: each <= 3x its baseline. Checker time: BFCL's
``multi_turn_checker`` (with stillweb's eval-free executor) on the reference episodes of every
default-split task. Appends to BENCHMARKS.md unless ``--no-append``. Needs the ``bfcl`` extra.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import append_section, load, percentile, timed_ms  # noqa: E402

from stillweb.envs.agents.scripted import write_call  # noqa: E402
from stillweb.envs.bfcl.agents import BfclReferenceAgent  # noqa: E402
from stillweb.envs.bfcl.api import BfclWorld  # noqa: E402
from stillweb.envs.bfcl.data import BFCL_CATEGORIES, bfcl_version, category_tasks  # noqa: E402
from stillweb.envs.bfcl.env import BfclEnv  # noqa: E402
from stillweb.envs.bfcl.splits import excluded_tasks  # noqa: E402

STEPS = (("ls", {"a": True}), ("cd", {"folder": "document"}), ("add", {"a": 2, "b": 3}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=200, help="timed resets and steps of each kind (default 200)")
    parser.add_argument("--no-append", action="store_true", help="print only; do not append to BENCHMARKS.md")
    args = parser.parse_args()
    task = next(task for task in category_tasks("multi_turn_base") if set(task.extra["involved_classes"]) >= {"GorillaFileSystem", "MathAPI"})
    env = BfclEnv("multi_turn_base", split="all", tasks=[task.task_id])
    extra = task.extra
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import execute_multi_turn_func_call

    kinds = ("bare", "bfcl", "env")
    times = {name: ([], []) for name in ("bare reset", "env reset") + tuple(f"{kind} {name}" for name, _ in STEPS for kind in kinds)}
    for _ in range(args.repeats):
        timed_ms(times["bare reset"], BfclWorld, task.task_id, extra["initial_config"], extra["involved_classes"], False, 0)
        timed_ms(times["env reset"], env.reset, seed=0)
        world = BfclWorld(task.task_id, extra["initial_config"], extra["involved_classes"], False, 0)
        for name, arguments in STEPS:
            method = getattr(world.instances[world.method_class[name]], name)
            timed_ms(times[f"bare {name}"], method, **arguments)
            text = f"{name}({', '.join(f'{key}={value!r}' for key, value in arguments.items())})"
            timed_ms(times[f"bfcl {name}"], execute_multi_turn_func_call, [text], extra["initial_config"],
                     extra["involved_classes"], "bench", task.task_id)
            timed_ms(times[f"env {name}"], env.step, write_call("tongyi", name, arguments))
    rows = []
    for kind in ("reset",) + tuple(name for name, _ in STEPS):
        bare, full = percentile(times[f"bare {kind}"][1], 50), percentile(times[f"env {kind}"][1], 50)
        own = percentile(times[f"bfcl {kind}"][1], 50) if f"bfcl {kind}" in times else None
        versus = f"{own:.4f} | {full / own:.1f}x" if own is not None else "- | -"
        rows.append(f"| {kind} | {full:.3f} | {bare:.4f} | {full / bare:.1f}x | {versus} |")
    checker, passed = [], []
    for category in BFCL_CATEGORIES:
        every = BfclEnv(category, split="all")
        wins = 0
        for each in every.tasks:
            every.reset(seed=0, options={"task_id": each.task_id})
            agent, done = BfclReferenceAgent(each), False
            while not done:
                _, reward, terminated, truncated, _ = every.step(agent.act(""))
                done = terminated or truncated
            wins += reward == 1.0
            start = time.thread_time()
            every.check()
            checker.append((time.thread_time() - start) * 1e3)
        passed.append(f"| {category} | {wins} / {len(every.tasks)} ({wins / len(every.tasks):.1%}) | "
                      f"{len(excluded_tasks(category))} |")
    body = (f"bfcl-eval {bfcl_version()}; task {task.task_id}; {args.repeats} repeats; CPU time p50 (thread time; {load()}).\n"
            "Baseline: the bare call of the same BFCL code in the same run (reset: making the task's API instances "
            "from its initial configuration; step: the method on an instance). Goal <= 3x.\n\n"
            "A second baseline: BFCL's own executor (execute_multi_turn_func_call, which eval()s the call string) "
            "on the same call.\n\n"
            "| what | env p50 ms | bare p50 ms | env / bare | BFCL executor p50 ms | env / BFCL executor |\n"
            "|---|---|---|---|---|---|\n" + "\n".join(rows) +
            f"\n\nBFCL's checker per episode (reference episodes, {len(checker)} tasks): p50 {percentile(checker, 50):.2f} ms, "
            f"p95 {percentile(checker, 95):.2f} ms, max {max(checker):.2f} ms.\n\n"
            "| category | reference earns 1 (all tasks) | left out of the default split |\n|---|---|---|\n" + "\n".join(passed))
    if args.no_append:
        print(body)
    else:
        append_section("BFCL-v0: reset, step, checker, reference pass rate", body)


if __name__ == "__main__":
    main()
