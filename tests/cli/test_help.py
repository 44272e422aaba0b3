"""Every ``stillweb`` command's ``--help``: a description, examples, help text for every option, plain text (no RST)."""

from __future__ import annotations

import argparse

import pytest

from stillweb.cli.main import make_parser


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command path, parser) of every command and sub-command."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(make_parser()))


@pytest.mark.parametrize("path, parser", COMMANDS, ids=[" ".join(path) or "stillweb" for path, _ in COMMANDS])
def test_help_has_description_examples_option_help_and_no_rst(path, parser):
    text = parser.format_help()
    assert parser.description, f"stillweb {' '.join(path)} has no description"
    assert "example" in text.lower(), f"stillweb {' '.join(path)} --help shows no examples"
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        assert action.help and action.help != argparse.SUPPRESS, f"stillweb {' '.join(path)}: {action.dest} has no help"
    assert "``" not in text and ":func:" not in text and ":class:" not in text, text


def test_build_subcommands_do_not_repeat_each_others_examples():
    builds = {path[-1]: parser.format_help() for path, parser in COMMANDS if len(path) == 2 and path[0] == "build"}
    assert set(builds) >= {"synthetic", "wikipedia", "corpus"}
    assert "build corpus" not in builds["synthetic"] and "build synthetic" not in builds["corpus"]
