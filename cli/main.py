"""The ``stillweb`` command: build snapshots, inspect them, generate tasks, run and serve environments.

Each subcommand lives in its own module of this package with a ``register(subparsers)``
function; this module only assembles them.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from stillweb.corpora.version import PACKAGE_VERSION

# Modules of this package that add subcommands, in the order --help lists them.
COMMAND_MODULES = ("quickstart", "build", "inspect", "eval", "tasks", "apps", "replay", "health", "serve", "mcp", "view", "freeze")

EPILOG = """examples:
  stillweb quickstart                                   build the default snapshot and try it
  stillweb build synthetic --articles 20000 --seed 0 --out snapshots/syn
  stillweb build wikipedia enwiki-pages-articles.xml.bz2 --out snapshots/wiki --workers 8
  stillweb info snapshots/syn --json
  stillweb verify snapshots/syn
"""


def make_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="stillweb",
        description="Deterministic, offline environments for training search and tool-using agents.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"stillweb {PACKAGE_VERSION}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"stillweb.cli.{name}").register(subparsers)
    _fill_help(parser)
    return parser


def _fill_help(parser: argparse.ArgumentParser) -> None:
    """Give every sub-command a description (its one-line help, when it has none) and examples
    (its parent's, when it has none), so each ``--help`` says what it does and how to call it."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help for choice in action._choices_actions}
        for name, sub in action.choices.items():
            if not sub.description and helps.get(name):
                sub.description = helps[name][0].upper() + helps[name][1:] + "."
            if not sub.epilog and parser.epilog:
                sub.epilog = parser.epilog
                sub.formatter_class = argparse.RawDescriptionHelpFormatter
            _fill_help(sub)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = make_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        print("interrupted: nothing was left half-written", file=sys.stderr)
        return 130
    except (ValueError, FileNotFoundError, KeyError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        print(f"stillweb {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
