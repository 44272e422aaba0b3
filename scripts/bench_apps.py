"""App world figures (issue 25): reset and step p50 of stillweb/Apps-v0 against a bare SQLite
query in the same run, the memory of many environments, and tasks generated per second.

Examples:
  python scripts/bench_apps.py --articles 600 --dir /tmp/bench-snapshots --users 200
  python scripts/bench_apps.py --snapshot /path/to/synthetic --users 100 --steps 500 --no-append

Timings are interleaved (baseline, API call, env step, in turn) on one process, so load
hits all three alike. The bare query is the SQL ``list_messages`` runs (count plus one
page of the user's inbox) on a connection of the same database. Goals: reset p50 <= 5 ms
at 200 users; env step p50 <= 3x the bare query. Memory is measured in a child process
(RSS before and after making and resetting the environments). Appends to BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import append_section, load, percentile, snapshot_path, timed_ms  # noqa: E402

from stillweb.corpora.apps.generate import shared_base  # noqa: E402
from stillweb.corpora.apps.tasks import make_app_tasks  # noqa: E402
from stillweb.envs.agents.scripted import write_call  # noqa: E402
from stillweb.envs.apps.env import AppsEnv  # noqa: E402
from stillweb.sandboxes import ToolCall  # noqa: E402
from stillweb.sandboxes.apps import AppSession, app_registry, bound  # noqa: E402

_MEMORY = """
import json, resource, sys
from stillweb.corpora.apps.tasks import make_app_tasks
from stillweb.envs.apps.env import AppsEnv
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * resource.getpagesize() / 2**20
tasks = make_app_tasks(sys.argv[1], 8, users=int(sys.argv[3]))
first = AppsEnv(sys.argv[1], tasks)
first.reset(seed=0)
before = rss()
envs = [AppsEnv(sys.argv[1], tasks) for _ in range(int(sys.argv[2]))]
for index, env in enumerate(envs):
    env.reset(seed=index)
print(json.dumps({"before": before, "after": rss(), "db_bytes": len(first.session.state_bytes())}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--snapshot", help="an existing synthetic snapshot (else one is built under --dir)")
    parser.add_argument("--articles", type=int, default=600, help="articles of the built snapshot (default 600)")
    parser.add_argument("--dir", default="/tmp/bench-snapshots", help="where to build the snapshot")
    parser.add_argument("--users", type=int, default=200, help="users of the app world timed (default 200)")
    parser.add_argument("--steps", type=int, default=2000, help="timed steps, calls and bare queries (default 2000)")
    parser.add_argument("--resets", type=int, default=500, help="timed resets (default 500)")
    parser.add_argument("--envs", type=int, default=1000, help="environments in the memory figure (default 1000)")
    parser.add_argument("--memory-users", type=int, default=40, help="users of the world in the memory figure (default 40)")
    parser.add_argument("--tasks", type=int, default=720, help="tasks generated for the tasks/s figure (default 720)")
    parser.add_argument("--no-append", action="store_true", help="print only; do not append to BENCHMARKS.md")
    args = parser.parse_args()
    snapshot = snapshot_path(args)
    load_before = load()

    started = time.perf_counter()
    base = shared_base(str(snapshot.resolve()), 0, args.users)
    base_seconds = time.perf_counter() - started
    tasks = make_app_tasks(snapshot, 16, users=args.users)
    env = AppsEnv(snapshot, tasks)
    task_ids = [task.task_id for task in env.tasks]

    copies, resets = ([], []), ([], [])  # (wall ms, thread CPU ms) each
    for index in range(args.resets):
        timed_ms(copies, lambda: AppSession(base, 1).close())
        timed_ms(resets, env.reset, options={"task_id": task_ids[index % len(task_ids)]})

    env.reset(options={"task_id": task_ids[0]})
    session = env.session
    bare_connection = base.connect()
    sql_count = "SELECT count(*) FROM messages WHERE owner = ? AND folder = ?"
    sql_page = "SELECT * FROM messages WHERE owner = ? AND folder = ? ORDER BY id LIMIT 10 OFFSET 0"
    user = session.user
    action = write_call("tongyi", "list_messages", {"folder": "inbox"})
    registry, call = app_registry(), ToolCall("list_messages", {"folder": "inbox"})

    def bare_query() -> None:
        bare_connection.execute(sql_count, (user, "inbox")).fetchone()
        bare_connection.execute(sql_page, (user, "inbox")).fetchall()

    def api_call() -> None:
        with bound(session):
            registry.call(call)

    bare, calls, steps = ([], []), ([], []), ([], [])
    for index in range(args.steps):
        timed_ms(bare, bare_query)
        timed_ms(calls, api_call)
        if index % 20 == 0:
            env.reset(options={"task_id": task_ids[0]})  # keep episodes under the turn limit (not timed)
        timed_ms(steps, env.step, action)
        session = env.session

    shared_base(str(snapshot.resolve()), 0, 40)  # the tasks/s figure times generation, not the base
    tick = time.perf_counter()
    generated = make_app_tasks(snapshot, args.tasks, users=40)
    tasks_per_second = len(generated) / (time.perf_counter() - tick)

    memory = json.loads(subprocess.run([sys.executable, "-c", _MEMORY, str(snapshot), str(args.envs), str(args.memory_users)],
                                       capture_output=True, text=True, check=True).stdout)
    per_env = (memory["after"] - memory["before"]) / args.envs

    p50 = lambda timings: percentile(timings[0], 50)  # noqa: E731
    p95 = lambda timings: percentile(timings[0], 95)  # noqa: E731
    p50_bare, p50_call, p50_step = p50(bare), p50(calls), p50(steps)
    body = f"""{load_before} at the start, {load()} at the end.

Snapshot: {snapshot.name}; app world of {args.users} users (base {len(base.data) / 2**20:.1f} MiB, built in {base_seconds:.2f} s).

| measure | p50 ms | p95 ms | vs bare query p50 |
|---|---:|---:|---:|
| bare SQLite query (count + one page of the inbox) | {p50_bare:.3f} | {p95(bare):.3f} | 1.00x |
| API call (`ToolRegistry.call`, validation + SQL + JSON) | {p50_call:.3f} | {p95(calls):.3f} | {p50_call / p50_bare:.2f}x |
| env step (parse + call + render + info) | {p50_step:.3f} | {p95(steps):.3f} | {p50_step / p50_bare:.2f}x |
| state copy (`AppSession`: deserialize the base) | {p50(copies):.3f} | {p95(copies):.3f} | |
| env reset (copy + prompt + info) | {p50(resets):.3f} | {p95(resets):.3f} | |

Memory: {args.envs} environments, each reset (world of {args.memory_users} users, a {memory['db_bytes'] / 2**20:.2f} MiB database per
episode): RSS {memory['before']:.0f} -> {memory['after']:.0f} MiB, {per_env:.2f} MiB per environment.

Task generation: {len(generated)} tasks at {tasks_per_second:.0f} tasks/s (40 users, base built beforehand).
"""
    if args.no_append:
        print(body)
    else:
        append_section(f"App world: reset, step, memory, task generation ({args.users} users)", body)


if __name__ == "__main__":
    main()
