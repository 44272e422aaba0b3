"""Which tests share a pytest-xdist worker, for the README's test command (``-n auto --dist loadgroup``).

A module's tests stay together (its module-scoped fixtures are built once, as without xdist), and every test that
starts Ray runs in one worker: ``ray.init()`` without an address joins the latest cluster on the machine
(``/tmp/ray/ray_current_cluster``), which could be another worker's, and the two-node ``ray.cluster_utils.Cluster``
tests would race a local runtime for it. A test may name its own group (``pytest.mark.xdist_group``): the docs
runner's pages each take one, so that they spread over the workers. Without xdist (``-n 0`` or a plain ``pytest``)
nothing changes.
"""

from __future__ import annotations

import pytest

RAY_GROUP = "ray"
RAY_TESTS_FOLDER = "on_ray"  # tests/envs/on_ray: not "ray", which would shadow the ray package where it is not installed
_RAY_FIXTURES = {"ray_runtime", "ray_cluster"}
_RAY_MODULES = {"test_ray_build.py"}  # start Ray through the code they test


def xdist_group_of(item: pytest.Item) -> str:
    """The worker group of ``item``: :data:`RAY_GROUP` for a test that starts Ray, else its module's path (as in
    its node id)."""
    path = item.path
    if (_RAY_FIXTURES & set(getattr(item, "fixturenames", ())) or path.parent.name == RAY_TESTS_FOLDER
            or path.name in _RAY_MODULES):
        return RAY_GROUP
    return item.nodeid.split("::")[0]


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark each collected test with its group (before xdist's ``loadgroup`` reads the marks)."""
    if item.config.pluginmanager.hasplugin("xdist") and item.get_closest_marker("xdist_group") is None:
        item.add_marker(pytest.mark.xdist_group(xdist_group_of(item)))
