"""The python sandbox: plain runs and what sandboxed code can see (isolation).

Every test that runs code in bubblewrap skips, saying why, where bubblewrap cannot
run (helpers in ``support/pysandbox.py``; limits and determinism in
``test_pysandbox_limits.py``).
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from stillweb.sandboxes.python.sandbox import MAX_CODE_BYTES, ExecutionResult, run_python
from support.pysandbox import FAST, PROJECT_ROOT, SHORT, needs_bwrap, run


# -- plain runs ------------------------------------------------------------------------


@needs_bwrap
def test_prints_unicode_and_exits_ok():
    result = run("print('héllo, 世界 🌍'); import sys; print('warn', file=sys.stderr)")
    assert result == ExecutionResult("héllo, 世界 🌍\n", "warn\n", 0, "ok", False, False)


@needs_bwrap
def test_syntax_error_is_a_clear_error():
    result = run("x = 1\ndef f(:\n    pass\n")
    assert (result.reason, result.exit_code, result.stdout) == ("error", 1, "")
    assert 'File "<code>", line 2' in result.stderr and "SyntaxError" in result.stderr


@needs_bwrap
def test_traceback_shows_the_users_lines_only():
    result = run("a = 1\n\nb = a / 0\n")
    assert result.reason == "error" and result.exit_code == 1
    assert 'File "<code>", line 3, in <module>\n    b = a / 0' in result.stderr
    assert "ZeroDivisionError" in result.stderr and "<string>" not in result.stderr


@needs_bwrap
def test_caught_tracebacks_and_datetime_types_behave_as_usual():
    result = run(
        """
        import traceback, datetime, pickle
        try:
            {}["missing"]
        except KeyError:
            traceback.print_exc()
        d = datetime.datetime(2020, 5, 17, 12, 30)
        print(repr(d), isinstance(d, datetime.date), isinstance(datetime.datetime.now(), datetime.datetime))
        print(pickle.loads(pickle.dumps(d)) == d, datetime.datetime.now() - d)
        """
    )
    assert result.reason == "ok"
    assert 'File "<code>", line 4, in <module>\n    {}["missing"]' in result.stderr
    assert result.stdout == "datetime.datetime(2020, 5, 17, 12, 30) True True\nTrue 1323 days, 11:30:00\n"


@needs_bwrap
def test_exit_codes_and_signals():
    assert (run("import sys; sys.exit(3)").reason, run("import sys; sys.exit(3)").exit_code) == ("error", 3)
    killed = run("import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert (killed.reason, killed.exit_code) == ("killed", -9)


@needs_bwrap
def test_runs_as_main_with_closed_stdin():
    result = run(
        """
        import sys
        print(__name__, sys.argv)
        try:
            input()
        except EOFError:
            print("no stdin")
        """
    )
    assert result.stdout == "__main__ ['<code>']\nno stdin\n"


@needs_bwrap
@pytest.mark.parametrize("code", ["x = '\ud800'", "x = 1\x00", "\ufeffprint(1)\n"])
def test_odd_code_strings_never_raise(code):
    assert run_python(code, FAST).reason in ("ok", "error")


def test_code_over_the_size_limit_is_refused_without_running():
    result = run_python("#" * (MAX_CODE_BYTES + 1))
    assert result.reason == "input_too_large" and str(MAX_CODE_BYTES) in result.stderr


# -- what the sandbox can see ----------------------------------------------------------


@needs_bwrap
def test_project_checkout_host_tmp_and_homes_are_invisible(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("the answer is 42")
    result = run(
        f"""
        import os
        for path in [{str(PROJECT_ROOT)!r}, "/work", {str(secret)!r}, {str(tmp_path)!r}, "/home", "/root/.ssh"]:
            print(path, os.path.exists(path))
        try:
            open({str(secret)!r}).read()
        except OSError as error:
            print("read", type(error).__name__)
        print(sorted(os.listdir("/")))
        print(os.listdir("/tmp"), os.getcwd(), os.path.expanduser("~"))
        print(os.listdir("/root"))
        """
    )
    lines = result.stdout.splitlines()
    assert lines[:6] == [f"{p} False" for p in (PROJECT_ROOT, "/work", secret, tmp_path, "/home", "/root/.ssh")]
    assert lines[6] == "read FileNotFoundError"
    assert "work" not in lines[7] and "home" not in lines[7]
    assert lines[8] == "[] /tmp /tmp"
    assert lines[9] in ("[]", "['.pyenv']")  # only the interpreter's own directories, if it lives there


@needs_bwrap
def test_site_packages_hidden_but_stdlib_importable():
    result = run(
        """
        import json, sqlite3, decimal, sysconfig, os
        site = sysconfig.get_paths()["purelib"]
        print(os.listdir(site) if os.path.isdir(site) else "absent")
        try:
            import pytest
        except ImportError:
            print("no pytest")
        """
    )
    assert result.stdout.splitlines() in (["[]", "no pytest"], ["absent", "no pytest"])


@needs_bwrap
def test_cannot_write_outside_its_tmp():
    result = run(
        """
        for path in ["/usr/x", "/etc/x", "/x", "/root/x", "/proc/x", "/dev/x", "/bin/x"]:
            try:
                open(path, "w").write("x")
                print("WROTE", path)
            except OSError:
                pass
        open("/tmp/mine.txt", "w").write("ok")
        print(open("/tmp/mine.txt").read())
        """
    )
    assert result.stdout == "ok\n"
    assert not Path("/x").exists() and not Path("/etc/x").exists()


@needs_bwrap
def test_environment_is_cleared(monkeypatch):
    monkeypatch.setenv("STILLWEB_SECRET_TOKEN", "hunter2")
    result = run("import os; print(sorted(os.environ))")
    assert "STILLWEB_SECRET_TOKEN" not in result.stdout and "hunter2" not in result.stdout
    expected = ["HOME", "LANG", "PATH", "PWD", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED", "PYTHONIOENCODING"]
    assert result.stdout == repr(sorted(expected + ["TMPDIR", "TZ"])) + "\n"


@needs_bwrap
def test_only_the_standard_streams_are_inherited():
    result = run("import os\nprint(sorted(int(fd) for fd in os.listdir('/proc/self/fd')))")
    assert result.stdout == "[0, 1, 2, 3]\n"  # 3: the directory listdir is reading


@needs_bwrap
def test_no_network_to_host_loopback_or_internet():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = listener.getsockname()[1]
        result = run(
            f"""
            import socket
            for address in [("127.0.0.1", {port}), ("1.1.1.1", 53)]:
                s = socket.socket()
                s.settimeout(5)
                try:
                    s.connect(address)
                    print("CONNECTED", address)
                except OSError as error:
                    print(type(error).__name__)
            try:
                socket.getaddrinfo("example.com", 80)
                print("RESOLVED")
            except OSError as error:
                print("no dns")
            """,
            SHORT,
        )
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert result.reason == "ok"
    assert result.stdout == "ConnectionRefusedError\nOSError\nno dns\n"


@needs_bwrap
def test_no_new_user_namespaces_but_threads_and_subprocesses_work():
    result = run(
        """
        import subprocess, threading
        print(subprocess.run(["unshare", "--user", "--map-root-user", "id"], capture_output=True).returncode)
        thread = threading.Thread(target=print, args=("thread",))
        thread.start()
        thread.join()
        print(subprocess.run(["echo", "child"], capture_output=True, text=True).stdout.strip())
        """
    )
    assert result.stdout == "1\nthread\nchild\n"
