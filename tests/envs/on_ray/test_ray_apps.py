"""``stillweb/Apps-v0`` in a Ray environment pool: the same results as in-process environments."""

from __future__ import annotations

import pytest

import stillweb.envs  # noqa: F401 - registers the environments
from stillweb.envs.apps.agents import RandomCallAgent
from support.ray_env import assert_pool_matches_in_process

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.extra("ray")


def test_pool_of_app_envs_gives_the_in_process_results(ray_runtime, apps_snapshot):
    kwargs = {"snapshot": str(apps_snapshot), "tasks": "core", "error_rate": 0.2}
    assert_pool_matches_in_process("stillweb/Apps-v0", kwargs, RandomCallAgent)
