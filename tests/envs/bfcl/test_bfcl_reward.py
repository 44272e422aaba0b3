"""BFCL-v0's reward comes from the one outcome scorer with BFCL's checker as its outcome: on scripted
episodes the reward is the old formula's (the checker's binary outcome) bit for bit, and a reward config
weights gamma decay and penalties on top of the same check. Needs the ``bfcl`` extra."""

from __future__ import annotations

import pytest

pytest.importorskip("bfcl_eval", reason="the bfcl extra: pip install -e '.[bfcl]' && bash scripts/install_bfcl.sh")

from stillweb.envs.agents.scripted import write_call  # noqa: E402
from stillweb.envs.bfcl.agents import BfclReferenceAgent, write_reply  # noqa: E402
from stillweb.envs.bfcl.env import BfclEnv  # noqa: E402
from support.apps import play_script  # noqa: E402

pytestmark = pytest.mark.extra

TASKS = ["multi_turn_base_0", "multi_turn_base_1"]
CASES = {"reference": ([], True), "format_error_then_reference": (["no call here"], True),
         "unknown_function_then_reference": ([write_call("tongyi", "no_such_fn", {})], True),
         "reply_only": ([write_reply("tongyi", "Done.")], False), "truncated": (["x"], False)}


def play(env, task_id, actions, reference):
    """Play ``actions`` (then the reference agent when ``reference``, else the last action again); the last
    step's reward and info, the checker's result on the ended episode (the old reward) and the steps."""
    agent = BfclReferenceAgent(env.tasks.by_id(task_id)) if reference else None
    reward, info, steps, _ = play_script(env, {"task_id": task_id}, actions, agent, seed=1)
    return reward, info, env.check(), steps


def test_the_reward_is_the_checker_s_outcome_on_scripted_episodes():
    env = BfclEnv("multi_turn_base", tasks=TASKS)
    rewards = {}
    for task_id in TASKS:
        for name, (actions, reference) in CASES.items():
            reward, info, old, _ = play(env, task_id, actions, reference)
            assert repr(reward) == repr(old.total) and info["outcome"] == old.outcome, (task_id, name)
            parts = info["reward_parts"]
            assert {key: parts[key] for key in old.as_dict()} == old.as_dict(), (task_id, name)
            assert parts["total"] == reward and parts["counts"] == info["hallucination_counts"]
            rewards[task_id, name] = reward
    for task_id in TASKS:
        assert {name: rewards[task_id, name] for name in CASES} == {
            "reference": 1.0, "format_error_then_reference": 1.0, "unknown_function_then_reference": 1.0,
            "reply_only": 0.0, "truncated": 0.0}, task_id


def test_a_reward_config_weights_gamma_decay_and_penalties_over_the_check():
    config = {"outcome": 0.0, "gamma_decay": 1.0, "gamma": 0.9, "penalty_format_error": 0.25,
              "penalty_unknown_tool": 0.125}
    env = BfclEnv("multi_turn_base", tasks=TASKS, reward=config)
    for name, (actions, reference) in CASES.items():
        reward, info, old, steps = play(env, TASKS[0], actions, reference)
        counts = info["hallucination_counts"]
        expected = old.outcome * 0.9 ** (steps - 1) - 0.25 * counts["format_error"] - 0.125 * counts["unknown_tool"]
        assert reward == pytest.approx(expected), name
        penalized = {"format_error_then_reference": "format_error", "unknown_function_then_reference": "unknown_tool"}
        if name in penalized:  # each weight is exercised: the episode passed and paid exactly one penalty
            assert old.outcome == 1.0 and counts[penalized[name]] == 1, name
            assert reward < 0.9 ** (steps - 1), name
    assert counts["format_error"] >= 3 and reward == pytest.approx(-0.25 * counts["format_error"])
