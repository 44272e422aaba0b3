"""`stillweb freeze record|serve` run as child processes on a free loopback port, for tests and benchmarks."""

from __future__ import annotations

import subprocess
import sys
import time

import httpx

FREEZE = [sys.executable, "-c", "from stillweb.cli.main import main; raise SystemExit(main())", "freeze"]


def start_freeze(*args: str, port: int) -> subprocess.Popen:
    """Run ``stillweb freeze ARGS --port PORT`` and return once its ``/health`` answers
    (``RuntimeError`` with its stderr if it exits first)."""
    process = subprocess.Popen([*FREEZE, *args, "--port", str(port)], stderr=subprocess.PIPE, text=True)
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return process
        except httpx.TransportError:
            if process.poll() is not None:
                raise RuntimeError(f"stillweb freeze {' '.join(args)} exited: {process.stderr.read()[-2000:]}") from None
            time.sleep(0.05)


def stop(process: subprocess.Popen) -> None:
    """Stop a freeze server cleanly (SIGTERM: uvicorn shuts down, ``record`` writes its manifest)."""
    process.terminate()
    process.wait(timeout=120)
