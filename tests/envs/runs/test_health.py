"""Run health: a collapse-shaped run warns, a healthy one does not; live wrappers and `stillweb health` agree."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest

import stillweb.envs  # noqa: F401 - registers the environments
from stillweb.cli.main import main
from stillweb.envs import RecordEpisodes, ReferenceAgent
from stillweb.envs.agents.scripted import write_call
from stillweb.envs.runs.health import HealthConfig, HealthMonitor, RunHealth, VectorHealthMonitor
from support.health_runs import recorded_episode_stats

CONFIG = {"window": 4, "baseline": 4}
COLLAPSED = '{"action": "searchsearchAAPL stockAAAAA"'


def collapsed_actions(episode: int) -> list[str]:
    """What a collapsing policy writes: broken calls that grow episode after episode, no tool use."""
    return [COLLAPSED + "A" * (200 * episode + 100 * turn) for turn in range(3)]


def play(env, episodes: int, collapse_from: int | None, tasks: list[dict]) -> list[dict]:
    """Reference-agent episodes on the chain task, then (from ``collapse_from``) collapsed ones; the last infos."""
    ends = []
    for episode in range(episodes):
        observation, _ = env.reset(seed=episode, options={"task_id": "chain"})
        collapsed = collapse_from is not None and episode >= collapse_from
        scripted = iter(collapsed_actions(episode)) if collapsed else None
        agent = ReferenceAgent(tasks[0])
        done = False
        while not done:
            action = next(scripted) if scripted else agent.act(observation)
            observation, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        ends.append(info)
    return ends


def record(path, tiny_world, world_tasks, collapse_from):
    env = RecordEpisodes(gym.make("stillweb/WikiQA-v0", snapshot=str(tiny_world), tasks=world_tasks), path)
    try:
        play(env, 12, collapse_from, world_tasks)
    finally:
        env.close()
    return path


@pytest.fixture(scope="module")
def recordings(tiny_world, world_tasks, tmp_path_factory):
    folder = tmp_path_factory.mktemp("health")
    return {
        "healthy": record(folder / "healthy.jsonl", tiny_world, world_tasks, None),
        "collapse": record(folder / "collapse.jsonl", tiny_world, world_tasks, 6),
    }


def codes(report) -> list[str]:
    """The warning codes of a report (a HealthReport or its dict)."""
    if isinstance(report, dict):
        return [warning["code"] for warning in report["warnings"]]
    return [warning.code for warning in report.warnings]


def test_a_collapse_shaped_recording_warns_and_a_healthy_one_does_not(recordings):
    reports = {}
    for name, path in recordings.items():
        stats, missing = recorded_episode_stats(path)
        assert len(stats) == 12 and missing == 0
        health = RunHealth(CONFIG)
        for episode in stats:
            health.add(episode)
        reports[name] = health.report()
    assert codes(reports["healthy"]) == []
    assert codes(reports["collapse"]) == ["degenerate_actions", "format_errors_up", "tool_use_down", "length_up"]
    recent, baseline = reports["collapse"].recent, reports["collapse"].baseline
    assert recent["tool_calls_per_turn"] == 0.0 and baseline["format_errors_per_turn"] == 0.0


def test_the_cli_prints_the_same_warnings(recordings, capsys):
    assert main(["health", str(recordings["healthy"]), "--window", "4", "--baseline", "4", "--fail-on-warning"]) == 0
    assert "no warnings" in capsys.readouterr().out
    assert main(["health", str(recordings["collapse"]), "--window", "4", "--baseline", "4", "--fail-on-warning"]) == 1
    out = capsys.readouterr().out
    assert "WARNING tool_use_down" in out and "WARNING length_up" in out
    assert main(["health", str(recordings["healthy"]), str(recordings["collapse"]), "--window", "4", "--baseline", "4", "--json"]) == 0
    reports = json.loads(capsys.readouterr().out)
    assert reports["merged"]["episodes"] == 24 and codes(reports[str(recordings["healthy"])]) == []


def test_cli_bad_input_names_the_problem(recordings, tmp_path, capsys):
    not_a_recording = tmp_path / "x.jsonl"
    not_a_recording.write_text('{"type": "step"}\n')
    assert main(["health", str(not_a_recording)]) == 2
    error = capsys.readouterr().err
    assert "x.jsonl" in error and "not a recording header" in error
    assert main(["health", str(recordings["healthy"]), "--window", "0"]) == 2
    assert "window" in capsys.readouterr().err


def test_the_cli_output_is_identical_in_two_processes(recordings):
    command = [sys.executable, "-m", "stillweb.cli.main", "health", str(recordings["collapse"]), "--json", "--window", "4", "--baseline", "4"]
    outputs = [subprocess.run(command, capture_output=True, check=True).stdout for _ in range(2)]
    assert outputs[0] == outputs[1] and b"length_up" in outputs[0]


def test_the_live_wrapper_reports_in_info_and_logs_each_warning_once(tiny_world, world_tasks):
    env = HealthMonitor(gym.make("stillweb/WikiQA-v0", snapshot=str(tiny_world), tasks=world_tasks), CONFIG)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ends = play(env, 12, 6, world_tasks)
    assert all("health" in info for info in ends)
    assert [codes(info["health"]) for info in ends[:7]] == [[]] * 7  # until 4 episodes after the baseline
    assert codes(ends[-1]["health"]) == ["degenerate_actions", "format_errors_up", "tool_use_down", "length_up"]
    logged = [str(w.message) for w in caught if "stillweb health" in str(w.message)]
    assert len(logged) == 4 and len(set(logged)) == 4


@pytest.mark.filterwarnings("ignore:.*stillweb health")
def test_the_vector_wrapper_keeps_figures_per_env_and_merged(tiny_world, world_tasks):
    search = [write_call("tongyi", "search", {"query": query}) for query in ("orchard", "Ostra")]
    vector = gym.make_vec("stillweb/WikiQA-v0", num_envs=2, vectorization_mode="sync",
                          snapshot=str(tiny_world), tasks=world_tasks, max_format_errors=2)
    env = VectorHealthMonitor(vector, {"window": 3, "baseline": 3})
    env.reset(seed=0)
    turn, episode, reports = [0, 0], [0, 0], []
    for _ in range(60):
        actions = []
        for index in range(2):
            collapsed = episode[index] >= 3 + index  # env 1 collapses an episode later than env 0
            healthy = search + ["<answer>Ostra</answer>"]
            actions.append(COLLAPSED + "A" * 300 * episode[index] if collapsed else healthy[min(turn[index], 2)])
        _, _, terminated, truncated, infos = env.step(actions)
        for index in range(2):
            turn[index] += 1
            if terminated[index] or truncated[index]:
                turn[index], episode[index] = -1, episode[index] + 1  # the next step is the autoreset
        if "health" in infos:
            reports.append(infos["health"])
    env.close()
    final = reports[-1]
    assert final["merged"]["episodes"] == sum(report["episodes"] for report in final["per_env"])
    assert all(report["episodes"] >= 6 for report in final["per_env"])
    assert "tool_use_down" in codes(final["merged"]) and "format_errors_up" in codes(final["merged"])
    assert codes(reports[0]["merged"]) == []
    assert np.isclose(final["per_env"][0]["baseline"]["tool_calls_per_turn"], 2 / 3)


def test_bad_health_config_is_a_developer_error():
    with pytest.raises(ValueError, match="length_growth"):
        HealthConfig(length_growth=0.5)
    with pytest.raises(ValueError, match="nope"):
        HealthConfig.from_value({"nope": 1})
