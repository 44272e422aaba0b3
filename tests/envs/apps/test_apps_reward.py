"""Apps-v0's reward comes from the one outcome scorer with the app checks as its outcome: on scripted
episodes the reward is the old formula's (the checks' binary outcome) bit for bit, and a reward config
weights gamma decay and penalties on top of the same checks."""

from __future__ import annotations

import pytest

from stillweb.envs.agents.scripted import write_abstain, write_answer
from stillweb.envs.apps.agents import AppReferenceAgent, RandomCallAgent
from stillweb.envs.apps.env import AppsEnv
from stillweb.envs.apps.scoring import score_app_episode
from support.apps import play_script


def play(env, task, actions, reference=False):
    """Play ``actions`` (then the reference agent when ``reference``, else the last action again); the last
    step's reward and info, the checks the old formula computes from the ended episode, and the steps."""
    agent = AppReferenceAgent(task) if reference else None
    reward, info, steps, terminated = play_script(env, {"task_id": task.task_id}, actions, agent, seed=3)
    episode = env._episode
    abstained = info["termination_reason"] == "abstained"
    finished = terminated and info["termination_reason"] in ("answered", "abstained")
    old = score_app_episode(env.base, task, episode.session.sums, episode.answers, abstained, finished)
    return reward, info, old, steps


def cases(env):
    """(name, task, actions, reference) of the scripted episodes: pass, fail, abstain, format errors, truncation."""
    possible = next(task for task in env.tasks if task.answerable and task.extra["template"] == "pay_then_balance")
    impossible = next(task for task in env.tasks if not task.answerable)
    return [("reference", possible, [], True), ("format_error_then_reference", possible, ["no call here"], True),
            ("answer_at_once", possible, [write_answer("tongyi", "Done.", [])], False),
            ("abstain_when_possible", possible, [write_abstain("tongyi", "cannot")], False),
            ("abstain_when_impossible", impossible, [], True),
            ("answer_when_impossible", impossible, [write_answer("tongyi", "Done.", [])], False),
            ("truncated", possible, ["x", "y", "z"], False)]


def test_the_reward_is_the_old_formula_s_value_on_scripted_episodes(apps_snapshot):
    env = AppsEnv(apps_snapshot, "core")
    rewards = {}
    for name, task, actions, reference in cases(env):
        reward, info, old, _ = play(env, task, actions, reference)
        assert repr(reward) == repr(old.total) and info["outcome"] == old.outcome, name
        parts = info["reward_parts"]
        assert {key: parts[key] for key in old.as_dict()} == old.as_dict(), name  # the checks as before
        assert parts["total"] == reward and parts["counts"] == info["hallucination_counts"], name
        rewards[name] = reward
    assert rewards == {"reference": 1.0, "format_error_then_reference": 1.0, "answer_at_once": 0.0,
                       "abstain_when_possible": 0.0, "abstain_when_impossible": 1.0, "answer_when_impossible": 0.0,
                       "truncated": 0.0}


def test_a_reward_config_weights_gamma_decay_and_penalties_over_the_checks(apps_snapshot):
    config = {"outcome": 0.0, "gamma_decay": 1.0, "gamma": 0.5, "penalty_format_error": 0.25, "abstention": 0.5,
              "penalty_fabricated_answer": 1.0}
    env = AppsEnv(apps_snapshot, "core", reward=config)
    for name, task, actions, reference in cases(env):
        reward, info, old, steps = play(env, task, actions, reference)
        parts = info["reward_parts"]
        expected = old.outcome * 0.5 ** (steps - 1) + 0.5 * old.abstention \
            - 0.25 * info["hallucination_counts"]["format_error"] - 1.0 * parts["fabricated_answer"]
        assert reward == pytest.approx(expected) and parts["gamma_decay"] == pytest.approx(old.outcome * 0.5 ** (steps - 1))
        assert parts["fabricated_answer"] == (name == "answer_when_impossible"), name
        if name == "format_error_then_reference":  # the format-error weight is exercised on a passed episode
            assert old.outcome == 1.0 and info["hallucination_counts"]["format_error"] == 1, name
        if name == "abstain_when_impossible":  # and the abstention weight
            assert old.abstention == 1.0, name
    assert AppsEnv(apps_snapshot, "core").reward_config.outcome == 1.0


def test_random_episodes_earn_what_the_checks_say(apps_snapshot):
    env = AppsEnv(apps_snapshot, "core", max_turns=6)
    for index, task in enumerate(list(env.tasks)[:12]):
        agent = RandomCallAgent(index)
        observation, info = env.reset(seed=index, options={"task_id": task.task_id})
        while True:
            observation, reward, terminated, truncated, info = env.step(agent.act(observation))
            if terminated or truncated:
                break
        assert repr(reward) == repr(info["reward_parts"]["outcome"]) and reward in (0.0, 1.0)


def test_a_recording_from_before_the_scorer_s_parts_still_replays(apps_snapshot, tmp_path):
    """A version-4 recording's reward_parts lack the scorer's parts (they held the checks alone): replayed,
    the added parts are not compared and every recorded value is; labelled version 5, the same file fails."""
    import json

    import gymnasium as gym

    import stillweb.envs  # noqa: F401 - registers the environments
    from stillweb.envs import RecordEpisodes, replay, run_episode
    from stillweb.envs.apps.scoring import AppChecks

    path = tmp_path / "apps.jsonl"
    env = RecordEpisodes(gym.make("stillweb/Apps-v0", snapshot=str(apps_snapshot), tasks="core"), path)
    task = env.unwrapped.tasks[0]
    run_episode(env, AppReferenceAgent(task), seed=0, options={"task_id": task.task_id})
    run_episode(env, RandomCallAgent(5), seed=5, options={"task_id": task.task_id})
    env.close()
    assert replay(path).ok
    checks = [name for name in AppChecks.__dataclass_fields__]
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for record in lines[1:]:
        parts = (record.get("info") or {}).get("reward_parts")
        if parts is not None:
            record["info"]["reward_parts"] = {name: parts[name] for name in checks}
    for version, ok in ((4, True), (5, False)):
        lines[0]["info_version"] = version
        old = tmp_path / f"apps_v{version}.jsonl"
        old.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        result = replay(old)
        assert result.ok == ok, result.describe()
