"""Fixtures of the environment tests."""

from __future__ import annotations

import socket
import threading
import time

import pytest


@pytest.fixture(scope="module")
def openenv_server(tasks_snapshot):
    """The OpenEnv app on 127.0.0.1 (a uvicorn server in a thread), with the env's default limits."""
    import uvicorn

    from stillweb.envs.integrations.openenv import create_app

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = create_app(tasks_snapshot, "hard")  # default limits: from the task set
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(400):
        if server.started:
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)
