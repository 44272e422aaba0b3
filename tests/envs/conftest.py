"""Fixtures of the environment tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def openenv_server(tasks_snapshot):
    """The OpenEnv app on 127.0.0.1 (a uvicorn server in a thread), with the env's default limits."""
    from stillweb.envs.integrations.openenv import create_app
    from support.network import serving_app

    with serving_app(create_app(tasks_snapshot, "hard")) as url:  # default limits: from the task set
        yield url
