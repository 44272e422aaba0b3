"""The README's test command runs on every core (pytest-xdist, ``-n auto --dist loadgroup``): a module's tests share
a worker, and so do all the tests that start Ray (:mod:`support.xdist_groups`). Seen by running pytest on tiny
modules that write down the worker each test ran in."""

from __future__ import annotations

import json

import pytest

from support.paths import TESTS

pytest.importorskip("xdist")  # in the test extra

WORKER_LOG = """
import json, os, pytest

@pytest.mark.parametrize("n", range({count}))
def test_writes_its_worker(n, {fixture}):
    with open("workers.jsonl", "a") as log:
        log.write(json.dumps([__name__, n, os.environ["PYTEST_XDIST_WORKER"]]) + "\\n")
"""

CONFTEST = """
import pytest

pytest_plugins = ["support.xdist_groups"]

@pytest.fixture
def ray_runtime():  # the name the Ray tests' fixture has in tests/conftest.py
    return None

@pytest.fixture
def nothing():
    return None
"""


def test_a_modules_tests_share_a_worker_and_so_do_the_ray_tests(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(TESTS))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # xdist alone (-p xdist): the other plugins play no part
    pytester.makeconftest(CONFTEST)
    modules = {f"test_plain_{k}": WORKER_LOG.format(count=6, fixture="nothing") for k in range(4)}
    modules |= {f"test_ray_{k}": WORKER_LOG.format(count=3, fixture="ray_runtime") for k in range(3)}
    pytester.makepyfile(**modules)
    result = pytester.runpytest_subprocess("-p", "xdist", "-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider")
    assert result.parseoutcomes() == {"passed": 4 * 6 + 3 * 3}
    rows = [json.loads(line) for line in (pytester.path / "workers.jsonl").read_text().splitlines()]
    workers_of = {}
    for module, _n, worker in rows:
        workers_of.setdefault(module, set()).add(worker)
    assert all(len(workers) == 1 for workers in workers_of.values()), workers_of
    ray_workers = set().union(*(workers for module, workers in workers_of.items() if module.startswith("test_ray")))
    assert len(ray_workers) == 1
    assert {worker for _module, _n, worker in rows} == {"gw0", "gw1"}  # and the work is spread

