"""The python tool end to end: the registry, the real bubblewrap sandbox, and the tool's result flags."""

from __future__ import annotations

import pytest

from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.sandboxes import ToolCall, ToolRegistry
from stillweb.sandboxes.python.sandbox import PythonSandboxConfig

pytestmark = pytest.mark.sandbox  # skips where bubblewrap cannot run (support.require)


@pytest.fixture(scope="module")
def registry(small_snapshot) -> ToolRegistry:
    return ToolRegistry(Snapshot.open(small_snapshot), python=PythonSandboxConfig(timeout_s=2.0, cpu_time_s=2))


def run(registry: ToolRegistry, code: str):
    return registry.call(ToolCall("python", {"code": code}))


def test_code_runs_and_its_output_is_shown(registry):
    result = run(registry, "print(sum(range(10)))")
    assert result.flag is None and "45" in result.text and "ok" in result.text


def test_the_clock_is_frozen_so_output_is_reproducible(registry):
    first, second = (run(registry, "import time, random; print(time.time(), random.random())") for _ in range(2))
    assert first.text == second.text and "1704067200.0" in first.text


def test_a_hanging_program_is_reported_as_a_timeout(registry):
    result = run(registry, "while True: pass")
    assert result.flag == "timeout" and "limit" in result.text


def test_the_snapshot_and_checkout_are_invisible(registry, small_snapshot):
    result = run(registry, f"import os; print(os.path.exists({str(small_snapshot)!r}), os.path.exists('/work'))")
    assert "False False" in result.text


def test_errors_come_back_as_text_not_exceptions(registry):
    result = run(registry, "raise ValueError('boom')")
    assert "ValueError: boom" in result.text and result.flag is None
