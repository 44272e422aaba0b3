"""``stillweb/BFCL-v0``: the Gymnasium contract, soundness (reference 1, text-only 0), BFCL's
checker as the reward, no policy text reaching ``eval``, held-back functions, seeded APIs and
two-process determinism. Needs the ``bfcl`` extra (``scripts/install_bfcl.sh``)."""

from __future__ import annotations

import builtins
import json
import subprocess
import sys

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

pytest.importorskip("bfcl_eval", reason="the bfcl extra: pip install -e '.[bfcl]' && bash scripts/install_bfcl.sh")

import stillweb.envs  # noqa: E402,F401 - registers the environments
from stillweb.envs import ReferenceAgent, play_episode, run_episode  # noqa: E402
from stillweb.envs.agents.scripted import write_call  # noqa: E402
from stillweb.envs.bfcl.agents import BfclReferenceAgent, BfclTextAgent, write_reply  # noqa: E402
from stillweb.envs.bfcl.data import BFCL_EVAL_VERSION, BFCL_CATEGORIES, bfcl_version, category_tasks  # noqa: E402
from stillweb.envs.bfcl.env import BfclEnv  # noqa: E402
from stillweb.envs.bfcl.splits import excluded_tasks  # noqa: E402

pytestmark = pytest.mark.extra


def test_gym_make_check_env_and_version():
    env = gym.make("stillweb/BFCL-v0", category="multi_turn_base", tasks=["multi_turn_base_0", "multi_turn_base_1"])
    check_env(env.unwrapped, skip_render_check=True)
    observation, info = env.reset(seed=0, options={"task_id": "multi_turn_base_0"})
    assert '"name": "mv"' in observation and "Move 'final_report.pdf'" in observation
    assert info["bfcl_version"] == bfcl_version() == BFCL_EVAL_VERSION and info["category"] == "multi_turn_base"


@pytest.mark.parametrize("category", BFCL_CATEGORIES)
def test_the_reference_agent_earns_1_on_every_task_of_the_default_split(category):
    """The default split is every task whose ground truth can pass (>= 95% of each category); the
    reference agent earns 1 on each (tongyi), and on a sample in the openai format; the excluded
    tasks earn 0 through the environment, so none is left out that could pass."""
    excluded = excluded_tasks(category)
    assert len(excluded) <= 0.05 * len(category_tasks(category)), excluded
    env = BfclEnv(category)
    assert len(env.tasks) + len(excluded) == len(category_tasks(category))
    for task in env.tasks:
        summary = run_episode(env, ReferenceAgent(task), seed=3, options={"task_id": task.task_id})
        assert summary["outcome"] == 1.0 and summary["terminated"], summary
    openai = BfclEnv(category, tool_format="openai")
    for task in list(openai.tasks)[::40]:
        assert run_episode(openai, ReferenceAgent(task, tool_format="openai"), options={"task_id": task.task_id})["outcome"] == 1.0
    everything = BfclEnv(category, split="all")
    for task_id in excluded:
        assert run_episode(everything, ReferenceAgent(everything.tasks.by_id(task_id)), options={"task_id": task_id})["outcome"] == 0.0


def test_the_miss_func_task_whose_ground_truth_calls_a_held_back_function_is_left_out_with_the_reason():
    reason = excluded_tasks("multi_turn_miss_func")["multi_turn_miss_func_49"]
    assert reason == "its ground truth calls tail at turn 1, where it is not offered (held back until turn 3)"


@pytest.mark.parametrize("category", BFCL_CATEGORIES)
def test_a_text_only_agent_earns_0_on_nearly_every_task(category):
    env = BfclEnv(category, split="all")
    passed = sum(run_episode(env, BfclTextAgent(), options={"task_id": task.task_id})["outcome"] for task in env.tasks)
    assert passed <= 0.05 * len(env.tasks)  # 0 of 200 in each category with bfcl-eval 2026.3.23
    summary = run_episode(env, BfclTextAgent(), options={"task_id": env.tasks[0].task_id})
    assert summary["reward_parts"]["failed_check"] == "empty_turn" and summary["reward_parts"]["failed_turn"] == 0


def test_reward_parts_name_the_failing_check():
    env = BfclEnv("multi_turn_base", tasks=["multi_turn_base_0"])
    env.reset(seed=0)
    for action in [write_call("tongyi", "cd", {"folder": "document"}), write_call("tongyi", "mkdir", {"dir_name": "other"}),
                   write_reply("tongyi", "Done.")] + [write_call("tongyi", "ls", {}), write_reply("tongyi", "ok")] * 3:
        *_, info = env.step(action)
    assert info["reward_parts"]["failed_check"] == "state" and info["reward_parts"]["failed_turn"] == 0
    assert "root" in info["reward_parts"]["state_differences"] and info["outcome"] == 0.0
    env = BfclEnv("multi_turn_base", tasks=["multi_turn_base_0"], max_turns=2)
    env.reset(seed=0)
    env.step(write_call("tongyi", "ls", {}))
    *_, truncated, info = env.step(write_call("tongyi", "ls", {}))
    assert truncated and info["reward_parts"]["failed_check"] == "turns" and info["mask_from_loss"]


def test_state_diff_and_fingerprint_follow_the_calls():
    env = BfclEnv("multi_turn_base", tasks=["multi_turn_base_0"])
    _, info = env.reset(seed=0)
    start = info["state_fingerprint"]
    *_, info = env.step(write_call("tongyi", "cd", {"folder": "document"}))
    assert info["state_diff"] == [] and info["state_fingerprint"] == start
    observation, *_, info = env.step(write_call("tongyi", "mkdir", {"dir_name": "temp"}))
    assert info["state_diff"] == [{"path": "GorillaFileSystem.root.contents.document.contents.temp",
                                   "before": None, "after": {"name": "temp", "contents": {}}}]
    assert info["state_fingerprint"] != start and info["tool_flags"] == [None]


def test_miss_func_functions_appear_at_the_turn_that_adds_them():
    env = BfclEnv("multi_turn_miss_func", tasks=["multi_turn_miss_func_0"])
    observation, _ = env.reset(seed=0)
    assert '"name": "sort"' not in observation and '"name": "grep"' in observation
    observation, *_, info = env.step(write_call("tongyi", "sort", {"file_name": "final_report.pdf"}))
    assert info["tool_flags"] == ["unknown_tool"] and "Unknown function" in observation
    for _ in range(3):  # turns 0, 1 and 2 (the one sort was missing for)
        observation, *_ = env.step(write_reply("tongyi", "Done."))
    assert '"name": "sort"' in observation and "I have updated some more functions" in observation
    observation, *_, info = env.step(write_call("tongyi", "sort", {"file_name": "final_report.pdf"}))
    assert info["tool_flags"] == [None]


def test_search_r1_and_bad_settings_are_refused_clearly():
    with pytest.raises(ValueError, match="search_r1"):
        BfclEnv(tool_format="search_r1")
    with pytest.raises(ValueError, match="web_search needs live search"):
        BfclEnv(category="web_search")
    with pytest.raises(ValueError, match="unknown task_id 'nope'"):
        BfclEnv(tasks=["nope"])
    with pytest.raises(ValueError, match="api_seed"):
        BfclEnv(api_seed="random")


HOSTILE_NAMES = ["__import__('os').system('touch {sentinel}')", "eval", "exec", "_load_scenario", "__class__",
                 "cd(folder='x'); open('{sentinel}', 'w')", "globals", "GorillaFileSystem.cd", "__init__"]
HOSTILE_ARGUMENTS = [{"folder": "__import__('os').system('touch {sentinel}')"},
                     {"folder": "'); open('{sentinel}', 'w'); ('"},
                     {"folder": {"__class__": "x"}}, {"__import__('os')": 1}, {"folder": ["a", {"b": None}]}]


def test_no_policy_text_reaches_eval(tmp_path, monkeypatch):
    """Code in function names and arguments never runs: names outside the offered functions are
    refused, arguments go in as literal values, and nothing calls ``eval`` (in the step or the checker)."""
    sentinel = tmp_path / "pwned"
    evaluated = []
    real_eval = builtins.eval
    monkeypatch.setattr(builtins, "eval", lambda *args, **kwargs: evaluated.append(args) or real_eval(*args, **kwargs))
    env = BfclEnv("multi_turn_base", tasks=["multi_turn_base_0"], max_format_errors=None, max_turns=100)
    for tool_format in ("tongyi", "openai"):
        env.format = __import__("stillweb.sandboxes.formats", fromlist=["get_format"]).get_format(tool_format, max_calls_per_turn=4)
        _, info = env.reset(seed=0)
        start = info["state_fingerprint"]
        for name in HOSTILE_NAMES:
            observation, *_, info = env.step(write_call(tool_format, name.format(sentinel=sentinel), {}))
            assert info["tool_flags"] == ["unknown_tool"] and "Unknown function" in observation
        for arguments in HOSTILE_ARGUMENTS:
            arguments = json.loads(json.dumps(arguments).replace("{sentinel}", str(sentinel)))
            observation, *_, info = env.step(write_call(tool_format, "cd", arguments))
            assert info["tool_flags"] in (["tool_error"], [None]) and info["state_fingerprint"] == start
        while True:
            *_, terminated, truncated, info = env.step(write_reply(tool_format, "Done."))
            if terminated or truncated:
                break
        assert info["reward_parts"]["failed_check"] in ("state", "response", "empty_turn")
    assert not sentinel.exists() and evaluated == []


def test_huge_numbers_are_refused_before_they_run():
    env = BfclEnv("multi_turn_base", tasks=[t.task_id for t in category_tasks("multi_turn_base") if "MathAPI" in t.extra["involved_classes"]][:1])
    env.reset(seed=0)
    for arguments in ({"base": 10, "exponent": 10**9}, {"base": 10**20, "exponent": 2}):
        observation, *_, info = env.step(write_call("tongyi", "power", arguments))
        assert info["tool_flags"] == ["bad_arguments"] and "cap" in observation


def test_api_randomness_is_keyed_by_the_episode_seed():
    """The trading bot's transaction timestamps (and message ids) come from streams keyed by the reset seed."""
    env = BfclEnv("multi_turn_base", tasks=["multi_turn_base_100", "multi_turn_base_103"])

    def final_state(task_id: str, seed: int) -> str:
        run_episode(env, ReferenceAgent(env.tasks.by_id(task_id)), seed=seed, options={"task_id": task_id})
        return json.dumps(env.world.state(), sort_keys=True)

    for task_id in ("multi_turn_base_100", "multi_turn_base_103"):
        assert final_state(task_id, 1) == final_state(task_id, 1) != final_state(task_id, 2)
    bfcl_seeds = BfclEnv("multi_turn_base", tasks=["multi_turn_base_100"], api_seed="bfcl")
    for seed in (1, 2):
        run_episode(bfcl_seeds, ReferenceAgent(bfcl_seeds.tasks[0]), seed=seed)
        assert bfcl_seeds.world.instances["TradingBot"].transaction_history[-1]["timestamp"].startswith("2024-09-")


_EPISODES = """
import json, sys
from stillweb.envs import ReferenceAgent
from stillweb.envs.bfcl.agents import BfclTextAgent
from stillweb.envs.bfcl.env import BfclEnv
out = []
for category, task_id in (("multi_turn_base", "multi_turn_base_100"), ("multi_turn_base", "multi_turn_base_103"),
                          ("multi_turn_miss_func", "multi_turn_miss_func_0"), ("multi_turn_long_context", "multi_turn_long_context_3")):
    env = BfclEnv(category, tasks=[task_id], tool_format="openai")
    for agent in (ReferenceAgent(env.tasks[0], tool_format="openai"), BfclTextAgent(tool_format="openai")):
        observation, info = env.reset(seed=5)
        steps = [observation]
        done = False
        while not done:
            observation, reward, terminated, truncated, info = env.step(agent.act(observation))
            done = terminated or truncated
            info.pop("messages")
            steps.append([observation, reward, info])
        out.append([steps, env.world.state()])
print(json.dumps(out, sort_keys=True))
"""


def test_two_processes_give_identical_observations_rewards_and_states():
    runs = [subprocess.run([sys.executable, "-c", _EPISODES], capture_output=True, text=True, check=True,
                           env={**__import__("os").environ, "PYTHONHASHSEED": str(seed), "TZ": zone}).stdout
            for seed, zone in ((1, "UTC"), (2, "Asia/Tokyo"))]
    assert runs[0] == runs[1] and len(runs[0]) > 10_000
    episodes = json.loads(runs[0])
    assert [episode[0][-1][1] for episode in episodes] == [1.0, 0.0] * 4


def test_math_calls_leave_process_precision_alone():
    """MathAPI's square_root sets decimal's precision and logarithm mpmath's, process-wide in BFCL's own
    harness; here a call's precision stays inside it, so no later episode (or decimal user) sees it."""
    import decimal

    import mpmath

    task_id = next(t.task_id for t in category_tasks("multi_turn_base") if "MathAPI" in t.extra["involved_classes"])
    env = BfclEnv("multi_turn_base", tasks=[task_id])
    env.reset(seed=0)
    before = decimal.getcontext().prec, mpmath.mp.dps
    for name, arguments in (("square_root", {"number": 2, "precision": 3}), ("logarithm", {"value": 20, "base": 10, "precision": 2})):
        *_, info = env.step(write_call("tongyi", name, arguments))
        assert info["tool_flags"] == [None]
    assert (decimal.getcontext().prec, mpmath.mp.dps) == before


def test_episodes_do_not_leak_into_each_other():
    """BFCL's APIs keep module-level defaults and long-context extensions; an episode played after all the
    others (in the opposite order) sees exactly what it saw first."""
    env = BfclEnv("multi_turn_long_context", split="all")

    def played(task) -> str:
        episode = play_episode(env, ReferenceAgent(task), seed=1, options={"task_id": task.task_id})
        trace = [episode.reset_observation, *(step.observation for step in episode.steps)]
        return json.dumps([trace, episode.reward, env.world.state()], sort_keys=True)

    tasks = list(env.tasks)[::4]
    first = [played(task) for task in tasks]
    assert [played(task) for task in reversed(tasks)] == first[::-1]


_IMPORTS = """
import importlib, sys
before = set(sys.modules)
import bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker
from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING
for name in sys.argv[1:]:
    importlib.import_module(CLASS_FILE_PATH_MAPPING[name])
loaded = {name.split(".")[0] for name in set(sys.modules) - before}
print(" ".join(sorted(name for name in loaded if name not in sys.stdlib_module_names and not name.startswith("_"))))
"""


def test_the_bfcl_extra_is_all_bfcls_code_needs():
    """BFCL's checker and its eight APIs import nothing outside the standard library but mpmath (the
    bfcl extra), and the install script pins the version the environment was made with."""
    import re
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    from stillweb.envs.bfcl.data import API_CLASSES

    loaded = subprocess.run([sys.executable, "-c", _IMPORTS, *API_CLASSES], capture_output=True, text=True,
                            check=True).stdout.split()
    assert set(loaded) == {"bfcl_eval", "mpmath"}, loaded
    extra = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]["bfcl"]
    assert [re.split(r"[<>=]", requirement)[0] for requirement in extra] == ["mpmath"]
    assert f'"bfcl-eval=={BFCL_EVAL_VERSION}"' in (root / "scripts" / "install_bfcl.sh").read_text()


def test_a_reset_limits_override_lasts_one_episode():
    env = BfclEnv(tasks=["multi_turn_base_0"])
    task = env.tasks[0]
    short = run_episode(env, ReferenceAgent(task), seed=0, options={"task_id": task.task_id, "limits": {"max_tool_calls": 1}})
    assert short["truncated"] and short["truncation_reason"] == "max_tool_calls"
    full = run_episode(env, ReferenceAgent(task), seed=0, options={"task_id": task.task_id})
    assert full["outcome"] == 1.0 and env.limits is env.env_limits
