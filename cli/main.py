"""The ``stillweb`` command: build snapshots, inspect them, generate tasks, run and serve environments.

Each subcommand lives in its own module of this package with a ``register(subparsers)``
function; this module only assembles them.
"""

from __future__ import annotations

import argparse
import importlib
import os
import select
import sys

from stillweb.corpora.errors import StillwebError
from stillweb.corpora.version import PACKAGE_VERSION

# Modules of this package that add subcommands, in the order --help lists them.
COMMAND_MODULES = ("quickstart", "build", "inspect", "eval", "tasks", "apps", "bfcl", "replay", "check", "health", "serve", "mcp", "view", "freeze")

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
    """Run the command line; returns the exit status.

    Every command ends the way conventional tools do: a reader that closes the pipe early
    (``stillweb tasks show SNAP NAME | head -1``) ends it quietly with status 141 (128 +
    SIGPIPE, what a shell reports for ``yes | head -1``); Ctrl-C ends it with one line on
    stderr and status 130 (128 + SIGINT), never a traceback. Worker pools leave SIGINT to
    the command, which stops them (:func:`stillweb.corpora.processes.ignore_interrupts`).
    A server's Ctrl-C is its normal stop: it says ``stopped serving`` and returns 0. The
    tests run every command both ways (tests/cli/test_pipes_and_interrupts.py).
    """
    command = "stillweb"
    try:
        try:
            parser = make_parser()
            args = parser.parse_args(argv)
        except SystemExit:  # --help, --version or a usage error: argparse printed it
            sys.stdout.flush()
            raise
        command = f"stillweb {args.command}" if args.command else "stillweb"
        status = _run_handler(parser, args, command)
        sys.stdout.flush()  # a closed pipe shows here, inside the handling, not at interpreter exit
        return status
    except KeyboardInterrupt:
        _flush_or_silence()
        print(f"{command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        if not stdout_closed():
            raise  # another pipe (a socket, a child's stdin): a real error, not the reader leaving
        _silence_stdout()
        return EXIT_BROKEN_PIPE


EXIT_INTERRUPTED = 128 + 2  # SIGINT, as a shell reports a command Ctrl-C stopped
EXIT_BROKEN_PIPE = 128 + 13  # SIGPIPE, as a shell reports `yes | head -1`'s yes


def _run_handler(parser: argparse.ArgumentParser, args: argparse.Namespace, command: str) -> int:
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except (StillwebError, ValueError, FileNotFoundError, KeyError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        print(f"{command}: error: {message}", file=sys.stderr)
        return 2


def stdout_closed() -> bool:
    """Whether standard output is a pipe whose reader has gone (poll reports an error on it)."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _fd, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # no poll on this platform, or stdout is not a file
        return True


def _flush_or_silence() -> None:
    """Flush what a stopped command printed; if the reader has gone, silence stdout instead."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush of a closed pipe raises nothing."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout already closed or not a file
        pass


if __name__ == "__main__":
    sys.exit(main())
