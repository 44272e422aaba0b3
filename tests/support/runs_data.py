"""Recordings for the runs table's tests: real recorded episodes (the reference agent's, a
searcher cut short by the turn limit), the benchmark's synthetic recordings
(``scripts/bench_viewer.py``: many episodes with every ending, flags and policy versions),
a file a killed run left with a cut last line, a damaged one and one from another snapshot."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from support.paths import REPO
from support.viewer_data import record_reference_episode

SYNTHETIC_EPISODES = 420
SYNTHETIC_FILES = 3
OTHER_FINGERPRINT = "0" * 64


def bench_viewer():
    """The module ``scripts/bench_viewer.py`` (for its synthetic recordings)."""
    spec = importlib.util.spec_from_file_location("bench_viewer", REPO / "scripts" / "bench_viewer.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def record_searcher_episode(snapshot: Path, task: dict, path: Path, max_turns: int = 2) -> Path:
    """A real episode of an agent that only searches, truncated at ``max_turns`` (flags included)."""
    import gymnasium as gym

    import stillweb.envs  # noqa: F401
    from stillweb.envs import RecordEpisodes, run_episode
    from stillweb.envs.agents.scripted import write_call

    actions = iter([write_call("tongyi", "search", {"query": "river"}), "<tool_call>{\"name\": \"search\"", "plain words"] * max_turns)
    env = RecordEpisodes(gym.make("stillweb/WikiQA-v0", snapshot=str(snapshot), tasks="viewer", split=task["split"],
                                  max_turns=max_turns, max_tool_calls=max_turns), path)
    try:
        run_episode(env, lambda _task: type("Searcher", (), {"act": lambda self, observation: next(actions)})(), seed=0,
                    options={"task_id": task["task_id"]})
    finally:
        env.close()
    return path


def runs_directories(snapshot: Path, tasks: list[dict], folder: Path, fingerprint: str) -> tuple[Path, Path]:
    """Two directories of recordings for ``stillweb view --episodes``: ``recorded/`` (real episodes, a killed
    run's cut file, a damaged file, a file from another snapshot) and ``synthetic/`` (the benchmark's)."""
    recorded = folder / "recorded"
    recorded.mkdir(parents=True)
    reference = record_reference_episode(snapshot, "viewer", tasks[0], recorded / "reference.jsonl")
    record_searcher_episode(snapshot, tasks[1], recorded / "searcher.jsonl", max_turns=3)
    lines = reference.read_text(encoding="utf-8").splitlines(keepends=True)
    (recorded / "killed.jsonl").write_text("".join(lines) + lines[1] + lines[2][: len(lines[2]) // 2], encoding="utf-8")
    (recorded / "damaged.jsonl").write_text("".join(lines) + "{not json\n" + "".join(lines[1:]), encoding="utf-8")
    bench = bench_viewer()
    other = bench.write_synthetic_run(folder / "other", 4, 1, OTHER_FINGERPRINT, seed=7)[0]
    other.rename(recorded / "other-snapshot.jsonl")
    bench.write_synthetic_run(folder / "synthetic", SYNTHETIC_EPISODES, SYNTHETIC_FILES, fingerprint, seed=1, tasks=40)
    return recorded, folder / "synthetic"
