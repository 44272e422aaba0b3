"""Every command that prints ends as conventional tools do when its reader leaves (``| head -1``: quietly,
status 141) and at Ctrl-C (one line, status 130), never with a traceback (cli/main.py handles both once).

The closed pipe is made deterministic: stdout is a pipe whose read end is closed before the command starts.
Ctrl-C is SIGINT to the command's process group (as a terminal sends it) at the command's first write.
"""

from __future__ import annotations

import itertools
import signal
import subprocess
import sys

import pytest

from support.chat_stub import chat_stub_app, serve
from support.cli_runs import (EXTRA_COMMANDS, PRINTING_COMMANDS, SERVERS, command_words, fill, leaf_commands,
                              make_workspace, run_interrupted, run_into_closed_pipe)
from support.network import free_port, wait_until_answers


def _params():
    """The printing commands as parameters (commands of an extra marked ``extra``)."""
    return [pytest.param(argv, id=name, marks=[pytest.mark.extra] if name in EXTRA_COMMANDS else [])
            for name, argv in PRINTING_COMMANDS]


_RUN_NUMBER = itertools.count()


@pytest.fixture(scope="module")
def workspace(tasks_snapshot, tmp_path_factory):
    """The inputs of every printing command (a snapshot copy with a profile and app tasks, a recording, stores,
    corpus files) and a chat endpoint (for ``tasks polish``) while the module runs."""
    from stillweb.corpora.tasks.store.files import read_tasks

    with serve(chat_stub_app(read_tasks(tasks_snapshot, "hard", "train")), free_port()) as url:
        yield make_workspace(tmp_path_factory.mktemp("cli-workspace"), tasks_snapshot, url)


def _needs(argv):
    name = next(name for name, known in PRINTING_COMMANDS if known == argv)
    if name in EXTRA_COMMANDS:
        pytest.importorskip(EXTRA_COMMANDS[name])


def _argv(argv, workspace, tmp_path):
    return fill(argv, workspace, tmp_path / f"out{next(_RUN_NUMBER)}")


def assert_no_traceback(stderr: str) -> None:
    for sign in ("Traceback", "BrokenPipeError", "Exception ignored", "KeyboardInterrupt"):
        assert sign not in stderr, stderr[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("argv", _params())
def test_a_closed_pipe_ends_the_command_quietly_with_141(argv, workspace, tmp_path):
    _needs(argv)
    result = run_into_closed_pipe(_argv(argv, workspace, tmp_path))
    assert_no_traceback(result.stderr)
    expected = 0 if "--help" in argv else 141  # argparse drops the help it cannot write and exits 0 itself
    assert result.returncode == expected, result.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("argv", _params())
def test_ctrl_c_at_the_first_line_ends_the_command_with_130(argv, workspace, tmp_path):
    _needs(argv)
    result = run_interrupted(_argv(argv, workspace, tmp_path))
    assert_no_traceback(result.stderr)
    assert result.returncode == 130, result.stderr[-3000:]
    who = "stillweb" if "--help" in argv else f"stillweb {argv[0]}"  # interrupted while parsing: no command yet
    assert result.stderr.rstrip().splitlines()[-1] == f"{who}: interrupted", result.stderr[-3000:]


def test_the_issue_example_tasks_show_into_head(workspace):
    """``stillweb tasks show SNAP hard | head -1`` through a real shell: one line, no traceback."""
    command = f"{sys.executable} -m stillweb.cli.main tasks show {workspace['snap']} hard | head -1; echo \"${{PIPESTATUS[0]}}\""
    result = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120)
    assert_no_traceback(result.stderr)
    first, status = result.stdout.splitlines()
    assert first.startswith(("train ", "dev ", "test ")) and status in ("0", "141")


def test_ctrl_c_mid_build_with_workers_stops_them_and_keeps_the_snapshot_there(workspace, tmp_path):
    """Interrupted at its first progress line (the worker pool running), a build of 2 workers exits 130 with no
    traceback from the parent or a worker, leaves the snapshot already at --out as it was, and no temp dir."""
    from stillweb.corpora.snapshot.manifest import verify_snapshot

    out = tmp_path / "snap"
    subprocess.run([sys.executable, "-m", "stillweb.cli.main", "build", "synthetic", "--articles", "40", "--seed", "0",
                    "--out", str(out)], check=True, capture_output=True)
    before = (out / "manifest.json").read_bytes()
    result = run_interrupted(["build", "synthetic", "--articles", "3000", "--seed", "1", "--workers", "2",
                              "--out", str(out)], stream="stderr")
    assert_no_traceback(result.stderr)
    assert result.returncode == 130 and result.stderr.rstrip().endswith("stillweb build: interrupted"), result.stderr
    assert (out / "manifest.json").read_bytes() == before and verify_snapshot(out) == []
    assert sorted(path.name for path in tmp_path.iterdir()) == ["snap"]


def test_every_command_is_tested_here():
    """A new command joins PRINTING_COMMANDS (or SERVERS): this list is the test's, not a guess."""
    covered = {command_words(argv) for _name, argv in PRINTING_COMMANDS} | set(SERVERS)
    assert sorted(set(leaf_commands()) - covered) == []


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(SERVERS))
def test_ctrl_c_stops_a_server_cleanly(command, workspace, tmp_path):
    """A server's Ctrl-C is its normal stop: it says so and exits 0 (as ``python -m http.server`` does)."""
    port = free_port()
    argv, ready = SERVERS[command]
    process = subprocess.Popen([sys.executable, "-m", "stillweb.cli.main",
                                *fill(argv, {**workspace, "port": str(port)}, tmp_path / "out")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_until_answers(f"http://127.0.0.1:{port}/{ready}")
    finally:
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    assert_no_traceback(stderr)
    assert process.returncode == 0, stderr
