"""The full stillweb server: tools, Search-R1 retrieval and environment sessions on
one FastAPI app over one or more snapshots.

>>> app = make_app(["snapshots/syn"], ServerSettings(token="s3cret"))   # doctest: +SKIP
>>> uvicorn.run(app, host="127.0.0.1", port=8000)                      # doctest: +SKIP

With several uvicorn workers the app is built in each worker by
:func:`app_from_environment` from the JSON config in ``STILLWEB_SERVE_CONFIG``
(see :func:`serve_config`); sessions live in one worker, and a client whose
request lands on another rebuilds its session there from its log
(:class:`~stillweb.envs.remote.RemoteEnv` does this transparently).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import httpx
from fastapi import FastAPI

import stillweb.envs  # noqa: F401 - registers the environments the sessions serve
from stillweb.server.session_store import SessionStore
from stillweb.envs.registration import SERVED_ENV_IDS
from stillweb.server.sessions import add_session_routes
from stillweb.corpora.snapshot.shared import shared_snapshot
from stillweb.server.tools import SnapshotCatalog, add_tool_routes
from stillweb.server.plumbing import ServerSettings, create_base_app

__all__ = ["make_app", "app_from_environment", "serve_config", "start_server_process", "CONFIG_VARIABLE", "UVICORN_OPTIONS"]

CONFIG_VARIABLE = "STILLWEB_SERVE_CONFIG"
# uvicorn's C HTTP parser and event loop: half the per-request server CPU of h11 + asyncio.
UVICORN_OPTIONS = {"http": "httptools", "loop": "uvloop" if sys.platform != "win32" else "asyncio"}

DESCRIPTION = """Deterministic, offline search environments and tools over HTTP.

* **tools**: list the tools (OpenAI function format), call one, or a batch.
* **retrieval**: `POST /retrieve`, Search-R1's API (works with SkyRL-gym's search tool).
* **sessions**: whole environments: create, reset, step (idempotent per `request_id`),
  replay a log, inspect, close. Episodes are deterministic, so a client can rebuild a
  lost session from its log and get the same observations.

Every route but `/health` needs `Authorization: Bearer <token>` when the server has a token.
"""


def make_app(
    snapshots: Sequence[str | Path],
    settings: ServerSettings | None = None,
    env_ids: Iterable[str] | None = None,
    frozen_tools: Sequence[dict] = (),
) -> FastAPI:
    """The app serving ``snapshots`` (the first is the default).

    ``env_ids``: which registered environments sessions may create (default:
    every ``stillweb/`` environment but the remote one). ``frozen_tools``: frozen live
    tools (:class:`~stillweb.sandboxes.frozen.FrozenToolSpec` dicts) offered by ``/tools``
    beside the snapshot's, and to sessions that name them in ``kwargs.frozen_tools``.
    """
    settings = settings or ServerSettings()
    app = create_base_app(settings, title="stillweb", description=DESCRIPTION)
    catalog = SnapshotCatalog([shared_snapshot(path) for path in snapshots], frozen_tools)
    add_tool_routes(app, catalog)
    store = SessionStore(settings.max_sessions, settings.idle_timeout_s)
    add_session_routes(app, catalog, SERVED_ENV_IDS if env_ids is None else env_ids, store)
    return app


def serve_config(snapshots: Sequence[str | Path], settings: ServerSettings, frozen_tools: Sequence[dict] = ()) -> str:
    """The JSON config :func:`app_from_environment` reads (paths made absolute)."""
    return json.dumps({"snapshots": [str(Path(path).resolve()) for path in snapshots], "settings": dataclasses.asdict(settings),
                       "frozen_tools": list(frozen_tools)})


def app_from_environment() -> FastAPI:
    """Build the app from ``$STILLWEB_SERVE_CONFIG`` (a uvicorn factory for multi-worker serving)."""
    raw = os.environ.get(CONFIG_VARIABLE)
    if not raw:
        raise RuntimeError(f"{CONFIG_VARIABLE} is not set: start the server with `stillweb serve DIR`")
    config = json.loads(raw)
    return make_app(config["snapshots"], ServerSettings(**config["settings"]), frozen_tools=config.get("frozen_tools", ()))


def start_server_process(
    snapshots: Sequence[str | Path],
    port: int,
    settings: ServerSettings | None = None,
    host: str = "127.0.0.1",
    startup_timeout_s: float = 60.0,
    frozen_tools: Sequence[dict] = (),
) -> subprocess.Popen:
    """Start a one-worker server in a child process and return once ``/health`` answers.

    For tests, benchmarks and local rollouts; stop it with ``process.kill()``.
    Raises ``RuntimeError`` (with the child's output) if it exits or never answers.
    """
    environment = {**os.environ, CONFIG_VARIABLE: serve_config(snapshots, settings or ServerSettings(), frozen_tools)}
    command = [sys.executable, "-m", "uvicorn", "--factory", "stillweb.server.app:app_from_environment",
               "--host", host, "--port", str(port), "--log-level", "warning", "--no-access-log",
               "--http", UVICORN_OPTIONS["http"], "--loop", UVICORN_OPTIONS["loop"]]
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(command, env=environment, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + startup_timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.seek(0)
            output = log.read().decode(errors="replace")
            raise RuntimeError(f"the server exited with status {process.returncode}: {output[-2000:]}")
        try:
            if httpx.get(f"http://{host}:{port}/health", timeout=1.0).status_code == 200:
                return process
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"the server did not answer on {host}:{port} within {startup_timeout_s} s")
