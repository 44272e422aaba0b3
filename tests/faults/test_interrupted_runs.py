"""Ctrl-C during long work with worker processes (SIGINT to the whole process group, as a terminal sends it):
task generation and a difficulty profile stop with status 130 and one line, no worker traceback, nothing
half-written; the profile resumes to the same bytes as an uninterrupted run."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from stillweb.envs.profiles import episodes_path, profile_path
from support.cli_runs import run_interrupted
from support.faults import tree

pytestmark = pytest.mark.slow

STILLWEB = [sys.executable, "-m", "stillweb.cli.main"]


def test_ctrl_c_mid_generation_with_workers_leaves_no_partial_set(small_snapshot, tmp_path):
    snap = tmp_path / "snap"
    shutil.copytree(small_snapshot, snap)
    before = tree(snap)
    result = run_interrupted(["tasks", "generate", str(snap), "--name", "g", "--count", "40", "--workers", "2",
                              "--allow-partial"], stream="stderr")  # at its first progress line
    assert "Traceback" not in result.stderr and "KeyboardInterrupt" not in result.stderr, result.stderr[-3000:]
    assert result.returncode == 130 and result.stderr.rstrip().endswith("stillweb tasks: interrupted")
    assert tree(snap) == before


def test_ctrl_c_mid_profile_with_workers_resumes_to_the_same_profile(tasks_snapshot, tmp_path):
    snap, clean = tmp_path / "snap", tmp_path / "clean"
    shutil.copytree(tasks_snapshot, snap)
    shutil.copytree(tasks_snapshot, clean)
    command = ["tasks", "profile", "hard", "--agent", "reference", "-k", "4", "--workers", "2"]
    subprocess.run([*STILLWEB, command[0], command[1], str(clean), *command[2:]], check=True, capture_output=True)
    episodes = episodes_path(snap, "hard", "reference")
    process = subprocess.Popen([*STILLWEB, command[0], command[1], str(snap), *command[2:]], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    for _ in range(1200):  # until some episodes are written
        if process.poll() is not None or (episodes.exists() and episodes.read_text().count("\n") >= 3):
            break
        time.sleep(0.05)
    assert process.poll() is None, "the profile ended before it could be interrupted"
    os.killpg(process.pid, signal.SIGINT)
    _stdout, stderr = process.communicate(timeout=120)
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr[-3000:]
    assert process.returncode == 130 and stderr.rstrip().endswith("stillweb tasks: interrupted")
    assert episodes.read_text().endswith("\n") and not profile_path(snap, "hard", "reference").exists()
    subprocess.run([*STILLWEB, command[0], command[1], str(snap), *command[2:]], check=True, capture_output=True)
    assert profile_path(snap, "hard", "reference").read_bytes() == profile_path(clean, "hard", "reference").read_bytes()
