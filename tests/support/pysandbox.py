"""Helpers of the python sandbox tests (tests/sandboxes/test_pysandbox*.py): running code,
skipping where bubblewrap cannot run, finding sandbox processes left on the host."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from stillweb.sandboxes.python.sandbox import REASONS, ExecutionResult, PythonSandboxConfig, run_python

needs_bwrap = pytest.mark.sandbox  # skips where bubblewrap cannot run; fails then under STILLWEB_REQUIRE_SANDBOX=1 (support.require)
PROJECT_ROOT = Path(__file__).resolve().parents[2]  # the checkout
FAST = PythonSandboxConfig(timeout_s=20.0)
SHORT = PythonSandboxConfig(timeout_s=2.0)


def run(code: str, config: PythonSandboxConfig = FAST) -> ExecutionResult:
    """Run dedented ``code`` and check the result is well-formed."""
    result = run_python(textwrap.dedent(code), config)
    assert result.reason in REASONS
    return result


def processes_with(marker: str) -> list[int]:
    """Host pids whose command line contains ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline and entry != str(os.getpid()):
                found.append(int(entry))
    return found

