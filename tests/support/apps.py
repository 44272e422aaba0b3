"""Helpers of the app-world tests: every task of a set, baseline policies, and scripted episodes (Apps-v0, BFCL-v0)."""

from __future__ import annotations

from stillweb.envs.agents.scripted import write_answer
from stillweb.envs.apps.env import AppsEnv


def all_app_tasks(snapshot, name: str = "core") -> list:
    """Every task of the set, over its three splits."""
    return [task for split in ("train", "dev", "test") for task in AppsEnv(snapshot, name, split=split).tasks]


class AnswerAtOnce:
    """Answers "Done." without calling anything (also the do-nothing policy: it changes nothing)."""

    def act(self, observation: str) -> str:
        return write_answer("tongyi", "Done.", [])


def play_script(env, options, actions, agent=None, seed=None):
    """Play ``actions``, then ``agent`` (or, without one, the last action again) until the episode ends;
    ``(reward, info, steps, terminated)`` of the last step."""
    observation, info = env.reset(seed=seed, options=options)
    queue, steps = list(actions), 0
    while True:
        action = (queue.pop(0) if queue else agent.act(observation)) if agent else queue.pop(0) if len(queue) > 1 else queue[0]
        observation, reward, terminated, truncated, info = env.step(action)
        steps += 1
        if terminated or truncated:
            return reward, info, steps, terminated
