"""The pytest plugin that keeps CI from passing by not testing: skips that become failures when CI says so.

- ``STILLWEB_REQUIRE_SHARED_DATA=1``: a skipped test that needs ``../shared/data`` (the
  ``shared_data`` fixture or marker) fails. A test that takes the fixture, directly or through
  another fixture, carries the ``shared_data`` marker from collection on (``-m "not shared_data"``
  leaves out every test a checkout without the data would skip).
- ``STILLWEB_REQUIRE_EXTRAS=1``: a skipped test of an optional extra (``extra`` marker) fails, and so
  do a skip by ``pytest.importorskip`` in any test (a missing library, marked or not) and any module
  skipped at collection (a module-level ``pytest.importorskip`` of a library that is
  not installed, or a doctest module whose import failed): CI installs every extra.
- ``STILLWEB_REQUIRE_SANDBOX=1``: a test marked ``sandbox`` (it runs code in bubblewrap, and skips where
  bubblewrap cannot run) fails instead of skipping.

A docstring whose every example is ``+SKIP`` tests nothing: it is not collected as a test
(reported as deselected), so a skip count means something was really not run.

``.ci/run`` sets all three. tests/conftest.py loads this plugin (``pytest_plugins``);
tests/test_require_switches.py runs pytest on tiny modules to see each switch fail a run.
"""

from __future__ import annotations

import doctest

import pytest

from support.paths import REQUIRE_EXTRAS, REQUIRE_SANDBOX, REQUIRE_SHARED_DATA


def pytest_configure(config) -> None:
    """Register the markers this plugin reads (also listed in pyproject.toml, for --strict-markers runs without it)."""
    config.addinivalue_line("markers", "sandbox: runs code in bubblewrap; skips where it cannot run "
                                       "(a failure when STILLWEB_REQUIRE_SANDBOX=1)")
    config.addinivalue_line("markers", "shared_data: needs ../shared/data (a failure when STILLWEB_REQUIRE_SHARED_DATA=1)")
    config.addinivalue_line("markers", "extra: needs an optional extra (a failure when STILLWEB_REQUIRE_EXTRAS=1)")


def pytest_runtest_setup(item) -> None:
    """Skip a ``sandbox`` test where bubblewrap cannot run, saying why."""
    if item.get_closest_marker("sandbox") is not None:
        from stillweb.sandboxes.python.sandbox import isolation_available

        available, why = isolation_available()
        if not available:
            pytest.skip(f"bubblewrap cannot run here: {why}")


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config, items) -> None:
    """Mark every test that takes ``shared_data`` (its fixture closure) with the ``shared_data`` marker; leave out
    the doctests whose every example is ``+SKIP``."""
    kept, unrun = [], []
    for item in items:
        if "shared_data" in getattr(item, "fixturenames", ()) and item.get_closest_marker("shared_data") is None:
            item.add_marker(pytest.mark.shared_data)
        examples = getattr(getattr(item, "dtest", None), "examples", None)
        (unrun if examples and all(example.options.get(doctest.SKIP) for example in examples) else kept).append(item)
    if unrun:
        config.hook.pytest_deselected(items=unrun)
        items[:] = kept


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Turn skips of tests that need ``../shared/data``, an extra or the sandbox into failures when required."""
    outcome = yield
    report = outcome.get_result()
    if not report.skipped:
        return
    needs_data = "shared_data" in getattr(item, "fixturenames", ()) or item.get_closest_marker("shared_data") is not None
    imported = _reason(report.longrepr).startswith("could not import ")  # pytest.importorskip's message
    for required, needed, switch, what in (
            (REQUIRE_SHARED_DATA, needs_data, "STILLWEB_REQUIRE_SHARED_DATA", "this test"),
            (REQUIRE_EXTRAS, item.get_closest_marker("extra") is not None or imported, "STILLWEB_REQUIRE_EXTRAS",
             "this test of an extra"),
            (REQUIRE_SANDBOX, item.get_closest_marker("sandbox") is not None, "STILLWEB_REQUIRE_SANDBOX",
             "this test of the bubblewrap sandbox")):
        if required and needed:
            report.outcome = "failed"
            report.longrepr = f"{switch}=1 but {what} was skipped: {_reason(report.longrepr)}"
            return


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """Under ``STILLWEB_REQUIRE_EXTRAS=1`` a module skipped at collection fails the run, naming the module."""
    outcome = yield
    report = outcome.get_result()
    if REQUIRE_EXTRAS and report.skipped and isinstance(collector, pytest.Module):
        report.outcome = "failed"
        report.longrepr = (f"STILLWEB_REQUIRE_EXTRAS=1 but {collector.nodeid} was skipped at collection: "
                           f"{_reason(report.longrepr)} (install the extra it needs, as .ci/run does)")


def _reason(longrepr) -> str:
    """The message of a skip report (pytest keeps it as (path, line, message))."""
    text = str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ")
