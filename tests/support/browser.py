"""Driving the viewer in a real browser: ``stillweb view`` in a child process on a free
loopback port, Debian's ``chromium`` (driven by Playwright through ``executable_path``)
and screenshots of what a page shows."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx

from support.network import free_port

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "start_viewer", "shoot"]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def start_viewer(*arguments: str) -> tuple[subprocess.Popen, str]:
    """``stillweb view ARGUMENTS`` on a free loopback port; returns (process, base url) once /health answers."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "stillweb.cli.main", "view", *arguments, "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"stillweb view exited: {process.stderr.read().decode(errors='replace')[-2000:]}")
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                return process, base
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("stillweb view did not answer within 60 s")


def shoot(page, folder: Path, name: str) -> None:
    """Save what ``page`` shows as ``folder/viewer-NAME.png`` (and check it is not blank)."""
    path = folder / f"viewer-{name}.png"
    page.screenshot(path=str(path), full_page=False)
    assert path.stat().st_size > 10_000  # a rendered page, not a blank one
