"""The code-execution sandbox behind the ``python`` tool.

:func:`run_python` runs a Python program written by a policy and returns what it
printed and how it ended, as an :class:`ExecutionResult`. It never raises on any
code string: hostile code (reading the task files, the network, fork or memory
bombs, endless loops or output, killing its parent, leaving daemons behind) is
contained and reported in ``reason``.

Isolation (``isolation="bwrap"``, the default via ``"auto"``) uses bubblewrap: the
program sees only the interpreter and its standard library, read-only, and a private
size-capped tmpfs (its home, ``TMPDIR`` and working directory); never the project
checkout, a snapshot, task files, home directories or the host's ``/tmp``. It has no
network, runs as uid 65534 in its own user, pid, network, ipc and uts namespaces,
under CPU-time, address-space, process-count and file-size limits, with a cleared
environment. The wall-clock timeout kills the whole process tree (the pid namespace
dies with its init). See :mod:`.bwrap` for the mounts and uid mapping.
A seccomp filter (:mod:`.seccomp`) forbids nested user namespaces and a few
kernel interfaces. Where bubblewrap cannot run, ``run_python`` refuses (reason
``"refused"``) unless the caller opts into ``isolation="none-unsafe"``: a bare
subprocess with the limits only, which can read every file the host user can and may
leave daemons behind.

Known limits: ``memory_mb`` bounds each process's address space, not the sandbox's
total (up to ``max_processes`` x ``memory_mb`` plus ``tmpfs_mb``; use a cgroup around
the trainer for a hard total); ``max_processes`` counts threads too; a program that
exits with status 128+N is reported as killed by signal N (bubblewrap's convention);
:func:`isolation_available` is decided once per process.

Determinism: the same code prints the same bytes on every run. The bootstrap
(:mod:`.bootstrap`) fixes the hash seed, seeds :mod:`random` with 0, makes
``os.urandom`` and unseeded ``random.Random()`` reproducible and freezes the wall
clock at 2024-01-01T00:00:00Z (``time.time()``, ``datetime.now()``, ...). Not fixed:
monotonic and CPU clocks (``time.monotonic``, ``perf_counter``, ``process_time``),
object addresses (``id()``, default ``repr``), thread scheduling, and entropy drawn
in C (``ssl``). A run stopped by a limit may differ in how much it printed before.

Example::

    >>> run_python("print(sum(range(10)))").stdout
    '45\\n'
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from stillweb.corpora.errors import UsageError
from stillweb.corpora.arguments import check_positive_int
from stillweb.sandboxes.python.bwrap import ID_MAP, SANDBOX_HOME, SANDBOX_PATH, SANDBOX_UID, bwrap_argv, interpreter_files
from stillweb.sandboxes.python.process import ProcessOutcome, SandboxFds, run_process
from stillweb.sandboxes.python.seccomp import seccomp_program

__all__ = ["PythonSandboxConfig", "ExecutionResult", "REASONS", "ISOLATIONS", "run_python", "isolation_available"]

ISOLATIONS = ("auto", "bwrap", "none-unsafe")
REASONS = ("ok", "error", "memory", "cpu_time", "timeout", "output_limit", "killed", "refused", "sandbox_error", "input_too_large")
MAX_CODE_BYTES = 1_000_000
INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`; or run scripts/install_bubblewrap.sh), "
    'or opt into a bare, unisolated subprocess with PythonSandboxConfig(isolation="none-unsafe")'
)
INTERPRETER_FLAGS = ("-S", "-s", "-P", "-B")  # no site, no user site, no script dir on sys.path, no .pyc
SIGXCPU = 24
_BOOTSTRAP_SOURCE = Path(__file__).with_name("bootstrap.py").read_text(encoding="utf-8")


@dataclass(frozen=True)
class PythonSandboxConfig:
    """Limits and isolation of one ``run_python`` call (developer input: checked here).

    ``timeout_s`` is wall-clock and kills the whole process tree; ``cpu_time_s``,
    ``memory_mb`` (address space), ``max_processes`` and ``max_file_mb`` are kernel
    limits; ``max_output_bytes`` caps each of stdout and stderr (the program is
    stopped when one overflows); ``tmpfs_mb`` caps the private writable directory.
    ``isolation``: ``"bwrap"``, ``"auto"`` (bwrap, refusing if it cannot run) or
    ``"none-unsafe"`` (no isolation; never for policies being trained).
    """

    timeout_s: float = 10.0
    cpu_time_s: int = 10
    memory_mb: int = 512
    max_processes: int = 64
    max_file_mb: int = 16
    max_output_bytes: int = 16_000
    tmpfs_mb: int = 64
    isolation: str = "auto"

    def __post_init__(self) -> None:
        if not isinstance(self.timeout_s, int | float) or isinstance(self.timeout_s, bool) or not self.timeout_s > 0:
            raise UsageError(f"timeout_s must be a positive number of seconds, got {self.timeout_s!r}")
        for name in ("cpu_time_s", "memory_mb", "max_processes", "max_file_mb", "max_output_bytes", "tmpfs_mb"):
            check_positive_int(name, getattr(self, name))
        if self.isolation not in ISOLATIONS:
            raise UsageError(f"isolation must be one of {ISOLATIONS}, got {self.isolation!r}")


@dataclass(frozen=True)
class ExecutionResult:
    """What a program printed and how it ended.

    ``reason``: ``"ok"`` (exit 0), ``"error"`` (non-zero exit, e.g. an uncaught
    exception), ``"memory"`` (MemoryError at the address-space limit),
    ``"cpu_time"`` (CPU-time limit), ``"timeout"`` (wall clock), ``"output_limit"``
    (a stream overflowed), ``"killed"`` (died by a signal), ``"refused"`` (no
    isolation available; ``stderr`` says how to fix it), ``"sandbox_error"`` (the
    sandbox failed to start), ``"input_too_large"`` (code over 1 MB).
    ``exit_code`` is None when the sandbox stopped or never ran the program, negative
    when a signal killed it. Truncated streams end with a marker line.
    """

    stdout: str
    stderr: str
    exit_code: int | None
    reason: str
    stdout_truncated: bool = False
    stderr_truncated: bool = False


def run_python(code: str, config: PythonSandboxConfig = PythonSandboxConfig()) -> ExecutionResult:
    """Run ``code`` as ``__main__`` in the sandbox described by ``config``; never raises on any string."""
    if not isinstance(code, str):
        raise TypeError(f"code must be a str, got {type(code).__name__}")
    if not isinstance(config, PythonSandboxConfig):
        raise TypeError(f"config must be a PythonSandboxConfig, got {type(config).__name__}")
    encoded = code.encode("utf-8", "surrogatepass")
    if len(encoded) > MAX_CODE_BYTES:
        message = f"the code is {len(encoded)} bytes; the sandbox accepts at most {MAX_CODE_BYTES} bytes\n"
        return ExecutionResult("", message, None, "input_too_large")
    if config.isolation == "none-unsafe":
        return _describe(_run_unisolated(encoded, config), config)
    available, why = isolation_available()
    if not available:
        return ExecutionResult("", f"the python sandbox is unavailable: {why}; {INSTALL_HINT}\n", None, "refused")
    return _describe(_run_in_bwrap(encoded, config), config)


@functools.lru_cache(maxsize=1)
def isolation_available() -> tuple[bool, str]:
    """Whether bubblewrap can isolate code here (checked once per process), and why not."""
    if not sys.platform.startswith("linux"):
        return False, f"bubblewrap needs Linux, this is {sys.platform}"
    if shutil.which("bwrap") is None:
        return False, "bubblewrap (bwrap) is not installed or not on PATH"
    probe = _run_in_bwrap(b"print(6 * 7)", PythonSandboxConfig(timeout_s=30.0))
    if probe.started and probe.returncode == 0 and probe.stdout == b"42\n":
        return True, "bubblewrap works"
    detail = (probe.setup_error or probe.stderr.decode("utf-8", "replace").strip() or "no output")[:500]
    return False, f"bubblewrap is installed but cannot create the sandbox here ({detail})"


def _sandbox_env(home: str) -> dict[str, str]:
    return {
        "PATH": SANDBOX_PATH,
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
    }


def _interpreter_command(executable: str, config: PythonSandboxConfig, drop_to_uid: int, status_fd: int) -> list[str]:
    limits = (config.cpu_time_s, config.memory_mb << 20, config.max_processes, config.max_file_mb << 20)
    return [executable, *INTERPRETER_FLAGS, "-c", _BOOTSTRAP_SOURCE, *map(str, limits), str(drop_to_uid), str(status_fd)]


def _run_in_bwrap(code: bytes, config: PythonSandboxConfig) -> ProcessOutcome:
    files = interpreter_files()
    as_root = os.geteuid() == 0
    bwrap = shutil.which("bwrap") or "bwrap"

    def build_argv(fds: SandboxFds) -> list[str]:
        if fds.info is None:
            raise RuntimeError("bubblewrap runs need the info fd (run_process with bwrap_info=True)")
        env = _sandbox_env(SANDBOX_HOME)
        prefix = bwrap_argv(bwrap, files, config.tmpfs_mb << 20, env, as_root, fds.info, fds.userns_block, fds.seccomp)
        return prefix + _interpreter_command(files.executable, config, SANDBOX_UID if as_root else -1, fds.status)

    return run_process(
        build_argv,
        code,
        config.timeout_s,
        config.max_output_bytes,
        env={"PATH": SANDBOX_PATH},
        bwrap_info=True,
        id_map=ID_MAP if as_root else None,
        seccomp=seccomp_program(),
    )


def _run_unisolated(code: bytes, config: PythonSandboxConfig) -> ProcessOutcome:
    home = tempfile.mkdtemp(prefix="stillweb-pysandbox-")
    try:
        return run_process(
            lambda fds: _interpreter_command(os.path.realpath(sys.executable), config, -1, fds.status),
            code,
            config.timeout_s,
            config.max_output_bytes,
            env=_sandbox_env(home),
            cwd=home,
        )
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _describe(outcome: ProcessOutcome, config: PythonSandboxConfig) -> ExecutionResult:
    """Put a process outcome in the words of :class:`ExecutionResult`."""
    stdout = _decode(outcome.stdout, outcome.stdout_overflow, config.max_output_bytes)
    stderr = _decode(outcome.stderr, outcome.stderr_overflow, config.max_output_bytes)
    returncode = _signal_aware(outcome.returncode, config)
    if outcome.timed_out:
        stderr += f"\n[stillweb: stopped after the {config.timeout_s:g} s wall-clock limit]\n"
        reason = "timeout"
    elif outcome.stdout_overflow or outcome.stderr_overflow:
        reason = "output_limit"
    elif outcome.setup_error or not outcome.started:
        stderr += f"\n[stillweb: the sandbox failed to start: {outcome.setup_error or 'see above'}]\n"
        reason, returncode = "sandbox_error", None
    elif returncode == 0:
        reason = "ok"
    elif returncode == -SIGXCPU:
        stderr += f"\n[stillweb: stopped at the {config.cpu_time_s} s CPU-time limit]\n"
        reason = "cpu_time"
    elif returncode is not None and returncode < 0:
        reason = "killed"
    elif stderr.rstrip().rsplit("\n", 1)[-1].startswith("MemoryError"):
        reason = "memory"
    else:
        reason = "error"
    return ExecutionResult(stdout, stderr, returncode, reason, outcome.stdout_overflow, outcome.stderr_overflow)


def _signal_aware(returncode: int | None, config: PythonSandboxConfig) -> int | None:
    """bubblewrap reports a command killed by signal N as exit 128 + N: make it -N like subprocess."""
    if returncode is not None and config.isolation != "none-unsafe" and 128 < returncode < 128 + 65:
        return 128 - returncode
    return returncode


def _decode(data: bytes, overflow: bool, limit: int) -> str:
    """UTF-8 text of a stream (invalid bytes replaced); a cut stream ends with a marker."""
    if not overflow:
        return data.decode("utf-8", "replace")
    import codecs

    text = codecs.getincrementaldecoder("utf-8")("replace").decode(data, final=False)  # drop a split character
    return text + f"\n[stillweb: output truncated at {limit} bytes; the program was stopped]\n"
