"""The data of the run-health plots (stillweb.envs.runs.health_series): series recomputed from the
recorded lines, thresholds from the config, warning points where RunHealth newly warns,
policy versions, damaged and merged files."""

from __future__ import annotations

import json

import pytest

from stillweb.envs.core.degenerate import ACTION_FLAGS
from stillweb.envs.runs.health import HealthConfig, RunHealth
from stillweb.envs.runs.health_series import run_plots
from support.health_runs import recorded_episode_stats
from stillweb.envs.runs.run_summary import summarize_recording
from support.health_runs import collapsed, collapsing_run, healthy, write_run

CONFIG = HealthConfig(window=4, baseline=4)


def episode_ends(path) -> list[dict]:
    """The last step record of every finished episode, read straight from the file."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [record for record in records if record["type"] == "step" and (record["terminated"] or record["truncated"])]


def rolling(values: list[float], window: int) -> list[float]:
    return [sum(values[max(0, i - window + 1): i + 1]) / len(values[max(0, i - window + 1): i + 1]) for i in range(len(values))]


def figure(plots, key):
    return next(item for item in plots.figures if item.key == key)


def values(series) -> list[float]:
    return [value for _, value in series.points]


@pytest.fixture
def collapse(tmp_path):
    return collapsing_run(tmp_path / "collapse.jsonl")


def test_episode_series_equal_a_direct_computation_from_the_lines(tmp_path):
    episodes = [healthy(0), collapsed(1), healthy(2), collapsed(3, truncation_reason="action_too_long"), healthy(4, outcome=0.0),
                collapsed(5), healthy(6)]
    path = write_run(tmp_path / "mixed.jsonl", episodes)
    plots = run_plots([summarize_recording(path)], CONFIG)
    ends = episode_ends(path)
    assert plots.episodes == len(ends) == 7
    success = [float(end["terminated"] and end["info"]["outcome"] >= 1.0) for end in ends]
    assert values(figure(plots, "success").series[0]) == pytest.approx(rolling(success, 4))
    assert success == [1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    truncation = figure(plots, "truncation")
    assert [series.label for series in truncation.series] == ["action_too_long", "max_turns"]
    for series in truncation.series:
        shares = [float(end["truncated"] and end["info"]["truncation_reason"] == series.label) for end in ends]
        assert values(series) == pytest.approx(rolling(shares, 4))
    turns = [float(ep.stats_dict()["turns"]) for ep in episodes]
    assert values(figure(plots, "turns").series[0]) == pytest.approx(rolling(turns, 4))
    chars = [end["info"]["episode_stats"]["action_chars"] for end in ends]
    steps = [end["info"]["episode_stats"]["turns"] for end in ends]
    expected = [sum(chars[max(0, i - 3): i + 1]) / sum(steps[max(0, i - 3): i + 1]) for i in range(7)]
    assert values(figure(plots, "action_length").series[0]) == pytest.approx(expected)
    degenerate = figure(plots, "degenerate")
    assert [series.label for series in degenerate.series] == ["any flag", "repeated_chars", "repeated_ngrams"]
    for series in degenerate.series[1:]:
        flagged = [end["info"]["episode_stats"]["flags"][series.label] for end in ends]
        assert values(series) == pytest.approx([sum(flagged[max(0, i - 3): i + 1]) / sum(steps[max(0, i - 3): i + 1]) for i in range(7)])
    assert "never raised: non_text, near_miss_call, over_long" in degenerate.note


def test_thresholds_follow_the_config_and_the_baseline(collapse):
    config = HealthConfig(window=4, baseline=4, length_growth=3.0, max_degenerate_share=0.3, tool_use_drop=0.25,
                          format_error_rise=0.2, max_repeated_call_share=0.4)
    plots = run_plots([summarize_recording(collapse)], config)
    stats, _ = recorded_episode_stats(collapse)
    base_chars = sum(s["action_chars"] for s in stats[:4]) / sum(s["turns"] for s in stats[:4])
    base_tools = sum(s["tool_calls"] for s in stats[:4]) / sum(s["turns"] for s in stats[:4])
    lines = {line.code: line for item in plots.figures for line in item.thresholds}
    assert lines["length_up"].value == pytest.approx(3.0 * base_chars) and lines["length_up"].start == 4
    assert lines[None].value == pytest.approx(base_tools)  # the last reference drawn: tool use's baseline
    assert lines["tool_use_down"].value == pytest.approx(0.75 * base_tools)
    assert lines["degenerate_actions"].value == 0.3 and lines["repeated_calls"].value == 0.4
    assert lines["format_errors_up"].value == pytest.approx(0.2)  # a baseline of no format errors, plus the rise
    assert plots.baseline_end == 4
    assert set(code for item in plots.figures for code in [t.code for t in item.thresholds] if code) == {
        "length_up", "tool_use_down", "degenerate_actions", "repeated_calls", "format_errors_up"}


def test_warning_points_are_where_run_health_newly_warns(collapse):
    plots = run_plots([summarize_recording(collapse)], CONFIG)
    stats, _ = recorded_episode_stats(collapse)
    expected, before = [], set()
    for count in range(1, len(stats) + 1):  # an independent RunHealth over each prefix of the run
        health = RunHealth(CONFIG)
        for episode in stats[:count]:
            health.add(episode)
        report = health.report()
        expected += [(count, warning.code, warning.message) for warning in report.warnings if warning.code not in before]
        before = {warning.code for warning in report.warnings}
    shown = sorted((point.episode, point.code, point.message) for item in plots.figures for point in item.warnings)
    assert shown == sorted(expected)
    # the collapse starts at episode 9: the share check fires at once, the drift checks as the window fills
    assert {code: episode for episode, code, _ in shown} == {"degenerate_actions": 9, "format_errors_up": 9, "length_up": 9,
                                                            "tool_use_down": 10}
    assert figure(plots, "degenerate").warnings[0].value == pytest.approx(2 / 8)  # the figure's value at that episode
    assert [w.code for w in plots.report.warnings] == ["degenerate_actions", "format_errors_up", "tool_use_down", "length_up"]


def test_a_healthy_run_has_no_warning_points(tmp_path):
    path = write_run(tmp_path / "healthy.jsonl", [healthy(index) for index in range(12)])
    plots = run_plots([summarize_recording(path)], CONFIG)
    assert all(item.warnings == () for item in plots.figures) and plots.report.warnings == ()
    assert values(figure(plots, "success").series[0]) == [1.0] * 12 and figure(plots, "truncation").series == ()


def test_a_warning_raised_again_after_clearing_is_marked_again(tmp_path):
    episodes = [healthy(i) for i in range(4)] + [collapsed(4)] + [healthy(i) for i in range(5, 10)] + [collapsed(10)]
    plots = run_plots([summarize_recording(write_run(tmp_path / "twice.jsonl", episodes))], CONFIG)
    assert [point.episode for point in figure(plots, "degenerate").warnings] == [5, 11]


def test_policy_versions_and_episodes_without_stats(tmp_path):
    episodes = [healthy(0, policy_version=1), healthy(1, policy_version=1), healthy(2, policy_version=2, stats=False),
                healthy(3, policy_version=2), healthy(4, policy_version=5)]
    path = write_run(tmp_path / "versions.jsonl", episodes)
    plots = run_plots([summarize_recording(path)], CONFIG)
    assert plots.versions == ((1, 1), (3, 2), (5, 5))
    assert plots.episodes == 5 and plots.without_stats == 1
    assert [episode for episode, _ in figure(plots, "action_length").series[0].points] == [1, 2, 4, 5]
    assert len(figure(plots, "success").series[0].points) == 5
    assert recorded_episode_stats(path)[1] == 1 and plots.report.episodes == 4  # what stillweb health counts
    plain = run_plots([summarize_recording(write_run(tmp_path / "plain.jsonl", [healthy(0), healthy(1)]))], CONFIG)
    assert plain.versions == ()


def test_a_damaged_file_is_plotted_with_the_episodes_before_the_damage(tmp_path):
    path = write_run(tmp_path / "killed.jsonl", [healthy(0), healthy(1), collapsed(2)], tail='{"type": "step", "act')
    summary = summarize_recording(path)
    plots = run_plots([summary], CONFIG)
    assert plots.episodes == 3 and plots.problems == (("killed.jsonl", summary.problem),) and "line 11" in summary.problem


def test_files_merge_in_the_order_given(tmp_path):
    first = write_run(tmp_path / "a.jsonl", [healthy(i) for i in range(3)])
    second = write_run(tmp_path / "b.jsonl", [collapsed(i) for i in range(2)] + [healthy(9, ending="unfinished")])
    plots = run_plots([summarize_recording(first), summarize_recording(second)], CONFIG)
    assert plots.name == "merged" and plots.episodes == 5 and plots.unfinished == 1
    assert values(figure(plots, "success").series[0])[-1] == pytest.approx(2 / 4)
    assert run_plots([summarize_recording(second)], CONFIG).name == "b.jsonl"
    assert set(ACTION_FLAGS) >= {series.label for series in figure(plots, "degenerate").series[1:]}


def test_an_empty_run_has_empty_figures(tmp_path):
    plots = run_plots([summarize_recording(write_run(tmp_path / "empty.jsonl", []))])
    assert plots.episodes == 0 and plots.baseline_end is None
    assert all(not series.points for item in plots.figures for series in item.series)
    assert "the baseline needs 20 episodes" in figure(plots, "action_length").note


def test_by_policy_version_one_point_per_version_over_its_episodes(tmp_path):
    episodes = ([healthy(i, policy_version=1) for i in range(4)] + [healthy(4), collapsed(5, policy_version=3)]
                + [collapsed(i, policy_version=3) for i in range(6, 8)] + [collapsed(8, policy_version=7), healthy(9, policy_version=7)])
    path = write_run(tmp_path / "versions.jsonl", episodes)
    plots = run_plots([summarize_recording(path)], CONFIG, by="policy_version")
    assert plots.by == "policy_version" and plots.x_range == (1, 7) and plots.unversioned == 1 and plots.versions == ()
    ends = episode_ends(path)
    groups: dict[int, list[dict]] = {}
    for end in ends:  # the step line that ended the episode carries the version
        if end.get("policy_version") is not None:
            groups.setdefault(end["policy_version"], []).append(end)
    assert sorted(groups) == [1, 3, 7]
    success = figure(plots, "success").series[0].points
    assert success == tuple((v, sum(e["terminated"] and e["info"]["outcome"] >= 1 for e in g) / len(g)) for v, g in sorted(groups.items()))
    assert success == ((1, 1.0), (3, 0.0), (7, 0.5))
    chars = figure(plots, "action_length").series[0].points
    for (version, value), (_, group) in zip(chars, sorted(groups.items())):
        stats = [end["info"]["episode_stats"] for end in group]
        assert value == pytest.approx(sum(s["action_chars"] for s in stats) / sum(s["turns"] for s in stats)), version
    points = {(point.code, point.episode): point for item in plots.figures for point in item.warnings}
    assert points[("degenerate_actions", 6)].x == 3  # raised at episode 6, which policy version 3 played
    assert points[("degenerate_actions", 6)].value == dict(figure(plots, "degenerate").series[0].points)[3]
    assert plots.baseline_end == 1  # the baseline's last episode (the 4th) ran version 1


def test_by_policy_version_needs_recorded_versions(tmp_path):
    path = write_run(tmp_path / "plain.jsonl", [healthy(0), healthy(1)])
    with pytest.raises(ValueError, match="no finished episode of these files records a policy_version"):
        run_plots([summarize_recording(path)], by="policy_version")
    with pytest.raises(ValueError, match="one of episode, policy_version, not 'time'"):
        run_plots([summarize_recording(path)], by="time")


def test_stats_that_are_not_counts_make_an_episode_without_stats(tmp_path):
    path = write_run(tmp_path / "odd.jsonl", [healthy(0), healthy(1), healthy(2)])
    lines = path.read_text(encoding="utf-8").splitlines()
    odd = {1: {"turns": "many"}, 2: {"flags": ["repeated_chars"]}, 3: {"action_chars": True}}
    ends = [index for index, line in enumerate(lines) if '"episode_stats"' in line]
    for episode, index in enumerate(ends, start=1):
        record = json.loads(lines[index])
        record["info"]["episode_stats"].update(odd[episode])
        lines[index] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    plots = run_plots([summarize_recording(path)], CONFIG)
    assert plots.episodes == 3 and plots.without_stats == 3 and plots.report.episodes == 0
    assert values(figure(plots, "success").series[0]) == [1.0, 1.0, 1.0] and not figure(plots, "action_length").series[0].points


def test_a_recording_whose_steps_carry_policy_versions_replays_and_plots_by_them(tiny_world, world_tasks, tmp_path):
    """The Ray rollout workers' step lines (RecordEpisodes records plus a top-level policy_version), without Ray."""
    import gymnasium as gym

    from stillweb.envs import RecordEpisodes, ReferenceAgent, replay, run_episode

    recorded = tmp_path / "recorded.jsonl"
    env = RecordEpisodes(gym.make("stillweb/WikiQA-v0", snapshot=str(tiny_world), tasks=world_tasks), recorded)
    try:
        for seed in range(3):
            run_episode(env, lambda task: ReferenceAgent(task), seed=seed, options={"task_id": world_tasks[0]["task_id"]})
    finally:
        env.close()
    records, episode = [], -1
    for line in recorded.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        episode += record["type"] == "reset"
        records.append({**record, "policy_version": 4 + episode} if record["type"] == "step" else record)
    versioned = tmp_path / "versioned.jsonl"
    versioned.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    assert replay(versioned).ok  # stillweb replay compares the env's fields only
    plots = run_plots([summarize_recording(versioned)], CONFIG, by="policy_version")
    assert plots.x_range == (4, 6) and [x for x, _ in figure(plots, "success").series[0].points] == [4, 5, 6]
    assert run_plots([summarize_recording(versioned)], CONFIG).versions == ((1, 4), (2, 5), (3, 6))


def test_the_version_axis_baseline_ends_at_its_highest_version(tmp_path):
    # merged Ray files: versions out of order, and the baseline's last episode records none
    episodes = [healthy(0, policy_version=5), healthy(1, policy_version=5), healthy(2, policy_version=1), healthy(3),
                healthy(4, policy_version=6), healthy(5, policy_version=6)]
    plots = run_plots([summarize_recording(write_run(tmp_path / "merged.jsonl", episodes))], CONFIG, by="policy_version")
    assert plots.baseline_end == 5
    assert "the baseline needs" not in figure(plots, "action_length").note
    assert [line.code for line in figure(plots, "action_length").thresholds] == [None, "length_up"]
