"""A policy endpoint that hangs during ``stillweb tasks profile`` (it takes the connection and never answers):
each episode fails with the reason (a timeout, the attempts named), the command ends normally, and the same
command resumes once the endpoint answers, replaying only the failed episodes."""

from __future__ import annotations

import shutil
import socket

import pytest

from stillweb.cli.main import main
from stillweb.corpora.tasks.store.files import read_tasks
from stillweb.envs.profiles import episodes_path, read_episodes, read_profile
from support.chat_stub import chat_stub_app, serve
from support.network import free_port

pytestmark = pytest.mark.slow


def test_a_hanging_endpoint_fails_the_episodes_with_the_reason_and_the_run_resumes(tasks_snapshot, tmp_path, capsys):
    snap = tmp_path / "snap"
    shutil.copytree(tasks_snapshot, snap)
    port = free_port()
    command = ["tasks", "profile", str(snap), "hard", "--policy", f"http://127.0.0.1:{port}/v1", "--model", "m",
               "--policy-name", "hung", "--timeout", "0.5", "--retries", "1", "-k", "1", "--split", "dev"]
    with socket.create_server(("127.0.0.1", port)):  # listening, never accepting: connections hang
        assert main(command) == 0
    dev = read_tasks(snap, "hard", "dev")
    _header, records = read_episodes(episodes_path(snap, "hard", "hung"))
    assert len(records) == len(dev) > 0
    assert all("timeout" in record["failure"] and "2 attempts" in record["failure"] for record in records.values())
    assert f"{len(dev)} failed episodes" in capsys.readouterr().out
    assert all(row["failed_episodes"] == 1 and row["pass_at_1"] is None for row in read_profile(snap, "hard", "hung"))
    with serve(chat_stub_app(dev, mode="reference"), port):  # the endpoint answers again
        assert main(command) == 0
    assert all(row["pass_at_1"] == 1.0 and row["failed_episodes"] == 0 for row in read_profile(snap, "hard", "hung"))
    lines = episodes_path(snap, "hard", "hung").read_text().splitlines()
    assert len(lines) == 1 + 2 * len(dev)  # the header, the failed episodes, then each replayed once
