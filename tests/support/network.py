"""Ports and server processes for the tests (always on 127.0.0.1)."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path


def wait_until_answers(url: str, tries: int = 600) -> bool:
    """Poll ``url`` every 0.1 s (at most ``tries`` times) until it answers (any HTTP status); whether it did."""
    import time
    import urllib.error
    import urllib.request

    for _ in range(tries):
        try:
            urllib.request.urlopen(url, timeout=2)
            return True
        except urllib.error.HTTPError:  # it answered (an error status is an answer)
            return True
        except OSError:
            time.sleep(0.1)
    return False


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serving(start: Callable[[int], subprocess.Popen]) -> Iterator[str]:
    """The URL of the process ``start(port)`` serves on a free port of 127.0.0.1 (killed on exit)."""
    port = free_port()
    process = start(port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        process.kill()
        process.wait()


def served(snapshots: list[Path]) -> AbstractContextManager[str]:
    """The URL of a ``stillweb`` server process over ``snapshots`` (killed on exit)."""
    from stillweb.server.app import start_server_process

    return serving(lambda port: start_server_process(snapshots, port))


@contextmanager
def serving_app(app) -> Iterator[str]:
    """The URL of ``app`` served by uvicorn in a thread on a free port of 127.0.0.1 (stopped on exit)."""
    import threading
    import time

    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        for _ in range(600):
            if server.started:
                break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
