"""Helpers of the fault suite (tests/faults/): a process under a file-size limit (a full disk, as RLIMIT_FSIZE
makes it), the files a directory holds, and processes stopped mid-work."""

from __future__ import annotations

import asyncio
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path


def with_file_size_limit(limit_bytes: int):
    """A ``preexec_fn``: no file the child writes may grow past ``limit_bytes`` (a full disk to it: writes fail
    with EFBIG, as with ENOSPC on a full disk; SIGXFSZ, which would kill it instead, is ignored)."""

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return limit


def run_on_a_full_disk(argv: list[str], limit_bytes: int, **options) -> subprocess.CompletedProcess:
    """``python ARGV`` with every file it writes capped at ``limit_bytes``."""
    return subprocess.run([sys.executable, *argv], preexec_fn=with_file_size_limit(limit_bytes), capture_output=True,
                          text=True, timeout=300, **options)


def stillweb_on_a_full_disk(argv: list[str], limit_bytes: int) -> subprocess.CompletedProcess:
    """``stillweb ARGV`` with every file it writes capped at ``limit_bytes``."""
    return run_on_a_full_disk(["-m", "stillweb.cli.main", *argv], limit_bytes)


def tree(folder: Path) -> list[str]:
    """Every file and folder below ``folder`` (hidden ones included), relative, sorted."""
    return sorted(str(path.relative_to(folder)) for path in Path(folder).rglob("*"))


def stop(pids: list[int]) -> None:
    """SIGSTOP each process: it holds whatever it was doing until :func:`resume` or a kill."""
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)


def resume(pids: list[int]) -> None:
    """SIGCONT each process that still exists."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass


async def post_once(url: str, path: str, body: dict) -> tuple[int, dict]:
    """One ``POST`` on its own connection (``Connection: close``): (status, JSON body). A plain asyncio
    client, so a thousand of them are truly concurrent (an httpx pool serialises them: 24 s against 1 s)."""
    import json
    from urllib.parse import urlsplit

    host, port = urlsplit(url).hostname, urlsplit(url).port
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(http_post(host, path, body))
        await writer.drain()
        answer = await reader.read()
    finally:
        writer.close()
    head, _, payload = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), json.loads(payload)


def http_post(host: str, path: str, body: dict) -> bytes:
    """The bytes of an HTTP/1.1 JSON ``POST`` that closes its connection."""
    import json

    payload = json.dumps(body).encode()
    return (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n").encode() + payload
