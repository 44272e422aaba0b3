"""No text a policy writes can crash or stall a step (issue 33): every hostile shape of
``support.hostile_actions`` through ``env.step`` of every environment and call format.

The cost bar (64k costs at most 10x 8k; a 100k step under a second) is measured by
``scripts/bench_hostile.py``; here the slow test checks the same ratio with a wide margin (25x:
a quadratic scan shows 64x), against the 8k step measured in the same run, never a wall-clock limit.
"""

from __future__ import annotations


import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.hostile_actions import SHAPES, shape_names
from support.hostile_envs import fastest_step_ms, hostile_environments


@pytest.fixture(scope="module")
def environments(small_snapshot, tmp_path_factory):
    return hostile_environments(small_snapshot, tmp_path_factory.mktemp("hostile"))


def _checked_step(env, action: str):
    """One step from a fresh reset; the result must be a well-formed Gymnasium step."""
    env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step(action)
    assert isinstance(observation, str) and isinstance(info, dict)
    assert isinstance(reward, float) and isinstance(terminated, bool) and isinstance(truncated, bool)
    return observation, reward, terminated, truncated, info


@pytest.mark.parametrize("length", [8_000, 64_000])
@pytest.mark.parametrize("shape", shape_names())
def test_every_environment_survives_the_shape(environments, shape, length):
    for name, env in environments.items():
        observation, reward, terminated, truncated, info = _checked_step(env, SHAPES[shape](length))
        assert reward <= 0.0 or name == "Lookup-v0", f"{name}: a hostile action earned {reward}"


def test_a_long_answer_is_refused_with_a_message(environments):
    long_answer = "<answer>" + "word " * 2_000 + "</answer>"
    observation, reward, terminated, truncated, info = _checked_step(environments["WikiQA-v0/tongyi"], long_answer)
    assert not terminated and "9999 characters long; at most 5000" in observation and reward == 0.0
    observation, reward, terminated, *_, info = _checked_step(environments["Lookup-v0"], long_answer)  # on the core: a format error
    assert info["outcome"] == 0.0 and "at most 5000" in observation and info["termination_reason"] == "format_errors"


@pytest.mark.slow
def test_cost_grows_about_linearly(environments):
    """64k characters cost at most 25x the same shape at 8k (quadratic would be 64x), where the 64k step
    is long enough to measure (over 5 ms); both measured in this run."""
    superlinear = []
    for name, env in environments.items():
        for shape in shape_names():
            small = fastest_step_ms(env, SHAPES[shape](8_000))
            large = fastest_step_ms(env, SHAPES[shape](64_000))
            if large > 5.0 and large > 25 * small:
                superlinear.append(f"{name} {shape}: {small:.1f} ms -> {large:.1f} ms")
    assert not superlinear, superlinear


_FRAGMENTS = sorted({"<tool_call>", "</tool_call>", "<answer>", "</answer>", "<citations>", "</citations>", "<think>",
                     "</think>", "<search>", "</search>", "<abstain>", "</abstain>", "<information>", "{", "}", "[", "]",
                     '"', "\\", ":", ",", '"name"', '"arguments"', '"search"', '"answer"', '"query"', '"text"', "1e999",
                     "\\ud800", "\ud800", "\x00", "\r\n", "NaN", "true", "-0", "99999999999999999999", " ", "a"})


@settings(max_examples=120, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=12)), max_size=60))
def test_no_text_raises(environments, pieces):
    action = "".join(pieces)
    for env in environments.values():
        _checked_step(env, action)
