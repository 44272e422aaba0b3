"""``tasks show`` (listing, one task, bad ids; identical bytes in two processes), ``serve`` saying what it
serves, where, and when it stops, and the multi-hop example of ``eval --help`` run as written."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from stillweb.cli.eval import EXAMPLES as EVAL_EXAMPLES
from stillweb.corpora.tasks.store.files import read_tasks
from support.network import free_port, wait_until_answers

ROOT = Path(__file__).resolve().parents[2]


def stillweb(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stillweb.cli.main", *args], capture_output=True, text=True, cwd=cwd)


def test_tasks_show_lists_and_shows_one_task_identically_in_two_processes(tasks_snapshot):
    listing = stillweb("tasks", "show", str(tasks_snapshot), "hard")
    tasks = [task for split in ("train", "dev", "test") for task in read_tasks(tasks_snapshot, "hard", split)]
    assert listing.returncode == 0 and [line.split()[1] for line in listing.stdout.splitlines()] == [t.task_id for t in tasks]
    task = tasks[0]
    first, second = (stillweb("tasks", "show", str(tasks_snapshot), "hard", task.task_id) for _ in range(2))
    assert first.stdout == second.stdout and first.returncode == 0
    assert f"question:  {task.question}" in first.stdout and f"answer:    {task.answer}" in first.stdout
    assert "reference steps:" in first.stdout and first.stdout.count(" --") >= len(task.evidence)


def test_tasks_show_bad_input_is_one_line_with_the_fix(tasks_snapshot):
    unknown = stillweb("tasks", "show", str(tasks_snapshot), "hard", "sw-nope")
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1
    assert f"list them with: stillweb tasks show {tasks_snapshot} hard" in unknown.stderr
    missing = stillweb("tasks", "show", str(tasks_snapshot), "nosuchset")
    assert missing.returncode == 2 and "sets: ['hard']" in missing.stderr and "stillweb tasks generate" in missing.stderr


def test_serve_prints_what_it_serves_where_and_when_it_stops(tasks_snapshot, tmp_path):
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        process = subprocess.Popen([sys.executable, "-m", "stillweb.cli.main", "serve", str(tasks_snapshot), "--port", str(port)],
                                   stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_until_answers(f"http://127.0.0.1:{port}/health")
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=60)
    text = log.read_text()
    assert f"listening on http://127.0.0.1:{port}/: snapshot {tasks_snapshot.resolve()}, task sets hard, envs " in text
    assert "stillweb/WikiQA-v0" in text and f"stopped serving on http://127.0.0.1:{port}" in text
    bad = stillweb("serve", str(tmp_path / "missing"))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


@pytest.mark.extra
@pytest.mark.shared_data
def test_eval_help_multihop_example_runs_as_written(shared_data, tmp_path):
    pytest.importorskip("ir_measures")
    pytest.importorskip("bm25s")
    example = re.search(r"  (python scripts/multihop_passages\.py .*?--baseline bm25s)", EVAL_EXAMPLES, re.S).group(1)
    command = example.replace("\\\n", " ").replace("/tmp/mh", str(tmp_path / "mh"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "stillweb").write_text(f'#!/usr/bin/env bash\nexec "{sys.executable}" -m stillweb.cli.main "$@"\n')
    (bin_dir / "python").write_text(f'#!/usr/bin/env bash\nexec "{sys.executable}" "$@"\n')
    for path in bin_dir.iterdir():
        path.chmod(0o755)
    shared = tmp_path / "shared"
    shared.symlink_to(shared_data.parent)  # the example names ../shared/data, relative to the checkout
    workdir = tmp_path / "checkout"
    workdir.mkdir()
    (workdir / "scripts").symlink_to(ROOT / "scripts")
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=workdir, capture_output=True, text=True,
                            env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "R@100" in result.stdout and "nDCG@10" in result.stdout
