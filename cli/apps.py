"""``stillweb apps generate|verify|export``: make app task sets over a snapshot's app world, prove
the reference program passes every task, and export its episodes as SFT data.

``register(subparsers)`` adds the ``apps`` command (wired in by ``cli/main.py``).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from stillweb.envs.integrations.sft import SFT_SHAPES

__all__ = ["register", "run_export", "run_generate", "run_verify", "verify_app_tasks"]

EPILOG = """examples:
  stillweb apps generate snapshots/syn --name core --count 72
  stillweb apps generate snapshots/syn --name big --count 2000 --seed 1 --users 100
  stillweb apps verify snapshots/syn core
  stillweb apps export snapshots/syn core --shape openai --out sft-apps
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``apps generate`` and ``apps verify`` to the ``stillweb`` parser."""
    apps = subparsers.add_parser("apps", help="make and verify app-world task sets (stateful tool APIs)",
                                 description="The seeded world of apps (contacts, calendar, mail, files, payments, shop, "
                                             "travel, to-do) over a snapshot's people, places, companies and works, and "
                                             "its state-checked tasks for stillweb/Apps-v0.",
                                 epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = apps.add_subparsers(dest="apps_command", metavar="ACTION")
    apps.set_defaults(handler=lambda args: apps.print_help() or 2)

    generate = actions.add_parser("generate", help="generate an app task set into SNAPSHOT/apps/NAME/",
                                  description="Generate COUNT tasks round-robin over the eight categories (lookup, single "
                                              "write, dependent writes, pagination, aggregation, multi-turn, recovery, "
                                              "impossible), split train/dev/test by template, write a card, then run "
                                              "the reference agent on every task. Example: "
                                              "stillweb apps generate snapshots/syn --name core --count 72")
    generate.add_argument("snapshot", metavar="SNAPSHOT", help="snapshot directory (a synthetic one: its people fill the apps)")
    generate.add_argument("--name", required=True, help="task set name (a plain folder name)")
    generate.add_argument("--count", type=int, default=72, help="number of tasks (default 72: every category 9 times)")
    generate.add_argument("--seed", type=int, default=0, help="seed of the app world and of the task draws (default 0)")
    generate.add_argument("--users", type=int, default=40, help="users of the app world (default 40)")
    generate.add_argument("--no-verify", action="store_true", help="skip running the reference agent on every task")
    generate.set_defaults(handler=run_generate)

    verify = actions.add_parser("verify", help="run the reference agent on every task of a set (must pass 100%%)",
                                description="Replay each task's reference program through stillweb/Apps-v0 and report the "
                                            "tasks it does not pass. Example: stillweb apps verify snapshots/syn core")
    verify.add_argument("snapshot", metavar="SNAPSHOT", help="snapshot directory")
    verify.add_argument("name", metavar="NAME", help="app task set name")
    verify.set_defaults(handler=run_verify)

    export = actions.add_parser("export", help="export the reference agent's solved episodes as SFT chat data",
                                description="Write SFT rows (messages, tools, task_id, split, reward) of every task the "
                                            "reference agent solves, as {split}.parquet and a datasets folder. Example: "
                                            "stillweb apps export snapshots/syn core --shape openai --out sft-apps")
    export.add_argument("snapshot", metavar="SNAPSHOT", help="snapshot directory")
    export.add_argument("name", metavar="NAME", help="app task set name")
    export.add_argument("--shape", choices=SFT_SHAPES, default="openai",
                        help="OpenAI tool_calls messages (default) or the Tongyi <tool_call>/<tool_response> text")
    export.add_argument("--out", required=True, metavar="DIR", help="output folder")
    export.set_defaults(handler=run_export)


def verify_app_tasks(snapshot: str, name: str) -> tuple[int, list[str]]:
    """(tasks run, ids of the tasks the reference agent failed) over every split of the set."""
    from stillweb.envs.agents.scripted import ReferenceAgent
    from stillweb.envs.agents.loop import run_episode
    from stillweb.envs.apps.env import AppsEnv

    total, failed = 0, []
    from stillweb.corpora.apps.tasks import app_task_dir

    for split in ("train", "dev", "test"):
        path = app_task_dir(snapshot, name) / f"{split}.jsonl"
        if path.is_file() and not path.read_text(encoding="utf-8").strip():
            continue  # a small set may leave a split empty
        env = AppsEnv(snapshot, name, split=split)
        for task in env.tasks:
            summary = run_episode(env, ReferenceAgent(task), options={"task_id": task.task_id})
            total += 1
            if summary["outcome"] != 1.0:
                failed.append(task.task_id)
        env.close()
    return total, failed


def run_generate(args: argparse.Namespace) -> int:
    """Handler of ``apps generate``: prints the counts, exit status 1 if a reference run fails."""
    from stillweb.corpora.apps.tasks import generate_app_tasks, make_app_tasks

    started = time.perf_counter()
    directory = generate_app_tasks(args.snapshot, args.name, args.count, args.seed, args.users)
    elapsed = time.perf_counter() - started
    records = make_app_tasks(args.snapshot, args.count, args.seed, args.users)
    categories = Counter(record["category"] for record in records)
    splits = Counter(record["split"] for record in records)
    print(f"wrote {len(records)} tasks to {directory} in {elapsed:.1f} s")
    print("categories: " + ", ".join(f"{name} {count}" for name, count in sorted(categories.items())))
    print("splits: " + ", ".join(f"{name} {splits[name]}" for name in ("train", "dev", "test")))
    if args.no_verify:
        return 0
    return _report(*verify_app_tasks(args.snapshot, args.name))


def run_verify(args: argparse.Namespace) -> int:
    """Handler of ``apps verify``: exit status 1 if the reference agent fails a task."""
    return _report(*verify_app_tasks(args.snapshot, args.name))


def run_export(args: argparse.Namespace) -> int:
    """Handler of ``apps export``: prints the paths written."""
    from stillweb.envs.integrations.apps_sft import export_app_sft

    for path in export_app_sft(args.snapshot, args.name, args.out, shape=args.shape):
        print(f"wrote {path}")
    return 0


def _report(total: int, failed: list[str]) -> int:
    print(f"reference agent: {total - len(failed)}/{total} tasks passed")
    if failed:
        print("failed: " + ", ".join(failed[:20]))
        return 1
    return 0
