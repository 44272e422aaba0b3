"""A full disk during a build, a task generation and a recording (RLIMIT_FSIZE in a child process: its writes
fail with EFBIG past the limit, as with ENOSPC on a full disk): one error naming the path and what was kept,
no traceback, nothing half-written left in place."""

from __future__ import annotations

import json
import shutil
import textwrap

import pytest

from stillweb.corpora.snapshot.manifest import verify_snapshot
from stillweb.corpora.tasks.store.files import read_tasks
from stillweb.envs.runs.run_summary import summarize_recording
from support.faults import run_on_a_full_disk, stillweb_on_a_full_disk, tree

pytestmark = pytest.mark.slow


def assert_one_error_line(result, command: str, path) -> str:
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-3000:]
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith(f"stillweb {command}: error: could not write ") and f" {path}: " in line, line
    assert "File too large" in line and "Free space on its disk" in line
    return line


@pytest.mark.parametrize("limit", [100_000, 1_000_000])
def test_a_build_on_a_full_disk_names_out_and_keeps_the_snapshot_there(small_snapshot, tmp_path, limit):
    """A row corpus (written by build_snapshot itself: docs, graph, index); the snapshot already at --out stays."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "title": f"Doc {i}", "text": f"word{i} " * 200}) + "\n"
                              for i in range(2000)), encoding="utf-8")
    out = tmp_path / "out" / "snap"
    shutil.copytree(small_snapshot, out)
    before = tree(out.parent)
    result = stillweb_on_a_full_disk(["build", "corpus", str(corpus), "--out", str(out), "--workers", "1", "--quiet"], limit)
    line = assert_one_error_line(result, "build", out)
    assert f"the snapshot already at {out} is unchanged" in line
    assert tree(out.parent) == before and verify_snapshot(out) == []


def test_a_synthetic_build_on_a_full_disk_leaves_nothing(tmp_path):
    """The synthetic world's intermediate dump fills the disk first: removed, and no snapshot is created."""
    out = tmp_path / "snap"
    result = stillweb_on_a_full_disk(["build", "synthetic", "--articles", "300", "--seed", "0", "--out", str(out)], 200_000)
    assert f"nothing was created at {out}" in assert_one_error_line(result, "build", out)
    assert tree(tmp_path) == []


def test_task_generation_on_a_full_disk_names_the_set_and_leaves_no_partial_set(tasks_snapshot, tmp_path):
    snap = tmp_path / "snap"
    shutil.copytree(tasks_snapshot, snap)
    before = tree(snap)
    result = stillweb_on_a_full_disk(["tasks", "generate", str(snap), "--name", "more", "--count", "4", "--no-progress",
                                      "--allow-partial"], 4_000)
    assert f"nothing was created at {snap / 'tasks' / 'more'}" in assert_one_error_line(result, "tasks", snap / "tasks" / "more")
    assert tree(snap) == before
    # over an existing set: the set that was there stays whole
    result = stillweb_on_a_full_disk(["tasks", "generate", str(snap), "--name", "hard", "--count", "4", "--no-progress",
                                      "--allow-partial"], 4_000)
    assert "is unchanged" in assert_one_error_line(result, "tasks", snap / "tasks" / "hard")
    assert tree(snap) == before and read_tasks(snap, "hard", "train") == read_tasks(tasks_snapshot, "hard", "train")


def test_app_task_generation_on_a_full_disk_leaves_no_partial_set(small_snapshot, tmp_path):
    snap = tmp_path / "snap"
    shutil.copytree(small_snapshot, snap)
    result = stillweb_on_a_full_disk(["apps", "generate", str(snap), "--name", "core", "--count", "18", "--no-verify"], 2_000)
    assert "nothing was created at" in assert_one_error_line(result, "apps", snap / "apps" / "core")
    assert not (snap / "apps" / "core").exists() and [path.name for path in (snap / "apps").glob(".core*")] == []


RECORD_UNTIL_FULL = """
import gymnasium as gym, sys
import stillweb.envs
from stillweb.corpora.errors import StorageError
from stillweb.envs import RecordEpisodes, ReferenceAgent, run_episode

env = RecordEpisodes(gym.make("stillweb/WikiQA-v0", snapshot={snapshot!r}, tasks="hard"), {path!r})
try:
    for seed in range(1000):
        run_episode(env, lambda task: ReferenceAgent(task), seed=seed)
except StorageError as error:
    print(error)
    sys.exit(3)
"""


def test_a_recording_on_a_full_disk_keeps_its_whole_lines_and_names_the_file(tasks_snapshot, tmp_path):
    path = tmp_path / "run.jsonl"
    script = textwrap.dedent(RECORD_UNTIL_FULL.format(snapshot=str(tasks_snapshot), path=str(path)))
    result = run_on_a_full_disk(["-c", script], 200_000)
    assert result.returncode == 3, result.stderr[-3000:]
    message = result.stdout.strip()
    assert message.startswith(f"could not write the recording {path}: [Errno 27] File too large; the recording keeps "
                              "its complete lines")
    data = path.read_bytes()
    assert 0 < len(data) <= 200_000 and data.endswith(b"\n")
    assert all(json.loads(line) for line in data.splitlines())  # no line cut short
    summary = summarize_recording(path)
    assert summary.problem is None and len(summary.episodes) >= 1
