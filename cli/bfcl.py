"""``stillweb bfcl card|export``: what ``stillweb/BFCL-v0`` plays of the installed bfcl-eval (the tasks per
category, the ones left out of the default split and why), and its reference episodes as SFT data.

``register(subparsers)`` adds the ``bfcl`` command (wired in by ``cli/main.py``). Needs the ``bfcl``
extra (``pip install -e ".[bfcl]" && bash scripts/install_bfcl.sh``).
"""

from __future__ import annotations

import argparse

from stillweb.envs.integrations.sft import SFT_SHAPES

__all__ = ["register", "run_card", "run_export"]

EPILOG = """examples:
  stillweb bfcl card
  stillweb bfcl card --category multi_turn_miss_func
  stillweb bfcl export sft-bfcl --shape openai
  stillweb bfcl export sft-bfcl --category multi_turn_base --tasks multi_turn_base_0 multi_turn_base_1
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``bfcl card`` and ``bfcl export`` to the ``stillweb`` parser."""
    bfcl = subparsers.add_parser("bfcl", help="BFCL's multi-turn tasks (stillweb/BFCL-v0): card and SFT export",
                                 description="The multi-turn categories of the installed bfcl-eval as stillweb/BFCL-v0 "
                                             "plays them, rewarded by BFCL's own checker.",
                                 epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = bfcl.add_subparsers(dest="bfcl_command", metavar="ACTION")
    bfcl.set_defaults(handler=lambda args: bfcl.print_help() or 2)

    card = actions.add_parser("card", help="print the tasks per category and the ones left out, with the reason",
                              description="Print, per category, the tasks of the installed bfcl-eval, the default split's "
                                          "size and every task left out of it with the reason (its ground truth cannot "
                                          "earn 1 through the environment). Example: stillweb bfcl card")
    card.add_argument("--category", nargs="+", metavar="NAME", default=None,
                      help="categories to show (default: the four multi-turn ones)")
    card.set_defaults(handler=run_card)

    export = actions.add_parser("export", help="export the reference agent's solved episodes as SFT chat data",
                                description="Write SFT rows (messages, tools, task_id, split = category, reward) of the "
                                            "reference episodes of each category's default split, as {category}.parquet "
                                            "and a datasets folder. Example: stillweb bfcl export sft-bfcl --shape openai")
    export.add_argument("out", metavar="OUT", help="output directory")
    export.add_argument("--shape", choices=SFT_SHAPES, default="openai",
                        help="openai: tool_calls messages; tongyi: the environment's own text (default openai)")
    export.add_argument("--category", nargs="+", metavar="NAME", default=None,
                        help="categories to export (default: the four multi-turn ones)")
    export.add_argument("--tasks", nargs="+", metavar="ID", default=None, help="only these task ids")
    export.set_defaults(handler=run_export)


def run_card(args: argparse.Namespace) -> int:
    """Print the card."""
    from stillweb.envs.bfcl.data import BFCL_CATEGORIES, bfcl_version, category_tasks
    from stillweb.envs.bfcl.splits import excluded_tasks

    print(f"bfcl-eval {bfcl_version()}")
    for category in args.category or BFCL_CATEGORIES:
        total, excluded = len(category_tasks(category)), excluded_tasks(category)
        print(f"{category}: {total} tasks, default split {total - len(excluded)}, left out {len(excluded)}")
        for task_id, reason in excluded.items():
            print(f"  {task_id}: {reason}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    """Write the SFT rows."""
    from stillweb.envs.integrations.bfcl_sft import export_bfcl_sft

    for path in export_bfcl_sft(args.out, args.category, shape=args.shape, tasks=args.tasks):
        print(path)
    return 0
