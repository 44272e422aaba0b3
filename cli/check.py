"""``stillweb check ENV_ID``: does this environment work at all?

Runs gymnasium's check_env, the reference agent (it must earn the maximum on at least 95% of
tasks, where the environment has one), three floors (do nothing, a text-only answer, random
valid tool calls: at most 5% of the maximum), an answer-leak check (no gold answer in an
observation before the first tool call), the same seed in one process and in two processes
with other PYTHONHASHSEED and TZ (identical episode hashes), the agreement of
terminated/truncated, their reasons and the mask flag with each ending, and the cost of a
step. Prints a Markdown report (--json FILE writes the JSON one); exits 1 when a check
fails, each failure naming its task and step.

Your own TextEnv: --entry-point module:Class (the module is found from the working
directory); --tasks, --snapshot, --split and --kwargs become its constructor's arguments.

examples:
  stillweb check stillweb/WikiQA-v0 --snapshot snapshots/syn --tasks hard
  stillweb check --entry-point my_env:AddEnv --tasks my_tasks.jsonl --json report.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from stillweb.cli.help_text import plain
from stillweb.corpora.errors import UsageError

__all__ = ["register", "run_check"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``check`` subcommand to the ``stillweb`` parser."""
    parser = subparsers.add_parser("check", help="self-check an environment: reference, floors, leaks, determinism",
                                   description=plain(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("env_id", nargs="?", metavar="ENV_ID", help="a registered environment id, e.g. stillweb/WikiQA-v0")
    parser.add_argument("--entry-point", metavar="MODULE:CLASS", help="check this environment class instead of an id")
    parser.add_argument("--tasks", metavar="NAME", help="the tasks argument: a task set name or a jsonl/parquet file")
    parser.add_argument("--snapshot", metavar="DIR", help="the snapshot argument")
    parser.add_argument("--split", help="the split argument (registered environments default to train)")
    parser.add_argument("--kwargs", metavar="JSON", help="more constructor arguments, as a JSON object")
    parser.add_argument("--max-tasks", type=int, default=20, help="tasks checked (the first ones; default 20)")
    parser.add_argument("--max-steps", type=int, default=64, help="steps before an episode counts as endless (default 64)")
    parser.add_argument("--json", metavar="FILE", help="write the JSON report here ('-': print it instead of the Markdown)")
    parser.set_defaults(handler=run_check)


def run_check(args: argparse.Namespace) -> int:
    """Check the environment; print the report; 0 when every check passed, 1 otherwise."""
    from stillweb.envs.check import EnvTarget, check_environment

    try:
        kwargs = json.loads(args.kwargs) if args.kwargs else {}
    except json.JSONDecodeError as error:
        raise UsageError(f"--kwargs is not JSON ({error}): pass e.g. '{{\"max_turns\": 8}}'") from None
    if not isinstance(kwargs, dict):
        raise UsageError(f"--kwargs must be a JSON object, got {args.kwargs[:100]!r}")
    for name in ("tasks", "snapshot", "split"):
        if getattr(args, name) is not None:
            kwargs[name] = getattr(args, name)
    if args.max_tasks < 1 or args.max_steps < 1:
        raise UsageError(f"--max-tasks and --max-steps must be at least 1, got {args.max_tasks} and {args.max_steps}")
    target = EnvTarget.with_cwd(env_id=args.env_id, entry_point=args.entry_point, kwargs=kwargs)
    report = check_environment(target, max_tasks=args.max_tasks, max_steps=args.max_steps)
    if args.json == "-":
        print(report.to_json())
    else:
        print(report.markdown(), end="")
        if args.json:
            Path(args.json).write_text(report.to_json() + "\n", encoding="utf-8")
    return 0 if report.ok else 1
