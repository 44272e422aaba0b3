"""Episode summaries of recordings (stillweb.envs.runs.run_summary): real recorded episodes,
a file a killed run left truncated, files that are not recordings, determinism."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from stillweb.corpora.tasks.store.files import read_tasks
from stillweb.envs.runs.run_summary import summarize_recording
from support.viewer_data import record_reference_episode, viewer_snapshot


@pytest.fixture(scope="module")
def recorded(small_snapshot, tmp_path_factory):
    """(path of a recording of two reference episodes and one cut short by the turn limit, the tasks)."""
    import gymnasium as gym

    from stillweb.envs import RecordEpisodes, run_episode
    from stillweb.envs.agents.scripted import write_call

    folder = tmp_path_factory.mktemp("summaries")
    snapshot = viewer_snapshot(small_snapshot, folder)
    tasks = [task.to_row() for task in read_tasks(snapshot, "viewer", "train")[:2]]
    first = record_reference_episode(snapshot, "viewer", tasks[0], folder / "one.jsonl")
    path = folder / "run.jsonl"
    env = RecordEpisodes(gym.make("stillweb/WikiQA-v0", snapshot=str(snapshot), tasks="viewer", split="train", max_turns=2, max_tool_calls=2), path)
    search = write_call("tongyi", "search", {"query": "river"})
    try:
        run_episode(env, lambda task: type("Searcher", (), {"act": lambda self, observation: search})(), seed=0,
                    options={"task_id": tasks[1]["task_id"]})
    finally:
        env.close()
    return first, path, tasks


def test_reference_episode_is_a_success_with_its_stats(recorded):
    first, _, tasks = recorded
    summary = summarize_recording(first)
    assert summary.problem is None and summary.env_id == "stillweb/WikiQA-v0" and summary.snapshot_fingerprint
    (episode,) = summary.episodes
    assert episode.task_id == tasks[0]["task_id"] and episode.ending == "terminated" and episode.success
    assert episode.outcome == 1.0 and episode.reward > 0 and episode.turns == episode.stats["turns"] >= 2
    assert episode.action_chars == episode.stats["action_chars"] and episode.truncation_reason is None


def test_truncated_episode_names_its_reason_and_flags(recorded):
    _, path, tasks = recorded
    (episode,) = summarize_recording(path).episodes
    assert episode.task_id == tasks[1]["task_id"] and episode.ending == "truncated" and not episode.success
    assert episode.turns == 2 and episode.truncation_reason and episode.stats is not None
    # the same search twice: no degenerate flag, and the tool flags are only those the steps raised
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    raised = sorted(flag for line in lines[2:] for flag in (line["info"]["action_flags"] + [f for f in line["info"]["tool_flags"] if f]))
    assert sorted(name for name, count in episode.flags for _ in range(count)) == raised


def test_a_cut_last_line_keeps_the_episodes_before_it(recorded, tmp_path):
    first, _, _ = recorded
    text = first.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    cut = tmp_path / "killed.jsonl"
    cut.write_text(text + lines[1] + lines[2][: len(lines[2]) // 2], encoding="utf-8")
    summary = summarize_recording(cut)
    assert [episode.ending for episode in summary.episodes] == ["terminated", "unfinished"]
    assert summary.episodes[1].turns == 0
    assert f"line {len(lines) + 2}" in summary.problem and "ends in the middle" in summary.problem


@pytest.mark.parametrize("content, expected", [
    ("", None),
    ('{"type": "reset"}\n', "not a recording header"),
    ("[1, 2]\n", "not a JSON object"),
    ('{"type": "header", "env_id": "x", "kwargs": {}}\n{"type": "step"}\n', "step before any reset"),
    ('{"type": "header", "env_id": "x", "kwargs": {}}\n{"type": "nonsense"}\n', "unknown record type"),
    # a number past int()'s 4300-digit limit: json.loads raises a ValueError that is not a JSONDecodeError
    pytest.param('{"type": "header", "env_id": "x", "kwargs": {}}\n{"type": "reset", "n": ' + "7" * 5000 + "}\n",
                 "line 2 of 'bad.jsonl' is not JSON", id="5000-digit-number"),
])
def test_files_that_are_not_recordings_say_why(tmp_path, content, expected):
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    summary = summarize_recording(path)
    assert summary.episodes == ()
    assert (summary.problem is None) if expected is None else (expected in summary.problem)


def test_missing_and_binary_files_say_why(tmp_path):
    assert "does not exist" in summarize_recording(tmp_path / "gone.jsonl").problem
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    assert "UTF-8" in summarize_recording(binary).problem


def test_two_processes_give_identical_summaries(recorded):
    _, path, _ = recorded
    code = ("import dataclasses, json, sys; from stillweb.envs.runs.run_summary import summarize_recording; "
            "print(json.dumps([dataclasses.asdict(e) for e in summarize_recording(sys.argv[1]).episodes], sort_keys=True))")
    outputs = [subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True).stdout
               for _ in range(2)]
    assert outputs[0] == outputs[1] and json.loads(outputs[0])[0]["turns"] == 2


def test_a_growing_file_read_incrementally_gives_what_a_full_read_gives(recorded, tmp_path):
    from stillweb.envs.runs.run_summary import RecordingFollower

    first, path, _ = recorded
    content = first.read_bytes() + b"".join(path.read_bytes().splitlines(keepends=True)[1:])
    live = tmp_path / "live.jsonl"
    live.write_bytes(b"")
    follower = RecordingFollower(live)
    cuts = sorted({0, 1, 40, len(content) // 3, len(content) // 2, len(content) - 7, len(content)}
                  | {index + 1 for index, byte in enumerate(content) if byte == ord("\n")})
    seen = []
    for cut in cuts:
        with live.open("ab") as file:
            file.write(content[live.stat().st_size:cut])
        incremental, full = follower.summary(), summarize_recording(live)
        assert incremental == full, cut
        seen.append(len(full.episodes))
    assert seen[-1] == 2 and follower.summary() is follower.summary()  # unchanged file: the same object
    assert [episode.ending for episode in follower.summary().episodes] == ["terminated", "truncated"]


def test_a_file_rewritten_in_place_is_read_again(recorded, tmp_path):
    from stillweb.envs.runs.run_summary import RecordingFollower

    first, path, _ = recorded
    live = tmp_path / "rewritten.jsonl"
    live.write_bytes(path.read_bytes())
    follower = RecordingFollower(live)
    assert [episode.ending for episode in follower.summary().episodes] == ["truncated"]
    lines = path.read_bytes().splitlines(keepends=True)
    live.write_bytes(b"".join(lines[:1] + first.read_bytes().splitlines(keepends=True)[1:] + lines[1:]))  # same header, longer
    assert follower.summary() == summarize_recording(live)
    assert [episode.ending for episode in follower.summary().episodes] == ["terminated", "truncated"]
    live.write_bytes(b"")
    assert follower.summary().episodes == ()
    live.unlink()
    assert "does not exist" in follower.summary().problem


@pytest.mark.parametrize("chunk", [1, 7, 300])
def test_reading_in_small_chunks_gives_the_same_summary(recorded, tmp_path, monkeypatch, chunk):
    from stillweb.envs.runs import run_summary

    first, path, _ = recorded
    text = first.read_bytes() + b"".join(path.read_bytes().splitlines(keepends=True)[1:])
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(text + text.splitlines(keepends=True)[1][:25])
    whole = [summarize_recording(first), summarize_recording(cut)]
    monkeypatch.setattr(run_summary, "_CHUNK_BYTES", chunk)
    assert [summarize_recording(first), summarize_recording(cut)] == whole
    assert len(whole[1].episodes) == 2 and "ends in the middle" in whole[1].problem


def _mutated(source, path, change):
    """A copy of the recording ``source`` at ``path`` with ``change(records)`` applied."""
    records = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    change(records)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def test_a_reward_or_outcome_too_large_for_a_float_is_infinite(recorded, tmp_path):
    first, _, _ = recorded

    def huge(records):
        records[2]["reward"] = 10 ** 400
        records[-1]["info"]["outcome"] = -(10 ** 400)

    (episode,) = summarize_recording(_mutated(first, tmp_path / "huge.jsonl", huge)).episodes
    assert episode.reward == float("inf") and episode.outcome == float("-inf") and not episode.success


@pytest.mark.parametrize("value", [5, True, 2.5, "format_error", {"format_error": 1}])
def test_flags_that_are_not_a_list_are_not_counted(recorded, tmp_path, value):
    first, _, _ = recorded

    def flags(records):
        for record in records[2:]:
            record["info"]["action_flags"] = value
            record["info"]["tool_flags"] = value

    (episode,) = summarize_recording(_mutated(first, tmp_path / "flags.jsonl", flags)).episodes
    assert episode.flags == () and episode.ending == "terminated"


@pytest.mark.parametrize("change", [{"turns": "<b>"}, {"turns": None}, {"tool_calls": float("nan")}, {"tool_calls": float("inf")},
                                    {"action_chars": 10 ** 400}, {"format_errors": [1]}, {"flags": ["repeated_ngrams"]},
                                    {"flags": {"repeated_ngrams": "x"}}], ids=lambda change: "-".join(change))
def test_episode_stats_health_cannot_count_are_left_out(recorded, tmp_path, change):
    """Stats with a figure that is not a count are an episode without stats (for the health page's plots
    and `stillweb health`), not a crash."""
    from stillweb.envs.runs.health import HealthConfig
    from stillweb.envs.runs.health_series import run_plots
    from support.health_runs import recorded_episode_stats

    first, _, _ = recorded
    path = _mutated(first, tmp_path / "stats.jsonl", lambda records: records[-1]["info"]["episode_stats"].update(change))
    summary = summarize_recording(path)
    assert summary.episodes[0].ending == "terminated"
    plots = run_plots([summary], HealthConfig(window=1, baseline=1))
    assert plots.episodes == 1 and plots.without_stats == 1
    assert recorded_episode_stats(path) == ([], 1)
    assert run_plots([summarize_recording(first)], HealthConfig(window=1, baseline=1)).without_stats == 0


@pytest.mark.parametrize("version", [True, -1, 10 ** 400, 2.0, "3"])
def test_a_policy_version_that_is_no_count_is_not_recorded(tmp_path, version):
    header = {"type": "header", "env_id": "x", "kwargs": {}}
    lines = [header, {"type": "reset", "info": {}}, {"type": "step", "action": "a", "reward": 0, "terminated": True,
                                                     "info": {}, "policy_version": version}]
    path = tmp_path / "versions.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    (episode,) = summarize_recording(path).episodes
    assert episode.policy_version is None and episode.ending == "terminated"
