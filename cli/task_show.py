"""``stillweb tasks show SNAPSHOT NAME [TASK_ID]``: the tasks of a set, or one task in full.

Without a task id it lists every task (split, id, hops, level, the question's start):
the real ids to pass to ``env.reset(options={"task_id": ...})``. With one it prints
the question, answer and aliases, hops and level, the evidence facts with the
documents that state them, and the reference agent's steps (recorded when the
generator verified the task, else estimated from its evidence).
"""

from __future__ import annotations

import argparse
import json

from stillweb.corpora.errors import UsageError
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.corpora.tasks.store.splits import SPLITS
from stillweb.corpora.tasks.store.files import read_tasks, task_set_dir

__all__ = ["add_show_parser", "run_show"]

EXAMPLES = """examples:
  stillweb tasks show snapshots/syn-20k default                 # every task: split, id, hops, level, question
  stillweb tasks show snapshots/syn-20k default sw-0123abcd...  # one task in full
  stillweb tasks show snapshots/syn-20k default --json          # the records as JSON lines
"""


def add_show_parser(actions: argparse._SubParsersAction) -> None:
    """Add ``tasks show`` to the ``tasks`` sub-commands."""
    show = actions.add_parser("show", help="list the tasks of a set, or show one task in full",
                              description="List the tasks of a set (split, id, hops, level, question), or show one "
                                          "task: question, answer, hops, evidence and the reference agent's steps.",
                              epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    show.add_argument("snapshot", metavar="SNAPSHOT", help="snapshot directory")
    show.add_argument("name", metavar="NAME", help="task set name (a folder of SNAPSHOT/tasks/)")
    show.add_argument("task_id", metavar="TASK_ID", nargs="?", help="the task to show (default: list them all)")
    show.add_argument("--json", action="store_true", help="print task records as JSON (one per line)")
    show.set_defaults(handler=run_show)


def run_show(args: argparse.Namespace) -> int:
    """Handler of ``tasks show``."""
    tasks = _all_tasks(args.snapshot, args.name)
    if args.task_id is None:
        for task in tasks:
            if args.json:
                print(json.dumps(task.to_dict(), ensure_ascii=False, sort_keys=True, default=str))
            else:
                question = task.question if len(task.question) <= 80 else task.question[:77] + "..."
                print(f"{task.split or '-':<5} {task.task_id}  hops {task.hops}  level {task.level}  {question}")
        return 0
    matches = [task for task in tasks if task.task_id == args.task_id]
    if not matches:
        raise UsageError(f"no task {args.task_id!r} in set {args.name!r} ({len(tasks)} tasks); "
                         f"list them with: stillweb tasks show {args.snapshot} {args.name}")
    task = matches[0]
    if args.json:
        print(json.dumps(task.to_dict(), ensure_ascii=False, sort_keys=True, default=str))
    else:
        print("\n".join(describe_task(task)))
    return 0


def describe_task(task: TaskRecord) -> list[str]:
    """The lines ``tasks show`` prints for one task."""
    from stillweb.envs.core.turn_budget import reference_steps

    steps = reference_steps(task)
    how = "recorded when verified" if task.oracle_steps is not None else "estimated: 3 per evidence fact + 4"
    lines = [f"task:      {task.task_id} ({task.split} split, {task.hops} hops, level {task.level}, shape {task.shape})",
             f"question:  {task.question}",
             f"answer:    {task.answer}" + (f"  (aliases: {', '.join(task.aliases)})" if task.aliases else ""),
             f"reference steps: {steps} ({how})",
             f"evidence ({len(task.evidence)} facts):"]
    for item in task.evidence:
        lines.append(f"  {item.subject} --{item.relation}--> {item.value}   [doc {item.doc_id}] {item.doc_title}")
    return lines


def _all_tasks(snapshot: str, name: str) -> list[TaskRecord]:
    """Every task of every split of the set, in split then file order; one clear error if the set is missing."""
    folder = task_set_dir(snapshot, name)
    if not folder.is_dir():
        existing = sorted(path.name for path in folder.parent.glob("*") if path.is_dir()) if folder.parent.is_dir() else []
        raise FileNotFoundError(f"no task set {name!r} in {snapshot} (sets: {existing or 'none'}); "
                                f"make one with: stillweb tasks generate {snapshot} --name {name} --count 100")
    return [task for split in SPLITS if (folder / f"{split}.parquet").is_file() for task in read_tasks(snapshot, name, split)]
