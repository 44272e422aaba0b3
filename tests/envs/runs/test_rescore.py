"""`stillweb replay --rescore`: recorded episodes re-scored under another answer-match rule or reward
weights without a policy; a new file keeps both rewards; flips are counted by reason; an episode that no
longer replays is named; the output is the same bytes in two processes."""

from __future__ import annotations

import json
import subprocess
import sys

import gymnasium as gym
import pytest

import stillweb.envs  # noqa: F401 - the ids
from stillweb.cli.main import main
from stillweb.corpora.errors import UsageError
from stillweb.envs.agents.scripted import write_answer, write_call
from stillweb.envs.runs.recording import RecordEpisodes
from stillweb.envs.runs.rescore import rescore, reward_config_from_text

ANSWERS = ("Ostra", "the city of Ostra", "Velland")


@pytest.fixture()
def recording(tiny_world, world_tasks, tmp_path):
    path = tmp_path / "episodes.jsonl"
    recorder = RecordEpisodes(gym.make("stillweb/WikiQA-v0", snapshot=str(tiny_world), tasks=world_tasks,
                                       max_turns=30), path)
    for answer in ANSWERS:
        recorder.reset(seed=0, options={"task_id": "chain"})
        recorder.step(write_call("tongyi", "search", {"query": "Velland capital"}))
        recorder.step(write_answer("tongyi", answer, [3]))
    recorder.close()
    return path


def ended(path):
    return [json.loads(line) for line in path.read_text().splitlines() if '"terminated":true' in line]


def test_another_answer_match_rule_flips_the_outcome(recording):
    before = recording.read_bytes()
    summary = rescore(recording, {"answer_match": "subem"})
    assert (summary.episodes, summary.changed, summary.up, summary.down) == (3, 1, 1, 0)
    assert summary.flips == {"outcome": 1} and not summary.diverged
    assert recording.read_bytes() == before and summary.path.name == "episodes.rescored.jsonl"
    steps = ended(summary.path)
    assert [(step["reward"], step["rescored"]["reward"]) for step in steps] == [(1.0, 1.0), (0.0, 1.0), (0.0, 0.0)]
    header = json.loads(summary.path.read_text().splitlines()[0])
    assert header["rescore"]["reward"]["answer_match"] == "subem" and header["env_id"] == "stillweb/WikiQA-v0"
    assert "outcome 1" in summary.describe()


def test_other_weights_flip_by_weights_and_the_rule_that_agrees_flips_nothing(recording, tmp_path):
    assert rescore(recording, {"answer_match": "em"}).changed == 0
    summary = rescore(recording, {"outcome": 0.5, "f1": 0.5}, tmp_path / "weighted.jsonl")
    assert summary.flips == {"weights": 1} and summary.path == tmp_path / "weighted.jsonl"
    assert [step["rescored"]["reward_parts"]["f1"] > 0 for step in ended(summary.path)] == [True, True, False]


def test_the_command(recording, tmp_path, capsys):
    config = tmp_path / "reward.json"
    config.write_text('{"answer_match": "subem"}')
    assert main(["replay", str(recording), "--rescore", str(config), "--out", str(tmp_path / "out.jsonl")]) == 0
    assert "1 changed reward (1 up, 0 down); flips by reason: outcome 1" in capsys.readouterr().out
    for bad in ("{not json", str(tmp_path / "missing.json"), '{"answer_match": "fuzzy"}', '{"outcom": 1}', "[1]"):
        with pytest.raises(UsageError):
            reward_config_from_text(bad)
    with pytest.raises(UsageError, match="must differ"):
        rescore(recording, {}, recording)
    assert main(["replay", str(recording), "--out", str(tmp_path / "x.jsonl")]) != 0
    assert "--out goes with --rescore" in capsys.readouterr().err


def test_an_episode_that_no_longer_replays_is_named(recording, capsys):
    lines = recording.read_text().splitlines()
    step = json.loads(lines[5])  # the second episode's search
    step["observation"] = "something else"
    lines[5] = json.dumps(step)
    recording.write_text("\n".join(lines) + "\n")
    summary = rescore(recording, {"answer_match": "subem"})
    assert summary.diverged == [6] and "lines [6]" in summary.describe()
    assert main(["replay", str(recording), "--rescore", '{"answer_match": "subem"}']) == 1


def test_an_environment_without_a_reward_config_is_refused(tmp_path):
    path = tmp_path / "lookup.jsonl"
    recorder = RecordEpisodes(gym.make("stillweb/Lookup-v0", tasks=[{"question": "Who?", "answer": "Ann",
                                                                      "passage": "Ann did."}]), path)
    recorder.reset(seed=0)
    recorder.step("Ann")
    recorder.close()
    with pytest.raises(UsageError, match="takes no reward config"):
        rescore(path, {"answer_match": "subem"})


def test_the_rescored_file_is_the_same_bytes_in_two_processes(recording, tmp_path):
    script = ("import sys; from stillweb.envs.runs.rescore import rescore; "
              "rescore(sys.argv[1], {'answer_match': 'subem', 'f1': 0.3}, sys.argv[2])")
    outputs = []
    for seed, tz in (("1", "UTC"), ("2", "Asia/Tokyo")):
        out = tmp_path / f"out-{seed}.jsonl"
        subprocess.run([sys.executable, "-c", script, str(recording), str(out)], check=True,
                       env={"PYTHONHASHSEED": seed, "TZ": tz, "PATH": "/usr/bin:/bin"})
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] and b'"rescored"' in outputs[0]
