"""One error root (issue 32): every exception stillweb defines is a StillwebError, each boundary has its
subclass, callers that caught the builtins keep working, and no bare builtin ValueError is raised."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

from stillweb.corpora.errors import DataError, PolicyInputError, StillwebError, UpstreamError, UsageError
from support.import_graph import module_files

ROOT = Path(__file__).resolve().parents[2]
STANDALONE = {"stillweb.sandboxes.python.bootstrap"}  # runs inside the sandbox with the standard library only


def _defined_exceptions():
    for name in sorted(module_files()):
        if name in STANDALONE:
            continue
        try:
            module = importlib.import_module(name)
        except ImportError:  # a module of an extra that is not installed
            continue
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__ == name:
                yield value


def test_every_stillweb_exception_has_the_root():
    outside = [f"{error.__module__}.{error.__qualname__}" for error in _defined_exceptions()
               if not issubclass(error, StillwebError)]
    assert not outside, f"exceptions outside StillwebError: {outside}"


def test_the_boundaries_keep_the_builtins_callers_caught():
    assert issubclass(UsageError, ValueError) and issubclass(DataError, ValueError)
    assert issubclass(UpstreamError, RuntimeError)
    assert not issubclass(PolicyInputError, ValueError)  # a policy's input never passes as a developer's error
    from stillweb.corpora.snapshot.manifest import SnapshotError
    from stillweb.sandboxes.formats.base import FormatProblem

    assert issubclass(SnapshotError, DataError) and issubclass(FormatProblem, PolicyInputError)


@pytest.mark.parametrize("builtin", ["ValueError"])
def test_no_bare_builtin_is_raised(builtin):
    raised = []
    for name, path in sorted(module_files().items()):
        if name in STANDALONE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and node.exc is not None:
                target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if isinstance(target, ast.Name) and target.id == builtin:
                    raised.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not raised, f"raise a StillwebError subclass (UsageError, DataError...) instead of {builtin} at {raised}"
