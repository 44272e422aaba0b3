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

SHARED_DATA_TESTS = """
import pytest

@pytest.fixture
def shared_data():
    pytest.skip("real test data not found at ../shared/data")

@pytest.fixture
def built_from_the_data(shared_data):
    return shared_data

def test_reads_the_data_through_a_fixture(built_from_the_data):
    pass

@pytest.mark.shared_data
def test_marked():
    pytest.skip("real test data not found at ../shared/data")

def test_needs_nothing():
    pass
"""

EXTRA_TESTS = """
import pytest

@pytest.mark.extra("ray")
def test_of_an_extra():
    pytest.importorskip("stillweb_no_such_extra")

def test_guarded_without_the_marker():
    pytest.importorskip("stillweb_no_such_extra_either")

def test_skips_for_another_reason():
    pytest.skip("not on this platform")
"""

SKIPPED_DOCTESTS = """
def only_skipped():
    \"\"\"Tests nothing.

    >>> only_skipped()  # doctest: +SKIP
    1
    \"\"\"

def runs():
    \"\"\"Tests something.

    >>> runs()
    2
    \"\"\"
    return 2
"""

MISSPELT_MARKER = """
import pytest

@pytest.mark.slwo
def test_meant_to_be_slow():
    pass
"""


def run_pytest(pytester, monkeypatch, source: str, *args: str, **environment: str):
    """Run pytest in a subprocess (the switches are read at import) on ``source`` with the plugin loaded, and no
    other: the installed plugins pytest would load on its own (hypothesis, schemathesis, xdist, anyio...) play no
    part in these runs and took nine tenths of each one's time (2.9 CPU s against 0.3)."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    for name in ("STILLWEB_REQUIRE_EXTRAS", "STILLWEB_REQUIRE_SANDBOX", "STILLWEB_REQUIRE_SHARED_DATA"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PYTHONPATH", str(TESTS))
    pytester.makepyfile(test_tiny=source)
    return pytester.runpytest_subprocess("-p", "support.require", "-p", "no:cacheprovider", *args)


def test_a_module_skipped_at_collection_fails_under_require_extras(pytester, monkeypatch):
    assert run_pytest(pytester, monkeypatch, IMPORTORSKIP_AT_COLLECTION).parseoutcomes() == {"skipped": 1}
    result = run_pytest(pytester, monkeypatch, IMPORTORSKIP_AT_COLLECTION, STILLWEB_REQUIRE_EXTRAS="1")
    assert result.ret != 0 and result.parseoutcomes().get("errors") == 1
    result.stdout.fnmatch_lines(["*STILLWEB_REQUIRE_EXTRAS=1 but test_tiny.py was skipped at collection: "
                                 "could not import 'stillweb_no_such_extra'*"])


def test_a_test_needing_shared_data_is_marked_at_collection_and_fails_under_require_shared_data(pytester, monkeypatch):
    """Through the fixture (even one fixture removed) or the marker: selectable by -m at collection, a skip without the
    data, a failure with the switch; the test that needs nothing is untouched."""
    assert run_pytest(pytester, monkeypatch, SHARED_DATA_TESTS).parseoutcomes() == {"passed": 1, "skipped": 2}
    selected = run_pytest(pytester, monkeypatch, SHARED_DATA_TESTS, "-m", "not shared_data")
    assert selected.parseoutcomes() == {"passed": 1, "deselected": 2}
    listed = run_pytest(pytester, monkeypatch, SHARED_DATA_TESTS, "--collect-only", "-q", "-m", "shared_data")
    listed.stdout.fnmatch_lines(["test_tiny.py::test_reads_the_data_through_a_fixture", "test_tiny.py::test_marked"])
    result = run_pytest(pytester, monkeypatch, SHARED_DATA_TESTS, STILLWEB_REQUIRE_SHARED_DATA="1")
    assert result.ret != 0 and result.parseoutcomes() == {"passed": 1, "failed": 1, "errors": 1}  # the fixture's is at setup
    result.stdout.fnmatch_lines(["*STILLWEB_REQUIRE_SHARED_DATA=1 but this test was skipped: real test data not found*"])


def test_an_extra_marked_test_and_any_importorskip_fail_under_require_extras(pytester, monkeypatch):
    """The ``extra`` marker's skip and an unmarked test's ``pytest.importorskip`` fail; a skip for another reason stays."""
    assert run_pytest(pytester, monkeypatch, EXTRA_TESTS).parseoutcomes() == {"skipped": 3}
    result = run_pytest(pytester, monkeypatch, EXTRA_TESTS, "-rs", STILLWEB_REQUIRE_EXTRAS="1")
    assert result.ret != 0 and result.parseoutcomes() == {"failed": 2, "skipped": 1}
    result.stdout.fnmatch_lines(["*_ test_of_an_extra _*",
                                 "STILLWEB_REQUIRE_EXTRAS=1 but this test of an extra was skipped: "
                                 "could not import 'stillweb_no_such_extra'*",
                                 "*_ test_guarded_without_the_marker _*",
                                 "*could not import 'stillweb_no_such_extra_either'*",
                                 "SKIPPED * not on this platform"])


def test_a_doctest_whose_every_example_is_skipped_is_not_collected(pytester, monkeypatch):
    pytester.makepyfile(skipped_doc=SKIPPED_DOCTESTS)
    result = run_pytest(pytester, monkeypatch, "", "--doctest-modules", "skipped_doc.py")
    assert result.parseoutcomes() == {"passed": 1, "deselected": 1}
    without = pytester.runpytest_subprocess("--doctest-modules", "-p", "no:cacheprovider", "skipped_doc.py")
    assert without.parseoutcomes() == {"passed": 1, "skipped": 1}  # without the plugin: a skip that ran nothing


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
