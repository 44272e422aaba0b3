"""CI cannot hide a skip: each switch of support.require (and --strict-markers from pyproject.toml) is
seen failing a pytest run of a tiny module, which passes (skipping) without the switch."""

from __future__ import annotations

import re

import pytest

from support.paths import REPO, TESTS

IMPORTORSKIP_AT_COLLECTION = """
import pytest
pytest.importorskip("stillweb_no_such_extra")

def test_uses_the_extra():
    pass
"""

SANDBOX_TEST = """
import pytest

@pytest.mark.sandbox
def test_runs_code_in_bubblewrap():
    pass
"""

MISSPELT_MARKER = """
import pytest

@pytest.mark.slwo
def test_meant_to_be_slow():
    pass
"""


def run_pytest(pytester, monkeypatch, source: str, **environment: str):
    """Run pytest in a subprocess (the switches are read at import) on ``source`` with the plugin loaded."""
    for name in ("STILLWEB_REQUIRE_EXTRAS", "STILLWEB_REQUIRE_SANDBOX", "STILLWEB_REQUIRE_SHARED_DATA"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PYTHONPATH", str(TESTS))
    pytester.makepyfile(test_tiny=source)
    return pytester.runpytest_subprocess("-p", "support.require", "-p", "no:cacheprovider")


def test_a_module_skipped_at_collection_fails_under_require_extras(pytester, monkeypatch):
    assert run_pytest(pytester, monkeypatch, IMPORTORSKIP_AT_COLLECTION).parseoutcomes() == {"skipped": 1}
    result = run_pytest(pytester, monkeypatch, IMPORTORSKIP_AT_COLLECTION, STILLWEB_REQUIRE_EXTRAS="1")
    assert result.ret != 0 and result.parseoutcomes().get("errors") == 1
    result.stdout.fnmatch_lines(["*STILLWEB_REQUIRE_EXTRAS=1 but test_tiny.py was skipped at collection: "
                                 "could not import 'stillweb_no_such_extra'*"])


def test_a_sandbox_test_fails_under_require_sandbox_where_bubblewrap_cannot_run(pytester, monkeypatch):
    """bubblewrap is made unusable for the tiny run (PATH without it); with it, the test would pass anyway."""
    monkeypatch.setenv("PATH", str(pytester.path))  # no bwrap on this PATH
    assert run_pytest(pytester, monkeypatch, SANDBOX_TEST).parseoutcomes() == {"skipped": 1}
    result = run_pytest(pytester, monkeypatch, SANDBOX_TEST, STILLWEB_REQUIRE_SANDBOX="1")
    assert result.ret != 0 and result.parseoutcomes() == {"errors": 1}  # it fails at setup, where it skipped
    result.stdout.fnmatch_lines(["*STILLWEB_REQUIRE_SANDBOX=1 but this test of the bubblewrap sandbox was skipped: "
                                 "bubblewrap cannot run here*"])


def test_strict_markers_from_pyproject_fail_a_misspelt_marker(pytester, monkeypatch):
    """The project's own [tool.pytest.ini_options] (addopts and markers) make a misspelt marker an error."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    section = re.search(r"^\[tool\.pytest\.ini_options\]\n(.*?)(?=^\[|\Z)", text, re.S | re.M).group(0)
    assert "--strict-markers" in section and "strict_markers = true" in section
    pytester.makepyprojecttoml(section)
    result = run_pytest(pytester, monkeypatch, MISSPELT_MARKER)
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*'slwo' not found in `markers` configuration option*"])


@pytest.mark.parametrize("source", [SANDBOX_TEST])
def test_without_the_switches_a_passing_module_still_passes(pytester, monkeypatch, source):
    """Control: where bubblewrap runs (CI installs it), the sandbox-marked test simply runs."""
    from stillweb.sandboxes.python.sandbox import isolation_available

    if not isolation_available()[0]:
        pytest.skip("bubblewrap cannot run here")
    result = run_pytest(pytester, monkeypatch, source, STILLWEB_REQUIRE_SANDBOX="1")
    assert result.parseoutcomes() == {"passed": 1}
