"""The TRL environment factory over ``stillweb/Apps-v0``: one method per endpoint (plus answer),
and the reference program called through them earns the environment's reward."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.extra

trl = pytest.importorskip("trl")

from stillweb.envs.integrations.trl import environment_factory  # noqa: E402
from stillweb.sandboxes.apps import ENDPOINTS  # noqa: E402


def test_trl_factory_offers_the_endpoints_and_rewards_the_reference_program(apps_snapshot):
    env = environment_factory(apps_snapshot, "core", env_id="stillweb/Apps-v0")()
    assert set(ENDPOINTS) | {"answer"} <= set(dir(env))
    task = next(task for task in env.episode.env.tasks if task.extra["category"] == "dependent_writes")
    env.reset(task_id=task.task_id)
    for call in task.extra["program"][0]:
        getattr(env, call["name"])(**call["arguments"])
    assert env.get_reward() == 0.0
    env.answer(text="Done.")
    assert env.get_reward() == 1.0
