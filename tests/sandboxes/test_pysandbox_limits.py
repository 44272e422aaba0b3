"""The python sandbox: limits, hostile code, determinism, running without isolation, bad config.

Markers (unique strings on a process's command line) let a test look for sandbox
processes left on the host by scanning ``/proc`` (``support.pysandbox.processes_with``).
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stillweb.sandboxes.python import sandbox as pysandbox
from stillweb.sandboxes.python.bwrap import InterpreterFiles
from stillweb.sandboxes.python.sandbox import PythonSandboxConfig, isolation_available, run_python
from support.pysandbox import FAST, SHORT, needs_bwrap, processes_with, run


# -- limits ------------------------------------------------------------------------------


@needs_bwrap
def test_process_limit_is_enforced():
    result = run(
        """
        import os, time
        children = 0
        for _ in range(100):
            try:
                pid = os.fork()
            except OSError as error:
                print("fork refused", type(error).__name__)
                break
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            children += 1
        print(children)
        """,
        PythonSandboxConfig(timeout_s=20.0, max_processes=16),
    )
    first, count = result.stdout.splitlines()
    assert first == "fork refused BlockingIOError" and int(count) < 16


@needs_bwrap
def test_fork_bomb_is_contained_and_leaves_nothing(tmp_path):
    marker = f"stillweb-forkbomb-{tmp_path.name}"
    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    result = run(f"import os, sys\nos.execv(sys.executable, [sys.executable, '-c', {bomb!r}, {marker!r}])", SHORT)
    assert result.reason == "timeout" and result.exit_code is None
    assert processes_with(marker) == []


@needs_bwrap
def test_memory_bomb_is_a_memory_result():
    result = run("x = bytearray(10 ** 10)", PythonSandboxConfig(timeout_s=20.0, memory_mb=256))
    assert (result.reason, result.exit_code) == ("memory", 1)
    assert result.stderr.rstrip().endswith("MemoryError")


@needs_bwrap
def test_infinite_loop_times_out_and_kills_the_whole_tree(tmp_path):
    marker = f"stillweb-loop-{tmp_path.name}"
    result = run(
        f"""
        import subprocess, sys
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)", {marker!r}])
        print("started child")
        while True:
            pass
        """,
        SHORT,
    )
    assert (result.reason, result.exit_code) == ("timeout", None)
    assert result.stdout == "started child\n"  # printed before the limit: stdout is line-buffered
    assert "wall-clock limit" in result.stderr
    assert processes_with(marker) == []


@needs_bwrap
def test_closing_its_streams_does_not_escape_the_timeout():
    result = run("import os, time\nos.close(1)\nos.close(2)\ntime.sleep(1000)", SHORT)
    assert (result.reason, result.exit_code) == ("timeout", None)


@needs_bwrap
def test_cpu_time_limit():
    result = run("while True:\n    pass", PythonSandboxConfig(timeout_s=60.0, cpu_time_s=1))
    assert (result.reason, result.exit_code) == ("cpu_time", -24)


@needs_bwrap
def test_private_tmp_is_size_capped():
    code = "for i in range(8):\n    open(f'/tmp/part{i}', 'wb').write(b'x' * (1 << 20))"
    result = run(code, PythonSandboxConfig(timeout_s=20.0, tmpfs_mb=2))
    assert result.reason == "error" and "No space left on device" in result.stderr


@needs_bwrap
def test_a_sandbox_that_cannot_start_is_a_sandbox_error(monkeypatch):
    missing = "/nonexistent/stillweb/python3"
    monkeypatch.setattr(pysandbox, "interpreter_files", lambda: InterpreterFiles(missing, (missing,), ()))
    result = run_python("print(1)", FAST)
    assert (result.reason, result.exit_code, result.stdout) == ("sandbox_error", None, "")
    assert "bwrap" in result.stderr and "failed to start" in result.stderr


def test_a_command_that_cannot_be_spawned_is_a_sandbox_error(monkeypatch):
    monkeypatch.setattr(pysandbox, "isolation_available", lambda: (True, "pretend"))
    monkeypatch.setattr(pysandbox.shutil, "which", lambda name: "/nonexistent/stillweb/bwrap")
    result = run_python("print(1)", FAST)
    assert (result.reason, result.exit_code) == ("sandbox_error", None)
    assert "/nonexistent/stillweb/bwrap" in result.stderr


@needs_bwrap
def test_file_size_limit():
    result = run("open('/tmp/big', 'wb').write(b'x' * (3 << 20))", PythonSandboxConfig(timeout_s=20.0, max_file_mb=1))
    assert result.reason == "error" and "File too large" in result.stderr


@needs_bwrap
@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_100_mb_of_output_is_cut_quickly(stream):
    config = PythonSandboxConfig(timeout_s=20.0, max_output_bytes=1000)
    result = run(f"import sys\nsys.{stream}.write('é' * 50_000_000)", config)
    assert (result.reason, result.exit_code) == ("output_limit", None)
    text = getattr(result, stream)
    assert getattr(result, f"{stream}_truncated") and "output truncated at 1000 bytes" in text
    assert text.startswith("é" * 500) and len(text.encode()) < 1200


@needs_bwrap
def test_killing_the_parent_and_pid_1_changes_nothing_outside():
    result = run(
        """
        import os, signal
        for pid in (os.getppid(), 1, -1):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError as error:
                print(pid, type(error).__name__)
        print("still here")
        """
    )
    assert result.reason == "ok" and result.stdout.endswith("still here\n")


@needs_bwrap
def test_no_background_process_outlives_the_call(tmp_path):
    marker = f"stillweb-daemon-{tmp_path.name}"
    result = run(
        f"""
        import os, subprocess, sys
        sleeper = [sys.executable, "-c", "import time; time.sleep(1000)", {marker!r}]
        subprocess.Popen(sleeper, start_new_session=True)
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, sleeper)
            os._exit(0)
        print("spawned")
        """
    )
    assert (result.reason, result.stdout) == ("ok", "spawned\n")
    assert processes_with(marker) == []


# -- determinism -------------------------------------------------------------------------

DETERMINISM_PROBE = """
import datetime, os, random, tempfile, time, uuid
print(time.time(), time.time_ns(), random.random(), hash("a"), hash(("a", 1)))
print(datetime.datetime.now(), datetime.datetime.utcnow(), repr(datetime.date.today()), time.ctime())
print(uuid.uuid4(), os.urandom(4).hex(), random.Random().random(), random.SystemRandom().random())
print(os.path.basename(tempfile.mkdtemp()), sorted({"b", "a", "c"}), os.getpid())
"""


@needs_bwrap
def test_same_code_same_output_with_a_frozen_clock():
    first, second = run(DETERMINISM_PROBE), run(DETERMINISM_PROBE)
    assert first.reason == "ok" and first == second
    assert first.stdout.startswith("1704067200.0 1704067200000000000 0.8444218515250481 ")
    assert "2024-01-01 00:00:00 2024-01-01 00:00:00 datetime.date(2024, 1, 1) Mon Jan  1 00:00:00 2024" in first.stdout


@pytest.mark.slow
@needs_bwrap
def test_same_output_in_two_host_processes():
    script = (
        "import sys; from stillweb.sandboxes.python.sandbox import run_python\n"
        "sys.stdout.write(repr(run_python(sys.stdin.read())))\n"
    )
    outputs = [
        subprocess.run([sys.executable, "-c", script], input=DETERMINISM_PROBE, capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    ]
    assert outputs[0] == outputs[1] == repr(run(DETERMINISM_PROBE))


_NUMBERS = st.integers(-10**12, 10**12)
_STATEMENTS = st.one_of(
    st.builds(lambda a, op, b: f"print({a} {op} {b})", _NUMBERS, st.sampled_from(["+", "-", "*", "//", "%"]),
              _NUMBERS.filter(bool)),
    st.builds(lambda text: f"print({text!r}, len({text!r}))", st.text(max_size=12)),
    st.builds(lambda n, k: f"print(sorted(range({n}), key=lambda i: (i * {k}) % 7)[:5])", st.integers(0, 500), _NUMBERS),
    st.builds(lambda name: f"raise ValueError({name!r})", st.text(alphabet="abcxyz", max_size=6)),
)


def _expected(program: str) -> tuple[str, str]:
    """(stdout, reason) of ``program`` run here: it is built of the statements above only (arithmetic, prints, a
    raise), so running it on the host is safe."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            exec(program, {})  # noqa: S102 - generated from _STATEMENTS, not from input
        except ValueError:
            return out.getvalue(), "error"
    return out.getvalue(), "ok"


@needs_bwrap
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=st.lists(_STATEMENTS, min_size=1, max_size=5).map("\n".join), noise=st.text(max_size=40))
def test_any_text_gets_a_result(program, noise):
    """Every example runs a program (arithmetic, strings of any Unicode, a raise) whose stdout must be what Python
    prints on the host, then one of arbitrary text, which must still end as "ok" or "error"."""
    stdout, reason = _expected(program)
    result = run_python(program, FAST)
    assert (result.reason, result.stdout) == (reason, stdout), result.stderr
    if reason == "error":
        assert "ValueError" in result.stderr
    result = run_python(noise, FAST)
    assert result.reason in ("ok", "error") and isinstance(result.stdout, str)


# -- without isolation -------------------------------------------------------------------


def test_refuses_without_bubblewrap(monkeypatch):
    monkeypatch.setattr(pysandbox, "isolation_available", lambda: (False, "bubblewrap (bwrap) is not installed"))
    for isolation in ("auto", "bwrap"):
        result = run_python("print(1)", PythonSandboxConfig(isolation=isolation))
        assert (result.reason, result.exit_code, result.stdout) == ("refused", None, "")
        assert "apt-get install bubblewrap" in result.stderr and 'isolation="none-unsafe"' in result.stderr


def test_isolation_available_says_why_not(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    available, why = isolation_available.__wrapped__()
    assert not available and "not installed" in why


def test_none_unsafe_runs_with_limits_and_determinism():
    config = PythonSandboxConfig(timeout_s=20.0, isolation="none-unsafe", memory_mb=256)
    assert run_python("import time; print(time.time())", config).stdout == "1704067200.0\n"
    assert run_python("x = bytearray(10 ** 10)", config).reason == "memory"
    assert run_python("while True: pass", PythonSandboxConfig(timeout_s=1.0, isolation="none-unsafe")).reason == "timeout"


# -- developer input ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "field, value",
    [("timeout_s", 0), ("timeout_s", "10"), ("cpu_time_s", -1), ("memory_mb", 1.5), ("max_processes", True), ("isolation", "docker")],
)
def test_bad_config_names_the_value(field, value):
    with pytest.raises(ValueError, match=field):
        PythonSandboxConfig(**{field: value})


def test_non_string_code_is_a_developer_error():
    with pytest.raises(TypeError, match="bytes"):
        run_python(b"print(1)")  # type: ignore[arg-type]
