"""The viewer over a recorded Apps-v0 episode (issue 36 item 6): each step shows its calls, results and the
rows it wrote (the state diff: table, id, before, after)."""

from __future__ import annotations

import json

import gymnasium as gym
from fastapi.testclient import TestClient

import stillweb.envs  # noqa: F401 - registers the environments
from stillweb.envs import RecordEpisodes, ReferenceAgent, run_episode
from stillweb.envs.apps.env import AppsEnv
from stillweb.server.viewer import ViewerConfig, make_viewer_app


def test_replay_of_an_app_episode_shows_the_rows_each_step_wrote(apps_snapshot, tmp_path):
    task = next(task for task in AppsEnv(apps_snapshot, "core").tasks if task.extra["category"] == "single_write")
    path = tmp_path / "apps.jsonl"
    env = RecordEpisodes(gym.make("stillweb/Apps-v0", snapshot=str(apps_snapshot), tasks="core"), path)
    summary = run_episode(env, lambda task: ReferenceAgent(task), seed=0, options={"task_id": task.task_id})
    env.close()
    assert summary["outcome"] == 1.0
    steps = [json.loads(line) for line in path.read_text().splitlines() if json.loads(line).get("type") == "step"]
    writes = [number for number, step in enumerate(steps, 1) if step["info"].get("state_diff")]
    quiet = [number for number, step in enumerate(steps, 1) if not step["info"].get("state_diff")]
    assert writes and quiet  # the write and the answer
    client = TestClient(make_viewer_app(ViewerConfig(apps_snapshot, episodes=(path,))))
    write = client.get("/view/episodes/apps.jsonl", params={"step": writes[0]}).text
    change = steps[writes[0] - 1]["info"]["state_diff"][0]
    assert "state diff" in write and f"<b>{task.extra['program'][0][-1]['name']}</b>" in write
    shown = write.split("state diff", 1)[1]
    assert change["table"] in shown and json.dumps(change["after"])[:20].replace('"', "&#34;") in shown
    assert "state diff" not in client.get("/view/episodes/apps.jsonl", params={"step": quiet[-1]}).text
