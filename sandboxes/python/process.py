"""Run one sandbox process: feed it the code, collect its output within limits, kill it.

:func:`run_process` starts a command (bubblewrap or a bare interpreter), writes the
code to its stdin, reads stdout and stderr incrementally (never more than the limit
plus one read per stream is kept), answers bubblewrap's id-map handshake when asked,
and stops the whole process tree when the wall-clock deadline passes or a stream
exceeds its limit. Everything waits on one selector, with the process itself as a
pidfd, so nothing blocks past the deadline.
"""

from __future__ import annotations

import json
import os
import select
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from stillweb.corpora.errors import UsageError

__all__ = ["SandboxFds", "ProcessOutcome", "run_process"]

READ_CHUNK_BYTES = 65536
DRAIN_GRACE_S = 1.0
SANDBOX_EXIT_WAIT_S = 5.0
MAX_INFO_BYTES = 4096
STARTED_MARKER = b"started"


@dataclass(frozen=True)
class SandboxFds:
    """The child's ends of the side channels, as numbers to put on its command line.

    ``status`` receives ``started`` from the bootstrap; ``info``, ``userns_block``
    and ``seccomp`` are bubblewrap's ``--info-fd``, ``--userns-block-fd`` and
    ``--seccomp`` (None when unused).
    """

    status: int
    info: int | None
    userns_block: int | None
    seccomp: int | None = None


@dataclass(frozen=True)
class ProcessOutcome:
    """How a sandbox process ended, before it is put in words.

    ``returncode`` follows :mod:`subprocess` (negative: killed by that signal) and is
    None when we stopped the process (``timed_out`` or an ``*_overflow``).
    ``setup_error`` says why the id-map handshake failed, if it did.
    """

    stdout: bytes
    stderr: bytes
    stdout_overflow: bool
    stderr_overflow: bool
    returncode: int | None
    timed_out: bool
    started: bool
    setup_error: str | None = None


@dataclass
class _Stream:
    limit: int
    data: bytearray = field(default_factory=bytearray)
    overflow: bool = False

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.data)
        self.data += chunk[: max(room, 0)]
        if len(chunk) > room:
            self.overflow = True


def run_process(
    build_argv: Callable[[SandboxFds], list[str]],
    code: bytes,
    timeout_s: float,
    max_output_bytes: int,
    env: dict[str, str],
    cwd: str | None = None,
    bwrap_info: bool = False,
    id_map: str | None = None,
    seccomp: bytes | None = None,
) -> ProcessOutcome:
    """Run ``build_argv(fds)`` with ``code`` on stdin until it ends or a limit stops it.

    With ``bwrap_info``, the command is bubblewrap reporting its sandbox's pid on
    ``--info-fd``: before returning we wait until that pid namespace is empty. With
    ``id_map`` too, bubblewrap waits on ``--userns-block-fd``: the map is written to
    the sandbox's ``uid_map`` and ``gid_map`` and then it is let go. ``seccomp`` is
    a filter program for bubblewrap's ``--seccomp`` (read from a pipe).
    """
    if id_map and not bwrap_info:
        raise UsageError("id_map needs bwrap_info: the map is written for the pid bubblewrap reports")
    deadline = time.monotonic() + timeout_s
    status_r, status_w = os.pipe()
    info_r, info_w = os.pipe() if bwrap_info else (None, None)
    block_r, block_w = os.pipe() if id_map else (None, None)
    seccomp_r = _pipe_holding(seccomp) if seccomp else None
    fds = SandboxFds(status=status_w, info=info_w, userns_block=block_r, seccomp=seccomp_r)
    child_fds = tuple(fd for fd in (status_w, info_w, block_r, seccomp_r) if fd is not None)
    try:
        process = subprocess.Popen(
            build_argv(fds),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=child_fds,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as error:  # the command cannot be started at all (missing, no memory, ...)
        for fd in (status_r, info_r, block_w):
            if fd is not None:
                os.close(fd)
        return ProcessOutcome(b"", b"", False, False, None, False, False, f"could not start {error.filename}: {error}")
    finally:
        for fd in child_fds:
            os.close(fd)
    session = _Session(process, status_r, info_r, block_w, id_map, code, max_output_bytes)
    try:
        return session.run(deadline)
    finally:
        session.close()


class _Session:
    """The selector loop over one process's pipes, side channels and pidfd."""

    def __init__(
        self,
        process: subprocess.Popen,
        status_r: int,
        info_r: int | None,
        block_w: int | None,
        id_map: str | None,
        code: bytes,
        max_output_bytes: int,
    ) -> None:
        self.process = process
        self.id_map = id_map
        self.block_w = block_w
        self.pending_stdin = memoryview(code)
        self.streams = {process.stdout.fileno(): _Stream(max_output_bytes), process.stderr.fileno(): _Stream(max_output_bytes)}
        self.status = bytearray()
        self.info = bytearray()
        self.setup_error: str | None = None
        self.sandbox_pidfd: int | None = None
        self.selector = selectors.DefaultSelector()
        self.pidfd = os.pidfd_open(process.pid)
        self.owned_fds = [status_r, self.pidfd] + [fd for fd in (info_r, block_w) if fd is not None]
        for fd in self.streams:
            self.selector.register(fd, selectors.EVENT_READ, "stream")
        self.selector.register(status_r, selectors.EVENT_READ, "status")
        self.selector.register(self.pidfd, selectors.EVENT_READ, "exit")
        if info_r is not None:
            self.selector.register(info_r, selectors.EVENT_READ, "info")
        os.set_blocking(process.stdin.fileno(), False)
        self.selector.register(process.stdin.fileno(), selectors.EVENT_WRITE, "stdin")

    def run(self, deadline: float) -> ProcessOutcome:
        """Serve events until the pipes close; kill on deadline, overflow or failed setup."""
        exited_at: float | None = None
        stopped = timed_out = False
        while exited_at is None or self._open_reads():
            limit = deadline if exited_at is None else min(deadline, exited_at + DRAIN_GRACE_S)
            remaining = limit - time.monotonic()
            if remaining <= 0:
                timed_out = exited_at is None
                stopped = stopped or timed_out
                break
            for key, _ in self.selector.select(remaining):
                if key.data == "exit":
                    self.selector.unregister(key.fd)
                    exited_at = time.monotonic()
                    self._kill_group()  # stragglers outside a pid namespace (none-unsafe)
                else:
                    self._serve(key)
            if self.setup_error or any(stream.overflow for stream in self.streams.values()):
                stopped = True
                break
        if stopped:
            self._kill_group()
        returncode = self.process.wait()
        if self.sandbox_pidfd is not None:  # its pid namespace is empty once its init is gone
            select.select([self.sandbox_pidfd], [], [], SANDBOX_EXIT_WAIT_S)
        stdout, stderr = (self.streams[pipe.fileno()] for pipe in (self.process.stdout, self.process.stderr))
        return ProcessOutcome(
            stdout=bytes(stdout.data),
            stderr=bytes(stderr.data),
            stdout_overflow=stdout.overflow,
            stderr_overflow=stderr.overflow,
            returncode=None if stopped else returncode,
            timed_out=timed_out,
            started=bytes(self.status) == STARTED_MARKER,
            setup_error=self.setup_error,
        )

    def close(self) -> None:
        """Close every descriptor this session owns (the process is already reaped)."""
        self.selector.close()
        for fd in self.owned_fds:
            if fd is not None:
                _close_quietly(fd)
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            try:
                pipe.close()
            except OSError:
                pass

    def _open_reads(self) -> bool:
        return any(key.data == "stream" for key in self.selector.get_map().values())

    def _serve(self, key: selectors.SelectorKey) -> None:
        if key.data == "stdin":
            self._write_stdin(key.fd)
            return
        chunk = _read(key.fd)
        if not chunk:
            self.selector.unregister(key.fd)
            if key.data == "info":
                self._on_sandbox_info()
        elif key.data == "stream":
            self.streams[key.fd].add(chunk)
        elif key.data == "status":
            self.status = (self.status + chunk)[: len(STARTED_MARKER) + 1]
        elif key.data == "info":
            self.info += chunk[:MAX_INFO_BYTES]
            if self.info.rstrip().endswith(b"}") or len(self.info) >= MAX_INFO_BYTES:
                self.selector.unregister(key.fd)  # read once: later bytes could only be noise
                self._on_sandbox_info()

    def _write_stdin(self, fd: int) -> None:
        try:
            written = os.write(fd, self.pending_stdin[:READ_CHUNK_BYTES])
        except BlockingIOError:
            return
        except OSError:  # the process is gone or closed stdin: its result will say why
            written = len(self.pending_stdin)
        self.pending_stdin = self.pending_stdin[written:]
        if not self.pending_stdin:
            self.selector.unregister(fd)
            self.process.stdin.close()

    def _on_sandbox_info(self) -> None:
        """Hold the sandbox's init as a pidfd; answer the id-map handshake if there is one."""
        block_w, self.block_w = self.block_w, None
        try:
            child_pid = int(json.loads(bytes(self.info))["child-pid"])
            self.sandbox_pidfd = os.pidfd_open(child_pid)  # alive: bwrap has not reaped it
            self.owned_fds.append(self.sandbox_pidfd)
            if block_w is not None:
                for name in ("uid_map", "gid_map"):
                    with open(f"/proc/{child_pid}/{name}", "w", encoding="ascii") as map_file:
                        map_file.write(self.id_map or "")
                os.write(block_w, b"1")
        except (ValueError, KeyError, TypeError, OSError) as error:
            self.setup_error = f"could not set up the sandbox: {error}"
        finally:
            if block_w is not None:
                self.owned_fds.remove(block_w)
                _close_quietly(block_w)

    def _kill_group(self) -> None:
        """SIGKILL the process group; bubblewrap's sandbox dies with it (--die-with-parent)."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _pipe_holding(data: bytes) -> int:
    """The read end of a pipe that holds ``data`` and then ends (``data`` fits its buffer)."""
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, data)
    finally:
        os.close(write_end)
    return read_end


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, READ_CHUNK_BYTES)
    except OSError:
        return b""


def _close_quietly(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
