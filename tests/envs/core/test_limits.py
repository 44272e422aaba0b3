"""One limits object: the action space, the call format, the degenerate checks and the observation clip
all read ``EpisodeLimits``; every action an environment parses is in its action space (Gymnasium's rule),
checked by Gymnasium's env checker and by hypothesis."""

from __future__ import annotations

import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stillweb.corpora.errors import UsageError
from stillweb.envs import LookupEnv, WikiQAEnv
from stillweb.envs.core.degenerate import ACTION_TOO_LONG
from stillweb.envs.core.limits import EpisodeLimits
from stillweb.sandboxes.formats import MAX_ACTION_CHARS
from stillweb.sandboxes.tools.answer import MAX_ANSWER_CHARS
from stillweb.envs.core.steps import clip_observation

LOOKUP = [{"question": "Who wrote it?", "answer": "Ann Lee", "passage": "It was written by Ann Lee."}]


@pytest.fixture(scope="module")
def wikiqa(tiny_world, world_tasks):
    return WikiQAEnv(tiny_world, world_tasks, max_action_chars=2_000)


def test_one_cap_for_space_format_and_truncation(wikiqa):
    limits = wikiqa.limits
    assert limits.max_action_chars == wikiqa.action_space.max_length == wikiqa.format.max_action_chars == 2_000
    assert wikiqa.observation_space.max_length == limits.max_observation_chars
    assert wikiqa.format.max_answer_chars == limits.max_answer_chars == MAX_ANSWER_CHARS
    wikiqa.reset(seed=0)
    at_cap = "x" * 2_000
    assert wikiqa.action_space.contains(at_cap)
    _, _, terminated, truncated, info = wikiqa.step(at_cap)
    assert info["tool_flags"] == ["format_error"] and "over_long" not in info["action_flags"]
    over = "x" * 2_001
    assert not wikiqa.action_space.contains(over)
    _, _, _, truncated, info = wikiqa.step(over)
    assert truncated and info["truncation_reason"] == ACTION_TOO_LONG and "over_long" in info["action_flags"]


def test_defaults_are_the_sandbox_caps():
    limits = EpisodeLimits()
    assert (limits.max_action_chars, limits.max_answer_chars) == (MAX_ACTION_CHARS, MAX_ANSWER_CHARS)
    assert limits.action_space().max_length == MAX_ACTION_CHARS  # was 4,096 while 100,000 were accepted


@pytest.mark.parametrize("field", ["max_turns", "max_action_chars", "max_observation_chars", "max_answer_chars"])
def test_bad_limits_name_the_field(field):
    with pytest.raises(UsageError, match=field):
        EpisodeLimits(**{field: 0})


def test_an_actions_dict_still_sets_the_cap(tiny_world, world_tasks):
    env = WikiQAEnv(tiny_world, world_tasks, actions={"max_action_chars": 1_000, "letter_run": 6})
    assert (env.limits.max_action_chars, env.action_checks.letter_run, env.action_space.max_length) == (1_000, 6, 1_000)


def test_clip_reads_the_cap():
    clipped = clip_observation("y" * 500, 100)
    assert len(clipped) == 100 and clipped.endswith("[... clipped to 100 characters]")
    assert clip_observation("y" * 500, 10) == "y" * 10


def test_gymnasium_env_checker_passes(wikiqa):
    check_env(wikiqa, skip_render_check=True)
    check_env(LookupEnv(tasks=LOOKUP), skip_render_check=True)


NEAR_CAP = 40  # the cap of the environments below: hypothesis draws texts on both sides of it


@pytest.fixture(scope="module")
def near_cap(tiny_world, world_tasks):
    return WikiQAEnv(tiny_world, world_tasks, max_action_chars=NEAR_CAP), LookupEnv(tasks=LOOKUP, max_action_chars=NEAR_CAP)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(min_size=NEAR_CAP - 8, max_size=NEAR_CAP + 8)
       | st.text(alphabet="<>{}\"\\ \n\u00e9\u4e2d\U0001f600", min_size=NEAR_CAP - 8, max_size=NEAR_CAP + 8))
def test_every_parsed_action_is_in_the_action_space(near_cap, text):
    """An action is parsed exactly when it is in the action space (Gymnasium's rule), on both sides of the cap and
    for characters of several UTF-8 widths: the cap counts characters as the space does, not bytes."""
    for env in near_cap:
        env.reset(seed=0)
        observation, _, _, truncated, info = env.step(text)
        parsed = info.get("truncation_reason") != ACTION_TOO_LONG
        assert parsed == env.action_space.contains(text) == (len(text) <= NEAR_CAP), (len(text), info)
        assert truncated or parsed
        assert env.observation_space.contains(observation)


def test_lookup_truncates_an_action_over_its_cap():
    env = LookupEnv(tasks=LOOKUP, max_action_chars=50)
    env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step("<answer>Ann Lee</answer>" + "x" * 40)
    assert (reward, terminated, truncated, info["truncation_reason"]) == (0.0, False, True, ACTION_TOO_LONG)
    assert "more than the cap of 50" in observation
