"""Counters that tell the truth (issue 33 item 3): one count per concept, computed once; the last info
built after scoring; calls run and calls refused apart; a spent budget flagged ``budget_exhausted``."""

from __future__ import annotations

import pytest

from stillweb.envs import WikiQAEnv
from stillweb.envs.core.counts import AppCounts, EpisodeCounts, WikiQACounts

SEARCH = '<tool_call>{"name": "search", "arguments": {"query": "Ada Quill"}}</tool_call>'


@pytest.fixture
def env(tiny_world, world_tasks):
    return WikiQAEnv(tiny_world, world_tasks, max_tool_calls=3, max_turns=8)


def test_the_last_info_shows_the_scored_counts(env):
    env.reset(seed=0)
    *_, info = env.step("<answer>Nobody</answer><citations>999999; No Such Page</citations>")
    counts = info["reward_parts"]["counts"]
    assert (counts["bad_citation"], counts["unsupported_answer"]) == (2, 1)
    assert info["hallucination_counts"] == counts  # was 0 and 0: the info was built before scoring


def test_a_spent_budget_is_its_own_flag_and_count(env):
    env.reset(seed=0)
    *_, info = env.step(SEARCH + SEARCH)
    assert (info["tool_flags"], info["tool_calls"], info["refused_calls"]) == ([None, None], 2, 0)
    *_, truncated, info = env.step(SEARCH + SEARCH)
    assert info["tool_flags"] == [None, "budget_exhausted"]  # was bad_arguments
    assert (info["tool_calls"], info["refused_calls"], info["hallucination_counts"]["bad_arguments"]) == (3, 1, 0)
    stats = info["episode_stats"]
    assert (stats["tool_calls"], stats["refused_calls"], stats["repeated_calls"]) == (3, 1, 3)
    assert truncated and info["truncation_reason"] == "max_tool_calls"


def test_format_errors_are_counted_once(env):
    env.reset(seed=0)
    env.step("<tool_call>{broken</tool_call>")
    *_, info = env.step("<answer>Ostra</answer>")
    assert info["hallucination_counts"]["format_error"] == info["episode_stats"]["format_errors"] == 1
    assert info["reward_parts"]["counts"]["format_error"] == 1


def test_counts_are_typed_in_every_environment():
    assert issubclass(WikiQACounts, EpisodeCounts) and issubclass(AppCounts, EpisodeCounts)
    counts = WikiQACounts()
    for flag in ("unknown_tool", "bad_arguments", "not_found", "budget_exhausted", None):
        counts.count_result(flag)
    assert counts.as_dict() == {"unknown_tool": 1, "bad_arguments": 1, "format_error": 0, "bad_citation": 0,
                                "unsupported_answer": 0}
