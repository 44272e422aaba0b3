"""The viewer's whole-run views (FastAPI TestClient): all steps of an episode on one page
with its reward and flag strip, the compare page's first difference, numbers rounded for
reading, and formalization graphs whose relation labels never overlap."""

from __future__ import annotations

import html
import json
import re

import gymnasium as gym
import pytest
from fastapi.testclient import TestClient

from stillweb.corpora.tasks.store import read_tasks
from stillweb.envs import RecordEpisodes
from stillweb.envs.agents import write_call
from stillweb.envs.solvability import reference_budget
from stillweb.server.viewer import ViewerConfig, make_viewer_app
from stillweb.server.viewer.pages import num, short_number
from support.viewer_data import record_reference_episode, viewer_snapshot


def record_actions(snapshot, task, path, actions) -> list[dict]:
    """Record ``actions`` played on ``task`` (with the reference agent's limits); the recorded lines."""
    budget = reference_budget(task)
    env = RecordEpisodes(gym.make("stillweb/WikiQA-v0", snapshot=str(snapshot), tasks="viewer", split=task["split"],
                                  max_turns=budget, max_tool_calls=budget), path)
    try:
        env.reset(seed=0, options={"task_id": task["task_id"]})
        for action in actions:
            *_, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                break
    finally:
        env.close()
    return lines_of(path)


def lines_of(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def runs(small_snapshot, tmp_path_factory):
    """(client, snapshot, task, episodes dir, file names): the reference episode, the same actions
    with the one at step 2 changed, and an exact re-recording of the reference."""
    snapshot = viewer_snapshot(small_snapshot, tmp_path_factory.mktemp("trajectories"))
    task = read_tasks(snapshot, "viewer", "train")[0].to_row()
    episodes = tmp_path_factory.mktemp("runs")
    reference = record_reference_episode(snapshot, "viewer", task, episodes / "reference.jsonl")
    actions = [line["action"] for line in lines_of(reference) if line["type"] == "step"]
    changed = [*actions[:1], "I will just think out loud here, no tool call.", *actions[2:]]
    record_actions(snapshot, task, episodes / "changed.jsonl", changed)
    record_actions(snapshot, task, episodes / "again.jsonl", actions)
    client = TestClient(make_viewer_app(ViewerConfig(snapshot, tasks="viewer", episodes=(episodes,))))
    return client, snapshot, task, episodes


def test_numbers_are_rounded_for_reading_with_the_full_value_on_hover():
    assert str(num(0.9509900498999999)) == '<span class="num" title="0.9509900498999999">0.951</span>'
    assert [short_number(value) for value in (1.0, 3, -0.0, 12345.678, 1e-7, True, None)] == ["1", "3", "0", "12346", "1e-07", "true", "null"]
    assert short_number({"gamma_credits": [0.323533544973709, 1.0]}) == '{"gamma_credits": [0.324, 1]}'
    assert str(num("<b>")) == "&lt;b&gt;"


def test_reward_parts_show_rounded_and_the_raw_info_keeps_them_whole(runs):
    client, _, _, episodes = runs
    last = lines_of(episodes / "reference.jsonl")[-1]
    credits = last["info"]["reward_parts"]["gamma_credits"]
    assert any(len(repr(credit)) > 10 for credit in credits)  # long floats to round
    page = client.get(f"/view/episodes/{episodes.name}/reference.jsonl", params={"step": 999}).text
    parts = page.split('<table class="list parts">')[1].split("</table>")[0]
    shown = re.search(r"<th>gamma_credits</th><td><span class=\"num\" title=\"([^\"]*)\">([^<]*)</span>", parts)
    assert json.loads(html.unescape(shown.group(1))) == credits
    assert shown.group(2) == "[" + ", ".join(f"{credit:.3g}" if not float(credit).is_integer() else str(int(credit)) for credit in credits) + "]"
    visible = re.sub(r'title="[^"]*"', "", parts)
    assert repr(credits[0]) in parts and repr(credits[0]) not in visible  # the long digits only on hover
    raw = page.split("<summary>all info</summary>")[1].split("</pre>")[0]
    assert json.loads(html.unescape(raw.split("<pre>")[1]))["reward_parts"]["gamma_credits"] == credits
