"""``stillweb tasks generate|show|stats|verify|export``: make hard multi-hop task sets, look at them, measure, re-prove and export them
(``profile|filter|reverify``: difficulty under a policy, in :mod:`stillweb.cli.task_profiles`).

``register(subparsers)`` adds the ``tasks`` command (wired in by ``cli/main.py``).
"""

from __future__ import annotations

import argparse
import sys

from stillweb.corpora.errors import UsageError
from stillweb.cli.task_import import add_import_parser
from stillweb.cli.task_polish import add_polish_parser
from stillweb.cli.task_show import add_show_parser
from stillweb.corpora.tasks.store.export import EXPORT_FORMATS, SEARCH_R1_DATA_SOURCES
from stillweb.corpora.tasks.compose.generate import VERIFY_SAMPLE
from stillweb.corpora.tasks.compose.params import LEVELS
from stillweb.envs.integrations.sft import SFT_SHAPES

__all__ = ["register", "run_generate", "run_stats", "run_verify", "run_export"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``tasks generate`` and ``tasks export`` to the ``stillweb`` parser."""
    tasks = subparsers.add_parser("tasks", help="generate, show, measure and export multi-hop task sets",
                                  description="Task sets live in SNAPSHOT/tasks/NAME/ (train/dev/test parquet and card.md).",
                                  epilog="examples:\n  stillweb tasks generate snapshots/syn-20k --name default --count 100\n"
                                         "  stillweb tasks show snapshots/syn-20k default\n"
                                         "  stillweb tasks stats snapshots/syn-20k default\n"
                                         "  stillweb tasks verify snapshots/syn-20k default\n"
                                         "  stillweb tasks export snapshots/syn-20k default --format jsonl --out tasks-default",
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = tasks.add_subparsers(dest="tasks_command", metavar="ACTION")
    tasks.set_defaults(handler=lambda args: tasks.print_help() or 2)

    generate = actions.add_parser(
        "generate", help="generate a task set into SNAPSHOT/tasks/NAME/",
        description="Compose WebShaper-style multi-hop questions from the snapshot's knowledge graph, each proven to "
                    "have one answer, and write them split train/dev/test with a card.md.",
        epilog="examples:\n  stillweb tasks generate snapshots/syn-20k --name default --count 100\n"
               "  stillweb tasks generate snapshots/syn-20k --name hard --count 50 --level 3 --seed 1 --verify -1\n"
               "  stillweb tasks generate snapshots/syn-2k --name small --count 20 --allow-partial --no-progress",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    generate.add_argument("snapshot", metavar="DIR", help="snapshot directory")
    generate.add_argument("--name", required=True, help="task set name")
    generate.add_argument("--count", type=int, required=True, help="number of tasks")
    generate.add_argument("--seed", type=int, default=0, help="generation seed: the same seed writes the same bytes (default 0)")
    generate.add_argument("--min-hops", type=int, default=2, help="fewest hops (relations on the solving path) per task (default 2)")
    generate.add_argument("--max-hops", type=int, default=5, help="most hops per task (default 5)")
    generate.add_argument("--level", type=int, choices=LEVELS, default=None, help="only tasks of this level")
    generate.add_argument("--workers", type=int, default=1, help="worker processes (with --ray: actors, default the cluster's CPUs)")
    generate.add_argument("--ray", action="store_true",
                          help="run the attempts on Ray actors (needs stillweb[ray]); the same task set bytes")
    generate.add_argument("--verify", type=int, default=VERIFY_SAMPLE, metavar="N",
                          help=f"solve the first N kept tasks with the reference agent (default {VERIFY_SAMPLE}; -1: all; 0: none); "
                               "failures are discarded as 'unsolvable'")
    generate.add_argument("--unanswerable", type=float, default=0.0, metavar="SHARE",
                          help="share of tasks made unanswerable, with a stored emptiness proof (e.g. 0.1; "
                               "default 0: the set is byte-identical to one made without this option)")
    generate.add_argument("--max-per-answer", type=int, default=3, metavar="N",
                          help="keep at most N tasks per answer (default 3: no answer over 3%% of a set of 100+)")
    generate.add_argument("--min-pages", type=int, default=None, metavar="N",
                          help="pages (evidence documents) every question reads at least (default: on real pages 2 "
                               "where the answer has a keyed chain through another page, else 1; issue 49)")
    generate.add_argument("--allow-partial", action="store_true", help="write the set even if fewer than --count tasks")
    generate.add_argument("--no-progress", action="store_true", help="no progress bar (for logs and scripts)")
    generate.set_defaults(handler=run_generate)

    add_import_parser(actions)
    add_show_parser(actions)

    stats = actions.add_parser("stats", help="question words, hops, shapes, answer repeats and the malformed rate of a set",
                               description="Figures of a task set over all its splits: question words p50/p95, hops, "
                                           "shapes, answer repeats (top 5, entropy) and the malformed detector's rate.",
                               epilog="examples:\n  stillweb tasks stats snapshots/syn-20k default\n"
                                      "  stillweb tasks stats snapshots/syn-20k default --json",
                               formatter_class=argparse.RawDescriptionHelpFormatter)
    stats.add_argument("snapshot", metavar="DIR", help="snapshot directory")
    stats.add_argument("name", metavar="NAME", help="task set name")
    stats.add_argument("--json", action="store_true", help="print the figures as JSON")
    stats.set_defaults(handler=run_stats)

    verify = actions.add_parser(
        "verify", help="re-prove every task with an independent solver; exit 1 on any ambiguous task",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Solve each task's formalization again from facts.parquet and docs.parquet alone, with a solver\n"
                    "that shares no code with the generator, counting every value a fact can take (linked or not,\n"
                    "periods and ranges read as written). Per task: the answers found, whether the stated answer is\n"
                    "among them, redundant branches (dropping one still leaves the answer unique) and hops.\n"
                    "Exit status 1 when a task is ambiguous or unreadable (an unknown relation names the task),\n"
                    "and with --minimal also when more than 2% of the tasks have a redundant branch.\n\n"
                    "examples:\n"
                    "  stillweb tasks verify snapshots/syn default\n"
                    "  stillweb tasks verify snapshots/syn default --only-problems\n"
                    "  stillweb tasks verify snapshots/syn default --json > verify.json")
    verify.add_argument("snapshot", metavar="DIR", help="snapshot directory")
    verify.add_argument("name", metavar="NAME", help="task set name (all splits are verified)")
    verify.add_argument("--json", action="store_true", help="print the whole report as JSON")
    verify.add_argument("--only-problems", action="store_true", help="list only tasks that are not ok")
    verify.add_argument("--minimal", action="store_true",
                        help="also fail when more than 2%% of the tasks have a redundant branch")
    verify.set_defaults(handler=run_verify)

    export = actions.add_parser("export", help="export a task set as jsonl, a HF dataset, verl parquet or SFT data",
                                description="Write a task set in a trainer's format (every split).",
                                epilog="examples:\n  stillweb tasks export snapshots/syn-20k default --format jsonl --out tasks-default\n"
                                       "  stillweb tasks export snapshots/syn-20k default --format verl --out data\n"
                                       "  stillweb tasks export snapshots/syn-20k default --format sft --shape tongyi --out sft",
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    export.add_argument("snapshot", metavar="DIR", help="snapshot directory")
    export.add_argument("name", metavar="NAME", help="task set name")
    export.add_argument("--format", required=True, choices=(*EXPORT_FORMATS, "sft"),
                        help="sft: the reference agent's solved episodes as chat messages with tools")
    export.add_argument("--shape", choices=SFT_SHAPES, default="openai",
                        help="sft messages: OpenAI tool_calls (default) or Tongyi <tool_call>/<tool_response> text")
    export.add_argument("--out", required=True, metavar="PATH", help="output folder (jsonl: a file or folder)")
    export.add_argument("--data-source", choices=SEARCH_R1_DATA_SOURCES, default=None,
                        help="verl: the data_source of every row (default: each task's own, from its import, else "
                             "stillweb/NAME), one Search-R1's reward selector accepts")
    export.set_defaults(handler=run_export)

    from stillweb.cli import task_profiles

    task_profiles.register(actions)  # profile, filter, reverify
    add_polish_parser(actions)


def run_generate(args: argparse.Namespace) -> int:
    """Handler of ``tasks generate``: prints a summary, exit status 0 on success."""
    from stillweb.corpora.tasks.compose.params import ComposeParams
    from stillweb.corpora.tasks.compose.generate import generate_tasks
    from stillweb.corpora.tasks.compose.attempts import GenerationParams

    if args.verify < -1:
        raise UsageError(f"--verify must be -1 (all), 0 (none) or a positive sample size, got {args.verify}")
    verifier, limit = None, None
    if args.verify:
        from stillweb.envs.wikiqa.solvability import ReferenceVerifier

        verifier, limit = ReferenceVerifier(args.snapshot), (None if args.verify < 0 else args.verify)
    params = GenerationParams(
        count=args.count, seed=args.seed, compose=ComposeParams(min_hops=args.min_hops, max_hops=args.max_hops, level=args.level),
        verify_limit=limit, unanswerable=args.unanswerable, max_per_answer=args.max_per_answer, min_pages=args.min_pages,
    )
    summary = generate_tasks(args.snapshot, args.name, params, workers=args.workers, verifier=verifier,
                             allow_partial=args.allow_partial, progress=not args.no_progress, on_ray=args.ray)
    rejected = ", ".join(f"{k}={v}" for k, v in summary.rejections.items()) or "none"
    print(f"wrote {summary.count} tasks to {summary.path} ({summary.splits}); "
          f"{summary.attempts} attempts; rejections: {rejected}; verified by the reference agent: {summary.verified}")
    return 0


def run_stats(args: argparse.Namespace) -> int:
    """Handler of ``tasks stats``: the figures of every split of a set."""
    import json

    from stillweb.corpora.tasks.store.import_check import format_solvability, solvability_summary
    from stillweb.corpora.tasks.store.quality import format_task_stats, task_set_stats
    from stillweb.corpora.tasks.store.files import read_tasks, task_set_dir

    if not task_set_dir(args.snapshot, args.name).is_dir():
        raise FileNotFoundError(f"no task set {args.name!r} in {args.snapshot} (generate it with stillweb tasks generate)")
    tasks = [task for split in ("train", "dev", "test") for task in read_tasks(args.snapshot, args.name, split)]
    stats = task_set_stats(tasks)
    solvability = solvability_summary([task.solvability for task in tasks])
    if solvability is not None:
        stats["solvability"] = solvability
    if args.json:
        print(json.dumps(stats, indent=2, sort_keys=True, ensure_ascii=False))
    else:
        print(f"task set {args.name}: {stats['tasks']} tasks")
        print("\n".join(format_task_stats(stats)))
        if solvability is not None:
            print("solvability (imported):\n" + "\n".join(format_solvability(solvability)))
    return 0


def run_verify(args: argparse.Namespace) -> int:
    """Handler of ``tasks verify``: 0 when every key is sound (and, with --minimal, the set minimal), else 1."""
    import json

    from stillweb.corpora.tasks.prove.verify import verify_task_set

    report = verify_task_set(args.snapshot, args.name)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, sort_keys=True, ensure_ascii=False))
    else:
        for check in report.checks:
            if check.status != "ok" or not args.only_problems:
                print(check.line())
        summary = report.summary()
        print(f"task set {args.name}: " + ", ".join(f"{key} {value}" for key, value in summary.items()))
    failed = not report.sound or (args.minimal and not report.minimal)
    return 1 if failed else 0


def run_export(args: argparse.Namespace) -> int:
    """Handler of ``tasks export``."""
    from stillweb.corpora.tasks.store.export import export_tasks

    if args.format == "sft":
        from stillweb.envs.integrations.sft import export_sft

        for path in export_sft(args.snapshot, args.name, args.out, shape=args.shape, progress=True):
            print(path, file=sys.stdout)
        return 0

    for path in export_tasks(args.snapshot, args.name, args.format, args.out, data_source=args.data_source):
        print(path, file=sys.stdout)
    return 0
