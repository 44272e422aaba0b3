"""A recording stores the snapshot's resolved path and fingerprint; ``replay`` finds the snapshot by
either from any directory, says which it used, and names the fix when it cannot."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import gymnasium as gym
import pytest

import stillweb.envs  # noqa: F401 - registers the environments
from stillweb.envs import RecordEpisodes, ReferenceAgent, replay
from stillweb.corpora.canonical import canonical_json


@pytest.fixture()
def recording(tasks_snapshot, tmp_path, monkeypatch):
    """A recording made with a relative snapshot path (from the snapshot's parent folder)."""
    monkeypatch.chdir(tasks_snapshot.parent)
    path = tmp_path / "episodes.jsonl"
    env = RecordEpisodes(gym.make("stillweb/WikiQA-v0", snapshot=tasks_snapshot.name, tasks="hard"), path)
    observation, info = env.reset(seed=0)
    agent, done = ReferenceAgent(env.unwrapped.tasks.by_id(info["task_id"])), False
    while not done:
        observation, _, terminated, truncated, _ = env.step(agent.act(observation))
        done = terminated or truncated
    env.close()
    return path


def test_header_stores_resolved_path_and_fingerprint(recording, tasks_snapshot):
    header = json.loads(recording.read_text(encoding="utf-8").splitlines()[0])
    assert header["kwargs"]["snapshot"] == tasks_snapshot.name
    assert header["snapshot_path"] == str(tasks_snapshot.resolve())
    assert header["snapshot_fingerprint"] == json.loads((tasks_snapshot / "manifest.json").read_text())["fingerprint"]


def test_replay_from_another_directory_uses_the_resolved_path(recording, tasks_snapshot, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = replay(recording)
    assert result.ok, result.describe()
    assert result.describe().startswith(f"on snapshot {tasks_snapshot.resolve()} (found by its recorded resolved path)")


@pytest.mark.slow
def test_replay_of_a_moved_snapshot_finds_it_by_fingerprint(recording, tasks_snapshot, tmp_path, monkeypatch):
    header, *rest = recording.read_text(encoding="utf-8").splitlines()
    moved_header = {**json.loads(header), "snapshot_path": str(tmp_path / "gone"), "kwargs": {
        **json.loads(header)["kwargs"], "snapshot": "gone"}}
    moved = tmp_path / "moved.jsonl"
    moved.write_text("\n".join([canonical_json(moved_header), *rest]) + "\n", encoding="utf-8")
    home = tmp_path / "home"
    shutil.copytree(tasks_snapshot, home / "snapshots" / "copy")
    monkeypatch.setenv("STILLWEB_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    result = replay(moved)
    assert result.ok and "found by its fingerprint" in result.describe() and str(home / "snapshots" / "copy") in result.describe()
    monkeypatch.setenv("STILLWEB_HOME", str(tmp_path / "empty"))
    with pytest.raises(FileNotFoundError, match="--snapshot DIR"):
        replay(moved)
    cli = subprocess.run([sys.executable, "-m", "stillweb.cli.main", "replay", str(moved)], capture_output=True, text=True,
                         cwd=tmp_path, env={**__import__("os").environ, "STILLWEB_HOME": str(tmp_path / "empty")})
    assert cli.returncode == 2 and "Traceback" not in cli.stderr and len(cli.stderr.strip().splitlines()) == 1
