"""Profiles run under the task set's own limits (the environment's defaults) unless told otherwise, record
them, and say when a profile's limits truncate the reference agent (issue 33: --max-turns 16 by default
measured the turn cap: pass@1 0.60 for the reference agent on a fresh 2,000-article world)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from stillweb.cli.main import main
from stillweb.corpora.tasks.store.files import read_tasks
from stillweb.envs.core.turn_budget import reference_steps, turn_budget
from stillweb.envs.profiles import (PolicySpec, ProfileRun, episodes_path, profile_path, profile_tasks, read_episodes,
                                    read_profile)

# The task sets a fresh world is given: the default mix, each level alone, the longest chains, unanswerable ones.
GENERATED_SETS = {
    "default": ["--count", "12"],
    "level1": ["--count", "6", "--level", "1"],
    "level3": ["--count", "6", "--level", "3"],
    "four-hops": ["--count", "6", "--min-hops", "4", "--max-hops", "4"],
    "unanswerable": ["--count", "8", "--unanswerable", "0.25"],
}


@pytest.fixture(scope="module")
def fresh_world(tmp_path_factory):
    """A new 600-article world (seed 3: not the session's) with every set of :data:`GENERATED_SETS`."""
    path = tmp_path_factory.mktemp("fresh") / "world"
    stillweb = [sys.executable, "-m", "stillweb.cli.main"]
    subprocess.run([*stillweb, "build", "synthetic", "--articles", "600", "--seed", "3", "--out", str(path)],
                   check=True, capture_output=True)
    for name, options in GENERATED_SETS.items():
        subprocess.run([*stillweb, "tasks", "generate", str(path), "--name", name, *options, "--allow-partial",
                        "--no-progress"], check=True, capture_output=True)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(GENERATED_SETS))
@pytest.mark.parametrize("tool_format", ["tongyi", "openai"])
def test_the_reference_agent_passes_every_task_of_every_generated_set_under_the_default_limits(fresh_world, name,
                                                                                              tool_format, capsys):
    policy = f"reference-{tool_format}"
    assert main(["tasks", "profile", str(fresh_world), name, "--agent", "reference", "-k", "1",
                 "--tool-format", tool_format, "--policy-name", policy]) == 0
    assert "warning" not in capsys.readouterr().err
    rows = read_profile(fresh_world, name, policy)
    assert rows and all(row["pass_at_1"] == 1.0 and row["truncation_share"] == 0.0 for row in rows), \
        [(row["task_id"], row["mean_turns"], row["max_turns"]) for row in rows if row["pass_at_1"] != 1.0]


def test_the_default_limits_are_the_environments_and_are_recorded(tasks_snapshot, tmp_path, capsys):
    snap = tmp_path / "snap"
    shutil.copytree(tasks_snapshot, snap)
    assert main(["tasks", "profile", str(snap), "hard", "--agent", "reference", "-k", "1"]) == 0
    header, _records = read_episodes(episodes_path(snap, "hard", "reference"))
    rows = read_profile(snap, "hard", "reference")
    for split in ("train", "dev", "test"):
        tasks = read_tasks(snap, "hard", split)
        if not tasks:
            continue
        budget = turn_budget(tasks)  # what WikiQAEnv derives for the split when max_turns is not given
        assert header["limits"][split]["max_turns"] == budget.max_turns
        assert header["limits"][split]["source"] == "task set"
        assert {row["max_turns"] for row in rows if row["split"] == split} == {budget.max_turns}
    assert "max_turns" not in header["env_kwargs"]
    metadata = json.loads(pq.read_schema(profile_path(snap, "hard", "reference")).metadata[b"stillweb.profile"])
    assert metadata["limits"] == header["limits"]
    assert all(row["pass_at_1"] == 1.0 for row in rows)
    out = capsys.readouterr().out
    assert f"max_turns train {header['limits']['train']['max_turns']}" in out


def test_filter_warns_when_the_profiles_limits_truncate_the_reference_agent(tasks_snapshot, tmp_path, capsys):
    snap = tmp_path / "snap"
    shutil.copytree(tasks_snapshot, snap)
    short = min(reference_steps(task) for task in read_tasks(snap, "hard", "train")) - 1
    assert main(["tasks", "profile", str(snap), "hard", "--agent", "reference", "-k", "1", "--split", "train",
                 "--max-turns", str(short), "--policy-name", "short"]) == 0
    assert "warning: profile 'short' ran with max_turns below the reference agent's steps" in capsys.readouterr().err
    header, _records = read_episodes(episodes_path(snap, "hard", "short"))
    assert header["limits"]["train"] == {**header["limits"]["train"], "max_turns": short, "source": "explicit"}
    assert main(["tasks", "filter", str(snap), "hard", "--profile", "short", "--pass-rate", "0:1", "--out", "cut"]) == 0
    err = capsys.readouterr().err
    trains = len(read_tasks(snap, "hard", "train"))
    assert f"on {trains} of {trains} tasks" in err and f"max_turns {short})" in err and "without --max-turns" in err
    assert "- warning: profile 'short' ran with max_turns below" in (snap / "tasks" / "cut" / "card.md").read_text()
    profile_tasks(ProfileRun(str(snap), "hard", PolicySpec("reference", "reference"), k=1, splits=("train",)))
    assert main(["tasks", "filter", str(snap), "hard", "--profile", "reference", "--pass-rate", "0:1", "--out", "ok"]) == 0
    assert "warning" not in capsys.readouterr().err
