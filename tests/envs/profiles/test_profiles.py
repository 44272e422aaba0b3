"""Difficulty profiles: `stillweb tasks profile|filter|reverify` with built-in agents and a local chat stub."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest

from stillweb.cli.main import main
from stillweb.corpora.tasks.store.files import read_tasks
from stillweb.envs.agents.chat_policy import Sampling
from stillweb.envs.profiles import (PolicySpec, ProfileRun, episodes_path, filter_by_pass_rate, profile_path,
                                    profile_tasks, read_episodes, read_profile, reverify)
from support.chat_stub import MODEL_ID, chat_stub_app, serve
from support.network import free_port

LONG = {"max_turns": 64}  # the reference agent's budget on the 4-hop tasks


@pytest.fixture()
def snap(tasks_snapshot, tmp_path):
    """A private copy of the tasks snapshot (profiles write beside the task set)."""
    path = tmp_path / "snap"
    shutil.copytree(tasks_snapshot, path)
    return path


@pytest.fixture(scope="module")
def all_tasks(tasks_snapshot):
    return [task for split in ("train", "dev", "test") for task in read_tasks(tasks_snapshot, "hard", split)]


def test_reference_and_random_agents_give_pass_rates_one_and_zero(snap, all_tasks, capsys):
    assert main(["tasks", "profile", str(snap), "hard", "--agent", "reference", "--max-turns", "64", "-k", "2", "--workers", "2"]) == 0
    assert main(["tasks", "profile", str(snap), "hard", "--agent", "random", "-k", "2"]) == 0
    reference, random = read_profile(snap, "hard", "reference"), read_profile(snap, "hard", "random")
    assert sorted(row["task_id"] for row in reference) == sorted(task.task_id for task in all_tasks)
    assert {row["split"] for row in reference} == {task.split for task in all_tasks}
    assert all(row["pass_at_1"] == 1.0 and row["pass_at_k"] == 1.0 and row["episodes"] == 2 for row in reference)
    assert all(row["truncation_share"] == 0.0 and row["mean_turns"] >= 4 for row in reference)
    assert sum(row["pass_at_1"] for row in random) / len(random) <= 0.05
    assert {row["policy"] for row in random} == {"random"} and "mean pass@1" in capsys.readouterr().out


def test_chat_endpoint_profile_records_model_and_sampling_and_filter_keeps_the_band(snap, all_tasks):
    app = chat_stub_app(all_tasks, mode="half")
    with serve(app, free_port()) as url:
        assert main(["tasks", "profile", str(snap), "hard", "--policy", url, "-k", "6", "--temperature", "0.7", "--max-turns", "64",
                     "--workers", "2", "--split", "train"]) == 0
    name = "stub_scripted-policy"
    rows = read_profile(snap, "hard", name)
    assert {row["model"] for row in rows} == {MODEL_ID} and {row["k"] for row in rows} == {6}
    assert json.loads(rows[0]["sampling"]) == {"max_tokens": 2048, "temperature": 0.7, "top_p": 1.0}
    rates = [row["pass_at_1"] for row in rows]
    assert 0.2 < sum(rates) / len(rates) < 0.8 and all(row["failed_episodes"] == 0 for row in rows)
    in_band = {row["task_id"] for row in rows if 0.1 <= row["pass_at_1"] <= 0.9}
    assert main(["tasks", "filter", str(snap), "hard", "--profile", name, "--pass-rate", "0.1:0.9", "--out", "band"]) == 0
    kept = {task.task_id for task in read_tasks(snap, "band", "train")}
    assert kept == in_band and in_band
    card = (snap / "tasks" / "band" / "card.md").read_text()
    assert f"{len(in_band)} of {len(rows)} profiled tasks kept" in card and MODEL_ID in card


def test_reference_policy_behind_the_endpoint_passes_everything(snap, all_tasks):
    with serve(chat_stub_app(all_tasks, mode="reference"), free_port()) as url:
        spec = PolicySpec.for_endpoint(url, sampling=Sampling(temperature=0.0))
        profile_tasks(ProfileRun(str(snap), "hard", spec, k=1, splits=("dev", "test"), env_kwargs=LONG))
    assert all(row["pass_at_1"] == 1.0 for row in read_profile(snap, "hard", spec.name))


@pytest.mark.parametrize("mode, reason", [("down", "unreachable"), ("malformed", "malformed reply"),
                                          ("error", "http 500"), ("slow", "timeout")])
def test_bad_endpoint_gives_failed_episodes_with_the_reason_then_resume_plays_them(snap, all_tasks, mode, reason):
    port = free_port()
    spec = PolicySpec("chat", "flaky", f"http://127.0.0.1:{port}/v1", "m", timeout_s=0.3, retries=1, backoff_s=0.01)
    run = ProfileRun(str(snap), "hard", spec, k=1, splits=("dev",), env_kwargs=LONG)
    if mode == "down":
        profile_tasks(run)
    else:
        with serve(chat_stub_app(all_tasks, mode=mode, slow_s=1.0), port) as _url:
            profile_tasks(run)
    _, records = read_episodes(episodes_path(snap, "hard", "flaky"))
    assert records and all(reason in record["failure"] and "2 attempts" in record["failure"] for record in records.values())
    assert all(row["failed_episodes"] == 1 and row["pass_at_1"] is None for row in read_profile(snap, "hard", "flaky"))
    with serve(chat_stub_app(all_tasks, mode="reference"), port):  # the endpoint is back: failed episodes are replayed
        profile_tasks(run)
    assert all(row["pass_at_1"] == 1.0 and row["failed_episodes"] == 0 for row in read_profile(snap, "hard", "flaky"))


def test_killed_run_resumes_to_the_same_profile(snap, tmp_path):
    clean = tmp_path / "clean"
    shutil.copytree(snap, clean)
    command = [sys.executable, "-m", "stillweb.cli.main", "tasks", "profile"]
    subprocess.run([*command, str(clean), "hard", "--agent", "reference", "--max-turns", "64", "-k", "2"], check=True, capture_output=True)
    episodes = episodes_path(snap, "hard", "reference")
    process = subprocess.Popen([*command, str(snap), "hard", "--agent", "reference", "--max-turns", "64", "-k", "2"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while process.poll() is None and (not episodes.exists() or episodes.read_text().count("\n") < 4):
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    with episodes.open("a") as out:
        out.write('{"type":"episode","episode_id":"torn')  # what a kill mid-write leaves
    played_before = len(read_episodes(episodes)[1])
    assert main(["tasks", "profile", str(snap), "hard", "--agent", "reference", "--max-turns", "64", "-k", "2"]) == 0
    lines = episodes.read_text().splitlines()
    assert len(lines) == 1 + len(read_episodes(episodes)[1])  # no episode played twice
    assert played_before < len(lines) - 1
    assert profile_path(snap, "hard", "reference").read_bytes() == profile_path(clean, "hard", "reference").read_bytes()


def test_reverify_rescores_stored_episodes_under_a_new_reward(snap):
    assert main(["tasks", "profile", str(snap), "hard", "--agent", "reference", "--max-turns", "64", "-k", "1", "--split", "train"]) == 0
    path, played, changed = reverify(snap, "hard", "reference", 1, {"outcome": 0.5})
    assert played == changed > 0
    header, records = read_episodes(episodes_path(snap, "hard", "reference"))
    assert header["reward"]["outcome"] == 0.5 and {record["reward"] for record in records.values()} == {0.5}
    assert all(row["pass_at_1"] == 1.0 for row in pq.read_table(path).to_pylist())
    assert main(["tasks", "reverify", str(snap), "hard", "--profile", "reference"]) == 0
    assert {record["reward"] for record in read_episodes(episodes_path(snap, "hard", "reference"))[1].values()} == {1.0}


def test_bad_values_name_themselves(snap, capsys):
    assert main(["tasks", "filter", str(snap), "hard", "--profile", "nobody", "--pass-rate", "0.1:0.9", "--out", "x"]) == 2
    assert "no profile 'nobody'" in capsys.readouterr().err
    assert main(["tasks", "profile", str(snap), "hard", "--agent", "reference", "--max-turns", "64", "-k", "1", "--split", "dev"]) == 0
    assert main(["tasks", "filter", str(snap), "hard", "--profile", "reference", "--pass-rate", "0.9", "--out", "x"]) == 2
    assert "bad pass-rate band '0.9'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="no task of 'hard' has pass@1"):
        filter_by_pass_rate(snap, "hard", "reference", (0.0, 0.5), "x")
    port = free_port()
    assert main(["tasks", "profile", str(snap), "hard", "--policy", f"http://127.0.0.1:{port}/v1", "--retries", "0"]) == 2
    assert "pass --model" in capsys.readouterr().err


def test_profile_bytes_are_identical_across_processes_and_worker_counts(snap, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(snap, other)
    command = [sys.executable, "-m", "stillweb.cli.main", "tasks", "profile"]
    env = {**os.environ, "PYTHONHASHSEED": "1"}
    subprocess.run([*command, str(snap), "hard", "--agent", "random", "-k", "2"], check=True, capture_output=True, env=env)
    env["PYTHONHASHSEED"] = "2"
    subprocess.run([*command, str(other), "hard", "--agent", "random", "-k", "2", "--workers", "2"], check=True,
                   capture_output=True, env=env)
    assert profile_path(snap, "hard", "random").read_bytes() == profile_path(other, "hard", "random").read_bytes()
