"""Every text environment in every call format, over one small world: what the hostile-action test and
``scripts/bench_hostile.py`` step with each shape of :mod:`support.hostile_actions`."""

from __future__ import annotations

import importlib.util
import shutil
import time
from pathlib import Path

import gymnasium as gym

from stillweb.corpora.apps.tasks import generate_app_tasks
from stillweb.envs.lookup import LookupEnv
from support.paths import REQUIRE_EXTRAS
from support.snapshots import snapshot_with_tasks

__all__ = ["hostile_environments", "fastest_step_ms"]

WIKIQA_FORMATS = ("tongyi", "openai", "search_r1")
APPS_FORMATS = ("tongyi", "openai")


def hostile_environments(snapshot: Path, work: Path) -> dict[str, gym.Env]:
    """``{"WikiQA-v0/tongyi": env, ...}``: WikiQA-v0 in the three formats (with context management on),
    Apps-v0 in its two and Lookup-v0, over copies of ``snapshot`` (a synthetic world) made under ``work``,
    and BFCL-v0 in its two where the bfcl extra is installed (always under STILLWEB_REQUIRE_EXTRAS=1)."""
    work.mkdir(parents=True, exist_ok=True)
    tasks = work / "hostile-tasks"
    if not (tasks / "tasks" / "hostile").is_dir():
        shutil.rmtree(tasks, ignore_errors=True)
        snapshot_with_tasks(Path(snapshot), tasks, "hostile")
    apps = work / "hostile-apps"
    if not (apps / "manifest.json").exists():
        shutil.rmtree(apps, ignore_errors=True)
        shutil.copytree(snapshot, apps)
        generate_app_tasks(apps, "core", 12)
    environments: dict[str, gym.Env] = {}
    for tool_format in WIKIQA_FORMATS:
        environments[f"WikiQA-v0/{tool_format}"] = gym.make(
            "stillweb/WikiQA-v0", snapshot=str(tasks), tasks="hostile", tool_format=tool_format,
            context={"budget_tokens": 3000}).unwrapped
    for tool_format in APPS_FORMATS:
        environments[f"Apps-v0/{tool_format}"] = gym.make(
            "stillweb/Apps-v0", snapshot=str(apps), tasks="core", tool_format=tool_format).unwrapped
    if REQUIRE_EXTRAS or importlib.util.find_spec("bfcl_eval") is not None:
        for tool_format in APPS_FORMATS:
            environments[f"BFCL-v0/{tool_format}"] = gym.make(
                "stillweb/BFCL-v0", tasks=["multi_turn_base_0"], tool_format=tool_format).unwrapped
    environments["Lookup-v0"] = LookupEnv(tasks=[
        {"question": "Who wrote it?", "answer": "Ann Lee", "passage": "It was written by Ann Lee."}])
    return environments


def fastest_step_ms(env: gym.Env, action: str, repeats: int = 3) -> float:
    """The least CPU time of ``repeats`` steps of ``action``, each from a fresh reset (ms of this thread's CPU
    time: on a shared machine the wall time of a long step also counts its waits for a core, which a loaded
    machine makes grow faster than the step itself)."""
    best = float("inf")
    for seed in range(repeats):
        env.reset(seed=seed)
        start = time.thread_time()
        env.step(action)
        best = min(best, (time.thread_time() - start) * 1e3)
    return best
